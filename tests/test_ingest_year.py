"""The year of yearless syslog/journal times in a bundle comes from the file's capture time, rolled
back over New Year (a node collected on 2 January holds December's lines)."""
from __future__ import annotations

import datetime as dt
from pathlib import PurePosixPath

from forensics.ingest.hostfacts import parse_context
from forensics.sources import dmesg

UTC = dt.timezone.utc
LINES = (b"Dec 31 23:59:58 node01 kernel: mlx5_core 0000:0c:00.0 ib0: Link down\n"
         b"Jan  2 00:00:03 node01 kernel: mlx5_core 0000:0c:00.0 ib0: Link up\n")


def _ctx(start: str | None, info: dict | None = None):
    entries = [{"raw_file": "raw/dmesg.txt", "start": start}] if start else []
    starts = {e["raw_file"]: dt.datetime.fromisoformat(e["start"]) for e in entries}
    return parse_context("node01", "raw/dmesg.txt", "dmesg", PurePosixPath("raw/dmesg.txt"),
                         {"timezone": "UTC", **(info or {})}, starts)


def test_capture_on_january_second_puts_december_lines_in_the_year_before():
    ctx = _ctx("2027-01-02T00:10:00+00:00")
    assert ctx.year is None and ctx.capture_time is not None
    ts = dmesg.parse(LINES, ctx).tables["kernel_log"].sort("line_no").get_column("ts").to_list()
    assert [t.replace(tzinfo=None) for t in ts] == [dt.datetime(2026, 12, 31, 23, 59, 58),
                                                    dt.datetime(2027, 1, 2, 0, 0, 3)]


def test_without_a_capture_time_the_host_clock_year_is_used_as_before():
    ctx = _ctx(None, {"clock": {"wall": "2027-06-01T00:00:00+00:00"}})
    assert ctx.year == 2027
    years = dmesg.parse(LINES, ctx).tables["kernel_log"].get_column("ts").dt.year().to_list()
    assert years == [2027, 2027]
