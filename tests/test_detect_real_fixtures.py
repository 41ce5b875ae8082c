"""On real captured outputs, the matching signature rules fire (and others stay quiet)."""
from __future__ import annotations

import json

import pytest

from forensics.db import open_bundle
from forensics.detect.engine import run_all
from table_bundles import from_fixtures


def findings_for(tmp_path, items):
    bundle = open_bundle(from_fixtures(tmp_path, items))
    findings, errors = run_all(bundle)
    assert errors == []
    return findings


def test_xid_119_gsp_timeout_on_xe9680(tmp_path):
    f = findings_for(tmp_path, [("xe9680", "dmesg", "dmesg--gpud-xe9680-ctime-xid119-gsp.txt")])
    xid = f.filter(f["kind"] == "gpu_xid").to_dicts()
    assert len(xid) == 1
    ev = json.loads(xid[0]["evidence"])
    assert ev["root_xid"] == 119 and ev["pci_addr"] == "0000:9b:00.0"
    assert xid[0]["severity"] == "critical" and xid[0]["hosts"] == ["xe9680"]
    assert set(f["kind"]) == {"gpu_xid"}


def test_xid_13_then_43_is_an_application_fault_with_13_as_root(tmp_path):
    f = findings_for(tmp_path, [("n2", "dmesg", "dmesg--gpud-decode-iso-xid13-xid43.txt")])
    xid = f.filter(f["kind"] == "gpu_xid").to_dicts()
    assert len(xid) == 1
    ev = json.loads(xid[0]["evidence"])
    assert ev["root_xid"] == 13 and ev["xids"] == [13, 43]
    assert xid[0]["severity"] == "warning"  # 13 and 43 follow application faults


def test_xid_79_fallen_off_the_bus(tmp_path):
    f = findings_for(tmp_path, [("n3", "dmesg", "dmesg--gpud-sxid-readme-raw-xid79-sxid20034.txt")])
    ev = json.loads(f.filter(f["kind"] == "gpu_xid")["evidence"][0])
    assert ev["root_xid"] == 79


@pytest.mark.parametrize("name", ["dmesg--mlnx-ofed47-raw-mlx5-cable-plugged.txt",
                                  "dmesg--gpud-journalctl-short-iso-peermem.txt"])
def test_no_xid_no_gpu_finding(tmp_path, name):
    f = findings_for(tmp_path, [("n1", "dmesg", name)])
    assert "gpu_xid" not in set(f["kind"])


def test_ib_completion_status_12_vendor_129_on_roce(tmp_path):
    f = findings_for(tmp_path, [("h", "nccl", "nccl--nccl-issue1814-ib-completion-status12-vendor129-roce.txt")])
    t = f.filter(f["kind"] == "nccl_transport_error").to_dicts()
    assert len(t) == 1
    ev = json.loads(t[0]["evidence"])
    assert 12 in ev["ib_status"] and 129 in ev["vendor_err"]
    assert t[0]["severity"] == "critical"


def test_broken_pipe_and_remote_close_on_p4d(tmp_path):
    f = findings_for(tmp_path, [("h", "nccl", "nccl--nccl-issue795-aws-p4d-broken-pipe-remote-peer-closed-nccl2.14.3.txt")])
    t = f.filter(f["kind"] == "nccl_transport_error").to_dicts()
    assert len(t) == 1
    assert {"remote_closed", "socket_error"} <= set(json.loads(t[0]["evidence"])["kinds"])


def test_socket_transport_is_a_misconfiguration(tmp_path):
    f = findings_for(tmp_path, [("h", "nccl", "nccl--aws-2xa10g-nccl2.11.4-socket-nccltests-allreduce.txt")])
    m = f.filter(f["kind"] == "nccl_misconfig").to_dicts()
    assert [x["subject"] for x in m] == ["NCCL_NET=Socket"]


