"""The scenario registry and what scenarios share: the fault's window and host, truth records, the
effects of a crash, and the ``healthy`` baseline (registered first)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from forensics.simulate.config import SimConfig
from forensics.simulate.plan import Crash, Plan


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    build: Callable[[Plan, np.random.Generator], None]


SCENARIOS: dict[str, Scenario] = {}


def scenario(name: str, description: str):
    def deco(fn):
        SCENARIOS[name] = Scenario(name, description, fn)
        return fn
    return deco


# ---------------------------------------------------------------------------- helpers
def _window(plan: Plan, r, start_frac=0.30, end_frac=0.80) -> tuple[float, float]:
    """(start, end) of the fault in true time. The plan's timing moves it: ``early`` starts it 30-90 s
    before the capture, ``late`` starts it in the capture's last minute and ends it at its last
    second, ``short`` ends it 8-25 s after it starts."""
    cfg = plan.cluster.cfg
    ts = cfg.t0 + cfg.duration_s * start_frac + float(r.uniform(0, 0.04)) * cfg.duration_s
    te = cfg.t0 + cfg.duration_s * end_frac
    if plan.timing == "early":
        ts = cfg.t0 - float(r.uniform(30, 90))
    elif plan.timing == "late":
        ts = cfg.t0 + cfg.duration_s - float(r.uniform(35, 55))
        te = cfg.t0 + cfg.duration_s
    elif plan.timing == "short":
        te = ts + float(r.uniform(8, 25))
    return ts, te


def _timeout(cfg: SimConfig) -> float:
    return float(min(max(0.2 * cfg.duration_s, 60.0), 600.0))


def _pick_host(plan: Plan, r) -> int:
    """The faulty host: random, but another than an earlier fault's (or the same with ``same_host``)."""
    cfg = plan.cluster.cfg
    if plan.taken and (cfg.same_host or len(plan.taken) >= cfg.nodes):
        return plan.taken[0]
    free = [h for h in range(cfg.nodes) if h not in plan.taken]
    h = free[int(r.integers(0, len(free)))] if plan.taken else int(r.integers(0, cfg.nodes))
    plan.taken.append(h)
    return h


def _names(plan: Plan, hosts) -> list[str]:
    return [plan.cluster.hosts[h].name for h in hosts]


def _others(plan: Plan, skip) -> list[int]:
    return [h for h in range(plan.cluster.cfg.nodes) if h not in set(skip)]


def _rate(plan: Plan, t0: float, t1: float, value, ramp: float = 0.0) -> np.ndarray:
    x = plan.ramp(t0, t1, ramp, 1.0, 0.0) if ramp else plan.ramp(t0, t1, 0.0, 1.0, 0.0)
    return x * value


def _gpu_subject(plan, h, g) -> str:
    gpu = plan.cluster.hosts[h].gpus[g]
    return f"GPU{g} {gpu.pci_addr}"


def _nccl_gid(nic) -> str:
    """The GID of a rail port as NCCL prints it: RoCE its IPv4-mapped address (``NCCL_IB_GID_INDEX=3``), InfiniBand
    its link-local GID (the port GUID; forensics.gid.address writes it as inet_ntop does)."""
    if not nic.infiniband:
        return f"::ffff:{nic.ip}"
    from forensics.gid import address
    from forensics.simulate.fmt_infiniband import gid_table

    return address(gid_table(nic)[0][0])


def _ib_error_lines(peer_ip: str, my_ip: str, status: int, vendor: int, opcode: int, direction: str,
                    port: int, peer_sock: str | None = None, gids: tuple[str, str] | None = None) -> list[str]:
    """NCCL's completion error: the peer named by its socket address (the OOB interface the IB
    transport connected over, ``NET/IB : Using ... ; OOB eth0:<ip>``), then the QP's GIDs (RoCE
    addresses: tests/fixtures/nccl issue1814 prints peer 172.36.143.59 with remoteGids ::ffff:29.87.4.221;
    `gids`: (local, remote) as :func:`_nccl_gid` gives them, else the RoCE ones of the two addresses)."""
    mine, peer = gids or (f"::ffff:{my_ip}", f"::ffff:{peer_ip}")
    return [f"transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {peer_sock or peer_ip}<{port}> with "
            f"status={status} opcode={opcode} len=0 vendor err {vendor} ({direction}) localGid {mine} "
            f"remoteGids{peer}",
            "NCCL INFO transport/net.cc:1298 -> 6",
            "NCCL INFO proxy.cc:694 -> 6",
            "NCCL INFO proxy.cc:874 -> 6 [Progress Thread]"]


def crash_truth(plan: Plan, crash: Crash, dead_hosts: list[int], err_at: dict[int, float]) -> None:
    """Effects of a crash: NCCL transport errors where they were logged, watchdog timeouts on the rest."""
    cl = plan.cluster
    G = cl.cfg.gpus_per_node
    if err_at:
        hosts = sorted({rk // G for rk in err_at})
        t = min(err_at.values())
        plan.truth("nccl_transport_error", _names(plan, hosts), None, t, max(err_at.values()) + 2.0,
                   ["nccl:NET/IB : Got completion from peer ... status=12 vendor err 129"], effect=True)
    skip = set(dead_hosts) | {rk // G for rk in err_at}
    rest = _others(plan, skip)
    if rest:
        hang = min([crash.t_fail] + list(err_at.values()))
        plan.truth("collective_timeout", _names(plan, rest), None, crash.t_fail,
                   hang + crash.timeout_s + 3.0,
                   ["nccl:Watchdog caught collective operation timeout: WorkNCCL(SeqNum=..., OpType=ALLREDUCE)"],
                   effect=True)


def _fault_at(plan: Plan, r, start_frac: float = 0.30) -> tuple[float, float, int, int]:
    """(start, end, host, k) of a fault on one GPU or rail port of a host (rail k serves GPU k)."""
    ts, te = _window(plan, r, start_frac)
    h = _pick_host(plan, r)
    return ts, te, h, int(r.integers(0, plan.cluster.cfg.gpus_per_node))


# ---------------------------------------------------------------------------- scenarios
@scenario("healthy", "no fault: the job trains at full speed (the baseline every detector must stay quiet on)")
def _healthy(plan: Plan, r) -> None:
    return None
