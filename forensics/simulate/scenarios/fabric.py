"""Fabric faults seen through the RDMA port and NVLink tools, the NIC QoS and the NVSwitches (``ibstat``,
``/sys/class/infiniband``, ``nvidia-smi nvlink -e``, ``mlnx_qos``, the kernel's SXid lines and Fabric
Manager's log): a half-width rail, NVLink errors, a host with another RoCE QoS, a fatal NVSwitch error."""
from __future__ import annotations

import numpy as np

from forensics.simulate.plan import Crash, Plan
from forensics.simulate.scenarios.base import _fault_at, _names, _pick_host, _rate, _timeout, _window, scenario

#: the NVSwitches (driver instance -> PCI address) of the real SXid lines in
#: tests/fixtures/dmesg/dmesg--gpud-sxid-readme-raw-xid79-sxid20034.txt (nvidia-nvswitch0-2)
NVSWITCHES = ("0000:05:00.0", "0000:06:00.0", "0000:07:00.0")
#: what the driver prints after each fatal SXid 20034 line, verbatim from that fixture
SXID_DATA = ("Data {0x10000000, 0x10000000, 0x00000000, 0x10000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, "
             "0x00000000}")


@scenario("ib_link_degraded", "one rail port (RoCE on ConnectX-7) retrains at half width (4X -> 2X: 400 -> 200 Gb/s) "
                              "after link error recoveries, with symbol errors rising on it (a marginal cable/transceiver): "
                              "no link-down, the job's collectives slow on that rail")
def _ib_link_degraded(plan: Plan, r) -> None:
    cl = plan.cluster
    ts, _ = _window(plan, r, 0.30)
    h = _pick_host(plan, r)
    rail = int(r.integers(0, cl.cfg.gpus_per_node))
    nic = cl.hosts[h].rails[rail]
    plan.ib_width[(h, nic.iface)] = [(ts, 2)]
    extra = plan.nic_extra.setdefault((h, nic.iface), {})
    # a marginal lane: symbol errors from a little before the retrain on (tens to a few hundred a minute)
    extra["rx_symbol_err_phy"] = _rate(plan, ts - 15, plan.t_end, r.uniform(0.6, 3.0))
    rec = np.zeros(plan.T)
    rec[plan.idx(ts)] = int(r.integers(1, 4))
    extra["_ib_link_error_recovery"] = rec
    # the ring's collectives run at the pace of the rail at half its bandwidth
    plan.comm_factor = np.maximum(plan.comm_factor, plan.ramp(ts, plan.t_end, 2.0, 1.8))
    subject = f"{nic.rdma} {nic.iface}"
    plan.truth("ib_link_degraded", _names(plan, [h]), subject, ts - 15, None,
               ["infiniband:sysfs rate 400 -> 200 Gb/sec (2X NDR)", "infiniband:counters/symbol_error",
                "infiniband:counters/link_error_recovery", "ethtool:rx_symbol_err_phy"])
    plan.truth("packet_drops", _names(plan, [h]), nic.iface, ts - 15, None,
               ["ethtool:rx_symbol_err_phy (frames corrupted on the marginal lane are dropped)"], effect=True)
    plan.truth("busy_but_slow", _names(plan, range(cl.cfg.nodes)), None, ts, None,
               ["nvidia_smi:utilization.gpu ~100% while the all-reduce waits on the half-width rail"], effect=True)


@scenario("nvlink_errors", "one GPU's NVLink link retrains once and then keeps taking CRC errors (tens a second, "
                           "below DCGM's 100/s limit) with replays: a marginal NVLink lane; the job runs on")
def _nvlink_errors(plan: Plan, r) -> None:
    from forensics.simulate.series import NVLINKS

    cl = plan.cluster
    ts, _ = _window(plan, r, 0.35)
    h = _pick_host(plan, r)
    g = int(r.integers(0, cl.cfg.gpus_per_node))
    link = int(r.integers(0, NVLINKS))
    crc = _rate(plan, ts, plan.t_end, r.uniform(5.0, 40.0))
    recovery = np.zeros(plan.T)
    recovery[plan.idx(ts)] = 1
    plan.nvlink_extra[(h, g, link)] = {"crc": crc, "replay": crc * r.uniform(0.3, 0.7), "recovery": recovery}
    gpu = cl.hosts[h].gpus[g]
    plan.truth("nvlink_errors", _names(plan, [h]), f"GPU{g} {gpu.pci_addr} link {link}", ts, None,
               ["nvlink:nvidia-smi nvlink -e Recovery Errors +1, Replay Errors and CRC Errors rising"])


@scenario("pfc_misconfig", "one host's rail ports came back from a reboot with the NIC default QoS (trust pcp): RoCE v2 "
                           "traffic, which carries no VLAN priority, is no longer classified to the PFC priority 3 there; "
                           "a latent misconfiguration, the capture shows no loss yet")
def _pfc_misconfig(plan: Plan, r) -> None:
    h = _pick_host(plan, r)
    plan.qos_override[h] = {"trust": "pcp", "pfc": [3]}
    plan.truth("pfc_misconfig", _names(plan, [h]), None, plan.cluster.cfg.t0, None,
               ["mlnx_qos:Priority trust state: pcp on the rails (dscp on every other host)"])


