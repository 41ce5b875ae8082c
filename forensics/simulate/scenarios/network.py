"""Fabric faults: a PFC storm, packet drops, a flapping link."""
from __future__ import annotations

import numpy as np

from forensics.simulate.config import rng
from forensics.simulate.plan import Crash, Plan
from forensics.simulate.scenarios.base import (
    _fault_at, _ib_error_lines, _names, _others, _rate, _timeout, scenario,
)


@scenario("pfc_storm", "one node's rail port sends and receives PFC pauses at storm rate on priority 3; every "
                       "node's step time grows while GPUs still report ~100% (spin-waiting in NCCL)")
def _pfc_storm(plan: Plan, r) -> None:
    cl = plan.cluster
    ts, te, h, rail = _fault_at(plan, r)
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
    # ECN before PFC: the switch queue toward the storming port stays past its ECN threshold, so the packets it
    # forwards there are marked (that port's np_ecn_marked_roce_packets, np_cnp_sent; its senders' rp_cnp_handled);
    # the pauses spreading to the peers back up their queues less (fmt_infiniband.dcqcn_values; own generator, so
    # the draws above keep their values)
    re = rng(cl.cfg.seed, "pfc_storm_ecn", h, nic.iface)
    extra["_np_ecn_marked"] = _rate(plan, ts, te, re.uniform(50000, 200000), ramp=15)
    for o in peers:
        plan.nic_extra[(o, cl.hosts[o].rails[rail].iface)]["_np_ecn_marked"] = _rate(
            plan, ts + 6, te, re.uniform(1000, 8000), ramp=30)
    plan.comm_factor = np.maximum(plan.comm_factor, plan.ramp(ts, te, 20.0, 2.4))
    plan.truth("pfc_storm", _names(plan, [h]), nic.iface, ts, te,
               ["ethtool:tx_prio3_pause", "ethtool:tx_prio3_pause_duration", "ethtool:rx_prio3_pause",
                "ethtool:rx_prio3_pause_duration", "ethtool:tx_pause_storm_warning_events",
                "ethtool:tx_pause_storm_error_events", "infiniband:hw_counters/np_ecn_marked_roce_packets",
                "infiniband:hw_counters/np_cnp_sent"])
    for o in peers:
        plan.truth("pfc_storm", _names(plan, [o]), cl.hosts[o].rails[rail].iface, ts + 6, te,
                   ["ethtool:rx_prio3_pause (pauses spreading from the storming port)",
                    "infiniband:hw_counters/rp_cnp_handled (CNPs from the storming port)"], effect=True)
    plan.truth("busy_but_slow", _names(plan, range(cl.cfg.nodes)), None, ts, te,
               ["nvidia_smi:utilization.gpu stays ~100% while power.draw falls (NCCL spin-wait)",
                "ethtool:tx_bytes_phy rate falls"], effect=True)


@scenario("packet_drops", "rx_discards_phy / rx_out_of_buffer rise on one port; NCCL IB completion errors "
                          "(status 12, vendor err 129) follow on its peers, then PyTorch watchdog timeouts")
def _packet_drops(plan: Plan, r) -> None:
    cl = plan.cluster
    cfg = cl.cfg
    ts, te, h, rail = _fault_at(plan, r)
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
                                                     int(r.integers(33000, 61000)), cl.hosts[h].frontend.ip))
        mine = cl.rank(h, rail)
        errors[mine] = t_err + 1.1
        plan.add_nccl(mine, t_err + 1.1, _ib_error_lines(cl.hosts[prev].rails[rail].ip, nic.ip, 5, 249, 32656, "Recv",
                                                         int(r.integers(33000, 61000)), cl.hosts[prev].frontend.ip))
        plan.add_crash(Crash(t_fail=t_err, dead=[], timeout_s=_timeout(cfg), cause="packet_drops", errors=errors), [])
    plan.truth("packet_drops", _names(plan, [h]), nic.iface, ts, t_stop,
               ["ethtool:rx_discards_phy", "ethtool:rx_out_of_buffer", "ethtool:rx_prio3_discards",
                "sar:rxdrop/s"])


@scenario("link_flap", "one rail port goes down and up (mlx5_core Link down / Link up in dmesg, "
                       "link_down_events_phy increments); the last outage outlasts the IB retries: NCCL errors, timeouts")
def _link_flap(plan: Plan, r) -> None:
    cl = plan.cluster
    cfg = cl.cfg
    ts, _, h, rail = _fault_at(plan, r, 0.25)
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
        plan.add_nccl(mine, t_err, _ib_error_lines(pnic.ip, nic.ip, 12, 129, 0, "Send", port, cl.hosts[prev].frontend.ip))
        sender = cl.rank(prev, rail)
        errors[sender] = t_err + 0.6
        plan.add_nccl(sender, t_err + 0.6, _ib_error_lines(nic.ip, pnic.ip, 12, 129, 0, "Send", port + 7, cl.hosts[h].frontend.ip))
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


