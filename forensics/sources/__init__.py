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

from forensics.sources._base import SNIFF_ACCEPT, ParseContext, ParseResult, Sniff, split_lines  # noqa: F401

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


def sniff_as(name: str, head: bytes) -> Sniff:
    """Source `name`'s verdict on `head` (a sniffer that raises: confidence 0 with the error)."""
    try:
        return Sniff.of(get(name).sniff(head[:SNIFF_BYTES]))
    except Exception as exc:  # noqa: BLE001 - a sniffer must never break detection of the others
        return Sniff(0.0, f"its sniffer failed: {type(exc).__name__}")


def recognise(head: bytes, hints: dict | None = None) -> tuple[str | None, Sniff]:
    """The source `head` is taken to be, with its verdict: the first source (by SNIFF_PRIORITY,
    then name) whose sniffer accepts it; then, with `hints` the user stated (e.g. nvidia-smi's
    query_fields), the first source whose ``sniff_stated(head, hints)`` accepts it; else (None, a
    verdict naming the closest source)."""
    mods = sorted(registry().values(), key=lambda m: (getattr(m, "SNIFF_PRIORITY", 50), m.NAME))
    best: tuple[str, Sniff] | None = None
    for mod in mods:
        got = sniff_as(mod.NAME, head)
        if got:
            return mod.NAME, got
        if got.confidence > 0 and (best is None or got.confidence > best[1].confidence):
            best = (mod.NAME, got)
    for mod in mods if hints else ():
        stated = getattr(mod, "sniff_stated", None)
        got = Sniff.of(stated(head[:SNIFF_BYTES], hints)) if stated else Sniff(0.0)
        if got:
            return mod.NAME, got
    if best is None:
        return None, Sniff(0.0, "no source recognises it")
    return None, Sniff(best[1].confidence,
                       f"no source recognises it (closest: {best[0]} at {best[1].confidence:.2f}: {best[1].reason})")


def detect(head: bytes) -> str | None:
    """Name of the first source (by SNIFF_PRIORITY, then name) whose sniff() accepts `head`."""
    return recognise(head)[0]


def parse_bytes(data: bytes, source: str | None = None, ctx: ParseContext | None = None) -> tuple[str, ParseResult]:
    """Detect (unless given) and parse `data`; returns (source name, result)."""
    ctx = ctx or ParseContext()
    name = source or detect(data[:SNIFF_BYTES])
    if name is None:
        raise ValueError(f"{ctx.file}: no source recognises this input")
    return name, get(name).parse(data, ctx)