def test_watchdog_timeout_reports_sequence_number(tmp_path):
    f = findings_for(tmp_path, [("h", "nccl", "nccl--pytorch-watchdog-ofa271-old-format-8xv100.txt")])
    t = f.filter(f["kind"] == "collective_timeout").to_dicts()
    assert len(t) == 1
    ev = json.loads(t[0]["evidence"])
    assert ev["seq_min"] == 469508 and ev["op_type"] == "ALLREDUCE" and ev["timeout_ms"] == 1800000


def test_gdrdma_channels_are_not_a_misconfiguration(tmp_path):
    f = findings_for(tmp_path, [("h", "nccl", "nccl--issue707-a100-gdrdma-channels.txt")])
    assert "GPUDirect RDMA off" not in set(f.filter(f["kind"] == "nccl_misconfig")["subject"])


def test_analyze_takes_a_single_loose_file(tmp_path, monkeypatch, capsys):
    """`forensics analyze dmesg.txt` (no bundle): built into a bundle as `forensics bundle` would,
    with --host, else (saying so) its folder's name when the content names none; a text file is
    never taken for a tar."""
    from pathlib import Path

    from forensics.analysis import is_loose_input
    from test_bundle_cli import cli

    monkeypatch.setenv("TZ", "UTC")
    fx = Path(__file__).parent / "fixtures"
    dmesg = fx / "dmesg" / "dmesg--gpud-xe9680-ctime-xid119-gsp.txt"
    nccl = fx / "nccl" / "nccl--nccltests-issue185-dgxh100-socketProgressOpt-conn-reset.txt"
    assert is_loose_input(dmesg) and is_loose_input(nccl) and is_loose_input(fx / "dmesg")
    assert not is_loose_input(Path(__file__).parent.parent / "sample_bundles" / "xid_79.tar.zst")
    opts = ["--format", "json", "--quiet"]
    res = cli(["analyze", dmesg, *opts], tmp_path, capsys, monkeypatch)  # no host in it: its folder's name, said
    assert res.returncode == 0 and "folder's name 'dmesg'" in res.stderr and "--host" in res.stderr, res.stderr
    assert [f["hosts"] for f in json.loads(res.stdout)["findings"]] == [["dmesg"]]
    res = cli(["analyze", dmesg, "--host", "gpu07", *opts], tmp_path, capsys, monkeypatch)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert [(f["kind"], f["hosts"], f["evidence"]["root_xid"]) for f in out["findings"]] == [("gpu_xid", ["gpu07"], 119)]
    res = cli(["analyze", nccl, *opts], tmp_path, capsys, monkeypatch)  # the NCCL log names its host
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert {f["kind"] for f in out["findings"]} == {"nccl_transport_error"}
    assert out["findings"][0]["hosts"] == ["dgxh100-4"]


def test_analyze_takes_a_sosreport_archive(tmp_path, monkeypatch, capsys):
    import tarfile

    from forensics.analysis import is_loose_input
    from test_bundle_cli import _sosreport, cli

    monkeypatch.setenv("TZ", "UTC")
    sos = _sosreport(tmp_path / "in", "gpu-node-7")
    archive = tmp_path / f"{sos.name}.tar.xz"
    with tarfile.open(archive, "w:xz") as tf:
        tf.add(sos, arcname=sos.name)
    assert is_loose_input(archive) and is_loose_input(sos)
    res = cli(["analyze", archive, "--format", "json", "--quiet"], tmp_path, capsys, monkeypatch)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert [h["host"] for h in out["hosts"]] == ["gpu-node-7"]
    assert {c["source"] for c in out["coverage"]} >= {"dmesg", "ethtool"}
    assert [(f["kind"], f["hosts"]) for f in out["findings"] if f["kind"] == "gpu_xid"] == [("gpu_xid", ["gpu-node-7"])]