#: mlx5's health report after a fatal firmware error whose reads return all ones (the device stopped
#: answering), verbatim after the function tag from the real lines of
#: tests/fixtures/dmesg/dmesg--netdev-mlx5-fatal-syndrome-hung-task-recovery-aborted.txt
MLX5_DEAD_HEALTH = [f"print_health_info:380:(pid 0): assert_var[{i}] 0xffffffff" for i in range(5)] + [
    "print_health_info:383:(pid 0): assert_exit_ptr 0xffffffff", "print_health_info:385:(pid 0): assert_callra 0xffffffff",
    "print_health_info:388:(pid 0): fw_ver 65535.65535.65535", "print_health_info:389:(pid 0): hw_id 0xffffffff",
    "print_health_info:390:(pid 0): irisc_index 255", "print_health_info:391:(pid 0): synd 0xff: unrecognized error",
    "print_health_info:393:(pid 0): ext_synd 0xffff", "print_health_info:395:(pid 0): raw fw_ver 0xffffffff"]


@scenario("nic_wedged", "one rail NIC's firmware dies (mlx5 'Fatal error 1 detected', health reads all ones, synd 0xff): "
                        "its port carries nothing from then on, its rank's NCCL send fails after the IB retries, the "
                        "rest time out; the health worker blocks for 122 s (hung task) in captures long enough")
def _nic_wedged(plan: Plan, r) -> None:
    """Wording of the real netdev report (fixture above): the health poll's line, the all-ones health
    dump, and 122 s later ``INFO: task kworker/...:N blocked for more than 122 seconds.`` with its
    ``Workqueue: mlx5_health<pci> mlx5_fw_fatal_reporter_err_work [mlx5_core]``. Ours: which rail, the
    kworker's name and pid, the NCCL error 30 s after (as link_flap's last outage)."""
    cl = plan.cluster
    cfg = cl.cfg
    ts, _, h, rail = _fault_at(plan, r, 0.25)
    nic = cl.hosts[h].rails[rail]
    plan.add_dmesg(h, ts, f"mlx5_core {nic.pci_addr}: poll_health:702:(pid 0): Fatal error 1 detected")
    for k, text in enumerate(MLX5_DEAD_HEALTH):
        plan.add_dmesg(h, ts + 0.00024 + 0.000007 * k, f"mlx5_core {nic.pci_addr}: {text}")
    t_hung = ts + 122.0 + float(r.uniform(0.5, 3.0))
    kw = f"kworker/u128:{int(r.integers(1, 9))}"
    kpid = int(r.integers(300, 900))
    for k, text in enumerate([f"INFO: task {kw}:{kpid} blocked for more than 122 seconds.",
                              '"echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.',
                              f"{kw:<15} D10848 {kpid:5d}      2 0x02000000",
                              f"Workqueue: mlx5_health{nic.pci_addr} mlx5_fw_fatal_reporter_err_work [mlx5_core]"]):
        plan.add_dmesg(h, t_hung + 0.00001 * k, text)
    plan.nic_traffic[(h, nic.iface)] = plan.ramp(ts, plan.t_end + 1.0, 0.0, 0.0)
    mine = cl.rank(h, rail)
    t_err = ts + 30.2
    errors = {}
    if cfg.nodes > 1:
        prev = (h - 1) % cfg.nodes
        pnic = cl.hosts[prev].rails[rail]
        plan.add_nccl(mine, t_err, _ib_error_lines(pnic.ip, nic.ip, 12, 129, 0, "Send", int(r.integers(33000, 61000)),
                                                   cl.hosts[prev].frontend.ip))
        errors = {mine: t_err}
    plan.comm_factor[plan.span(ts, t_err)] = np.maximum(plan.comm_factor[plan.span(ts, t_err)], 60.0)
    plan.add_crash(Crash(t_fail=t_err, dead=[], timeout_s=_timeout(cfg), cause="nic_wedged", errors=errors), [])
    plan.truth("nic_wedged", _names(plan, [h]), f"NIC {nic.pci_addr} {nic.iface}", ts, None,
               ["dmesg:mlx5_core ... poll_health: Fatal error 1 detected", "dmesg:print_health_info synd 0xff"])
    plan.truth("busy_but_slow", _names(plan, range(cfg.nodes)), None, ts, t_err,
               ["nvidia_smi:utilization.gpu ~100% while the collectives wait on the dead port"], effect=True)
    plan.truth("hung_task", _names(plan, [h]), None, t_hung, None,
               [f"dmesg:INFO: task {kw}:{kpid} blocked for more than 122 seconds. (Workqueue: mlx5_health...)"],
               effect=True)
