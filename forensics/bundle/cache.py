"""`load(path)`: a directory holding a bundle's parsed tables, extracted and ingested at most once.

An archive is extracted (safely) into ``<cache>/<sha256 of the file>/``; the cache folder is
``cache_dir``, else ``$FORENSICS_CACHE_DIR``, else ``~/.cache/forensics``. Ingest runs only when
``tables/`` is absent or ``tables/_meta.json`` names parser versions older than the registered
ones, so a second load of the same bundle parses nothing. A directory bundle is checked in place
and its tables are written into it.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from forensics.bundle.errors import BundleError
from forensics.bundle.read import DEFAULT_LIMITS, Limits, extract, find_root, open_bundle, read_manifest

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


def _ensure_tables(root: Path, progress=None) -> None:
    from forensics.bundle.ingest import ingest_bundle, tables_current

    if not tables_current(root):
        try:
            ingest_bundle(root, progress=progress)
        except PermissionError as exc:
            raise BundleError(f"{root}: cannot write parsed tables ({exc.strerror})") from None


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
            extract(path, tmp, limits)
            read_manifest(find_root(tmp))
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


def load(path: Path | str, cache_dir: Path | str | None = None, progress=None) -> Path:
    """Directory of the bundle at `path` (archive or directory) with its parsed ``tables/``."""
    path = Path(path)
    if not path.exists():
        raise BundleError(f"{path}: no such file or directory")
    if path.is_dir():
        root = open_bundle(path).root
    elif path.is_file():
        root = extracted(path, cache_dir)
    else:
        raise BundleError(f"{path}: not a regular file or directory")
    _ensure_tables(root, progress)
    return root
