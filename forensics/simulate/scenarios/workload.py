"""Job and host faults: dataloader starvation, NUMA misplacement, NCCL misconfiguration, pulsing utilisation,
a straggler, a hung rank, and the first seed's case study."""
from __future__ import annotations

import numpy as np

from forensics.simulate.plan import INIT_S, Crash, Plan
from forensics.simulate.scenarios.base import (
    _fault_at, _names, _others, _pick_host, _timeout, _window, scenario,
)


#: the starving dataloader's ramp: its workers and reads grow to their full size over this many seconds
ONSET_S = 20.0


@scenario("dataloader_starvation", "seed 002: the dataloader starves every GPU: CPU ~95% busy, the dataset disk "
                                   "near saturation (iostat %util, r_await), GPU utilisation falls to ~20%")
def _starvation(plan: Plan, r) -> None:
    cl = plan.cluster
    ts, te = _window(plan, r, 0.3, 0.85)
    sl = plan.span(ts, te)
    ramp = np.clip((plan.grid0 + np.arange(plan.T) - ts) / ONSET_S, 0, 1)
    plan.data_wait[:, sl] = 5.8 * ramp[sl]
    plan.cpu_extra[:, sl] = ramp[sl]
    plan.disk_load[:, sl] = ramp[sl]
    hosts = _names(plan, range(cl.cfg.nodes))
    plan.truth("io_starvation", hosts, "sda", ts, te,
               ["iostat:sda %util ~100", "iostat:sda r_await tens of ms", "iostat:aqu-sz", "sar:%iowait"], onset_s=ONSET_S)
    plan.truth("cpu_saturation", hosts, None, ts, te, ["sar -u:%idle < 5", "sar -q:runq-sz"], onset_s=ONSET_S)
    plan.truth("pulsing_utilization", hosts, None, ts, te,
               ["nvidia_smi:utilization.gpu alternates 0/100 around a ~20% mean while waiting for batches"],
               effect=True)


@scenario("numa_misplacement", "seed 000: four ranks of one node are pinned to the socket far from their GPU "
                               "and NIC (Cpus_allowed_list vs topo -m NUMA affinity); asymmetric step times")
def _numa(plan: Plan, r) -> None:
    cl = plan.cluster
    cfg = cl.cfg
    h = _pick_host(plan, r)
    gpus = list(range(min(4, cfg.gpus_per_node)))
    host = cl.hosts[h]
    for g in gpus:
        plan.affinity[(h, g)] = 1 - host.gpus[g].numa
        plan.compute_factor[h, g] *= 1.14
    t_start = plan.grid0
    plan.truth("numa_misplacement", _names(plan, [h]), ",".join(f"GPU{g}" for g in gpus), t_start, None,
               ["collector:processes cpus_allowed_list/mems_allowed_list on the other NUMA node",
                "nvidia_smi topo -m:NUMA Affinity", "nccl:no 'Setting affinity for GPU' line for these ranks"])
    plan.truth("straggler", _names(plan, [h]), None, plan.grid0 + INIT_S, None,
               ["peer comparison: the node's step share is longer"], effect=True)


_MISCONFIG = ("buffsize", "gdr", "socket")


@scenario("nccl_misconfig", "seed 000: NCCL misconfigured for the whole job: NCCL_BUFFSIZE 2 MB (seed%3=0), "
                            "GPUDirect RDMA off via NCCL_NET_GDR_LEVEL (1) or the Socket transport instead of IB (2)")
def _misconfig(plan: Plan, r) -> None:
    cl = plan.cluster
    cfg = cl.cfg
    variant = _MISCONFIG[cfg.seed % 3]
    hosts = _names(plan, range(cfg.nodes))
    if variant == "buffsize":
        plan.env["NCCL_BUFFSIZE"] = "2097152"
        plan.comm_factor *= 1.38
        subject, sig = "NCCL_BUFFSIZE", ["nccl:NCCL_BUFFSIZE set by environment to 2097152.",
                                         "collector:process_env NCCL_BUFFSIZE=2097152"]
    elif variant == "gdr":
        plan.env["NCCL_NET_GDR_LEVEL"] = "LOC"
        plan.gdr = False
        plan.comm_factor *= 1.6
        subject, sig = "NCCL_NET_GDR_LEVEL", ["nccl:GPU Direct RDMA Disabled for GPU", "nccl:via NET/IB/0 without /GDRDMA",
                                              "collector:process_env NCCL_NET_GDR_LEVEL=LOC"]
    else:
        plan.transport = "socket"
        G = cfg.gpus_per_node
        from forensics.simulate.job import BYTES_PER_STEP, COMM0
        plan.comm_factor *= max(1.5, G * BYTES_PER_STEP * 0.5 / 11.0e9 / COMM0)
        subject, sig = "NCCL_IB_DISABLE", ["nccl:Using network Socket", "nccl:via NET/Socket/0",
                                           "sar -n DEV:traffic on the frontend port"]
    plan.truth("nccl_misconfig", hosts, subject, plan.grid0, None, sig)
    plan.truth("busy_but_slow", hosts, None, plan.grid0 + INIT_S, None,
               ["nvidia_smi:utilization.gpu ~100% with a longer all-reduce phase"], effect=True)


