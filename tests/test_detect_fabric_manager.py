"""Fabric Manager's log as evidence (issue 18): its NVSwitch errors join nvswitch_sxid (one finding per
SXid whichever log said it), and what FM itself reports as failed (a start, NVLink SHARP multicast
teams a job asked for) is a fabric_manager_failure, on real FM logs and journals
(tests/fixtures/fabricmanager)."""
from __future__ import annotations

import json
from pathlib import Path

from forensics.analysis import analyze_paths

FIX = Path(__file__).resolve().parent / "fixtures"
FM = FIX / "fabricmanager"


def _findings(res, kind):
    return [f for f in res.findings.to_dicts() if f["kind"] == kind]


def test_fm_sxid_lines_are_nvswitch_findings_and_multicast_failure_stops_jobs(tmp_path):
    res = analyze_paths([FM / "fabricmanager--gpud-matcher-fatal-sxid-multicast.log"], cache_dir=tmp_path / "c")
    sx = {f["subject"]: f for f in _findings(res, "nvswitch_sxid")}
    assert sorted(sx) == ["SXid 12028 non-fatal", "SXid 20034 fatal"]
    fatal = sx["SXid 20034 fatal"]
    ev = json.loads(fatal["evidence"])
    assert fatal["severity"] == "critical" and ev["switches"] == ["0000:86:00.0"] and ev["links"] == [33]
    assert ev["logs"] == ["fabricmanager"]
    fm = _findings(res, "fabric_manager_failure")
    assert [(f["subject"], f["severity"]) for f in fm] == [("NVLink SHARP (multicast) teams", "critical")]
    assert "NCCL_NVLS_ENABLE=0" in fm[0]["remediation"] and "failed to find the GPU handle" in fm[0]["summary"]
    kinds = res.bundle.con.sql("SELECT kind, severity, count(*) FROM events WHERE origin = 'fabricmanager_log' "
                               "GROUP BY ALL ORDER BY ALL").fetchall()
    assert kinds == [("fm_multicast_failure", "critical", 1), ("fm_nvswitch_error", "critical", 1),
                     ("fm_nvswitch_error", "warning", 1)]


def test_the_same_sxid_in_dmesg_and_fm_log_is_one_finding(tmp_path):
    dmesg = tmp_path / "dmesg.txt"
    # the driver's line for the fatal SXid FM logged (same switch: 0000:86:00.0; port 33 = Link 33)
    dmesg.write_text("[123.456789] nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 20034, Fatal, Link 33 LTSSM Fault Up\n")
    res = analyze_paths([dmesg, FM / "fabricmanager--gpud-matcher-fatal-sxid-multicast.log"],
                        cache_dir=tmp_path / "c", host="n1")
    fatal = [f for f in _findings(res, "nvswitch_sxid") if f["subject"] == "SXid 20034 fatal"]
    assert len(fatal) == 1
    ev = json.loads(fatal[0]["evidence"])
    assert ev["logs"] == ["fabricmanager", "kernel"] and ev["lines"] == 2 and ev["switches"] == ["0000:86:00.0"]


def test_start_failure_in_the_journal(tmp_path):
    res = analyze_paths([FM / "fabricmanager--cube-studio29-journal-start-failed.txt"], cache_dir=tmp_path / "c",
                        hints={"year": 2025})
    fm = _findings(res, "fabric_manager_failure")
    assert [(f["subject"], f["severity"]) for f in fm] == [("Fabric Manager start", "critical")]
    assert json.loads(fm[0]["evidence"])["records"] == 3
    assert "no NVSwitch" in fm[0]["remediation"] and "cudaErrorSystemNotReady" in fm[0]["remediation"]


def test_healthy_logs_give_no_finding(tmp_path):
    res = analyze_paths([FM / "fabricmanager--nvtrust128-journal-start-stop.txt"], cache_dir=tmp_path / "c", hints={"year": 2025})
    assert not _findings(res, "fabric_manager_failure") and not _findings(res, "nvswitch_sxid")
    # the non-fatal SXid at the end of gpud's NVLS log is the only finding there; 23 successful team setups are none
    res = analyze_paths([FM / "fabricmanager--gpud-nvls-teams-nonfatal-sxid.log"], cache_dir=tmp_path / "c2")
    assert [f["subject"] for f in res.findings.to_dicts() if f["kind"] in ("nvswitch_sxid", "fabric_manager_failure")] \
        == ["SXid 12028 non-fatal"]