@scenario("nvswitch_sxid", "one NVSwitch takes fatal SXid 20034 (LTSSM Fault Up) on one or two of its NVLink ports: "
                           "the driver's SXid lines in dmesg, Fabric Manager's 'detected NVSwitch fatal error' in its "
                           "log; the node's NVLink collectives stall and every rank times out in its all-reduce")
def _nvswitch_sxid(plan: Plan, r) -> None:
    """The wording is that of real lines: the kernel's record (``SXid (PCI:..): 20034, Fatal, Link N LTSSM
    Fault Up``, then its ``Severity 1 Engine instance N`` and ``Data {...}`` lines) from
    tests/fixtures/dmesg/dmesg--gpud-sxid-readme-raw-xid79-sxid20034.txt, Fabric Manager's from
    tests/fixtures/fabricmanager/fabricmanager--gpud-matcher-fatal-sxid-multicast.log. Ours: which switch
    and ports, FM's ``physical id`` (the switch's instance) and its line 0.3-1.5 s after the kernel's.
    A fatal SXid leaves the switch needing a reset (Fabric Manager guide): the all-reduce that was
    crossing it never completes, no rank dies or logs an NCCL error, and every rank's watchdog fires."""
    cl = plan.cluster
    ts, _, h, _ = _fault_at(plan, r)
    sw = int(r.integers(0, len(NVSWITCHES)))
    addr = NVSWITCHES[sw]
    links = sorted(int(x) for x in r.choice(64, size=int(r.integers(1, 3)), replace=False))
    head = f"nvidia-nvswitch{sw}: SXid (PCI:{addr}): 20034"
    for k, link in enumerate(links):
        t = ts + 0.0035 * k
        plan.add_dmesg(h, t, f"{head}, Fatal, Link {link} LTSSM Fault Up")
        plan.add_dmesg(h, t + 0.0003, f"{head}, Severity 1 Engine instance {link} Sub-engine instance 00")
        plan.add_dmesg(h, t + 0.0016, f"{head}, {SXID_DATA}")
        plan.fm_log.setdefault(h, []).append(
            (t + float(r.uniform(0.3, 1.5)), "ERROR", f"detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus "
                                                      f"id 0000{addr} physical id {sw} port {link}"))
    plan.add_crash(Crash(t_fail=ts + 0.01, dead=[], timeout_s=_timeout(cl.cfg), cause="nvswitch_sxid"), [])
    plan.truth("nvswitch_sxid", _names(plan, [h]), "SXid 20034 fatal", ts, None,
               [f"dmesg:{head}, Fatal, Link {links[0]} LTSSM Fault Up",
                f"fabricmanager:detected NVSwitch fatal error 20034 ... pci bus id 0000{addr} port {links[0]}"])


@scenario("ib_congestion", "InfiniBand rails (no RoCE): one rail port waits for credits 20-60% of the time (its "
                           "PortXmitWait rising: the switch port behind it is congested); every node's all-reduce "
                           "slows to that port's pace")
def _ib_congestion(plan: Plan, r) -> None:
    """The fault as NVIDIA describes it: PortXmitWait, "the number of ticks in which the selected port had
    data to transmit, but no data was sent during the entire tick" for lack of credits or arbitration, the
    lost bandwidth being counter x (tick + 1) bytes with tick 7 (ibdiagnet user manual v2.13, "Congestion
    Assessment on InfiniBand Links"; NVIDIA/ib-traffic-monitor#3 for the host's sysfs counter). Only the
    port's counters show it (no link error, no NCCL warning); the run uses InfiniBand rails
    (``SimConfig.infiniband``, forensics.simulate.fmt_infiniband). Ours: the host and rail, the share
    (0.2-0.6 of each second, reached over 10 s) and its window. A ring all-reduce moves at its slowest
    link: the collectives take 1 / (1 - share) as long. sysfs shows the 32-bit counter, which a port that
    has carried traffic since boot has long saturated (fmt_infiniband.xmit_wait): its samples read 4294967295
    throughout; the collector's ``perfquery -x`` reads PortCountersExtended, whose 64-bit PortXmitWait moves
    (fmt_infiniband.perfquery_x_series: a PMA that declares it, CapMask2 bit 1)."""
    cl = plan.cluster
    ts, te, h, rail = _fault_at(plan, r)
    nic = cl.hosts[h].rails[rail]
    share = float(r.uniform(0.2, 0.6))
    plan.ib_xmit_wait[(h, nic.iface)] = plan.ramp(ts, te, 10.0, share, 0.0)
    plan.comm_factor = np.maximum(plan.comm_factor, plan.ramp(ts, te, 10.0, 1.0 / (1.0 - share)))
    plan.truth("ib_congestion", _names(plan, [h]), f"{nic.rdma} port 1", ts, te,
               [f"infiniband:perfquery -x PortXmitWait, 64-bit (waiting {share:.0%} of the time at 400 Gb/s; "
                "the 32-bit sysfs counters/port_xmit_wait is saturated)"], onset_s=10.0)
    plan.truth("busy_but_slow", _names(plan, range(cl.cfg.nodes)), None, ts, te,
               ["nvidia_smi:utilization.gpu stays ~100% while the all-reduce waits on the congested port"], effect=True)