def test_memory_pressure_swapping_host(tmp_path):
    """Real sar -W/-r (Ubuntu 9.10, 10-minute samples): 28.7 pages/s swapped out at 11:45 on a 1.5 GB host."""
    f = findings_for(tmp_path, [("wynne", "sar", "sar--ubuntu910-W-r-swapping-ampm.txt")])
    m = f.filter(f["kind"] == "memory_pressure").to_dicts()
    assert len(m) == 1
    ev = json.loads(m[0]["evidence"])
    assert ev["peak_swap_pages_s"] == 28.82 and ev["peak_swapout_pages_s"] == 28.68
    assert ev["bad_samples"] == 1 and ev["duration_s"] == 600  # the 11:45:01 sample averages 11:35:01-11:45:01
    assert ev["max_memused_pct"] == 99.11 and ev["oom_kills"] == 0
    assert 40 < ev["min_avail_pct"] < 42  # free + buffers + cache of total (kbmemused / %memused)
    assert m[0]["severity"] == "warning" and m[0]["hosts"] == ["wynne"] and m[0]["layer"] == "host_cpu"
    assert m[0]["start"].isoformat().startswith("2010-04-29T11:35:01")
    assert "sar -W 1" in m[0]["confirm"] and "num_workers" in m[0]["remediation"]
    assert set(f["kind"]) == {"memory_pressure"}


def test_memory_pressure_swapping_needs_a_higher_rate_when_asked(tmp_path):
    from forensics.detect.engine import run_rule
    from forensics.detect.rules import prepare, rules

    bundle = open_bundle(from_fixtures(tmp_path, [("wynne", "sar", "sar--ubuntu910-W-r-swapping-ampm.txt")]))
    prepare(bundle.con)
    rule = [r for r in rules() if r.kind == "memory_pressure"][0]
    assert run_rule(bundle, rule, {"min_swap_pages_s": 30}).height == 0
    assert run_rule(bundle, rule, {"min_bad_s": 601}).height == 0


def test_memory_pressure_oom_kill_on_ec2(tmp_path):
    """Real dmesg -T of a global OOM on an EC2 i7i.xlarge: redis-server killed (14 GB anon-rss)."""
    f = findings_for(tmp_path, [("ec2", "dmesg", "dmesg--ec2-ctime-global-oom-redis.txt")])
    m = f.filter(f["kind"] == "memory_pressure").to_dicts()
    assert len(m) == 1 and m[0]["severity"] == "critical"
    ev = json.loads(m[0]["evidence"])
    assert ev["oom_kills"] == 1 and ev["memory_cgroup"] is False
    assert ev["killed"][0]["process"] == "redis-server" and ev["killed"][0]["pid"] == 60540
    assert ev["killed"][0]["anon_rss_mb"] == 13897
    assert "redis-server" in m[0]["summary"] and "ran out of memory" in m[0]["summary"]
    assert set(f["kind"]) == {"memory_pressure"}


def test_memory_pressure_oom_joins_the_swapping_episode(tmp_path):
    """Both real captures on one host: a kill within oom_window_s of the swapping belongs to that finding."""
    from forensics.detect.engine import run_rule
    from forensics.detect.rules import prepare, rules

    bundle = open_bundle(from_fixtures(tmp_path, [("h", "sar", "sar--ubuntu910-W-r-swapping-ampm.txt"),
                                                  ("h", "dmesg", "dmesg--ec2-ctime-global-oom-redis.txt")]))
    prepare(bundle.con)
    rule = [r for r in rules() if r.kind == "memory_pressure"][0]
    apart = run_rule(bundle, rule).to_dicts()  # 15 years apart: two findings
    assert sorted(x["severity"] for x in apart) == ["critical", "warning"]
    joined = run_rule(bundle, rule, {"oom_window_s": 16 * 365 * 86400}).to_dicts()
    assert len(joined) == 1 and joined[0]["severity"] == "critical"
    assert "redis-server" in joined[0]["summary"] and "swapped up to 28.8 pages/s" in joined[0]["summary"]


