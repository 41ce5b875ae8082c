"""Scenarios: each changes the healthy job (see :mod:`forensics.simulate.plan`) and records the truth.

Faults are the root causes, effects what they cause; ``kind`` is one of the finding kinds of the
detectors. Subjects: a NIC by interface name, a GPU as ``GPU<n> <pci address>``, a NCCL setting by
its variable, a disk by device name. Times in the truth are true UTC (the hosts' clocks are off by
``clock_offsets_s``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from forensics.simulate.config import SimConfig, rng
from forensics.simulate.plan import INIT_S, Crash, Plan


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


def _ib_error_lines(peer_ip: str, my_ip: str, status: int, vendor: int, opcode: int, direction: str,
                    port: int) -> list[str]:
    return [f"transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer {peer_ip}<{port}> with "
            f"status={status} opcode={opcode} len=0 vendor err {vendor} ({direction}) localGid ::ffff:{my_ip} "
            f"remoteGids::ffff:{peer_ip}",
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


# ---------------------------------------------------------------------------- scenarios
@scenario("healthy", "no fault: the job trains at full speed (the baseline every detector must stay quiet on)")
def _healthy(plan: Plan, r) -> None:
    return None


@scenario("pfc_storm", "one node's rail port sends and receives PFC pauses at storm rate on priority 3; every "
                       "node's step time grows while GPUs still report ~100% (spin-waiting in NCCL)")
def _pfc_storm(plan: Plan, r) -> None:
    cl = plan.cluster
    ts, te = _window(plan, r)
    h = _pick_host(plan, r)
    rail = int(r.integers(0, cl.cfg.gpus_per_node))
    nic = cl.hosts[h].rails[rail]
    extra = plan.nic_extra.setdefault((h, nic.iface), {})
    extra["tx_prio3_pause"] = _rate(plan, ts, te, r.uniform(90000, 140000), ramp=15)
    extra["tx_prio3_pause_duration"] = _rate(plan, ts, te, r.uniform(780000, 910000), ramp=15)
    extra["rx_prio3_pause"] = _rate(plan, ts + 4, te, r.uniform(18000, 35000), ramp=20)
    extra["rx_prio3_pause_duration"] = _rate(plan, ts + 4, te, r.uniform(200000, 380000), ramp=20)
    warn = np.zeros(plan.T)
    for k in range(int((te - ts) // 25)):
        warn[plan.idx(ts + 12 + 25 * k)] = 1
    extra["tx_pause_storm_warning_events"] = warn
    err = np.zeros(plan.T)
    err[plan.idx(ts + min(60.0, (te - ts) / 2))] = 1
    extra["tx_pause_storm_error_events"] = err
    peers = []
    for o in _others(plan, [h]):
        pn = cl.hosts[o].rails[rail]
        e2 = plan.nic_extra.setdefault((o, pn.iface), {})
        e2["rx_prio3_pause"] = _rate(plan, ts + 6, te, r.uniform(3000, 9000), ramp=30)
        e2["rx_prio3_pause_duration"] = _rate(plan, ts + 6, te, r.uniform(60000, 160000), ramp=30)
        peers.append(o)
    plan.comm_factor = np.maximum(plan.comm_factor, plan.ramp(ts, te, 20.0, 2.4))
    plan.truth("pfc_storm", _names(plan, [h]), nic.iface, ts, te,
               ["ethtool:tx_prio3_pause", "ethtool:tx_prio3_pause_duration", "ethtool:rx_prio3_pause",
                "ethtool:rx_prio3_pause_duration", "ethtool:tx_pause_storm_warning_events",
                "ethtool:tx_pause_storm_error_events"])
    for o in peers:
        plan.truth("pfc_storm", _names(plan, [o]), cl.hosts[o].rails[rail].iface, ts + 6, te,
                   ["ethtool:rx_prio3_pause (pauses spreading from the storming port)"], effect=True)
    plan.truth("busy_but_slow", _names(plan, range(cl.cfg.nodes)), None, ts, te,
               ["nvidia_smi:utilization.gpu stays ~100% while power.draw falls (NCCL spin-wait)",
                "ethtool:tx_bytes_phy rate falls"], effect=True)


@scenario("packet_drops", "rx_discards_phy / rx_out_of_buffer rise on one port; NCCL IB completion errors "
                          "(status 12, vendor err 129) follow on its peers, then PyTorch watchdog timeouts")
def _packet_drops(plan: Plan, r) -> None:
    cl = plan.cluster
    cfg = cl.cfg
    G = cfg.gpus_per_node
    ts, te = _window(plan, r)
    h = _pick_host(plan, r)
    rail = int(r.integers(0, G))
    host = cl.hosts[h]
    nic = host.rails[rail]
    t_err = ts + 24.0 + float(r.uniform(0, 4))
    t_stop = t_err + 5.0
    if plan.timing == "short":  # over before the IB retries run out: no NCCL error
        t_stop, t_err = te, np.inf
    extra = plan.nic_extra.setdefault((h, nic.iface), {})
    extra["rx_discards_phy"] = _rate(plan, ts, t_stop, r.uniform(14000, 26000), ramp=8)
    extra["rx_out_of_buffer"] = _rate(plan, ts, t_stop, r.uniform(150, 420), ramp=8)
    plan.comm_factor = np.maximum(plan.comm_factor, plan.ramp(ts, t_err, 6.0, 1.8))
    errors = {}
    if cfg.nodes > 1 and np.isfinite(t_err):
        prev = (h - 1) % cfg.nodes
        sender = cl.rank(prev, rail)
        errors[sender] = t_err
        plan.add_nccl(sender, t_err, _ib_error_lines(nic.ip, cl.hosts[prev].rails[rail].ip, 12, 129, 0, "Send",
                                                     int(r.integers(33000, 61000))))
        mine = cl.rank(h, rail)
        errors[mine] = t_err + 1.1
        plan.add_nccl(mine, t_err + 1.1, _ib_error_lines(cl.hosts[prev].rails[rail].ip, nic.ip, 5, 249, 32656, "Recv",
                                                         int(r.integers(33000, 61000))))
        plan.add_crash(Crash(t_fail=t_err, dead=[], timeout_s=_timeout(cfg), cause="packet_drops", errors=errors), [])
    plan.truth("packet_drops", _names(plan, [h]), nic.iface, ts, t_stop,
               ["ethtool:rx_discards_phy", "ethtool:rx_out_of_buffer", "ethtool:rx_prio3_discards",
                "sar:rxdrop/s"])


@scenario("link_flap", "one rail port goes down and up (mlx5_core Link down / Link up in dmesg, "
                       "link_down_events_phy increments); the last outage outlasts the IB retries: NCCL errors, timeouts")
def _link_flap(plan: Plan, r) -> None:
    cl = plan.cluster
    cfg = cl.cfg
    G = cfg.gpus_per_node
    ts, _ = _window(plan, r, 0.25)
    h = _pick_host(plan, r)
    rail = int(r.integers(0, G))
    host = cl.hosts[h]
    nic = host.rails[rail]
    gap = min(40.0, cfg.duration_s * 0.07)
    downs = [(ts, ts + float(r.uniform(1.8, 3.2))), (ts + gap, ts + gap + float(r.uniform(2.0, 4.0))),
             (ts + 2.3 * gap, ts + 2.3 * gap + 36.0)]
    if plan.timing == "short":  # one outage the IB retries ride out: no NCCL error
        downs = [(ts, ts + float(r.uniform(2.0, 4.0)))]
    plan.link_down[(h, nic.iface)] = downs
    factor = np.ones(plan.T)
    extra = plan.nic_extra.setdefault((h, nic.iface), {})
    fec = np.zeros(plan.T)
    sym = np.zeros(plan.T)
    for a, b in downs:
        factor[plan.span(a, b)] = 0.0
        plan.comm_factor[plan.span(a, b)] = np.maximum(plan.comm_factor[plan.span(a, b)], 1 + 3.0 * (b - a))
        fec[plan.span(a - 12, a)] += r.uniform(2e6, 6e6)
        sym[plan.span(a - 6, a)] += r.uniform(20, 80)
        plan.add_dmesg(h, a, f"mlx5_core {nic.pci_addr} {nic.iface}: Link down")
    for a, b in downs[:-1]:
        plan.add_dmesg(h, b, f"mlx5_core {nic.pci_addr} {nic.iface}: Link up")
        plan.add_dmesg(h, b + 0.0021, f"IPv6: ADDRCONF(NETDEV_CHANGE): {nic.iface}: link becomes ready")
    extra["rx_corrected_bits_phy"] = fec
    extra["rx_symbol_err_phy"] = sym
    plan.nic_traffic[(h, nic.iface)] = factor
    mine = cl.rank(h, rail)
    for a, b in downs:
        plan.add_nccl(mine, a + 0.01, [f"transport/net_ib.cc:100 NCCL WARN NET/IB : {nic.rdma}:1 Got async event : port error"], thread=2)
    for a, b in downs[:-1]:
        plan.add_nccl(mine, b + 0.01, [f"transport/net_ib.cc:100 NCCL WARN NET/IB : {nic.rdma}:1 Got async event : port active"], thread=2)
    a3, b3 = downs[-1]
    t_err = a3 + 30.2
    up_end = b3
    errors = {mine: t_err}
    port = int(r.integers(33000, 61000))
    if len(downs) == 1:
        plan.add_dmesg(h, b3, f"mlx5_core {nic.pci_addr} {nic.iface}: Link up")
        plan.add_dmesg(h, b3 + 0.0021, f"IPv6: ADDRCONF(NETDEV_CHANGE): {nic.iface}: link becomes ready")
        plan.add_nccl(mine, b3 + 0.01, [f"transport/net_ib.cc:100 NCCL WARN NET/IB : {nic.rdma}:1 Got async event : port active"], thread=2)
    elif cfg.nodes > 1:
        prev = (h - 1) % cfg.nodes
        pnic = cl.hosts[prev].rails[rail]
        plan.add_nccl(mine, t_err, _ib_error_lines(pnic.ip, nic.ip, 12, 129, 0, "Send", port))
        sender = cl.rank(prev, rail)
        errors[sender] = t_err + 0.6
        plan.add_nccl(sender, t_err + 0.6, _ib_error_lines(nic.ip, pnic.ip, 12, 129, 0, "Send", port + 7))
        plan.add_crash(Crash(t_fail=t_err, dead=[], timeout_s=_timeout(cfg), cause="link_flap", errors=errors), [])
        # the port comes back after the job died
        plan.add_dmesg(h, b3, f"mlx5_core {nic.pci_addr} {nic.iface}: Link up")
        plan.add_dmesg(h, b3 + 0.0021, f"IPv6: ADDRCONF(NETDEV_CHANGE): {nic.iface}: link becomes ready")
    else:
        plan.add_dmesg(h, b3, f"mlx5_core {nic.pci_addr} {nic.iface}: Link up")
    plan.truth("link_flap", _names(plan, [h]), nic.iface, downs[0][0], up_end,
               ["dmesg:mlx5_core ... Link down / Link up", "ethtool:link_down_events_phy",
                "nccl:NET/IB : Got async event : port error"])
    # while the port is down the collectives stall (comm_factor above): every rank spin-waits in NCCL
    plan.truth("busy_but_slow", _names(plan, range(cl.cfg.nodes)), None, downs[0][0], up_end,
               ["nvidia_smi:utilization.gpu ~100% at lower power while the all-reduce stalls on the down port"],
               effect=True)


@scenario("thermal_throttle", "one GPU heats up: SW then HW Thermal Slowdown, SM clock drops; its node becomes "
                              "the straggler the others wait for (busy but slow)")
def _thermal(plan: Plan, r) -> None:
    cl = plan.cluster
    cfg = cl.cfg
    ts, te = _window(plan, r, 0.2)
    if plan.timing != "short":
        te = plan.t_end
    h = _pick_host(plan, r)
    g = int(r.integers(0, cfg.gpus_per_node))
    secs = plan.grid0 + np.arange(plan.T)
    temp = np.full(plan.T, np.nan)
    ramp = min(150.0, cfg.duration_s * 0.25) if plan.timing is None else 12.0
    if plan.timing == "short":  # hot for 8-25 s after the ramp
        te = te + ramp
    rising = (secs >= ts) & (secs < ts + ramp)
    temp[rising] = 69 + (90.5 - 69) * (secs[rising] - ts) / ramp
    hot = (secs >= ts + ramp) & (secs <= te)
    wob = rng(cfg.seed, "thermal", h, g).normal(0, 0.35, plan.T)
    temp[hot] = 90.0 + 1.4 * np.sin((secs[hot] - ts) / 23.0) + wob[hot]
    temp[rising] += wob[rising]
    plan.temp_override[(h, g)] = temp
    ratio = np.ones(plan.T)
    bits = np.zeros(plan.T, dtype=np.int64)
    sw = temp >= 87.0
    hw = temp >= 89.5
    ratio[sw] = 0.80
    ratio[hw] = 0.64
    bits[sw] |= 0x20
    bits[hw] |= 0x40 | 0x08
    plan.clock_ratio[h, g] = ratio
    plan.reason_bits[h, g] |= bits
    t_hot = ts + ramp * (87 - 69) / (90.5 - 69)
    plan.truth("gpu_throttle", _names(plan, [h]), _gpu_subject(plan, h, g), t_hot, te,
               ["nvidia_smi:Clocks Event Reasons SW Thermal Slowdown / HW Thermal Slowdown Active",
                "nvidia_smi:clocks_event_reasons.active 0x60/0x68", "nvidia_smi:clocks.sm drops",
                "nvidia_smi:temperature.gpu ~90 C"])
    plan.truth("straggler", _names(plan, [h]), None, t_hot, te,
               ["peer comparison: the node's GPUs compute longer per step"], effect=True)
    others = _others(plan, [h])
    if others:
        plan.truth("busy_but_slow", _names(plan, others), None, t_hot, te,
                   ["nvidia_smi:utilization.gpu ~100% at lower power while waiting for the straggler"], effect=True)


def _gpu_header(plan, h, g) -> list[str]:
    gpu = plan.cluster.hosts[h].gpus[g]
    return [f"NVRM: GPU at PCI:{gpu.pci_short}: {gpu.uuid}", f"NVRM: GPU Board Serial Number: {gpu.serial}"]


def _gpu_fault(plan: Plan, r) -> tuple[float, int, int]:
    """(start, host, GPU) of a fault on one GPU."""
    ts, _ = _window(plan, r)
    h = _pick_host(plan, r)
    return ts, h, int(r.integers(0, plan.cluster.cfg.gpus_per_node))


def _gpu_log(plan: Plan, h: int, g: int, t: float, step: float, lines: list[str]) -> None:
    """The driver's lines about GPU g of host h (its header first), `step` seconds apart from `t`."""
    for k, text in enumerate(_gpu_header(plan, h, g) + lines):
        plan.add_dmesg(h, t + step * k, text)


