"""Where a bundle's files are on disk: :func:`bundle_root` gives an archive's safely extracted tree
in the cache (extracting once) or checks a directory bundle in place. Parsing the tree into
``tables/`` is :func:`forensics.ingest.load`'s job.

An archive is extracted (safely) into ``<cache>/<sha256 of the file>/``; the cache folder is
``cache_dir``, else ``$FORENSICS_CACHE_DIR``, else ``~/.cache/forensics``. The raw files of the hosts
(``hosts/<host>/raw/<source>/...``) are checked but not written: their names and sizes go to
``.archive-members.json`` and ingest reads them from the archive (writing GBs of raw outputs to
disk cost more than parsing them, and the cache stays small); an archive where a link needs one
of them is extracted whole.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from forensics.bundle.errors import BundleError
from forensics.bundle.read import (DEFAULT_LIMITS, LinkToDeferred, Limits, extract, extract_deferring, find_root,
                                   open_bundle, read_manifest)
from forensics.layout import ARCHIVE_MEMBERS, HOSTS_DIR

HASH_CHUNK = 4 << 20


def cache_root(cache_dir: Path | str | None = None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("FORENSICS_CACHE_DIR")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "forensics"


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            block = fh.read(HASH_CHUNK)
            if not block:
                break
            h.update(block)
    return h.hexdigest()


def extracted(path: Path | str, cache_dir: Path | str | None = None, limits: Limits = DEFAULT_LIMITS) -> Path:
    """Root of the safely extracted tree of the archive `path` in the cache (extracting once)."""
    path = Path(path)
    base = cache_root(cache_dir)
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BundleError(f"{base}: cannot create the cache folder ({exc.strerror})") from None
    target = base / file_sha256(path)
    if not target.is_dir():
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name[:16]}-", suffix=".partial", dir=base))
        try:
            _extract_without_raw(path, tmp, limits)
            try:
                os.rename(tmp, target)
            except OSError:
                if not target.is_dir():  # not a concurrent loader that won the race
                    raise
                shutil.rmtree(tmp, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    root = find_root(target)
    read_manifest(root)
    return root


def _is_raw(rel: str) -> bool:
    """A host's raw file (``hosts/<host>/raw/<source>/...``), at the top or in one top folder."""
    parts = rel.split("/")
    for p in (parts, parts[1:]):
        if len(p) >= 5 and p[0] == HOSTS_DIR and p[2] == "raw":
            return True
    return False


def _extract_without_raw(path: Path, tmp: Path, limits: Limits) -> None:
    """Extract all but the hosts' raw files, listed in ``<root>/.archive-members.json`` instead."""
    try:
        deferred = extract_deferring(path, tmp, _is_raw, limits)
    except LinkToDeferred:
        extract(path, tmp, limits)
        deferred = []
    root = find_root(tmp)
    read_manifest(root)
    prefix = "" if root == tmp else root.relative_to(tmp).as_posix() + "/"
    members = [[rel[len(prefix):], size] for rel, size in deferred if rel.startswith(prefix)]
    if members:
        (root / ARCHIVE_MEMBERS).write_text(json.dumps({"prefix": prefix, "members": members}) + "\n")


def bundle_root(path: Path | str, cache_dir: Path | str | None = None) -> tuple[Path, Path | None]:
    """(root of the bundle's tree, the archive its raw files are read from or None) for the bundle at
    `path`: a directory is checked in place, an archive is extracted into the cache once."""
    path = Path(path)
    if not path.exists():
        raise BundleError(f"{path}: no such file or directory")
    if path.is_dir():
        return open_bundle(path).root, None
    if path.is_file():
        return extracted(path, cache_dir), path
    raise BundleError(f"{path}: not a regular file or directory")
