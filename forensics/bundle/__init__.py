"""Bundles: reading them safely, writing them atomically, caching their extracted trees.

- :mod:`forensics.bundle.read`: :func:`open_bundle`, :func:`extract` with all the refusals.
- :mod:`forensics.bundle.write`: :func:`write_tree`, :func:`write_items` (atomic tar/.gz/.zst).
- :mod:`forensics.bundle.cache`: an archive's extracted tree in the cache, keyed by its hash.

Turning the raw files into tables is :mod:`forensics.ingest` (``forensics.ingest.load(path)``);
building a bundle from other bundles, loose files, sosreports and bug reports is
:mod:`forensics.importers`.
"""
from __future__ import annotations

from forensics.bundle.errors import BundleError


def open_bundle(path, workdir=None):
    from forensics.bundle.read import open_bundle as _open

    return _open(path, workdir=workdir)


__all__ = ["BundleError", "open_bundle"]
