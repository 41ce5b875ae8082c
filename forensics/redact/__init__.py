"""Redaction: bundles that can leave the cluster without naming it.

``redact(src, out, key_file=None, keep=(), mapping_out=None)`` writes a copy of a bundle in which
host names (and their domains), IPv4/IPv6 addresses (IPv4-mapped GIDs and NCCL's ``addr<port>``
included), MAC addresses, InfiniBand/RoCE GIDs and GUIDs, UUIDs (GPU, MIG, file systems), serial
numbers and user names (home directories, ``user=``) are replaced by keyed pseudonyms, in raw
outputs, member names, manifest, host.json, commands and every table. The same value gets the same
pseudonym everywhere and in every bundle redacted with the same key, so cross-node joins, NCCL peer
matching and clock alignment give the same findings. Classes named in `keep` are left as they are.

- :mod:`.keys`: the local key (never written into a bundle; the manifest records its key id).
- :mod:`.mapper`: the pseudonym of each class (keyed, format-keeping, collision-free).
- :mod:`.discover`: host names, domains, serials, GUIDs and users collected structurally.
- :mod:`.rewrite`: the replacing pass (vectorised prefilter, then Python regexes).
- :mod:`.verify`: the leak check run before anything is written.
- :mod:`.bundle`: the whole job; :mod:`.hooks`: ``collect --redact`` and ``bundle --redact``.
"""
from __future__ import annotations

from pathlib import Path

from forensics.redact.mapper import CLASSES


def redact(src, out, key_file: Path | str | None = None, keep=(), mapping_out=None, progress=None,
           warn=None, reparse: bool = False) -> dict:
    """Redact bundle `src` into `out` with the key of `key_file` (created, mode 0600, when absent)."""
    from forensics.bundle.errors import BundleError
    from forensics.bundle.write import check_out_path
    from forensics.redact.bundle import parse_keep, redact_bundle
    from forensics.redact.keys import load_key

    parse_keep(keep)  # bad arguments fail before a key file is created
    check_out_path(out)
    if not Path(src).exists():
        raise BundleError(f"{src}: no such file or directory")
    key, path, created = load_key(key_file, warn=warn)
    if created and progress:
        progress(f"created the redaction key {path} (keep it: the same key gives the same pseudonyms)")
    summary = redact_bundle(src, out, key, keep=keep, mapping_out=mapping_out, progress=progress,
                            reparse=reparse, warn=warn)
    summary["key_file"] = str(path)
    return summary


__all__ = ["CLASSES", "redact"]