@pytest.mark.parametrize("name", ["sar--sysstat-sa2-A-restart.txt", "sar--sysstat-sadf-j-first-record.json",
                                  "sar--centos79-r-old-columns.txt", "sar--sysstat-sadf-d-sections.txt"])
def test_memory_pressure_quiet_without_swapping(tmp_path, name):
    """sar -A captures with -W/-B/-r sections at zero swapping (one at %commit 120.77): no finding."""
    f = findings_for(tmp_path, [("h", "sar", name)])
    assert "memory_pressure" not in set(f["kind"])


def test_memory_pressure_quiet_on_other_kernel_logs(tmp_path):
    f = findings_for(tmp_path, [("x", "dmesg", "dmesg--gpud-xe9680-ctime-xid119-gsp.txt"),
                                ("y", "dmesg", "dmesg--gpud-journalctl-short-iso-peermem.txt")])
    assert "memory_pressure" not in set(f["kind"])


def test_single_ethtool_snapshots_report_their_totals(tmp_path):
    """Pasted one-shot `ethtool -S` output has no rate; its drop and pause totals since reset are
    still reported (warning), and an all-zero excerpt stays quiet."""
    f = findings_for(tmp_path, [("xdp", "ethtool", "ethtool--mlx5-xdp-kernel5.15-nonzero.txt"),
                                ("cx4", "ethtool", "ethtool--mlx5-cx4lx-grep-pause-pci.txt"),
                                ("bnxt", "ethtool", "ethtool--bnxt_en-12q-queue-prefixed.txt"),
                                ("zero", "ethtool", "ethtool--grep-excerpts-mlx5-ixgbe-ice-labelled.txt")])
    got = {(r["kind"], r["hosts"][0]): (r["severity"], json.loads(r["evidence"])) for r in f.to_dicts()}
    assert set(got) == {("packet_drops", "xdp"), ("pause_frames_since_reset", "xdp"), ("pause_frames_since_reset", "cx4"),
                        ("packet_drops", "bnxt")}
    sev, ev = got[("packet_drops", "xdp")]
    assert sev == "warning" and ev["counter"] == "rx_discards_phy" and ev["total"] == 58591428329  # rx_xdp_drop is not a fault
    assert ev["rx_packets"] == 97052087562 and ev["snapshot"] is True
    sev, ev = got[("pause_frames_since_reset", "cx4")]
    assert (sev, ev["iface"], ev["tx_pause_frames"], ev["tx_paused_s"]) == ("warning", "eth03", 1266552, 555.7)
    sev, ev = got[("packet_drops", "bnxt")]
    assert ev["counter"] == "rx_total_ring_discards" and ev["total"] == 655430134  # per-queue rx_discards add up to less
    assert all(r["start"] is None for r in f.to_dicts())


def test_two_untimed_ethtool_snapshots_report_the_last_totals(tmp_path, monkeypatch, capsys):
    """Two outputs pasted one after the other, no markers, no times: no rate can be had, so the totals
    of the last one are reported."""
    from pathlib import Path

    from test_bundle_cli import cli

    monkeypatch.setenv("TZ", "UTC")
    text = (Path(__file__).parent / "fixtures" / "ethtool" / "ethtool--mlx5-xdp-kernel5.15-nonzero.txt").read_text()
    later = text.replace("rx_discards_phy: 58591428329", "rx_discards_phy: 58591528329")
    assert later != text
    pasted = tmp_path / "ethtool-S-ens1.txt"
    pasted.write_text(text + later)
    res = cli(["analyze", pasted, "--host", "gpu09", "--format", "json", "--quiet"], tmp_path, capsys, monkeypatch)
    assert res.returncode == 0, res.stderr
    drops = [f for f in json.loads(res.stdout)["findings"] if f["kind"] == "packet_drops"]
    assert [(f["hosts"], f["evidence"]["total"], f["evidence"]["counter"]) for f in drops] == \
        [(["gpu09"], 58591528329, "rx_discards_phy")]