def _rank_dies(plan: Plan, r, h: int, g: int, t_fail: float, t_err: float, cause: str, gpu_lost: bool = False) -> None:
    """The rank of GPU g on host h dies at t_fail; the rank before it on that rail (previous node) gets an IB
    completion error at t_err, the rest wait for the watchdog."""
    cl = plan.cluster
    cfg = cl.cfg
    errors = {}
    if cfg.nodes > 1:
        prev = (h - 1) % cfg.nodes
        sender = cl.rank(prev, g)
        errors[sender] = t_err
        plan.add_nccl(sender, t_err, _ib_error_lines(cl.hosts[h].rails[g].ip, cl.hosts[prev].rails[g].ip, 12, 129, 0,
                                                     "Send", int(r.integers(33000, 61000))))
    plan.add_crash(Crash(t_fail=t_fail, dead=[(h, g)], timeout_s=_timeout(cfg), cause=cause, errors=errors,
                         gpu_lost=gpu_lost), [h])


@scenario("xid_79", "a GPU falls off the bus (Xid 79, follow-on Xid 45 on its node), its rank dies, "
                    "NCCL errors on a peer and watchdog timeouts everywhere else")
def _xid79(plan: Plan, r) -> None:
    ts, h, g = _gpu_fault(plan, r)
    host = plan.cluster.hosts[h]
    gpu = host.gpus[g]
    _gpu_log(plan, h, g, ts, 0.00012, [
        f"NVRM: Xid (PCI:{gpu.pci_short}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
        f"NVRM: GPU {gpu.pci_addr}: GPU has fallen off the bus.",
        f"NVRM: GPU {gpu.pci_addr}: GPU serial number is {gpu.serial}.",
        "NVRM: A GPU crash dump has been created. If possible, please run",
        "NVRM: nvidia-bug-report.sh as root to collect this data before",
        "NVRM: the NVIDIA kernel module is unloaded.",
    ])
    for o, og in enumerate(host.gpus):
        if o == g:
            continue
        plan.add_dmesg(h, ts + 4.6 + 0.0021 * o,
                       f"NVRM: Xid (PCI:{og.pci_short}): 45, pid={host.pid(o)}, name=pt_main_thread, Ch {0x18 + 2 * o:08x}")
    _rank_dies(plan, r, h, g, ts, ts + 31.0, "xid_79", gpu_lost=True)
    plan.truth("gpu_xid", _names(plan, [h]), _gpu_subject(plan, h, g), ts, ts + 5.0,
               ["dmesg:NVRM: Xid 79 GPU has fallen off the bus", "dmesg:Xid 45 on the node's other GPUs",
                "nvidia_smi:GPU missing from later samples"])


