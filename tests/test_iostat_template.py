"""iostat's vectorised reader reads one report's layout once and applies it to the reports like it (issue 21): the
tables, unparsed lines and meta equal those of the same reader walking every report, and of the line loop, on every
iostat text fixture and the collector's layout (`iostat -x -t` as the simulator writes it), each made long enough to
have templates and mutated (damaged lines, a report with a device more or less, a header changed mid-file, a
banner mid-file, reports without times, a few times only, CRLF, 12-hour times)."""
from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from forensics.sources import iostat
from forensics.sources.iostat import text as iostat_text, text_fast as iostat_text_fast
from forensics.sources._base import ParseContext
from parse_kit import assert_same_result, damage

FIX = Path(__file__).parent / "fixtures" / "iostat"
CTXS = [
    ParseContext(),
    ParseContext(host="node01", tz="Europe/Berlin", capture_time=dt.datetime(2026, 11, 30, 10, 0, 1, tzinfo=dt.timezone.utc),
                 hints={"interval_s": 1}),
    ParseContext(tz="America/New_York", capture_time=dt.datetime(2026, 3, 8, 6, 59, 0), hints={"y": True}),
]


def _fixtures() -> list[Path]:
    return [p for p in sorted(FIX.glob("iostat--*")) if not p.name.endswith(".expected.json")
            and not p.read_bytes().lstrip().startswith(b"{")]


@pytest.fixture(scope="module")
def collector(tmp_path_factory) -> bytes:
    """`iostat -x -t 1` of one host for 2 minutes, as the simulator writes the collector's file."""
    out = tmp_path_factory.mktemp("sim") / "b.tar"
    subprocess.run([sys.executable, "-m", "forensics", "simulate", "--scenario", "healthy", "--nodes", "1",
                    "--duration", "2m", "--raw-only", "--out", str(out)], check=True, capture_output=True)
    with tarfile.open(out) as tf:
        return tf.extractfile("hosts/node01/raw/iostat/iostat.txt").read()


def _body(b: bytes) -> tuple[bytes, bytes]:
    """(the banner and what precedes the first report, the reports)."""
    lines = b.split(b"\n")
    k = next((i for i, t in enumerate(lines) if t.strip() and not t.lstrip().startswith((b"Linux", b"GNU/Linux"))
              and not t.startswith(b"#") and not t.startswith(b">") and not t.startswith(b"$")), 0)
    return b"\n".join(lines[:k]) + b"\n", b"\n".join(lines[k:])


def _long(b: bytes, times: int = 6) -> bytes:
    head, body = _body(b)
    return head + b"\n".join([body.rstrip(b"\n")] * times) + b"\n"


def _damage(b: bytes, seed: int) -> bytes:
    junk = [b"N/A", b"abc", b"1,5", b"", b"nan", b"12.0", b"Linux 5.4 (h2) \t01/02/21 \t_x86_64_\t(4 CPU)",
            b"#### forensics-sample ts=2026-11-30T10:15:02+00:00 argv=\"x\"", b"Time: 03:59:48 PM"]
    return damage(b, seed, junk, 6, "twice")  # twice: a device more, a header repeated


def _mid(b: bytes, f) -> bytes:
    """`f` applied to the middle third of the file's lines only."""
    lines = b.split(b"\n")
    a, z = len(lines) // 3, 2 * len(lines) // 3
    return b"\n".join(lines[:a] + f(lines[a:z]) + lines[z:])


_STAMP = re.compile(rb"^[0-9]{1,4}[/.-][0-9]{1,2}[/.-][0-9]{1,4}[ T][0-9:]+(?: [AP]M)?(?:[+-][0-9]{4})?$")


