"""`forensics analyze --format md`: a ticket comment of at most ~60 lines, whatever the analysis holds."""
from __future__ import annotations

import datetime as dt
import json

import polars as pl

import report_bundles as rb
from forensics import schema
from forensics.analysis import Analysis
from forensics.report.summary import render_markdown

MAX_LINES = 60


def _many_findings(n: int) -> pl.DataFrame:
    t0 = dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.timezone.utc)
    rows = []
    for i in range(n):
        rows.append({
            "id": f"f-{i}", "kind": "pfc_storm" if i == 0 else "nccl_transport_error", "severity": "critical",
            "layer": "nic_fabric" if i == 0 else "nccl", "start": t0 + dt.timedelta(seconds=i), "end": t0 + dt.timedelta(seconds=60 + i),
            "hosts": [f"node{h:02d}" for h in range(1, 20)], "subject": f"rank{i}", "score": 1.0 - i / 100,
            "summary": f"line one of {i} | with a pipe\nand a second line", "evidence": json.dumps({"n": i}),
            "confirm": "ethtool -S eth0\nmlnx_qos -i eth0", "remediation": "first\nsecond\nthird",
            "caused_by": None if i == 0 else "f-0", "detector": "x",
        })
    return schema.conform(pl.DataFrame(rows), "findings")


def _table_rows(md: str) -> list[str]:
    return [line for line in md.splitlines() if line.startswith("| ") and not line.startswith("| #")]


def test_markdown_stays_short_with_many_findings():
    cov = pl.DataFrame({"source": [f"src{i}" for i in range(30)], "files": list(range(30)),
                        "lines": [100] * 30, "unparsed": [1] * 30, "failed_files": [0] * 30})
    failed = pl.DataFrame({"host": ["node01"] * 50, "name": ["x"] * 50, "command": ["ethtool -S eth0"] * 50,
                           "exit_code": [1] * 50, "timed_out": [False] * 50, "truncated": [False] * 50, "error": [None] * 50})
    hosts = pl.DataFrame({"host": [f"node{h:02d}" for h in range(64)]})
    a = Analysis(_many_findings(80), hosts, cov, failed, [f"error {i}" for i in range(30)], [])
    md = render_markdown(a)
    lines = md.splitlines()
    assert len(lines) <= MAX_LINES, len(lines)
    assert lines[0].startswith("### forensics analyze: 80 findings on 64 hosts")
    assert "**Most likely root cause:** `pfc_storm`" in md
    # every table row is one line with the table's 7 cells (newlines and pipes in the text do not break it)
    rows = _table_rows(md)
    assert rows and all(r.replace("\\|", "").count("|") == 8 for r in rows), rows[:2]
    assert "more findings" in md


def test_markdown_of_the_simulated_storm():
    a = rb.pfc_analysis()
    md = render_markdown(a)
    assert len(md.splitlines()) <= MAX_LINES
    root = a.findings.filter(pl.col("caused_by").is_null()).row(0, named=True)
    assert f"`{root['kind']}`" in md and root["hosts"][0] in md
    assert len(_table_rows(md)) == a.findings.height
    assert "(follows pfc_storm)" in md


def test_markdown_without_findings():
    a = Analysis(schema.empty("findings"), pl.DataFrame({"host": ["a", "b"]}), pl.DataFrame(), pl.DataFrame(), [], [])
    md = render_markdown(a)
    assert "No findings" in md and len(md.splitlines()) <= 5


def test_markdown_keeps_angle_brackets_of_log_text():
    """Xid and NCCL text such as ``name=<unknown>`` or ``10.1.2.3<43122>`` is escaped, so that a
    ticket's Markdown renderer does not take it for an HTML tag and drop it."""
    f = _many_findings(2).with_columns(pl.Series("summary", ["Xid 79: pid='<unknown>', name=<unknown>",
                                                             "peer 10.1.2.3<43122> closed; C:\\tmp|x"]))
    md = render_markdown(Analysis(f, pl.DataFrame({"host": ["a"]}), pl.DataFrame(), pl.DataFrame(), [], []))
    assert "pid='\\<unknown>', name=\\<unknown>" in md and "10.1.2.3\\<43122>" in md
    assert "C:\\\\tmp\\|x" in md
    assert "<unknown>" not in md.replace("\\<unknown>", "")


def test_terminal_error_lines_print_the_message_not_the_colour_tag():
    """An analysis error reads 'error: <message>' on the terminal, brackets in the message kept."""
    import io
    from types import SimpleNamespace

    import polars as pl
    from rich.console import Console

    from forensics.report.summary import render_text

    analysis = SimpleNamespace(findings=pl.DataFrame({"id": [], "caused_by": []}), hosts=pl.DataFrame({"host": []}),
                               coverage=pl.DataFrame(), failed_commands=pl.DataFrame(),
                               errors=["node07: raw/x.txt [sar] not recognised"])
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    for text, options in render_text(analysis):
        console.print(text, **options)
    assert "error: node07: raw/x.txt [sar] not recognised" in out.getvalue()
    assert "[red]" not in out.getvalue()
