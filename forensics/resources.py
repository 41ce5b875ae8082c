"""Locate the project's data directories (schemas/, queries/) in a checkout or an installed wheel."""
from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """Return the directory `name` (``schemas`` or ``queries``)."""
    for candidate in (_PKG.parent / name, _PKG / "_data" / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"forensics data directory {name!r} not found next to {_PKG}")