def _variants(b: bytes):
    long = _long(b)
    yield "long", long
    yield "long crlf", long.replace(b"\n", b"\r\n")
    yield "two runs", long + long
    for seed in range(4):
        yield f"damaged{seed}", _damage(long, seed)
    yield "a device more mid-file", _mid(long, lambda ls: [x for t in ls for x in ([t, t] if t[:4] in (b"sda ", b"vda ") else [t])])
    yield "a device less mid-file", _mid(long, lambda ls: [t for t in ls if t[:4] not in (b"sda ", b"vda ")])
    yield "header changed mid-file", _mid(long, lambda ls: [t.replace(b"%util", b"%util  extra") for t in ls])
    yield "banner mid-file", _mid(long, lambda ls: ls[:5] + [b"Linux 5.4 (h2) \t01/02/21 \t_x86_64_\t(4 CPU)", b""] + ls[5:])
    untimed = b"\n".join(t for t in long.split(b"\n") if not _STAMP.match(t.strip()))
    yield "no times", untimed
    lines = untimed.split(b"\n")
    yield "two times only", b"\n".join(lines[:4] + [b"11/30/26 11:00:00"] + lines[4:9] + [b"11/30/26 11:00:01"] + lines[9:])
    yield "a value not a number mid-file", _mid(long, lambda ls: [re.sub(rb" 0\.00 ", b" abc  ", t, count=1) for t in ls])


def _read(data: bytes, ctx: ParseContext, monkeypatch, fast: bool, template: bool):
    monkeypatch.setattr(iostat, "FAST_MIN_LINES", 0 if fast else 10**9)
    monkeypatch.setattr(iostat_text_fast, "TEMPLATE_MIN_REPORTS", 4 if template else 10**9)
    return iostat.parse(data, ctx)


def _check(data: bytes, monkeypatch) -> None:
    for ctx in CTXS:
        tpl = _read(data, ctx, monkeypatch, True, True)
        assert_same_result(tpl, _read(data, ctx, monkeypatch, True, False))
        assert_same_result(tpl, _read(data, ctx, monkeypatch, False, False))


@pytest.mark.parametrize("path", _fixtures(), ids=lambda p: p.name)
def test_templates_read_as_the_walk_and_the_line_loop_on_every_fixture(path, monkeypatch):
    for _, data in _variants(path.read_bytes()):
        _check(data, monkeypatch)


def test_templates_read_as_the_walk_on_the_collector_layout(collector, monkeypatch):
    for name, data in [("as is", collector), *_variants(collector)]:
        _check(data, monkeypatch)


def _one_report_a_run(b: bytes) -> bytes:
    """Each report a run of its own (its banner before it): a template must not carry one report's banner over."""
    head, body = _body(b)
    lines = body.split(b"\n")
    second = [i for i, t in enumerate(lines) if _STAMP.match(t.strip())][1]
    report = b"\n".join(lines[:second]).rstrip(b"\n")
    assert report.count(b"avg-cpu:") == 1 and _STAMP.match(lines[0].strip())
    return b"".join([head, report, b"\n\n"] * 8)


def _sysstat5(reports: int = 12) -> bytes:
    """sysstat 5: a `Time:` line after each report's rows (the date is the banner's): the rows of a report found
    between two Device headers belong to the report the Time: line before them started."""
    out = ["Linux 2.4.22-1.2188.nptl (localhost.localdomain)        05/01/2004", ""]
    for k in range(reports):
        out += ["Device:            tps   Blk_read/s   Blk_wrtn/s   Blk_read   Blk_wrtn",
                f"dev3-0            1.00         8.00         0.00          {8 + k}          0", "",
                "Time: 03:59:48 PM"]  # (the same text each time: the reports' line kinds all alike)
    return ("\n".join(out) + "\n").encode()


@pytest.mark.parametrize("make", [lambda c: _one_report_a_run(c), lambda c: _sysstat5()],
                         ids=["one report a run", "sysstat5 Time: after the rows"])
def test_templates_do_not_carry_a_banner_or_a_report_started_before_them(collector, make, monkeypatch):
    _check(make(collector), monkeypatch)


def test_the_collector_layout_is_read_by_template(collector, monkeypatch):
    """Most reports of the collector's file are applied from a template, not walked: the steering walk reads a
    handful of lines (the banner, the first reports), not two a report; and the rows are all there."""
    calls = []
    real = iostat_text._Steer.line
    monkeypatch.setattr(iostat_text._Steer, "line", lambda self, *a: calls.append(1) or real(self, *a))
    res = _read(collector, CTXS[1], monkeypatch, True, True)
    reports = collector.count(b"avg-cpu:")
    assert reports >= 100 and res.meta["reports"] == reports
    assert res.tables["cpu_util"].height == reports and res.tables["disk_io"].height == 6 * reports
    assert len(calls) < 10
    calls.clear()
    _read(collector, CTXS[1], monkeypatch, True, False)
    assert len(calls) >= 2 * reports
