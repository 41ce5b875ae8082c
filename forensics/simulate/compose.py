"""A run's faults: one scenario, or several in one job (``a+b``), each placed in time.

The scenario argument is ``NAME[@TIMING]`` joined by ``+``: ``pfc_storm``, ``xid_79@late``,
``packet_drops+thermal_throttle``, ``link_flap@short+straggler``. Timings (see
:func:`forensics.simulate.scenarios.base._window`): ``early`` (the fault started before the capture),
``late`` (it starts in the capture's last minute and lasts to its last second) and ``short`` (it is
over within 8-25 s). Two faults go on two different hosts unless the config says ``same_host``.
The job can die only once: two faults that each end the job are refused.

>>> parse_scenario("pfc_storm+xid_79@late")
[('pfc_storm', None), ('xid_79', 'late')]
"""
from __future__ import annotations

from forensics.simulate import fmt_train
from forensics.simulate.config import SimConfig, rng
from forensics.simulate.hardware import Cluster
from forensics.simulate.plan import WARMUP_S, Plan, iso
from forensics.simulate.scenarios import SCENARIOS, crash_truth

TIMINGS = ("early", "late", "short")
MAX_FAULTS = 3


def parse_scenario(text: str) -> list[tuple[str, str | None]]:
    """[(scenario name, timing or None)]; ValueError with one readable line for anything else."""
    parts = [p.strip() for p in (text or "").split("+")]
    if not parts or any(not p for p in parts):
        raise ValueError(f"scenario {text!r}: expected NAME[@TIMING] joined by '+'")
    out = []
    for p in parts:
        name, _, timing = p.partition("@")
        if name not in SCENARIOS:
            raise ValueError(f"unknown scenario {name!r} (known: {', '.join(sorted(SCENARIOS))})")
        if timing and timing not in TIMINGS:
            raise ValueError(f"scenario {p!r}: timing must be one of {', '.join(TIMINGS)}")
        out.append((name, timing or None))
    if len(out) > MAX_FAULTS:
        raise ValueError(f"scenario {text!r}: at most {MAX_FAULTS} faults in one job")
    if len(out) > 1 and any(name == "healthy" for name, _ in out):
        raise ValueError("'healthy' cannot be combined with a fault")
    return out


#: faults (and effects) the training job itself drives: they stop when it dies (its dataloader, its
#: compute heating a GPU, its ranks waiting for one another)
JOB_DRIVEN = frozenset({"io_starvation", "cpu_saturation", "pulsing_utilization", "gpu_throttle", "straggler",
                        "busy_but_slow"})


def _end_with_the_job(plan: Plan, t_fail: float) -> None:
    """Truth of job-driven faults ends when another fault kills the job; one that would start later never shows.
    A fault cut to less than two sampling intervals at its full size (after its onset ramp, ``onset_s``,
    where it has one) is kept but marked ``unobservable`` (no sampled series can hold an episode of it:
    at most one sample of it at that size fell inside), so a scorer can say so."""
    import datetime as dt

    def ts(s):
        return dt.datetime.fromisoformat(s).timestamp()

    interval = plan.cluster.cfg.interval_s
    for entries in (plan.faults, plan.effects):
        keep = []
        for e in entries:
            if e["kind"] in JOB_DRIVEN:
                if ts(e["start"]) >= t_fail:
                    continue
                if e["end"] is None or ts(e["end"]) > t_fail:
                    e["end"] = iso(t_fail)
                    full = ts(e["start"]) + e.get("onset_s", 0.0)  # when it reached its full size
                    lasted = t_fail - max(full, plan.cluster.cfg.t0)
                    if lasted < 2 * interval:
                        what = "at its full size (after a %g s onset)" % e["onset_s"] if e.get("onset_s") else ""
                        e["unobservable"] = (f"lasted {max(lasted, 0.0):.1f} s {what + ' ' if what else ''}in the capture "
                                             f"before another fault ended the job: under two sampling intervals ({interval:g} s)")
            keep.append(e)
        entries[:] = keep


def new_plan(cfg: SimConfig, cluster: Cluster) -> Plan:
    """The plan of a run: every fault of the scenario argument, then the fleet's benign variation."""
    from forensics.simulate import confounders

    t0 = cfg.t0
    t_end = t0 + cfg.duration_s + 1.0 + max(h.jitter_s for h in cluster.hosts) + 2 * cfg.interval_s
    plan = Plan(cluster=cluster, grid0=t0 - WARMUP_S, t_end=t_end)
    for k, (name, timing) in enumerate(parse_scenario(cfg.scenario)):
        plan.timing = timing
        keys = ("scenario", name) if k == 0 and timing is None else ("scenario", name, k, timing or "")
        SCENARIOS[name].build(plan, rng(cfg.seed, *keys))
        for entry in plan.faults:  # which part of the scenario argument a fault comes from (one root cause each)
            entry.setdefault("part", k)
    plan.timing = None
    if cfg.infiniband:
        _refuse_ethernet_faults(cfg, cluster, plan)
    if len(plan.crashes) > 1:
        raise ValueError(f"scenario {cfg.scenario!r}: {' and '.join(c.cause for c, _ in plan.crashes)} would each "
                         "end the job; combine a fault that ends it with one that does not")
    for crash, dead_hosts in plan.crashes:
        plan.crash = crash
        _end_with_the_job(plan, crash.t_fail)
        crash_truth(plan, crash, dead_hosts, crash.errors)
    fmt_train.throughput_truth(plan)
    if cfg.confounders:
        confounders.apply(plan)
    return plan


def _refuse_ethernet_faults(cfg: SimConfig, cluster: Cluster, plan: Plan) -> None:
    """With InfiniBand rails: a fault that shows in a rail's netdev tools (ethtool -S, mlnx_qos, the
    kernel's link messages), which such a port does not have, is refused with one readable line."""
    ib = {(h, n.iface) for h, host in enumerate(cluster.hosts) for n in host.nics if n.infiniband}
    hit = sorted({k for d in (plan.nic_extra, plan.link_down, plan.nic_traffic) for k in d if k in ib})
    if hit or plan.qos_override:
        raise ValueError(f"scenario {cfg.scenario!r}: its fault is on the RoCE rails' Ethernet counters or QoS; "
                         "not with InfiniBand rails (--fabric infiniband)")