@scenario("ecc_remap", "double-bit ECC error on one GPU (Xid 48, row remap Xid 63, contained Xid 94; Xid 64 "
                       "remap failure with odd seeds): remapped rows pending, the rank is killed, the job times out")
def _ecc(plan: Plan, r) -> None:
    ts, h, g = _gpu_fault(plan, r)
    host = plan.cluster.hosts[h]
    gpu = host.gpus[g]
    addr = int(r.integers(0x100000000, 0x13FFFFFFF)) & ~0x1F
    pid = host.pid(g)
    lines = [
        f"NVRM: Xid (PCI:{gpu.pci_short}): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error "
        f"(DBE) has been detected on GPU in the framebuffer at physAddr 0x{addr:x} partition {int(r.integers(0, 8))}, "
        f"subpartition {int(r.integers(0, 2))}",
        f"NVRM: Xid (PCI:{gpu.pci_short}): 94, pid={pid}, name=pt_main_thread, Contained: CE User Channel (0x9). "
        "RST: No, D-RST: No",
        f"NVRM: Xid (PCI:{gpu.pci_short}): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row "
        f"(0x{addr:016x}) marked for remapping, reset gpu to activate.",
    ]
    failure = plan.cluster.cfg.seed % 2 == 1
    if failure:
        lines.append(f"NVRM: Xid (PCI:{gpu.pci_short}): 64, pid='<unknown>', name=<unknown>, Row Remapper Error: "
                     f"(0x{addr:016x}) - All reserved rows for bank are remapped")
    _gpu_log(plan, h, g, ts, 0.0004, lines)
    plan.ecc[(h, g)] = [(ts, {"dbe": 1, "remap_unc": 1, "pending": True, "failure": failure})]
    _rank_dies(plan, r, h, g, ts + 0.05, ts + 31.0, "ecc")
    xids = "48/63/64/94" if failure else "48/63/94"
    plan.truth("ecc_error", _names(plan, [h]), _gpu_subject(plan, h, g), ts, ts + 1.0,
               [f"dmesg:NVRM Xid {xids}", "nvidia_smi:ECC Errors DRAM Uncorrectable 1",
                "nvidia_smi:Remapped Rows Pending Yes"] + (["nvidia_smi:Remapping Failure Occurred Yes"] if failure else []))
    plan.truth("gpu_xid", _names(plan, [h]), _gpu_subject(plan, h, g), ts, ts + 1.0,
               ["dmesg:Xid 94 contained error killed the process"], effect=True)


