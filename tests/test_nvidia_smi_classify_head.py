"""nvidia_smi classifies a file from its first lines only (issue 21: a query-gpu or nvlink -gt series is read in
polars; its lines are no longer all made Python strings just to classify it). The head must give the verdict the
whole file gives, and the parsers that walk Python lines must still get every line."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from forensics.layout import format_marker
from forensics.sources import ParseContext
from forensics.sources._base import split_lines
from forensics.sources.nvidia_smi import _classify_head, parse, recognise

FX = Path(__file__).parent / "fixtures" / "nvidia_smi"
FIXTURES = sorted(p for p in FX.glob("nvidia_smi--*") if not p.name.endswith(".expected.json"))
MARK = format_marker(dt.datetime(2026, 12, 1, 10, tzinfo=dt.timezone.utc), ["nvidia-smi", "nvlink", "-gt", "d"])
GPU = "GPU 0: NVIDIA H800 (UUID: GPU-34bf77d1-c686-6821-79a8-32d326c5039c)"


def _verdicts(data: bytes):
    lines = split_lines(data)
    head = _classify_head(lines)
    full = lines["text"].to_list()
    assert full[:len(head)] == head
    got = recognise.classify(head, None), recognise.classify(full, None)
    strict = recognise.classify(head, None, strict=True), recognise.classify(full, None, strict=True)
    return got, strict


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_head_classifies_as_the_whole_file(path):
    (a, b), (c, d) = _verdicts(path.read_bytes())
    assert a == b and c == d


def _decisive_after(junk: int, gap: int, before: str = "") -> bytes:
    """`junk` lines no reader knows, then an nvlink -gt GPU line whose first link line comes `gap` blank lines
    later: the verdict needs the lines after the 400th non-blank one when junk is 399."""
    return (before + "x y\n" * junk + GPU + "\n" + "\n" * gap + "\t Link 0: Data Tx: 5863784 KiB\n"
            + "z\n" * 5000).encode()


@pytest.mark.parametrize("junk,gap", [(399, 0), (399, 2), (398, 2), (400, 2), (2100, 1)])
def test_lookahead_past_the_400th_line(junk, gap):
    (a, b), (c, d) = _verdicts(_decisive_after(junk, gap))
    assert a == b and c == d
    assert (a[0] == "nvlink") == (junk < 400)


def test_record_lookahead_past_the_401st_line():
    """A -q record's own lines, blank lines between them, the first of them the 400th line that counts: the
    verdict reads keys up to 11 lines past it, beyond the 401st."""
    keys = ["Product Name : NVIDIA A100", "Serial Number : 1", "GPU UUID : GPU-1", "VBIOS Version : 92",
            "Minor Number : 0", "Board ID : 0x100"]
    data = ("x y\n" * 399 + "\n\n".join(keys) + "\n" + "z\n" * 3000).encode()
    (a, b), (c, d) = _verdicts(data)
    assert a == b and c == d and a[0] == "text"


def test_head_grows_past_blank_and_marker_lines():
    """3,000 markers and blanks before the first line that counts: the head grows until it holds 401 of them."""
    data = _decisive_after(399, 2, before=(MARK + "\n\n") * 1500)
    lines = split_lines(data)
    head = _classify_head(lines)
    assert 3000 + 400 < len(head) < lines.height
    assert recognise.classify(head, None)[0] == "nvlink"


def test_line_readers_get_every_line():
    """A -q text of many GPU records (far more lines than the classifying head): every record read."""
    rec = (FX / "nvidia_smi--q-v100-410-throttle-old-ecc.txt").read_bytes()
    one = parse(rec, ParseContext(host="n")).tables["gpu_samples"].height
    many = parse(rec * 60, ParseContext(host="n"))
    assert split_lines(rec * 60).height > 2 * len(_classify_head(split_lines(rec * 60)))
    assert one >= 1 and many.tables["gpu_samples"].height == 60 * one


def test_nvlink_series_rows_of_every_sample():
    """The nvlink -gt series (read in polars): every sample of a long file, not only those of the head."""
    sample = MARK + "\n" + GPU + "\n" + "".join(f"\t Link {k}: Data {d}: {k * 10 + 1} KiB\n"
                                              for k in range(18) for d in ("Tx", "Rx"))
    res = parse((sample * 400).encode(), ParseContext(host="n"))
    assert res.tables["nvlink_counters"].height == 400 * 36
