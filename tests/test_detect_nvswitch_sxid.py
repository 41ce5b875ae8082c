"""nvswitch_sxid (issue 18): NVSwitch SXid lines in the kernel log, on the real dmesg of gpud's SXid
README (Xid 79, then SXid 20034 'Fatal, Link N LTSSM Fault Up' on three switches with their Severity
and Data detail lines)."""
from __future__ import annotations

import json
from pathlib import Path

from forensics.analysis import analyze_paths

FIXTURE = (Path(__file__).resolve().parent / "fixtures" / "dmesg"
           / "dmesg--gpud-sxid-readme-raw-xid79-sxid20034.txt")


def test_fatal_sxid_is_one_critical_finding(tmp_path):
    res = analyze_paths([FIXTURE], cache_dir=tmp_path / "cache")
    found = [f for f in res.findings.to_dicts() if f["kind"] == "nvswitch_sxid"]
    assert len(found) == 1, found
    f = found[0]
    ev = json.loads(f["evidence"])
    assert f["severity"] == "critical" and f["subject"] == "SXid 20034 fatal"
    # four 'Fatal' lines on three switches; the Severity/Data detail lines are not counted
    assert ev["lines"] == 4 and ev["switches"] == ["0000:05:00.0", "0000:06:00.0", "0000:07:00.0"]
    assert ev["links"] == [37, 48, 62, 63] and "LTSSM Fault Up" in f["summary"]
    assert any(g["kind"] == "gpu_xid" for g in res.findings.to_dicts())  # the Xid 79 beside it
    # on the timeline: one 'sxid' event per Fatal line (critical), none for the detail lines
    rows = res.bundle.con.sql("SELECT severity, count(*) FROM events WHERE kind = 'sxid' GROUP BY ALL").fetchall()
    assert rows == [("critical", 4)]


def test_non_fatal_line_is_a_warning(tmp_path):
    p = tmp_path / "dmesg.txt"
    # the line NVIDIA/NVSentinel injects into /dev/kmsg in its SXid end-to-end test (tests/, syslog monitor)
    p.write_text("[123.456789] nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 20009, Non-fatal, Link 28 RX Short Error Rate\n")
    found = [f for f in analyze_paths([p], cache_dir=tmp_path / "c").findings.to_dicts() if f["kind"] == "nvswitch_sxid"]
    assert [(f["severity"], f["subject"]) for f in found] == [("warning", "SXid 20009 non-fatal")]