@scenario("dataloader_starvation", "seed 002: the dataloader starves every GPU: CPU ~95% busy, the dataset disk "
                                   "near saturation (iostat %util, r_await), GPU utilisation falls to ~20%")
def _starvation(plan: Plan, r) -> None:
    cl = plan.cluster
    ts, te = _window(plan, r, 0.3, 0.85)
    sl = plan.span(ts, te)
    ramp = np.clip((plan.grid0 + np.arange(plan.T) - ts) / 20.0, 0, 1)
    plan.data_wait[:, sl] = 5.8 * ramp[sl]
    plan.cpu_extra[:, sl] = ramp[sl]
    plan.disk_load[:, sl] = ramp[sl]
    hosts = _names(plan, range(cl.cfg.nodes))
    plan.truth("io_starvation", hosts, "sda", ts, te,
               ["iostat:sda %util ~100", "iostat:sda r_await tens of ms", "iostat:aqu-sz", "sar:%iowait"])
    plan.truth("cpu_saturation", hosts, None, ts, te, ["sar -u:%idle < 5", "sar -q:runq-sz"])
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
    cl = plan.cluster
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
    cl = plan.cluster
    cfg = cl.cfg
    ts, _ = _window(plan, r)
    h = _pick_host(plan, r)
    g = int(r.integers(0, cfg.gpus_per_node))
    timeout = _timeout(cfg)
    plan.add_crash(Crash(t_fail=ts, dead=[], timeout_s=timeout, cause="rank_hang", stuck=(h, g)), [])
    plan.truth("hang_origin", _names(plan, [h]), f"rank {cl.rank(h, g)}", ts, ts + timeout + 3.0,
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