@scenario("pulsing_utilization", "seed 004: a serialised pipeline: GPUs take turns at 100% and ~0% utilisation")
def _pulsing(plan: Plan, r) -> None:
    plan.pulsing = True
    hosts = _names(plan, range(plan.cluster.cfg.nodes))
    plan.truth("pulsing_utilization", hosts, None, plan.grid0 + INIT_S, None,
               ["nvidia_smi:utilization.gpu alternates between ~100% and ~0% per GPU, out of phase"])


@scenario("straggler", "one node computes 20% slower for no logged reason (no throttling, no errors): only a "
                       "peer comparison finds it")
def _straggler(plan: Plan, r) -> None:
    ts, te = _window(plan, r, 0.25, 1.0)
    if plan.timing != "short":
        te = plan.t_end
    h = _pick_host(plan, r)
    plan.compute_factor[h, :, plan.span(ts, te)] *= 1.21
    plan.truth("straggler", _names(plan, [h]), None, ts, te,
               ["peer comparison: higher power/compute share per step on this node's GPUs, nothing logged"])
    others = _others(plan, [h])
    if others:
        plan.truth("busy_but_slow", _names(plan, others), None, ts, te,
                   ["nvidia_smi:utilization.gpu ~100% at lower power while waiting for the straggler"], effect=True)


@scenario("rank_hang", "one rank stops before entering its next all-reduce (a deadlock inside its own process: its "
                       "host logs nothing); every other rank waits in that collective until the PyTorch watchdog "
                       "times out, and the stuck rank's last enqueued sequence number is one behind theirs")
def _rank_hang(plan: Plan, r) -> None:
    ts, _, h, g = _fault_at(plan, r)
    timeout = _timeout(plan.cluster.cfg)
    plan.add_crash(Crash(t_fail=ts, dead=[], timeout_s=timeout, cause="rank_hang", stuck=(h, g)), [])
    plan.truth("hang_origin", _names(plan, [h]), f"rank {plan.cluster.rank(h, g)}", ts, ts + timeout + 3.0,
               ["nccl:Received a dump signal ... Last enqueued NCCL work: S-1, last completed NCCL work: S-1 (this rank)",
                "nccl:PG status: last enqueued work: >= S, last completed work: S-1 (every other rank)"])


@scenario("seed000_case_study", "the first seed document: NUMA misplacement of four ranks + NCCL_BUFFSIZE 2 MB + "
                                "GPUDirect RDMA fallback together; 99% GPU utilisation, ~40% lower throughput")
def _case000(plan: Plan, r) -> None:
    cl = plan.cluster
    cfg = cl.cfg
    hosts = _names(plan, range(cfg.nodes))
    h = _pick_host(plan, r)
    gpus = list(range(min(4, cfg.gpus_per_node)))
    for g in gpus:
        plan.affinity[(h, g)] = 1 - cl.hosts[h].gpus[g].numa
        plan.compute_factor[h, g] *= 1.14
    plan.train_framework = "torchtitan"  # what the team saw first: the job's own tokens/s/GPU
    plan.env["NCCL_BUFFSIZE"] = "2097152"
    plan.env["NCCL_NET_GDR_LEVEL"] = "LOC"
    plan.gdr = False
    plan.comm_factor *= 1.95
    plan.truth("numa_misplacement", _names(plan, [h]), ",".join(f"GPU{g}" for g in gpus), plan.grid0, None,
               ["collector:processes cpus_allowed_list on the far socket", "nvidia_smi topo -m:NUMA Affinity"])
    plan.truth("nccl_misconfig", hosts, "NCCL_BUFFSIZE", plan.grid0, None,
               ["nccl:NCCL_BUFFSIZE set by environment to 2097152.", "collector:process_env NCCL_BUFFSIZE"])
    plan.truth("nccl_misconfig", hosts, "NCCL_NET_GDR_LEVEL", plan.grid0, None,
               ["nccl:GPU Direct RDMA Disabled for GPU", "nccl:via NET/IB/<n> without /GDRDMA",
                "collector:process_env NCCL_NET_GDR_LEVEL=LOC"])
    plan.truth("busy_but_slow", hosts, None, plan.grid0 + INIT_S, None,
               ["nvidia_smi:utilization.gpu ~99% while the all-reduce phase is ~2x longer"], effect=True)
    plan.truth("straggler", _names(plan, [h]), None, plan.grid0 + INIT_S, None,
               ["peer comparison: the misplaced node's step share is longer"], effect=True)
