"""straggler.sql branch (c) (a host against its own baseline) on a hand-built det_gpu_buckets table: the
shape of detection_eval's false straggler on gpu_unreachable 64 x 1 s / 3 min, seed 134 (node48). The job
resumes from a checkpoint, a GPU falls off the bus seconds later and every rank spin-waits; in the first
spin bucket the host reads utilization.memory 3.5% against its peers' 3.0%: half a unit of an integer
percent reading (NVML nvmlUtilization_t.memory is an unsigned int), a +16.7% "memory excess" no reading
can resolve, which with the resume bucket before it made a 20 s straggler."""
from __future__ import annotations

import datetime as dt

import duckdb
import numpy as np
import pytest

from forensics.detect.rules import rules, used_params
from forensics.resources import data_dir

T0 = dt.datetime(2026, 12, 22, 10, 0, tzinfo=dt.timezone.utc)
HOSTS = 24
SLOW = "node07"


def _table(spin_is_compute: bool) -> list[tuple]:
    """Per host and 10 s bucket: (util %, power W, memory busy %). Three computing buckets, a ramp and a
    checkpoint, the resume bucket, six spin-wait buckets (all ranks at ~230 W, memory ~3%), idle after the
    watchdog. `spin_is_compute`: the first spin bucket computing instead (the control: a memory excess the
    readings resolve)."""
    rng = np.random.default_rng(7)
    rows = []
    for h in range(HOSTS):
        name = f"node{h + 1:02d}"
        off = -0.016 if name == SLOW else float(rng.normal(0, 0.01))  # the host's steady offset (board lottery)
        for k in range(14):
            e = float(rng.normal(0, 0.015))
            if k < 3:  # computing
                u, p, m = 99.6, 560 * (1 + off + e), 35.0 * (1 + off + float(rng.normal(0, 0.01)))
            elif k == 3:  # ramping down to the checkpoint: not busy
                u, p, m = 78.0, 450 * (1 + e), 26.5
            elif k == 4:  # checkpoint: idle
                u, p, m = 0.0, 108.0, 0.0
            elif k == 5:  # the job resumes; the GPU falls off the bus a few seconds later
                u, p, m = 93.0, 442 * (1 + 1.5 * e), 24.6 * (1 + float(rng.normal(0, 0.03)))
            elif k < 12:  # every rank spin-waits for the dead one
                u, p, m = 99.8, 230 * (1 + e / 5), 3.0
            else:  # the watchdog ended the job
                u, p, m = 0.0, 71.0, 0.0
            if name == SLOW and k == 5:
                p, m = 442 * 1.047, 24.6 * 1.094
            if name == SLOW and k == 6:
                p, m = 230 * 1.02, 3.5
            if spin_is_compute and k == 6:
                u, p, m = 99.7, 560 * (1 + e), 35.0 * (1 + float(rng.normal(0, 0.01)))
                if name == SLOW:
                    p, m = 560 * 1.02, 35.0 * 1.167
            rows.append((name, T0 + dt.timedelta(seconds=10 * k), True, u, p, 1950.0, m, 80, 8, 5.0))
    return rows


def _stragglers(rows: list[tuple]) -> list[str]:
    con = duckdb.connect()
    con.execute((data_dir("queries") / "views" / "00_macros.sql").read_text())
    con.execute("CREATE TABLE det_gpu_buckets (host VARCHAR, b TIMESTAMPTZ, aligned BOOLEAN, gpu_util_pct DOUBLE, "
                "gpu_power_w DOUBLE, gpu_sm_clock_mhz DOUBLE, gpu_mem_util_pct DOUBLE, samples BIGINT, gpus BIGINT, "
                "phase_s DOUBLE)")
    con.executemany("INSERT INTO det_gpu_buckets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    con.execute("CREATE TABLE hosts (host VARCHAR, clock_offset_s DOUBLE)")
    con.execute("CREATE TABLE dcgm_dmon (host VARCHAR, file VARCHAR, gpu INT, entity VARCHAR, metric VARCHAR, "
                "ts TIMESTAMPTZ, value DOUBLE)")
    rule = next(r for r in rules() if r.name == "straggler")
    params = {k: v for k, v in rule.params.items() if k in used_params(rule.sql)}
    return [r[0] for r in con.execute(rule.sql, params).fetchall()]


@pytest.mark.parametrize("spin_is_compute", [False, True])
def test_a_half_unit_memory_excess_in_a_spin_wait_is_no_straggler(spin_is_compute):
    found = _stragglers(_table(spin_is_compute))
    # the spin-wait bucket's +16.7% is half a unit of the readings: no straggler; the same +16.7% at 35%
    # memory busy (a computing bucket) is 6 units, and branch (c) still finds the host against its baseline
    assert found == ([SLOW] if spin_is_compute else [])
