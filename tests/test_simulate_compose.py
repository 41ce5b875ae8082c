"""Faults placed in time and combined in one job, and the fleet's benign variation (issue 16 item 1,
issue 14 item 9). Small runs: 2-3 nodes x 2 GPUs."""
from __future__ import annotations

import datetime as dt
import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from forensics.cli import app
from forensics.simulate import SimConfig, Simulation
from forensics.simulate.compose import parse_scenario


def _sim(scenario, nodes=2, gpus=2, duration=180, interval=3, seed=1, **kw) -> Simulation:
    return Simulation(SimConfig(scenario, nodes=nodes, gpus_per_node=gpus, duration_s=duration,
                                interval_s=interval, seed=seed, **kw))


def _t(s: str) -> float:
    return dt.datetime.fromisoformat(s).timestamp()


def test_link_flap_in_the_last_minute_of_15_minutes_simulates(tmp_path):
    """Issue 14 item 9: the job's crash falls after the capture; the watchdog log crashed on
    `None + int`. Now the bundle is written and its truth stops at what the capture saw."""
    out = tmp_path / "late.tar"
    res = CliRunner().invoke(app, ["simulate", "--scenario", "link_flap@late", "--nodes", "2", "--gpus-per-node", "2",
                                   "--duration", "15m", "--interval", "10s", "--seed", "3", "--raw-only",
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    sim = _sim("link_flap@late", duration=900, interval=10, seed=3)
    end = sim.cfg.t0 + 900
    (flap,) = sim.plan.faults
    assert flap["kind"] == "link_flap" and end - 60 <= _t(flap["start"]) <= end
    assert sim.model.crash_step is None  # the job dies after the capture: nothing of it is in the logs
    assert not any(e["kind"] == "collective_timeout" for e in sim.plan.effects)


def test_timings_place_the_fault():
    early = _sim("pfc_storm@early").plan.faults[0]
    late = _sim("pfc_storm@late").plan.faults[0]
    short = _sim("pfc_storm@short").plan.faults[0]
    t0 = _sim("healthy").cfg.t0
    assert _t(early["start"]) < t0
    assert _t(late["end"]) == pytest.approx(t0 + 180, abs=1e-3) and _t(late["start"]) > t0 + 120
    assert _t(short["end"]) - _t(short["start"]) < 30


def test_two_faults_on_two_hosts_and_on_one():
    two = _sim("pfc_storm+thermal_throttle", nodes=3)
    kinds = {f["kind"]: f["hosts"] for f in two.plan.faults}
    assert set(kinds) == {"pfc_storm", "gpu_throttle"}
    assert kinds["pfc_storm"] != kinds["gpu_throttle"]
    same = _sim("pfc_storm+thermal_throttle", nodes=3, same_host=True)
    hosts = {f["kind"]: f["hosts"] for f in same.plan.faults}
    assert hosts["pfc_storm"] == hosts["gpu_throttle"]
    assert json.loads(dict(same.members())["truth/labels.json"])["same_host"] is True


def test_a_scenario_argument_that_cannot_be_run_is_one_line():
    with pytest.raises(ValueError, match="unknown scenario"):
        parse_scenario("pfc_storm+nope")
    with pytest.raises(ValueError, match="timing"):
        parse_scenario("pfc_storm@noon")
    with pytest.raises(ValueError, match="each end the job"):
        _sim("xid_79+packet_drops", nodes=3)
    res = CliRunner().invoke(app, ["simulate", "--scenario", "xid_79@soon"])
    assert res.exit_code != 0 and "timing must be one of" in str(res.exception)  # main() prints it as one line


def test_confounders_are_in_the_raw_outputs_and_can_be_turned_off():
    noisy = dict(_sim("healthy", duration=900, interval=10).members())
    quiet = dict(_sim("healthy", duration=900, interval=10, confounders=False).members())
    dmesg = noisy["hosts/node01/raw/dmesg/dmesg.txt"].decode()
    assert re.search(r"mlx5_core \S+ \S+: Link down", dmesg)  # at boot, before the first Link up
    assert "Link down" not in quiet["hosts/node01/raw/dmesg/dmesg.txt"].decode()
    assert "confounders" not in json.loads(quiet["truth/labels.json"])
    sim = _sim("healthy", duration=900, interval=10)
    plan = sim.plan
    assert np.ptp(plan.gpu_power_bias) > 0.02          # boards differ
    assert plan.ckpt_write.max() > 1e6                 # checkpoint bursts
    assert _sim("healthy", duration=1800, interval=30).plan.compute_power.min() < 0.75  # evaluation every 10-25 min
    assert plan.cpu_points[0].min() >= 8 > plan.cpu_points[1].min()   # rank 0's host is busier all along
    assert plan.pause_level and all(30 <= k <= 1300 for k, _ in plan.pause_level.values())


def test_default_pauses_are_moderate_not_a_storm():
    """Normal congestion: at most ~4% of the time paused on any rail port (a storm is tens of %)."""
    sim = _sim("healthy", duration=120, interval=2)
    from forensics.simulate.series import HostModel

    hm = HostModel(sim.model, 0)
    times = sim.cfg.t0 + np.arange(0, 120, 10.0)
    for nic in sim.cluster.hosts[0].rails:
        c = hm.nic_counters(nic, times)
        paused = np.diff(c["rx_prio3_pause_duration"]) / 1e6 / 10.0
        rate = np.diff(c["rx_prio3_pause"]) / 10.0
        assert paused.max() < 0.05 and rate.max() < 8000


def test_an_ntp_step_moves_one_hosts_sampled_stamps():
    sim = _sim("healthy", duration=180, interval=3)
    members = dict(sim.members())
    steps = json.loads(members["truth/labels.json"])["clock_steps"]
    ((name, step),) = steps.items()
    host = next(h for h in sim.cluster.hosts if h.name == name)
    rows = members[f"hosts/{name}/raw/nvidia_smi/query-gpu.csv"].decode().splitlines()[1:]
    stamps = sorted({dt.datetime.strptime(r.split(",")[0], "%Y/%m/%d %H:%M:%S.%f").timestamp() for r in rows})
    gaps = np.diff(stamps)
    assert gaps.max() - 3.0 == pytest.approx(step["step_s"], abs=0.05)  # one interval longer by the step
    assert host.true_of(host.wall(host.clock_step[0] - 1.0)) == pytest.approx(host.clock_step[0] - 1.0)


def test_logs_hold_nothing_after_the_capture_and_job_driven_faults_end_with_the_job():
    late = _sim("link_flap@late", duration=900, interval=10, seed=3)
    logs = b"".join(v for k, v in late.members() if "/raw/nccl/" in k)
    assert logs.count(b"NCCL INFO") > 10
    assert b"Got completion from peer" not in logs  # the IB error comes 30 s after the capture ended
    pair = _sim("dataloader_starvation+ecc_remap", nodes=2, duration=900, interval=10, seed=118)
    t_fail = pair.plan.crash.t_fail
    for f in pair.plan.faults + pair.plan.effects:
        if f["kind"] in ("cpu_saturation", "io_starvation", "pulsing_utilization"):
            assert _t(f["start"]) < t_fail and _t(f["end"]) <= t_fail + 1e-3


def test_the_dataloader_stops_reading_when_the_job_dies():
    # dataloader starvation, then an ECC crash 24 s later: the disk is busy only while the job lives
    pair = _sim("dataloader_starvation+ecc_remap", nodes=2, duration=900, interval=10, seed=118)
    from forensics.simulate.series import HostModel

    hm = HostModel(pair.model, 0)
    t_fail = pair.plan.crash.t_fail
    before = hm.disks(np.array([t_fail - 2.0]))["sda"]["util"][0]
    after = hm.disks(np.array([t_fail + 120.0, t_fail + 300.0]))["sda"]["util"]
    assert before > 95 and after.max() < 30


def test_a_job_driven_fault_cut_to_under_two_samples_is_marked_unobservable():
    # thermal throttle and port drops on one host: the drops end the job ~4 s into the throttle (5 s sampling)
    sim = _sim("thermal_throttle+packet_drops", nodes=8, duration=180, interval=5, seed=119, same_host=True)
    (thr,) = [f for f in sim.plan.faults if f["kind"] == "gpu_throttle"]
    assert "under two sampling intervals (5 s)" in thr["unobservable"]
    assert all(f["part"] in (0, 1) for f in sim.plan.faults)
    (drops,) = [f for f in sim.plan.faults if f["kind"] == "packet_drops"]
    assert "unobservable" not in drops and drops["part"] != thr["part"]


def test_scoring_counts_one_root_per_part_and_sets_unobservable_faults_apart():
    from forensics.detect.evaluate import score_strict

    def f(fid, kind, host, subject=None, caused_by=None):
        return {"id": fid, "kind": kind, "severity": "warning", "hosts": [host], "subject": subject,
                "start": "2026-11-30T10:05:00+00:00", "end": "2026-11-30T10:09:00+00:00", "caused_by": caused_by}

    span = {"start": "2026-11-30T10:04:40+00:00", "end": "2026-11-30T10:10:00+00:00"}
    starving = [{"kind": "io_starvation", "hosts": ["node01", "node02"], "subject": "sda", "part": 0, **span},
                {"kind": "cpu_saturation", "hosts": ["node01", "node02"], "subject": None, "part": 0, **span}]
    found = [f("a", "io_starvation", "node02", "sda"), f("b", "io_starvation", "node01", "sda"),
             f("c", "cpu_saturation", "node01")]
    # one part labelled as two kinds: the disk found first is the root cause found first
    assert score_strict(found, {"faults": starving, "effects": []})["root_first"] is True
    # two parts: both must be among the first two roots
    other = {"kind": "ecc_error", "hosts": ["node01"], "subject": "GPU0", "part": 1, **span}
    assert score_strict(found, {"faults": starving + [other], "effects": []})["root_first"] is False
    s = score_strict(found + [f("d", "ecc_error", "node01", "GPU0")], {"faults": [other] + starving, "effects": []})
    assert s["root_first"] is False  # the ECC error ranks fourth
    # an unobservable fault is no recall target, and a finding of it is not false
    hidden = dict(other, unobservable="lasted 4.0 s")
    s = score_strict(found + [f("d", "ecc_error", "node01", "GPU0")], {"faults": starving + [hidden], "effects": []})
    assert s["root_first"] is True and not s["missed"] and not s["false_findings"]
    assert [t["kind"] for t in s["unobservable"]] == ["ecc_error"]
