"""A file whose parser raised is in `coverage` with an error and none of its lines in the tables: the
terminal and Markdown reports must say so, never "No findings: nothing abnormal" at "100.0%" coverage
(which is what they printed for a file that no line of reached a table)."""
from __future__ import annotations

import polars as pl

from forensics import schema
from forensics.analysis import Analysis
from forensics.report.summary import render_markdown, render_text


def _analysis(failed: int) -> Analysis:
    cov = pl.DataFrame({"source": ["dmesg", "infiniband"], "files": [1, 1], "lines": [40, None],
                        "unparsed": [2, None], "failed_files": [0, failed]})
    per = pl.DataFrame({"host": ["node01", "node01"], "source": ["dmesg", "infiniband"], "files": [1, 1],
                        "lines": [40, None], "unparsed": [2, None], "parsed_pct": [95.0, None],
                        "failed_files": [0, failed],
                        "errors": [None, "hosts/node01/raw/infiniband/ports.txt: ComputeError: overflow" if failed else None]})
    return Analysis(schema.empty("findings"), pl.DataFrame({"host": ["node01"]}), cov, pl.DataFrame(), [], [],
                    coverage_by_host=per)


def _text(a: Analysis) -> str:
    return "\n".join(t for t, _ in render_text(a))


def test_text_report_says_a_file_failed_and_no_clean_bill():
    out = _text(_analysis(1))
    assert "nothing abnormal" not in out
    assert "1 input file could not be parsed" in out
    assert "infiniband 1 files - (1 failed)" in out and "100.0%" not in out
    assert "node01 (infiniband): hosts/node01/raw/infiniband/ports.txt: ComputeError: overflow" in out
    assert "dmesg 1 files 95.0%" in out


def test_markdown_report_says_a_file_failed():
    md = render_markdown(_analysis(1))
    assert "nothing abnormal" not in md
    assert "infiniband 1 (1 failed)" in md and "**1 input file could not be parsed**" in md


def test_reports_without_failures_are_unchanged():
    a = _analysis(0)
    out, md = _text(a), render_markdown(a)
    assert "No findings: nothing abnormal detected in the bundle." in out and "could not be parsed" not in out
    assert "infiniband 1 files 100.0%" in out
    assert "No findings: nothing abnormal detected." in md and "failed" not in md
