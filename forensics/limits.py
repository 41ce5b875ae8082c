"""The resource budget every command runs under: memory, query time, line length, cache size.

One process-wide budget, set once by the command line (``forensics --max-memory 4G ...``, or
``$FORENSICS_MAX_MEMORY``) and read by the layers that allocate:

- :func:`max_memory`: bytes this process may use; default :data:`MEMORY_SHARE` of the machine's
  physical memory, at most :data:`MEMORY_DEFAULT_MAX` (DuckDB keeps what its limit allows: with
  half of a 24 GB machine as the budget, ``analyze`` of 64 nodes x 8 GPUs x 1 h grew past 2.5 GB in
  detection; a bigger budget is asked for with ``--max-memory``). DuckDB gets :data:`DUCKDB_SHARE` of it as its ``memory_limit`` (the rest is for
  polars frames and Python); a query that needs more spills to a private folder or fails with one line.
- :data:`MAX_LINE_BYTES`: the longest line any parser sees (see :mod:`forensics.sources._base`).
- :func:`cache_limit`: bytes the parsed-table cache may hold before the least recently used entries
  are evicted (``$FORENSICS_CACHE_MAX``, default :data:`CACHE_SHARE` of the cache's file system,
  at most :data:`CACHE_MAX_DEFAULT`).

Sizes are given as ``512M``, ``4G``, ``4GB``, ``2.5GiB`` or a number of bytes.
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

MEMORY_SHARE = 0.5          # default --max-memory: half the physical memory ...
MEMORY_DEFAULT_MAX = 3 << 29  # ... and at most 1.5 GiB (DuckDB 0.9 GiB; Python's own memory comes on top)
DUCKDB_SHARE = 0.6          # of --max-memory, for DuckDB's buffer manager
MIN_MEMORY = 256 << 20      # below this nothing useful runs
MAX_LINE_BYTES = 64 << 10   # longer lines are truncated before parsing (printk's record limit is 1 KiB)
QUERY_TIMEOUT_S = 300.0     # default --timeout of ad hoc SQL
CACHE_SHARE = 0.25          # default cache limit: a quarter of the cache file system ...
CACHE_MAX_DEFAULT = 64 << 30  # ... and never more than 64 GiB
SPILL_SHARE = 0.5           # DuckDB may spill at most half of the free space of its folder

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", re.I)

_max_memory: int | None = None


class LimitError(ValueError):
    """A limit of the budget was reached, or a limit given is not a size: one clear line."""


def parse_size(text: str | int) -> int:
    """Bytes of a size such as ``4G``, ``512MiB``, ``1.5GB`` or ``1000000``."""
    if isinstance(text, int):
        return text
    m = _SIZE.fullmatch(str(text))
    if not m:
        raise LimitError(f"{text!r} is not a size (use e.g. 512M, 4G or a number of bytes)")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def set_max_memory(value: str | int | None) -> int:
    """Set the process budget (None: ``$FORENSICS_MAX_MEMORY`` or the default share); returns bytes."""
    global _max_memory
    if value is None or value == "":
        value = os.environ.get("FORENSICS_MAX_MEMORY") or None
    n = parse_size(value) if value is not None else min(MEMORY_DEFAULT_MAX, int(physical_memory() * MEMORY_SHARE))
    if n < MIN_MEMORY:
        raise LimitError(f"--max-memory {human(n)} is below the {human(MIN_MEMORY)} anything needs")
    _max_memory = n
    return n


def max_memory() -> int:
    return _max_memory if _max_memory is not None else set_max_memory(None)


def duckdb_memory() -> int:
    return max(MIN_MEMORY // 2, int(max_memory() * DUCKDB_SHARE))


def cache_limit(cache_dir: Path) -> int:
    env = os.environ.get("FORENSICS_CACHE_MAX")
    if env:
        return parse_size(env)
    try:
        total = shutil.disk_usage(_existing(cache_dir)).total
    except OSError:
        return CACHE_MAX_DEFAULT
    return int(min(CACHE_MAX_DEFAULT, total * CACHE_SHARE))


def free_bytes(path: Path) -> int:
    try:
        return shutil.disk_usage(_existing(path)).free
    except OSError:
        return 0


def _existing(path: Path) -> Path:
    p = Path(path).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p
