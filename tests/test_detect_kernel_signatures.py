"""Kernel signatures that mean a dead or wedged device give findings on real lines (issue 18):
an aborted mlx5 health recovery and 122 s hung tasks (netdev mailing list), soft lockups, RCU
stalls, NVRM non-Xid errors and PCIe AER (lines from public reports, tests/fixtures/README.md)."""
from __future__ import annotations

import json

from test_detect_real_fixtures import findings_for

MLX5 = "dmesg--netdev-mlx5-fatal-syndrome-hung-task-recovery-aborted.txt"
SIGNATURES = "dmesg--signatures-lockup-rcu-aer-nvrm-real-lines.txt"


def _by_kind(f, kind):
    return [dict(r, evidence=json.loads(r["evidence"])) for r in f.filter(f["kind"] == kind).to_dicts()]


def test_aborted_mlx5_recovery_and_hung_task_are_found(tmp_path):
    f = findings_for(tmp_path, [("n", "dmesg", MLX5)])
    nic = {r["subject"]: r for r in _by_kind(f, "nic_wedged")}
    assert set(nic) == {"NIC 0000:00:00.0", "NIC 0001:00:00.0"}
    aborted = nic["NIC 0001:00:00.0"]
    assert aborted["severity"] == "critical" and aborted["evidence"]["recovery_aborted"] == 1
    assert "health recovery aborted" in aborted["summary"] and "0xff: unrecognized error" in aborted["summary"]
    assert nic["NIC 0000:00:00.0"]["evidence"]["fatal_errors"] == 1
    hung = _by_kind(f, "hung_task")
    assert len(hung) == 1 and hung[0]["severity"] == "warning"
    assert hung[0]["evidence"]["max_blocked_s"] == 122 and hung[0]["evidence"]["reports"] == 2
    assert "kmcheck:73" in hung[0]["summary"]
    # raw dmesg without a boot time: untimed, so nothing ties the hung tasks to the NIC by time (see below)
    assert "nothing abnormal" not in " ".join(f["summary"].to_list())


def test_lockups_rcu_nvrm_and_aer_are_found(tmp_path):
    f = findings_for(tmp_path, [("s", "dmesg", SIGNATURES)])
    stall = _by_kind(f, "cpu_stall")
    assert len(stall) == 1 and stall[0]["severity"] == "warning"
    ev = stall[0]["evidence"]
    assert (ev["soft_lockups"], ev["rcu_stalls"], ev["hard_lockups"]) == (1, 3, 0) and ev["max_stuck_s"] == 23
    gpu = {r["subject"]: r for r in _by_kind(f, "gpu_unreachable")}
    assert gpu["GPU 0000:b3:00.0"]["evidence"]["fallen_off_bus"] >= 1
    assert all(r["severity"] == "critical" for r in gpu.values())
    aer = {r["subject"]: r for r in _by_kind(f, "pcie_aer")}
    sev = {s: r["severity"] for s, r in aer.items()}
    assert sev["PCIe 0000:00:1d.0"] == "warning"  # uncorrected non-fatal
    # the two corrected errors were printed in the first minutes of uptime (link training at boot): not findings
    assert not any(r["evidence"]["corrected"] for r in aer.values())
    assert "critical" in sev.values()  # fatal / failed recovery
    fatal = [r for r in aer.values() if r["severity"] == "critical"]
    assert all(r["evidence"]["fatal"] + r["evidence"]["recovery_failed"] > 0 for r in fatal)


def test_wedged_nic_causes_hung_task_timeout_and_straggler_on_its_host():
    import datetime as dt

    from test_detect_causality import JOB, S30, T0, _f, _links
    rows = [_f("nic", "nic_wedged", "node01", T0, subject="NIC 0000:00:00.0"),
            _f("hung", "hung_task", "node01", T0 + 4 * S30, severity="warning", subject="hung tasks"),
            _f("hung2", "hung_task", "node03", T0 + 4 * S30, severity="warning", subject="hung tasks"),
            _f("aer", "pcie_aer", "node02", T0 - S30, subject="PCIe 0000:b3:00.0"),
            _f("gone", "gpu_unreachable", "node02", T0, subject="GPU 0000:b3:00.0"),
            _f("to", "collective_timeout", "node04", T0 + dt.timedelta(minutes=3), severity="warning")]
    got = _links(rows, JOB)
    assert got["hung"] == "nic"  # same host, after it
    assert got["hung2"] is None  # a hung task on another host is not the NIC's
    assert got["gone"] == "aer"  # the GPU fell off after the PCIe errors of its slot
    assert got["to"] in {"nic", "aer"}  # the job's timeout follows a dead device on a peer (lowest root_rank first)


def test_quiet_logs_give_none_of_these(tmp_path):
    f = findings_for(tmp_path, [("q", "dmesg", "dmesg--mlnx-ofed47-raw-mlx5-cable-plugged.txt")])
    assert not set(f["kind"]) & {"nic_wedged", "hung_task", "cpu_stall", "pcie_aer", "gpu_unreachable"}


def test_gpu_with_xid_79_is_gpu_xids_finding_only(tmp_path):
    f = findings_for(tmp_path, [("n3", "dmesg", "dmesg--gpud-sxid-readme-raw-xid79-sxid20034.txt")])
    assert "gpu_xid" in set(f["kind"]) and "gpu_unreachable" not in set(f["kind"])
