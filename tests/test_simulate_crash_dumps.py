"""Issue 19: every simulated job that stops in a collective (a dead GPU, a NIC or link that fails, an
NVSwitch fatal error) writes the Flight Recorder dump of every rank whose watchdog fired or caught an
NCCL error (TORCH_NCCL_DUMP_ON_TIMEOUT=1 dumps on both), with the sequence numbers its watchdog lines
print; the rank that died and the workers torchrun then ended write none. No surviving rank is behind
another in sequence numbers (every one entered the collective the dead or cut-off rank left hanging),
so hang_origin names no rank there: the hardware finding stays the root."""
from __future__ import annotations

import re

import polars as pl
import pytest

from forensics.db import open_bundle
from forensics.detect.engine import run_all
from forensics.simulate import SimConfig, Simulation, write_bundle
from forensics.simulate.job import BUCKETS
from table_bundles import job_outputs, write_tables

CFG = dict(nodes=3, gpus_per_node=4, duration_s=300.0, interval_s=5.0, confounders=False)


@pytest.mark.parametrize("name,seed", [("xid_79", 2), ("ecc_remap", 2), ("link_flap", 2), ("nic_wedged", 2),
                                       ("packet_drops", 2), ("nvswitch_sxid", 2),
                                       ("gpu_unreachable", 2)])
def test_every_rank_that_stops_in_the_collective_dumps_and_no_rank_is_named(tmp_path, name, seed):
    sim = Simulation(SimConfig(scenario=name, seed=seed, **CFG))
    crash, model = sim.plan.crash, sim.model
    assert crash is not None and model.crash_step is not None
    S = model.crash_seq
    path = tmp_path / "b.tar"
    write_bundle(SimConfig(scenario=name, seed=seed, **CFG), path, tables=False)
    frames: dict = {}
    dumped, logged = set(), set()
    for fname, src, data, res in job_outputs(path):
        if fname.startswith("nccl_trace_rank_"):
            assert src == "flight_recorder" and res.unparsed.height == 0 and not res.meta.get("warning")
            dumped.add(int(fname.rsplit("_", 1)[1]))
        elif fname.startswith("torchrun-"):
            text = data.decode()
            logged |= {int(r) for r in re.findall(r"^\[rank([0-9]+)\]:", text, re.M)}
            assert {int(x) for x in re.findall(r"(?:at work: |SeqNum=)([0-9]+)", text)} == {S}
        else:
            continue
        for t, df in res.tables.items():
            frames.setdefault(t, []).append(df)
    dead = {sim.cluster.rank(h, g) for h, g in crash.dead}
    assert dumped and dumped == logged  # a dump from every rank whose watchdog printed, from no other
    assert dumped == (set(model.watchdog) | set(crash.errors)) - dead
    pg = pl.concat(frames["flight_recorder_pg"])
    assert set(pg["last_enqueued"].to_list()) == {S + BUCKETS - 1} and set(pg["last_completed"].to_list()) == {S - 1}
    findings, errors = run_all(open_bundle(write_tables(tmp_path / "t", frames)), only={"hang_origin", "collective_timeout"},
                               anomaly=False)
    assert errors == []
    assert "hang_origin" not in findings["kind"].to_list()
