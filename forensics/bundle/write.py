"""Writing bundles atomically (temporary file in the target folder, then rename).

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> out = write_items(d / "b.tar.zst", [("manifest.json", new_manifest(["node01"], "node")),
...                                     ("hosts/node01/host.json", b'{"host": "node01"}')])
>>> from forensics.bundle.read import open_bundle
>>> open_bundle(out).hosts
['node01']
"""
from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Iterable

import forensics
from forensics.bundle.errors import BundleError
from forensics.collect.tarball import AtomicTar, compression_for
from forensics.layout import FORMAT_VERSION, HOSTS_DIR, MANIFEST, TABLES_DIR, TRUTH_DIR

ORDER = (MANIFEST, HOSTS_DIR, TABLES_DIR, TRUTH_DIR)


def created_by() -> str:
    return f"forensics {forensics.__version__}"


def new_manifest(hosts: list[str], kind: str, redaction: dict | None = None, **extra) -> bytes:
    """manifest.json bytes for format version 1."""
    man = {
        "format_version": FORMAT_VERSION,
        "created_by": created_by(),
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "hosts": sorted(hosts),
        "redaction": redaction,
        "kind": kind,
    }
    man.update(extra)
    return (json.dumps(man, indent=1) + "\n").encode()


def check_out_path(out: Path | str) -> Path:
    out = Path(out)
    try:
        compression_for(out)
    except ValueError as exc:
        raise BundleError(str(exc)) from None
    if out.is_dir():
        raise BundleError(f"{out}: is a directory")
    if not out.parent.is_dir():
        raise BundleError(f"{out.parent}: no such directory")
    return out


def _write(out: Path, members: Iterable[tuple[str, bytes | Path]], mode: int | None = None) -> Path:
    """Write `members` ((arcname, bytes or a file to copy)) to `out` atomically: all of them, or nothing."""
    try:
        tar = AtomicTar(out, mode=mode)
    except (ValueError, OSError) as exc:
        raise BundleError(f"{out}: cannot write: {exc}") from None
    try:
        for name, data in members:
            if isinstance(data, Path):
                tar.add_file(name, data)
            else:
                tar.add_bytes(name, data)
    except BaseException:
        tar.abort()
        raise
    tar.close()
    return out


def write_items(out: Path | str, items: Iterable[tuple[str, bytes]]) -> Path:
    """Write (arcname, bytes) members as a bundle at `out` (atomically)."""
    return _write(check_out_path(out), items)


def tree_files(src: Path, strict: bool = True) -> list[tuple[str, Path]]:
    """(relative posix path, path) of every regular file under `src`, folders and names in sorted order,
    no link followed. `strict`: a link or other special file is an error; else it is passed over."""
    found = []
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if p.is_symlink() or not p.is_file():
                if strict:
                    raise BundleError(f"{p}: not a regular file (staging trees hold regular files only)")
                continue
            found.append((p.relative_to(src).as_posix(), p))
        for name in dirnames:
            if strict and (Path(dirpath) / name).is_symlink():
                raise BundleError(f"{Path(dirpath) / name}: symbolic link in a staging tree")
    return found


def _tree_files(src: Path) -> list[tuple[str, Path]]:
    """The files of a staging tree in archive order: manifest.json, hosts/, tables/, truth/, the rest."""
    found = tree_files(src)

    def key(item):
        rel = item[0]
        top = rel.split("/", 1)[0]
        return (ORDER.index(top) if top in ORDER else len(ORDER), rel)

    return sorted(found, key=key)


def with_members(manifest: dict, files: list[tuple[str, Path]]) -> bytes:
    """manifest.json bytes with ``members``: {path: {"size", "sha256"}} of every other file, so a
    reader can tell a truncated or altered archive (:func:`forensics.bundle.trust.check_members`)."""
    from forensics.bundle.cache import file_sha256

    members = {rel: {"size": p.stat().st_size, "sha256": file_sha256(p)} for rel, p in files if rel != MANIFEST}
    return (json.dumps(dict(manifest, members=members), indent=1) + "\n").encode()


def mode_like(inputs: Iterable[Path]) -> int | None:
    """The file mode of a new bundle made from `inputs`: the usual one (0666 less the umask) with
    every permission bit that some input file lacks removed; None when there are no input files."""
    import os
    import stat

    mode = None
    for p in inputs:
        try:
            st = os.stat(p)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            mode = (st.st_mode & 0o666) if mode is None else mode & st.st_mode & 0o666
    if mode is None:
        return None
    umask = os.umask(0o022)
    os.umask(umask)
    return mode & 0o666 & ~umask


def write_tree(src: Path | str, out: Path | str, like: Iterable[Path] = ()) -> Path:
    """Write the bundle tree `src` (manifest.json, hosts/, tables/, ...) to the archive `out`.

    manifest.json comes first, so a reader can check it before the rest. `like`: the inputs it was
    made from; the archive is readable by no one they were closed to (merging 0600 bundles gives a
    0600 bundle, as the collector writes them), otherwise the usual mode for new files.
    """
    src = Path(src)
    out = check_out_path(out)
    if not (src / MANIFEST).is_file():
        raise BundleError(f"{src}: no manifest.json")
    files = _tree_files(src)
    manifest = with_members(json.loads((src / MANIFEST).read_bytes()), files)
    return _write(out, ((rel, manifest if rel == MANIFEST else p) for rel, p in files), mode_like(like))
