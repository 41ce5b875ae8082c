"""The vectorised sar / iostat text readers (used on big files) read exactly what the line loops read.

Every real sar and iostat text fixture, and variants of them (12-hour times, midnight roll-over,
several runs, CRLF, tabs, damaged lines), is parsed through both paths with several contexts; the
tables, the unparsed lines and the meta must be equal.
"""
from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from forensics.sources import iostat, sar
from forensics.sources._base import ParseContext
from parse_kit import assert_fast_reads_as_slow, damage

FIX = Path(__file__).parent / "fixtures"
CTXS = [
    ParseContext(),
    ParseContext(host="node01", tz="Europe/Berlin", capture_time=dt.datetime(2026, 11, 30, 10, 0, 1, tzinfo=dt.timezone.utc),
                 hints={"interval_s": 1}),
    ParseContext(tz="America/New_York", capture_time=dt.datetime(2026, 3, 8, 6, 59, 0), hints={"y": True}),
]


def _texts(source: str) -> list[Path]:
    return [p for p in sorted((FIX / source).glob(f"{source}--*")) if not p.name.endswith(".expected.json")
            and not p.read_bytes().lstrip().startswith(b"{") and b"# hostname;interval;timestamp;" not in p.read_bytes()]


def _ampm(b: bytes) -> bytes:
    def f(m):
        h = int(m.group(1))
        return b"%02d:%s:%s %s" % (h % 12 or 12, m.group(2), m.group(3), b"AM" if h < 12 else b"PM")
    return re.sub(rb"(?m)^([0-9]{2}):([0-9]{2}):([0-9]{2})", f, b)


def _shift(b: bytes) -> bytes:  # times 13 hours later: most files then pass midnight
    return re.sub(rb"(?m)^([0-9]{2}):", lambda m: b"%02d:" % ((int(m.group(1)) + 13) % 24), b)


def _damage(b: bytes, seed: int) -> bytes:
    junk = [b"N/A", b"abc", b"1,5", b"", b"nan", b"Average:", b"LINUX RESTART (8 CPU)", b"COM note", b"  \t",
            b"#### forensics-sample ts=2026-11-30T10:15:02+00:00 argv=\"x\"", b"Linux 5.4 (h2) \t01/02/21 \t_x86_64_\t(4 CPU)"]
    return damage(b, seed, junk, 12, "tab")


def _variants(p: Path):
    b = p.read_bytes()
    yield "as is", b
    yield "crlf", b.replace(b"\n", b"\r\n")
    yield "twice", b + b
    yield "12h", _ampm(b)
    yield "midnight", _shift(b)
    for seed in range(3):
        yield f"damaged{seed}", _damage(b, seed)


def _same(mod, data: bytes, monkeypatch) -> None:
    assert_fast_reads_as_slow(mod, data, CTXS, monkeypatch)


@pytest.mark.parametrize("path", _texts("sar"), ids=lambda p: p.name)
def test_sar_vectorised_reads_as_the_line_loop(path, monkeypatch):
    for _, data in _variants(path):
        _same(sar, data, monkeypatch)


@pytest.mark.parametrize("path", _texts("iostat"), ids=lambda p: p.name)
def test_iostat_vectorised_reads_as_the_line_loop(path, monkeypatch):
    for _, data in _variants(path):
        _same(iostat, data, monkeypatch)


def test_vectorised_paths_are_taken(monkeypatch):
    """The fast readers run (and are not silently skipped) on the fixtures' text."""
    called = []
    for mod, name in ((sar, "_parse_text_fast"), (iostat, "_parse_text_fast")):
        real = getattr(mod, name)
        monkeypatch.setattr(mod, name, lambda *a, _r=real, **k: called.append(1) or _r(*a, **k))
        monkeypatch.setattr(mod, "FAST_MIN_LINES", 0)
    sar.parse((FIX / "sar" / "sar--centos7-bdp-names-ampm.txt").read_bytes(), ParseContext())  # (by name: not by sort order)
    iostat.parse(_texts("iostat")[0].read_bytes(), ParseContext())
    assert len(called) == 2
