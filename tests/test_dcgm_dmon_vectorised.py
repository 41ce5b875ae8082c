"""dcgm_dmon's vectorised reader (taken on big plain files) reads exactly what the line loop reads.

The real dmon fixtures, a long stream in the collector's layout (the simulator's columns) and variants
of them (repeated, markers with and without a delay or time, CRLF, tabs, blank lines, GPUs missing
from a sample, damaged lines of every kind the loop treats on its own) are parsed through both paths
with several contexts; the table, the unparsed lines and the meta must be equal.
"""
from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pytest

from forensics.simulate.fmt_dcgm import DMON_COLUMNS, _dmon_line
from forensics.sources import dcgm_dmon
from forensics.sources._base import ParseContext
from parse_kit import assert_fast_reads_as_slow

FIX = Path(__file__).parent / "fixtures" / "dcgm_dmon"
REAL = sorted(p for p in FIX.glob("dcgm_dmon--*.txt"))
CTXS = [
    ParseContext(),
    ParseContext(host="node01", capture_time=dt.datetime(2026, 11, 30, 10, 0, 1, 250_000, tzinfo=dt.timezone.utc),
                 hints={"argv": ["dcgmi", "dmon", "-e", "1002,1004", "-d", "500"]}),
    ParseContext(capture_time=dt.datetime(2026, 3, 8, 6, 59, 0), hints={"argv": ["dcgmi", "dmon", "-e", "155"]}),
]


def _stream(samples: int, gpus: int = 4, seed: int = 0) -> bytes:
    """dmon in the collector's layout: header every 14 samples, N/A profiling cells in the first sample,
    now and then a GPU missing from a sample (fallen off the bus)."""
    rng = random.Random(seed)
    head = _dmon_line("#Entity", [c for c, _, _ in DMON_COLUMNS]) + _dmon_line("ID", [u for _, _, u in DMON_COLUMNS])
    out = [head]
    for k in range(samples):
        if k and k % 14 == 0:
            out.append(head)
        for g in range(gpus):
            if rng.random() < 0.03:
                continue
            prof = ["N/A"] * 9 if k == 0 else [f"{rng.random():.3f}" for _ in range(5)] + [
                str(rng.randrange(10**11)) for _ in range(4)]
            out.append(_dmon_line(f"GPU {g}", prof + [f"{rng.uniform(80, 700):.3f}", "1980", str(rng.randrange(101)),
                                                      rng.choice(["0", "0", "79", "-"])]))
    return "".join(out).encode()


def _markers(b: bytes, every: int, seed: int) -> bytes:
    """A forensics-sample marker before every `every`-th line: with a time, an argv with or without -d,
    now and then a malformed one (it keeps the previous marker's time)."""
    rng = random.Random(seed)
    t0 = dt.datetime(2026, 11, 30, 10, 0, 0, tzinfo=dt.timezone.utc)
    out = [b"stray line before the first marker", b""]
    for i, ln in enumerate(b.split(b"\n")):
        if i % every == 0:
            ts = (t0 + dt.timedelta(seconds=i, microseconds=rng.randrange(10**6))).isoformat().encode()
            out.append(rng.choice([b"#### forensics-sample ts=" + ts + b' argv="dcgmi dmon -e 1002 -d 2000"',
                                   b"#### forensics-sample ts=" + ts + b' argv="dcgmi dmon -e 1002"',
                                   b"#### forensics-sample ts=" + ts,
                                   b"#### forensics-sample nonsense"]))
        out.append(ln)
    return b"\n".join(out)


DAMAGE = [b"GPU 0     abc          0.5", b"GPU 1", b"GPU 0 LINK 1  5  6", b"GPU-I 3   0.1  0.2", b"Switch 0  1", b"",
          b"   \t", b"Error: Unable to set field watches", b"dmon was stopped due to receiving a signal",
          b"ID", b"#Entity   SMACT   TENSO", b"#Entity   POWER   SMCLK   XIDER", b"GPU 0     0.5 \xc2\xb5 0.2",
          b"GPU 2\x0b    1", b"$ dcgmi dmon -e 1002", b"GPU 3     1e5   .5   -2.   N/W   N/S   [N/A]", b"# comment",
          b"GPU 0 " + b"1 " * 40, b"GPU 1234567890  1", b"GPU 00007   1"]


def _damage(b: bytes, seed: int) -> bytes:
    rng = random.Random(seed)
    lines = b.split(b"\n")
    for _ in range(3):
        lines.insert(rng.randrange(len(lines)), rng.choice(DAMAGE))
    return b"\n".join(lines)


def _variants(b: bytes):
    yield "as is", b
    yield "crlf", b.replace(b"\n", b"\r\n")
    yield "twice", b + b
    yield "tabs", b.replace(b"     ", b"\t", 7)
    yield "blank lines", b.replace(b"\nGPU 1", b"\n\n  \nGPU 1")
    yield "no units line", b"\n".join(ln for ln in b.split(b"\n") if not ln.startswith(b"ID"))
    yield "markers", _markers(b, 9, 1)
    yield "markers dense", _markers(b, 2, 2)
    for i, junk in enumerate(DAMAGE):
        yield f"damaged {i}", b.replace(b"\nGPU 1", b"\n" + junk + b"\nGPU 1", 1)
    for seed in range(4):
        yield f"damaged seed {seed}", _damage(b, seed)


def _inputs():
    for p in REAL:
        b = p.read_bytes()
        yield p.name, b
        yield p.name + " (rows only)", b"\n".join(ln for ln in b.split(b"\n") if not ln.startswith(b"dcgmi "))
    yield "collector layout", _stream(40)
    yield "collector layout, 8 GPUs, header first thing after a blank", b"\n" + _stream(30, gpus=8, seed=3)


def _same(data: bytes, monkeypatch) -> list[bool]:
    taken = []
    real = dcgm_dmon._fast
    monkeypatch.setattr(dcgm_dmon, "_fast", _recording(real, taken))
    assert_fast_reads_as_slow(dcgm_dmon, data, CTXS, monkeypatch)
    return taken


def _recording(real, taken: list):
    def fast(df, rd):
        out = real(df, rd)
        taken.append(out is not None)
        return out
    return fast


@pytest.mark.parametrize("name,data", list(_inputs()), ids=lambda v: v if isinstance(v, str) else "")
def test_dcgm_dmon_vectorised_reads_as_the_line_loop(name, data, monkeypatch):
    for _, variant in _variants(data):
        _same(variant, monkeypatch)


def test_vectorised_path_is_taken_on_plain_streams(monkeypatch):
    """The fast reader runs (and does not fall back) on the collector's layout, with markers, CRLF and tabs,
    and on the real fixture's rows; it declines (the line loop reads) a file with a damaged line."""
    s = _stream(20)
    for data in (s, _markers(s, 9, 1), s.replace(b"\n", b"\r\n"), s.replace(b"     ", b"\t", 7),
                 b"\n".join(ln for ln in REAL[0].read_bytes().split(b"\n") if not ln.startswith(b"dcgmi "))):
        assert _same(data, monkeypatch) == [True] * len(CTXS)
    assert _same(s.replace(b"\nGPU 1", b"\nGPU 1 LINK 0  1\nGPU 1", 1), monkeypatch) == [False] * len(CTXS)
    assert _same(s.replace(b"\nGPU 1", b"\nGPU 1\nGPU 1", 1), monkeypatch) == [False] * len(CTXS)
