"""Progress bars for parsing and detection: shown on a terminal, silent with --quiet or off a terminal."""
from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from rich.console import Console
from forensics.analysis import analyze_paths
from forensics.detect.rules import rules
from forensics.cli import _progress as bars
from forensics.cli._progress import TerminalProgress, terminal_progress

FIXTURES = Path(__file__).parent / "fixtures"


def _raw_bundle(root: Path) -> Path:
    """A two-host raw bundle (no tables yet) from real fixtures: an H100 Xid 119 dmesg, mlx5 link flaps."""
    for host, src in (("node01", "dmesg--gpud-xe9680-ctime-xid119-gsp.txt"), ("node02", "dmesg--lkml-mlx5-vf-ctime-link-down-up.txt")):
        d = root / "hosts" / host / "raw" / "dmesg"
        d.mkdir(parents=True)
        shutil.copy(FIXTURES / "dmesg" / src, d / "dmesg.txt")
        (root / "hosts" / host / "host.json").write_text(json.dumps({"host": host, "timezone": "UTC", "utc_offset_s": 0}))
    (root / "manifest.json").write_text(json.dumps({"format_version": 1, "created_by": "test", "created_at": "2026-11-30T10:00:00+00:00",
                                                    "hosts": ["node01", "node02"], "redaction": None, "kind": "loose"}))
    return root


class Recorder:
    def __init__(self):
        self.parsed, self.detected, self.total, self.closed = [], [], None, False

    def parse(self, message):
        self.parsed.append(message)

    def start_detection(self, total):
        self.total = total

    def detect(self, name):
        self.detected.append(name)

    def close(self):
        self.closed = True


def test_analyze_reports_parsing_and_detection(tmp_path):
    rec = Recorder()
    a = analyze_paths([_raw_bundle(tmp_path / "b")], cache_dir=tmp_path / "cache", progress=rec)
    assert any("node01/raw/dmesg/dmesg.txt" in m for m in rec.parsed) and any("node02" in m for m in rec.parsed)
    assert rec.total == len(rules()) == len(rec.detected) and rec.closed
    assert "gpu_xid" in set(a.findings["kind"].to_list())


def test_terminal_bars_render():
    buf = io.StringIO()
    ui = TerminalProgress(Console(file=buf, force_terminal=True, width=120))
    ui.parse("parsing hosts/node01/raw/dmesg/dmesg.txt")
    ui.parse("parsing hosts/node02/raw/nccl/rank0.log")
    ui.start_detection(3)
    for name in ("pfc_storm", "gpu_xid", "link_flap"):
        ui.detect(name)
    ui.close()
    out = buf.getvalue()
    assert "parsed 2 files of 2 hosts" in out and "detection done" in out and "3/3" in out


def test_silent_off_a_terminal_or_quiet():
    """(`analyze --quiet` printing nothing on stderr is checked in test_report_html.test_cli_analyze_report.)"""
    assert terminal_progress(quiet=False) is None  # pytest's stderr is not a terminal
    assert terminal_progress(quiet=True) is None


def test_bars_on_a_terminal_unless_quiet(monkeypatch):
    monkeypatch.setattr(bars, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(bars, "TerminalProgress", lambda: "bars")
    assert terminal_progress(quiet=False) == "bars"
    assert terminal_progress(quiet=True) is None


def test_library_takes_no_terminal_flag(tmp_path, capfd):
    """The library reports progress only through the object it is given: None and False are silent."""
    for progress in (None, False):
        analyze_paths([_raw_bundle(tmp_path / f"b{progress}")], cache_dir=tmp_path / "cache", progress=progress)
    assert capfd.readouterr().err == ""


def test_notebook_entry_point(tmp_path, capfd):
    """`forensics.analyze(path)` returns the analysis, prints nothing, and raises (never exits) on bad input."""
    import pytest

    import forensics
    from forensics.errors import UserError

    a = forensics.analyze(_raw_bundle(tmp_path / "b"), cache_dir=tmp_path / "cache")
    assert set(a.findings["kind"].to_list()) >= {"gpu_xid", "link_flap"}
    assert a.to_json()["hosts"][0]["host"] == "node01"
    with pytest.raises(UserError, match="no such file"):
        forensics.analyze(tmp_path / "missing.tar", cache_dir=tmp_path / "cache")
    assert capfd.readouterr().err == ""
