"""Source parsers: one module per tool, discovered from this package (never listed by hand).

>>> sorted(registry())  # doctest: +SKIP
['dmesg', 'ethtool', 'iostat', 'nccl', 'numactl', 'nvidia_smi', 'sar']
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from forensics.sources._base import ParseContext, ParseResult, split_lines  # noqa: F401

REQUIRED = ("NAME", "VERSION", "TABLES", "DESCRIPTION", "sniff", "parse")
SNIFF_BYTES = 65536


@lru_cache(maxsize=None)
def registry() -> dict[str, ModuleType]:
    """name -> module for every parser module in this package (modules starting with _ skipped)."""
    found: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        missing = [a for a in REQUIRED if not hasattr(mod, a)]
        if missing:
            raise ImportError(f"source module {info.name} lacks {missing}")
        found[mod.NAME] = mod
    return dict(sorted(found.items()))


def get(name: str) -> ModuleType:
    try:
        return registry()[name]
    except KeyError:
        raise KeyError(f"unknown source {name!r} (known: {', '.join(registry())})") from None


def detect(head: bytes) -> str | None:
    """Name of the first source (by SNIFF_PRIORITY, then name) whose sniff() accepts `head`."""
    mods = sorted(registry().values(), key=lambda m: (getattr(m, "SNIFF_PRIORITY", 50), m.NAME))
    for mod in mods:
        try:
            if mod.sniff(head[:SNIFF_BYTES]):
                return mod.NAME
        except Exception:  # a sniffer must never break detection of the others
            continue
    return None


def parse_bytes(data: bytes, source: str | None = None, ctx: ParseContext | None = None) -> tuple[str, ParseResult]:
    """Detect (unless given) and parse `data`; returns (source name, result)."""
    ctx = ctx or ParseContext()
    name = source or detect(data[:SNIFF_BYTES])
    if name is None:
        raise ValueError(f"{ctx.file}: no source recognises this input")
    return name, get(name).parse(data, ctx)
