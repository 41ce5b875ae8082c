"""`load(path)`: a directory holding a bundle's parsed tables, extracted and ingested at most once.

The bundle's tree comes from :func:`forensics.bundle.cache.bundle_root` (an archive is extracted
safely into the cache, keyed by its content hash; a directory bundle is checked in place and its
tables are written into it). Ingest runs only when ``tables/`` is absent or ``tables/_meta.json``
names parser versions older than the registered ones, so a second load of the same bundle parses
nothing.
"""
from __future__ import annotations

from pathlib import Path

from forensics.bundle.cache import bundle_root
from forensics.bundle.errors import BundleError
from forensics.errors import write_error
from forensics.ingest import run


def ensure_tables(root: Path, progress=None, archive: Path | None = None) -> None:
    """Parse the tree at `root` into ``tables/`` unless its tables are current."""
    if not run.tables_current(root):
        try:
            run.ingest_bundle(root, progress=progress, archive=archive)
        except PermissionError as exc:
            raise BundleError(f"{root}: cannot write parsed tables ({exc.strerror})") from None
        except Exception as exc:  # a full disk while writing tables: not the bundle's fault
            err = write_error(exc, root / "tables")
            if err is None:
                raise
            raise err from None


def load(path: Path | str, cache_dir: Path | str | None = None, progress=None) -> Path:
    """Directory of the bundle at `path` (archive or directory) with its parsed ``tables/``.

    `progress`: None or a callable taking one message per file or host parsed."""
    root, archive = bundle_root(path, cache_dir)
    ensure_tables(root, progress, archive=archive)
    return root
