"""Bundles: reading them safely, writing them atomically, turning their raw files into tables.

- :func:`load` (``forensics.bundle.load(path, cache_dir=None) -> Path``): the directory of a bundle
  with its parsed tables, extracted and ingested at most once (see :mod:`forensics.bundle.cache`).
- :mod:`forensics.bundle.read`: :func:`open_bundle`, :func:`extract` with all the refusals.
- :mod:`forensics.bundle.write`: :func:`write_tree`, :func:`write_items` (atomic tar/.gz/.zst).
- :mod:`forensics.bundle.ingest`: :func:`ingest_bundle` (raw files -> tables/).
- :mod:`forensics.bundle.build`: :func:`build_bundle` (`forensics bundle`: merge bundles, loose files,
  sosreports, nvidia-bug-reports); :mod:`forensics.bundle.info` (`forensics info`).
"""
from __future__ import annotations

from forensics.bundle.errors import BundleError


def load(path, cache_dir=None, progress=None):
    """Directory of the bundle at `path` with parsed ``tables/`` (see :mod:`forensics.bundle.cache`)."""
    from forensics.bundle.cache import load as _load

    return _load(path, cache_dir=cache_dir, progress=progress)


def open_bundle(path, workdir=None):
    from forensics.bundle.read import open_bundle as _open

    return _open(path, workdir=workdir)


__all__ = ["BundleError", "load", "open_bundle"]
