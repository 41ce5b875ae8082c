"""io_starvation and cpu_saturation judge each sysstat report at the host's own sampling interval
(queries/detectors/_host_reports.sql): a starvation that holds two 10 s reports is found, a single
report is not, and a checkpoint (GPUs idle while the disk writes) is no starvation."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

import forensics
from forensics.detect.engine import run_all
from forensics.sources import ParseContext, get
from tests.test_db_kit import at, bundle_dir

STARVING = (150, 160)   # two 10 s reports: GPUs idle, reads queue on sda, every CPU busy
GLITCH = 200            # one report like them
CHECKPOINT = (250, 260)  # GPUs idle while nvme0n1 writes a checkpoint


def _tables() -> dict:
    t = {"gpu_samples": [], "disk_io": [], "cpu_util": [], "sar_queue": []}
    for s in range(0, 310, 10):
        starving = s in STARVING or s == GLITCH
        idle = starving or s in CHECKPOINT
        for g in range(2):
            t["gpu_samples"].append({"host": "n1", "gpu": g, "ts": at(s + 0.003 * g), "ts_quality": "exact",
                                     "util_pct": 0.0 if idle else 100.0, "power_w": 90.0 if idle else 600.0})
        t["disk_io"].append({"host": "n1", "device": "sda", "ts": at(s), "ts_quality": "local", "since_boot": False,
                             "r_s": 2000.0 if starving else 300.0, "r_await_ms": 25.0 if starving else 0.8,
                             "rkb_s": 250000.0 if starving else 38000.0, "w_s": 0.2, "w_await_ms": 0.5, "wkb_s": 3.0,
                             "util_pct": 100.0 if starving else 15.0})
        ckpt = s in CHECKPOINT
        t["disk_io"].append({"host": "n1", "device": "nvme0n1", "ts": at(s), "ts_quality": "local", "since_boot": False,
                             "r_s": 1.0, "r_await_ms": 0.1, "rkb_s": 20.0, "w_s": 6000.0 if ckpt else 10.0,
                             "w_await_ms": 5.0 if ckpt else 0.03, "wkb_s": 3.0e6 if ckpt else 200.0,
                             "util_pct": 97.0 if ckpt else 0.5})
        t["cpu_util"].append({"host": "n1", "cpu": "all", "ts": at(s), "ts_quality": "local", "since_boot": False,
                              "user_pct": 93.0 if starving else 13.0, "system_pct": 3.0 if starving else 1.5,
                              "iowait_pct": 2.0 if starving else 0.0, "idle_pct": 2.0 if starving else 85.5})
        t["sar_queue"].append({"host": "n1", "ts": at(s), "ts_quality": "local", "runq_sz": 180 if starving else 30})
    return t


def test_two_reports_of_starvation_are_found_one_report_and_a_checkpoint_are_not(tmp_path):
    root = bundle_dir(tmp_path, _tables())
    findings, errors = run_all(forensics.open_bundle(root), only={"io_starvation", "cpu_saturation"}, anomaly=False)
    assert not errors
    by_kind = {k: [f for f in findings.to_dicts() if f["kind"] == k] for k in ("io_starvation", "cpu_saturation")}
    for kind, fs in by_kind.items():
        assert len(fs) == 1, (kind, fs)  # not the lone report at 200 s, not the checkpoint at 250-260 s
        f = fs[0]
        assert (f["start"], f["end"]) == (at(140), at(160)), kind
        ev = json.loads(f["evidence"])
        assert ev["units"] == 2 and ev["unit_s"] == 10 and "lower confidence" in f["summary"]
    io = by_kind["io_starvation"][0]
    assert io["subject"] == "sda" and json.loads(io["evidence"])["reads_in_flight"] == 50  # 2000/s x 25 ms
    # no CPU count in the bundle: saturated from 1 - 1/sqrt(96) = 89.8 % (95 % busy here)
    assert json.loads(by_kind["cpu_saturation"][0]["evidence"])["saturated_from_pct"] == 89.8


def test_numa_nodes_without_cpus_are_no_cpu_count(tmp_path):
    # numactl -H of a Xeon Max node (real fixture): its HBM nodes 2 and 3 have memory and no CPUs. A bundle whose
    # numa_nodes hold only such nodes (a paste of the HBM part) counted 0 CPUs: saturated from 1 - 1/sqrt(0) =
    # -inf %, every report with idle GPUs saturated (the checkpoint at 14.5 % busy too) and the summary's cast of
    # -inf failed: the detector's error, no cpu_saturation finding at all
    f = Path(__file__).parent / "fixtures" / "numactl" / "numactl--alcf-aurora-xeonmax-hbm-cpuless-nodes.txt"
    nodes = get("numactl").parse(f.read_bytes(), ParseContext(host="n1", file=f.name, tz="UTC")).tables["numa_nodes"]
    cpuless = nodes.filter(nodes["cpus"].list.len() == 0)
    assert cpuless["node"].to_list() == [2, 3]
    root = bundle_dir(tmp_path, {**_tables(), "numa_nodes": cpuless.with_columns(host=pl.lit("n1"))})
    findings, errors = run_all(forensics.open_bundle(root), only={"cpu_saturation"}, anomaly=False)
    assert not errors
    fs = findings.to_dicts()
    assert len(fs) == 1 and (fs[0]["start"], fs[0]["end"]) == (at(140), at(160))
    ev = json.loads(fs[0]["evidence"])
    assert ev["saturated_from_pct"] == 89.8 and ev["cpus"] is None  # the CPU count is unknown, as with no numactl


def test_a_run_queue_at_the_halfin_whitt_line_is_saturation_under_the_utilisation_line(tmp_path):
    # 224 CPUs (numactl -H: two nodes of 112): saturated from 1 - 1/sqrt(224) = 93.3 % busy, or from
    # 224 - sqrt(224) = 209 runnable tasks (the offered load the utilisation line is drawn on, counted by sar -q).
    # The starving dataloader reads 91 % busy (2 % iowait left out) with 215 runnable tasks for two reports:
    # saturated (before: under 93.3 % and under 224 tasks, no finding). The lone report at 200 s stays one report;
    # 200 runnable tasks at 91 % (under both lines) are no saturation.
    t = _tables()
    for row in t["cpu_util"]:
        if row["user_pct"] == 93.0:
            row.update(user_pct=88.0, system_pct=3.0, iowait_pct=2.0, idle_pct=7.0)
    for row in t["sar_queue"]:
        if row["runq_sz"] == 180:
            row["runq_sz"] = 215
    nodes = pl.DataFrame({"host": ["n1", "n1"], "node": [0, 1], "cpus": [list(range(112)), list(range(112, 224))]},
                         schema={"host": pl.String, "node": pl.Int32, "cpus": pl.List(pl.Int32)})
    root = bundle_dir(tmp_path / "a", {**t, "numa_nodes": nodes})
    findings, errors = run_all(forensics.open_bundle(root), only={"cpu_saturation"}, anomaly=False)
    assert not errors
    fs = findings.to_dicts()
    assert len(fs) == 1 and (fs[0]["start"], fs[0]["end"]) == (at(140), at(160))
    ev = json.loads(fs[0]["evidence"])
    assert ev["cpus"] == 224 and ev["saturated_from_pct"] == 93.3 and ev["runq_saturated_from"] == 209.0
    assert ev["cpu_util_pct"] == 91.0 and "run queue 215 (saturated from 209)" in fs[0]["summary"]
    for row in t["sar_queue"]:
        if row["runq_sz"] == 215:
            row["runq_sz"] = 200
    root = bundle_dir(tmp_path / "b", {**t, "numa_nodes": nodes})
    findings, errors = run_all(forensics.open_bundle(root), only={"cpu_saturation"}, anomaly=False)
    assert not errors and findings.is_empty()
