"""Issue 19: every simulated job writes its own training log (torchtitan, Megatron-LM or DeepSpeed, by
seed) on the host whose rank prints it, and its logged rate follows the fault: lower while the job is
slowed, stopping at a hang or crash, noisy but level otherwise."""
from __future__ import annotations

import datetime as dt
from functools import lru_cache
from types import SimpleNamespace

import numpy as np
import pytest

from forensics.simulate import SCENARIOS, SimConfig, Simulation, fmt_train
from forensics.sources import ParseContext, train_log


@lru_cache(maxsize=None)
def sim(name: str, seed: int = 1, duration_s: float = 600.0) -> Simulation:
    return Simulation(SimConfig(name, nodes=3, gpus_per_node=2, duration_s=duration_s, interval_s=3, seed=seed))


def logs(s: Simulation) -> dict[int, tuple[str, bytes]]:
    out = {}
    for h in range(s.cfg.nodes):
        got = fmt_train.train_log(s.cluster, s.plan, s.model, h)
        if got:
            out[h] = got
    return out


def rates(s: Simulation) -> tuple[np.ndarray, np.ndarray]:
    """(true time, rate) of every logged step: tokens/s, else samples/s, else 1 / step time."""
    ((h, (name, data)),) = logs(s).items()
    host = s.cluster.hosts[h]
    res = train_log.parse(data, ParseContext(host=host.name, file=name, tz=host.tz))
    assert res.unparsed.height == 0 and res.lines == res.tables["train_steps"].height
    df = res.tables["train_steps"]
    rate = df["tokens_per_s"].fill_null(df["samples_per_s"]).fill_null(1.0 / df["step_time_s"]).to_numpy()
    ts = np.array([t.timestamp() - host.offset_s for t in df["ts"].to_list()])
    return ts, rate


def _t(s: str) -> float:
    return dt.datetime.fromisoformat(s).timestamp()


def test_the_framework_varies_by_seed_and_a_scenario_may_name_it():
    fw = [fmt_train.framework(SimpleNamespace(cfg=SimpleNamespace(seed=seed)), SimpleNamespace(train_framework=None))
          for seed in range(8)]
    assert set(fw) == set(fmt_train.FRAMEWORKS)
    assert fmt_train.framework(sim("seed000_case_study", seed=2, duration_s=120).cluster,
                               sim("seed000_case_study", seed=2, duration_s=120).plan) == "torchtitan"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_scenario_writes_one_log_on_the_printing_rank_host(name):
    s = sim(name, duration_s=180)
    got = logs(s)
    assert list(got) == [fmt_train.log_host(s.cluster, s.plan)]
    world = s.cfg.nodes * s.cfg.gpus_per_node
    (fname, _), = got.values()
    if fmt_train.framework(s.cluster, s.plan) == "megatron":  # print_rank_last: the last rank, on the last host
        assert list(got) == [s.cfg.nodes - 1] and fname == f"train-rank{world - 1}.log"
    else:
        assert list(got) == [0] and fname == "train-rank0.log"
    ts, rate = rates(s)
    assert len(rate) >= 3 and (rate > 0).all()


@pytest.mark.parametrize("seed", [0, 2, 3])  # torchtitan, Megatron-LM, DeepSpeed
def test_healthy_rate_is_noisy_but_never_low_for_three_logged_steps(seed):
    ts, rate = rates(sim("healthy", seed=seed))
    med = np.median(rate)
    assert np.std(rate) / med > 0.003  # not a flat line: each step's data wait and compute vary
    low = rate < 0.8 * med
    assert not any(low[i] and low[i + 1] and low[i + 2] for i in range(len(low) - 2))


@pytest.mark.parametrize("name", ["pfc_storm", "thermal_throttle", "ib_link_degraded", "link_flap", "dataloader_starvation"])
def test_the_logged_rate_drops_while_the_fault_lasts(name):
    s = sim(name)
    ts, rate = rates(s)
    f = s.plan.faults[0]
    start = _t(f["start"])
    end = _t(f["end"]) if f["end"] else ts[-1] + 1
    during = rate[(ts > start + 20) & (ts <= end)]
    before = rate[ts < start]
    assert len(during) >= 2 and len(before) >= 3
    assert np.median(during) < 0.85 * np.median(before)


@pytest.mark.parametrize("name", ["xid_79", "rank_hang", "nvswitch_sxid", "ecc_remap"])
def test_the_log_stops_at_the_hang_or_crash(name):
    s = sim(name)
    ts, rate = rates(s)
    assert s.model.crash_step is not None
    t_fail = s.plan.crash.t_fail
    assert ts[-1] <= t_fail and ts[-1] > t_fail - 2 * fmt_train.LOG_FREQ * 1.5  # the last interval before it
    assert len(rate) >= 3
