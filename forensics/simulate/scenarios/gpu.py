"""GPU faults: thermal throttling, a GPU off the bus (Xid 79), an uncorrectable ECC error with row remapping."""
from __future__ import annotations

import numpy as np

from forensics.simulate.config import rng

from forensics.simulate.plan import Crash, Plan
from forensics.simulate.scenarios.base import (
    _fault_at, _gpu_subject, _ib_error_lines, _names, _nccl_gid, _others, _timeout, scenario,
)


@scenario("thermal_throttle", "one GPU heats up: SW then HW Thermal Slowdown, SM clock drops; its node becomes "
                              "the straggler the others wait for (busy but slow)")
def _thermal(plan: Plan, r) -> None:
    cl = plan.cluster
    cfg = cl.cfg
    ts, te, h, g = _fault_at(plan, r, 0.2)
    if plan.timing != "short":
        te = plan.t_end
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
        peer, mine = cl.hosts[h].rails[g], cl.hosts[prev].rails[g]
        plan.add_nccl(sender, t_err, _ib_error_lines(peer.ip, mine.ip, 12, 129, 0, "Send", int(r.integers(33000, 61000)),
                                                     cl.hosts[h].frontend.ip, gids=(_nccl_gid(mine), _nccl_gid(peer))))
    plan.add_crash(Crash(t_fail=t_fail, dead=[(h, g)], timeout_s=_timeout(cfg), cause=cause, errors=errors,
                         gpu_lost=gpu_lost), [h])


@scenario("xid_79", "a GPU falls off the bus (Xid 79, follow-on Xid 45 on its node), its rank dies, "
                    "NCCL errors on a peer and watchdog timeouts everywhere else")
def _xid79(plan: Plan, r) -> None:
    ts, _, h, g = _fault_at(plan, r)
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
    ts, _, h, g = _fault_at(plan, r)
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
    # the remapping is still pending when the collector runs dcgmi diag -r 1 after sampling
    plan.truth("dcgm_diag_failure", _names(plan, [h]), _gpu_subject(plan, h, g), ts, None,
               ["dcgm:Page Retirement/Row Remap Fail: GPU had memory errors and row remappings are pending"], effect=True)


@scenario("ecc_correctable_outlier", "one GPU's memory has corrected far more errors than its peers': aggregate DRAM "
                                     "Correctable in the tens to hundreds from earlier boots (the others 0; a real 8x A100 "
                                     "nvidia-smi -q had 87), 1-3 more this boot; no Xid, no remap pending, the job runs on")
def _ecc_correctable(plan: Plan, r) -> None:
    """The real case (tests/fixtures/nvidia_smi/nvidia_smi--q-d-ecc-8xa100-535-dram-correctable-87.txt): one GPU with
    Aggregate DRAM Correctable 87 and Volatile 0, seven with 0. Ours: the count (40-399) and the few new
    correctable errors during the capture (in both counters); nothing else changes (corrected in hardware)."""
    ts, _, h, g = _fault_at(plan, r)
    past = int(r.integers(40, 400))
    plan.ecc[(h, g)] = [(plan.grid0 - 3600.0, {"sbe_agg": past}), (ts, {"sbe": int(r.integers(1, 4))})]
    plan.truth("ecc_correctable_outlier", _names(plan, [h]), _gpu_subject(plan, h, g), plan.cluster.cfg.t0, None,
               [f"nvidia_smi:ECC Errors Aggregate DRAM Correctable {past} (+1-3 this boot), 0 on the node's other GPUs"])
