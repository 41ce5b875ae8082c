"""Raw files read from the bundle archive instead of from disk.

A bundle archive opened through the cache is extracted without its raw files (see
:mod:`forensics.bundle.cache`): writing GBs of them to disk cost more than parsing them. Their names
and sizes are kept in ARCHIVE_MEMBERS; :func:`stream_hosts` reads them from the archive for the
hosts its caller claims, holding a host's raw files in memory (a big one goes to a temporary file,
which keeps memory bounded) until they are all read.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from forensics.bundle.cache import archive_members
from forensics.bundle.errors import BundleError
from forensics.bundle.members import iter_members, read_errors, read_member, read_member_into
from forensics.layout import HOSTS_DIR


SPILL_BYTES = 64 << 20         # a raw file above this is parsed from a temporary file ...
HOST_BUFFER_BYTES = 256 << 20  # ... as are a host's further files once this much of it is in memory


def read_plan(root: Path, hosts: list[str]) -> tuple[str, dict[str, list[tuple[str, int, str | None]]]] | None:
    """(member-name prefix of the bundle root, {host: [(rel, size, sha256 or None), ...]}) of the raw
    files that a cached bundle left in its archive, hosts in manifest order, with the SHA-256 the
    bundle's manifest lists for each (checked as it is read); None when they are all on disk."""
    listed = archive_members(root)
    if listed is None:
        return None
    prefix, members = listed
    digests = _listed_digests(root)
    wanted = set(hosts)
    by_host: dict[str, list[tuple[str, int, str | None]]] = {}
    for rel, size in members:
        parts = rel.split("/")
        if len(parts) >= 5 and parts[0] == HOSTS_DIR and parts[2] == "raw" and parts[1] in wanted:
            by_host.setdefault(parts[1], []).append((rel, size, digests.get(rel)))
    return prefix, {h: by_host[h] for h in hosts if h in by_host}


def _listed_digests(root: Path) -> dict[str, str]:
    """{member: sha256} of the manifest's member list (checked in shape when the archive was extracted)."""
    from forensics.bundle.manifest import read_manifest

    listed = read_manifest(root).get("members")
    if not isinstance(listed, dict):
        return {}
    return {rel: info["sha256"] for rel, info in listed.items()
            if isinstance(info, dict) and isinstance(info.get("sha256"), str)}


def walk_key(rel: str) -> tuple:
    """Sort key putting a host's raw member names (``hosts/<h>/raw/<source>/...``) in the order
    :func:`raw_files` walks them on disk: sources by name, then in each folder its files by name
    before its subfolders by name."""
    parts = rel.split("/")[3:]
    return tuple((1, p) for p in parts[:-1]) + ((0, parts[-1]),)


def stream_hosts(archive: Path, prefix: str, by_host: dict[str, list[tuple[str, int, str | None]]], claim, spill: Path):
    """(host, [(source, rel, bytes or path)] in walk order) for each host `claim(host)` accepts,
    as soon as all its raw files have been read from `archive`, each checked against the SHA-256 the
    bundle's manifest lists for it (BundleError when it differs)."""
    want = {prefix + rel: (host, size, digest) for host, members in by_host.items() for rel, size, digest in members}
    held: dict[str, list] = {}
    held_bytes: dict[str, int] = {}
    skipped: set[str] = set()
    seen: set[str] = set()
    spilled = 0
    errors = tuple(e for e in read_errors() if e is not OSError)  # (a full disk while spilling is not the archive's fault)
    for member, name, tar in iter_members(archive):
        hit = want.get(name)
        if hit is None or hit[0] in skipped:
            continue
        host, size, digest = hit
        if not member.isreg() or member.size != size:
            raise BundleError(f"{archive}: changed since it was extracted ({name!r})")
        if host not in held:
            if host in seen or not claim(host):
                skipped.add(host)
                continue
            seen.add(host)
            held[host], held_bytes[host] = [], 0
        rel = name[len(prefix):]
        sha = hashlib.sha256() if digest is not None else None
        try:
            if size > SPILL_BYTES or held_bytes[host] + size > HOST_BUFFER_BYTES:
                data: Path | bytes = spill / str(spilled)
                spilled += 1
                with open(data, "wb") as out:
                    def write(block, out=out) -> None:
                        if sha is not None:
                            sha.update(block)
                        out.write(block)

                    read_member_into(tar, member, name, write)
            else:
                data = read_member(tar, member, name)
                if sha is not None:
                    sha.update(data)
                held_bytes[host] += size
        except errors as exc:
            raise BundleError(f"{archive}: unreadable archive: {exc}") from None
        if sha is not None and sha.hexdigest() != digest:
            raise BundleError(f"damaged bundle: {rel!r} differs from the SHA-256 the manifest lists")
        held[host].append((rel.split("/")[3], rel, data))
        if len(held[host]) == len(by_host[host]):
            files = sorted(held.pop(host), key=lambda f: walk_key(f[1]))
            yield host, files
            for _, _, d in files:
                if isinstance(d, Path):
                    d.unlink(missing_ok=True)
            del files  # (not held while the next host is read)
    missing = sorted(held) + sorted(set(by_host) - seen - skipped)
    if missing:
        raise BundleError(f"{archive}: changed since it was extracted (raw files of {missing[0]} missing)")
