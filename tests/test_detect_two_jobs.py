"""A merged bundle of two unrelated jobs (issue 16 item 3): one job's GPUs spinning in NCCL while
its own GPU throttles are not blamed on the other job's packet drops, though drops rank as the more
likely root cause and overlap in time. The jobs share no NCCL communicator, so no path joins them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FORENSICS = [str(Path(sys.executable).parent / "forensics")]


def _run(args, tmp_path):
    env = dict(os.environ, FORENSICS_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run(FORENSICS + [str(a) for a in args], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


@pytest.mark.slow
def test_one_jobs_spin_wait_is_not_blamed_on_the_other_jobs_drops(tmp_path):
    common = ["--duration", "4m", "--interval", "2s", "--raw-only", "--no-confounders", "--clock-skew-ms", "0"]
    _run(["simulate", "--scenario", "packet_drops", "--nodes", "3", "--gpus-per-node", "2", "--seed", "1",
          "--out", tmp_path / "a.tar", *common], tmp_path)
    # seed 29 starts the same day as seed 1 (the collection date is seed % 28 days after a fixed one)
    _run(["simulate", "--scenario", "thermal_throttle", "--nodes", "4", "--gpus-per-node", "4", "--seed", "29",
          "--out", tmp_path / "b0.tar", *common], tmp_path)
    # job B's hosts get other names (both simulated jobs call their hosts node01...)
    _run(["redact", tmp_path / "b0.tar", "--out", tmp_path / "b.tar", "--key-file", tmp_path / "key", "--quiet"], tmp_path)
    out = json.loads(_run(["analyze", tmp_path / "a.tar", tmp_path / "b.tar", "--format", "json", "--quiet"], tmp_path))
    by_id = {f["id"]: f for f in out["findings"]}
    job_a = {h for h in ("node01", "node02", "node03")}
    drops = [f for f in out["findings"] if f["kind"] == "packet_drops"]
    spins = [f for f in out["findings"] if f["kind"] == "busy_but_slow"]
    assert drops and set(drops[0]["hosts"]) <= job_a
    assert spins and all(not set(f["hosts"]) & job_a for f in spins)
    for f in spins:
        cause = by_id[f["caused_by"]]
        assert cause["kind"] == "gpu_throttle" and not set(cause["hosts"]) & job_a, (f, cause)
    # and job A's consequences stay with job A's fault
    for f in out["findings"]:
        if f["caused_by"] and set(f["hosts"]) & job_a:
            assert set(by_id[f["caused_by"]]["hosts"]) <= job_a
