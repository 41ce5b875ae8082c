"""``ibstat`` and the per-port ``/sys/class/infiniband`` series of the simulated RDMA ports (RoCE on
ConnectX), as ``forensics collect`` captures them (see ``forensics/sources/infiniband_spec.py``).

What the real ones look like (tests/fixtures/infiniband): ibstat of an H100 node's RoCE CAs
(``CA type: MT4129``, ``Firmware version: 28.39.1002``, ``Rate: 400``, ``Base lid: 0``, ``SM lid: 0``,
``Capability mask: 0x00010000``, ``Link layer: Ethernet``; MT4125 / 22.39.1002 for ConnectX-6 Dx),
the GUIDs derived from the MAC (EUI-64); sysfs of the same kind of node: ``state`` ``4: ACTIVE``,
``phys_state`` ``5: LinkUp``, ``rate`` ``400 Gb/sec (4X NDR)`` (``200 Gb/sec (2X NDR)`` at half
width), the 21 ``counters`` and the 26 ``hw_counters`` of mlx5 on a RoCE port. The collector runs
``grep -H -s -r .`` over state, phys_state, rate, link_layer, counters/ and hw_counters/.

The counters follow the same port model as ``ethtool -S`` (:meth:`HostModel.nic_counters`):
``port_xmit_data``/``port_rcv_data`` are the RDMA bytes / 4 (4-octet words), ``symbol_error`` the
PHY symbol errors, ``link_downed`` the port's link-down events since the counters were cleared,
``port_rcv_errors`` the CRC errors, ``out_of_buffer`` the receive-WQE misses. RoCE ports also carry mlx5's four
congestion-control (DCQCN) counters, np_ecn_marked_roce_packets, np_cnp_sent, rp_cnp_handled and rp_cnp_ignored
(drivers/infiniband/hw/mlx5/counters.c ``cong_cnts``, present where the firmware allows the query: the gpud H100
tree above lacks them, sonic-net/sonic-buildimage#21891's ``rdma statistic`` shows them), modelled in
:func:`dcqcn_values`. A scenario adds
``link_error_recovery`` increments (``plan.nic_extra[(h, iface)]["_ib_link_error_recovery"]``) and width
changes (``plan.ib_width``).

``port_xmit_wait`` counts ticks, as a real one does: IBTA PortXmitWait, "the number of ticks in which the
selected port had data to transmit, but no data was sent during the entire tick" (NVIDIA's ibdiagnet
manual v2.13, "Congestion Assessment on InfiniBand Links"), one tick per 8 bytes of the port's rate
(tick == 7 on current devices: that manual for Quantum switches, NVIDIA/ib-traffic-monitor#3 for the
sysfs counter: lost bytes = counter x (7 + 1)); the 8-byte tick on ConnectX is the same assumption
queries/detectors/ib_congestion.sql makes. The waiting time is the port's PFC pause time received on a
RoCE port (the ethtool model's ``rx_prio3_pause_duration``, microseconds) and its credit wait on an
InfiniBand port (a small share of every second on a healthy fabric, ``plan.ib_xmit_wait`` where a
scenario congests it). sysfs reads the 32-bit PortCounters field (drivers/infiniband/core/sysfs.c:
``PORT_PMA_ATTR(port_xmit_wait, 0, 32, 320)``, also when the extended counters are used), which
saturates at 4294967295 (IBTA: performance counters stop at all ones): 2^32 ticks are 0.69 s of
waiting at 400 Gb/s, so a port that has carried traffic since boot reads 4294967295. On InfiniBand ports the
collector also runs ``perfquery -x`` (:func:`perfquery_x_series`): PortCountersExtended as a PMA that declares
IsAdditionalPortCountersExtendedSupported answers it (``CapMask: 0x5300 CapMask2: 0x0000002``, as the real HCA
samples in tests/fixtures/infiniband), with the 64-bit PortXmitWait of the same waiting, not stopped at 2^32 - 1.
(A real ConnectX port whose PMA the mlx5 driver answers declares ``CapMask: 0x200`` and prints no PortXmitWait
there; the simulator shows the case where the 64-bit counter exists.)

InfiniBand-mode rails (``SimConfig.infiniband``; ``Nic.link_layer``): ``Link layer: InfiniBand``, a LID
from the subnet manager (LID 1), the capability mask and GUIDs as a bare-metal ConnectX-6 InfiniBand
port shows them in ibstat (``Capability mask: 0xa651e848``, port GUID = node GUID), sysfs ``link_layer``
``InfiniBand``, a GID table of 8 entries with only the link-local GID (``gid_tbl_len: 8``, ``GID[  0]:
fe80:0000:0000:0000:<guid>`` in ibv_devinfo -v of ConnectX InfiniBand ports), mlxlink ``Speed``
``IB-NDR`` (``IB-HDR`` in tests/fixtures/mlxlink's ConnectX-6 HDR sample). No IPoIB: the port has no
netdev, so no ethtool -S, mlnx_qos or sar row, and no GID ``ndevs`` entry.

``mlxlink -d <dev> -p 1 -m -c`` of each port once a minute, laid out as MFT 4.30 prints it (the
BlueField-3 fixture in tests/fixtures/mlxlink): Operational, Troubleshooting and Tool sections, a short
Module Info of a 400G OSFP module, and the Physical Counters and BER Info of the same port model:
effective errors = the symbol errors left after FEC, raw errors per lane = the FEC-corrected bits,
BERs = errors / bits since the counters were cleared (at boot), printed as mlxlink does
(``<coef>E-<exp>``, ``15E-255`` for none).
"""
from __future__ import annotations

import datetime as dt

import numpy as np

from forensics.layout import format_marker
from forensics.simulate.config import rng

#: Nic.model -> (CA type, firmware) as ibstat prints them (tests/fixtures/infiniband, gpud H100 node)
CA = {"ConnectX-7": ("MT4129", "28.39.1002"), "ConnectX-6 Dx": ("MT4125", "22.39.1002")}
#: lane speed names by the Ethernet rate of the port at 4X (sysfs rate of RoCE ports)
SPEED = {400: "NDR", 200: "HDR", 100: "EDR", 50: "HDR", 25: "EDR"}
COUNTERS = ("VL15_dropped excessive_buffer_overrun_errors link_downed link_error_recovery local_link_integrity_errors "
            "multicast_rcv_packets multicast_xmit_packets port_rcv_constraint_errors port_rcv_data port_rcv_errors "
            "port_rcv_packets port_rcv_remote_physical_errors port_rcv_switch_relay_errors port_xmit_constraint_errors "
            "port_xmit_data port_xmit_discards port_xmit_packets port_xmit_wait symbol_error unicast_rcv_packets "
            "unicast_xmit_packets").split()
HW_COUNTERS = ("duplicate_request implied_nak_seq_err lifespan local_ack_timeout_err out_of_buffer out_of_sequence "
               "packet_seq_err req_cqe_error req_cqe_flush_error req_remote_access_errors req_remote_invalid_request "
               "resp_cqe_error resp_cqe_flush_error resp_local_length_error resp_remote_access_errors rnr_nak_retry_err "
               "roce_adp_retrans roce_adp_retrans_to roce_slow_restart roce_slow_restart_cnps roce_slow_restart_trans "
               "rx_atomic_requests rx_dct_connect rx_icrc_encapsulated rx_read_requests rx_write_requests").split()
#: mlx5's congestion-control (DCQCN) counters (drivers/infiniband/hw/mlx5/counters.c ``cong_cnts``, shown when the
#: firmware sets cc_query_allowed): written for RoCE ports only (:func:`dcqcn_values`)
CONG_COUNTERS = ("np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "rp_cnp_ignored")


def _guids(mac: str) -> tuple[str, str]:
    """(node GUID, port GUID) of a RoCE CA from its MAC: OUI + 0300 + NIC part, and the EUI-64."""
    b = [int(x, 16) for x in mac.split(":")]
    node = "0x" + "".join(f"{x:02x}" for x in b[:3]) + "0300" + "".join(f"{x:02x}" for x in b[3:])
    port = "0x" + f"{b[0] ^ 2:02x}" + "".join(f"{x:02x}" for x in b[1:3]) + "fffe" + "".join(f"{x:02x}" for x in b[3:])
    return node, port


def _down_at(plan, h: int, nic, t: float) -> bool:
    return any(a <= t < b for a, b in plan.link_down.get((h, nic.iface), []))


def _width_at(plan, h: int, nic, t: float) -> int:
    """Active width (lanes of 4) at true time t: 4 unless a scenario retrained the port narrower."""
    w = 4
    for t_from, width in plan.ib_width.get((h, nic.iface), []):
        if t >= t_from:
            w = width
    return w


def _port_at(plan, h: int, nic, t: float, stamp: float) -> tuple:
    """(host-clock time, down, active width, rate in Gb/s) of a port at true time t."""
    width = _width_at(plan, h, nic, t)
    return (dt.datetime.fromtimestamp(round(stamp, 6), dt.timezone.utc), _down_at(plan, h, nic, t), width,
            nic.speed_mbps // 1000 * width // 4)


#: an InfiniBand HCA port's ibstat: capability mask and the subnet manager's LID (a bare-metal ConnectX-6
#: port in a public HPC user guide: ``Capability mask: 0xa651e848``; SM lid 1 as in the gpud A100 fixture)
IB_CAP_MASK = "0xa651e848"
SM_LID = 1


def _lid(host, nic) -> int:
    """The LID the subnet manager gave an InfiniBand port: unique in the fabric (after the SM's own)."""
    return 2 + host.index * 8 + (nic.rail or 0)


def ibstat(host, plan, h: int, t: float) -> bytes:
    """``ibstat`` of every CA of the host at true time t (a port down then shows Down/Polling)."""
    out = []
    for nic in sorted(host.nics, key=lambda n: n.rdma):
        ca_type, fw = CA.get(nic.model, ("MT4129", "28.39.1002"))
        node, port = _guids(nic.mac)
        down = _down_at(plan, h, nic, t)
        gbps = nic.speed_mbps // 1000 * _width_at(plan, h, nic, t) // 4
        lid, sm, cap, layer = 0, 0, "0x00010000", "Ethernet"
        if nic.infiniband:
            lid, sm, cap, layer, port = _lid(host, nic), SM_LID, IB_CAP_MASK, "InfiniBand", node
        out.append(f"CA '{nic.rdma}'\n\tCA type: {ca_type}\n\tNumber of ports: 1\n\tFirmware version: {fw}\n"
                   f"\tHardware version: 0\n\tNode GUID: {node}\n\tSystem image GUID: {node}\n\tPort 1:\n"
                   f"\t\tState: {'Down' if down else 'Active'}\n\t\tPhysical state: {'Polling' if down else 'LinkUp'}\n"
                   f"\t\tRate: {40 if down else gbps}\n\t\tBase lid: {lid}\n\t\tLMC: 0\n\t\tSM lid: {sm}\n"
                   f"\t\tCapability mask: {cap}\n\t\tPort GUID: {port}\n\t\tLink layer: {layer}\n")
    return "".join(out).encode()


def _cum(plan, rate: np.ndarray | None, times: np.ndarray) -> np.ndarray:
    if rate is None:
        return np.zeros(len(times), dtype=np.int64)
    c = np.concatenate([[0.0], np.cumsum(rate)])
    t_rel = np.clip(times - plan.grid0, 0, plan.T - 1)
    return np.floor(np.interp(t_rel, np.arange(plan.T + 1), c)).astype(np.int64)


TICK_BYTES = 8  #: bytes of port time per PortXmitWait tick (tick == 7: counter x (7 + 1) bytes)
COUNTER32_MAX = 2 ** 32 - 1  #: where the 32-bit sysfs port_xmit_wait stops


def xmit_wait(plan, h: int, nic, pause_us: np.ndarray, times: np.ndarray, bits: int = 32) -> np.ndarray:
    """``port_xmit_wait`` of a port at true `times`: the time it waited to send, in 8-byte ticks of its
    rate, stopped at 2^bits - 1 (32: sysfs; 64: PortCountersExtended, which perfquery -x reads). RoCE: the PFC
    pause time it received (`pause_us`, microseconds since boot). InfiniBand: waiting for credits, since
    boot a share of its uptime, in the job a share of each second (``plan.ib_xmit_wait`` on top where a
    scenario congests the port)."""
    ticks_per_s = nic.speed_mbps * 1e6 / (TICK_BYTES * 8)
    if nic.infiniband:
        r = rng(plan.cluster.cfg.seed, "ib_xmit_wait", h, nic.iface)
        boot = plan.cluster.hosts[h].boot_true
        since_boot = (plan.grid0 - boot) * float(r.uniform(0.002, 0.01))
        share = np.full(plan.T, float(r.uniform(0.005, 0.03))) + plan.ib_xmit_wait.get((h, nic.iface), 0.0)
        wait_s = since_boot + _cum(plan, np.minimum(share, 1.0) * 1e6, times) / 1e6
    else:
        wait_s = np.asarray(pause_us, dtype=float) / 1e6
    ticks = np.floor(wait_s * ticks_per_s)  # (64 bits: 2^63 ticks are 47 years of waiting at 400 Gb/s, never reached)
    return (np.minimum(ticks, COUNTER32_MAX) if bits == 32 else ticks).astype(np.int64)


def _np_marks(plan, o: int, nic) -> tuple[np.ndarray, float, float]:
    """(ECN-marked RoCE packets this port receives each second of the grid, the share of them it answers with a
    CNP, marks since boot before the grid) of RoCE port `nic` of host `o` (cached on the plan: every host's
    rp_cnp_handled reads its rail peers')."""
    key = (o, nic.iface)
    got = plan.dcqcn_np.get(key)
    if got is None:
        r = rng(plan.cluster.cfg.seed, "dcqcn", o, nic.iface)
        lam = float(r.uniform(5.0, 50.0) if key in plan.pause_level else r.uniform(0.02, 0.5))
        marks = r.poisson(lam, plan.T).astype(float)
        if plan.transport != "ib":  # no RDMA traffic on the rails
            marks[:] = 0.0
        marks = marks * plan.nic_traffic.get(key, 1.0) + plan.nic_extra.get(key, {}).get("_np_ecn_marked", 0.0)
        since_boot = (plan.grid0 - plan.cluster.hosts[o].boot_true) * lam * float(r.uniform(0.5, 1.5))
        got = plan.dcqcn_np[key] = (marks, float(r.uniform(0.6, 0.9)), since_boot)
    return got


def dcqcn_values(plan, h: int, nic, times: np.ndarray) -> dict:
    """mlx5's DCQCN counters of a RoCE port at true `times` (cumulative since boot).

    The model (the simulator's, not a vendor's): a switch queue past its ECN threshold marks the packets it
    forwards to a port; that port, the notification point, counts them (np_ecn_marked_roce_packets) and answers
    with CNPs (np_cnp_sent), fewer than the marks since marks on one QP within min_time_between_cnps get one
    CNP; the senders, reaction points, count the CNPs they receive (rp_cnp_handled). A port's senders are its
    rail peers: each peer's CNPs are spread evenly over the other hosts of the rail. Healthy fabric: a few marks
    a second or less (incast moments), more on ports with normal congestion (``plan.pause_level``), none
    while the link is down or without RDMA traffic; a scenario adds ``plan.nic_extra[...]["_np_ecn_marked"]``
    (marks a second). rp_cnp_ignored (CNPs received on a priority whose congestion control is off) stays 0:
    the simulated rails run DCQCN on the RoCE priority. The frontend port carries no RDMA: all four stay 0."""
    if nic.rail is None:
        return {name: np.zeros(len(times), dtype=np.int64) for name in CONG_COUNTERS}
    marks, share, hist = _np_marks(plan, h, nic)
    rail = plan.dcqcn_np.get(("rail", nic.rail))
    if rail is None:  # the CNPs every port of the rail sends (once per plan: a host's peers are the rail less itself)
        ports = [_np_marks(plan, o, host.rails[nic.rail]) for o, host in enumerate(plan.cluster.hosts)]
        rail = plan.dcqcn_np[("rail", nic.rail)] = (sum(m * s for m, s, _ in ports), sum(b * s for _, s, b in ports))
    peers = max(plan.cluster.cfg.nodes - 1, 1)
    received = np.maximum(rail[0] - marks * share, 0.0) / peers
    received_hist = max(rail[1] - hist * share, 0.0) / peers
    return {"np_ecn_marked_roce_packets": int(hist) + _cum(plan, marks, times),
            "np_cnp_sent": int(hist * share) + _cum(plan, marks * share, times),
            "rp_cnp_handled": int(received_hist) + _cum(plan, received, times),
            "rp_cnp_ignored": np.zeros(len(times), dtype=np.int64)}


def ib_values(plan, h: int, nic, eth: dict, times: np.ndarray) -> tuple[dict, dict]:
    """(counters, hw_counters) of one port at true `times`, from its ethtool model `eth`."""
    n = len(times)
    z = np.zeros(n, dtype=np.int64)

    def g(name, default=None):
        v = eth.get(name)
        return z if v is None and default is None else (eth.get(default, z) if v is None else v)

    extra = plan.nic_extra.get((h, nic.iface), {})
    c = {name: z for name in COUNTERS}
    c["port_xmit_data"] = g("tx_vport_rdma_unicast_bytes", "tx_bytes_phy") // 4
    c["port_rcv_data"] = g("rx_vport_rdma_unicast_bytes", "rx_bytes_phy") // 4
    c["port_xmit_packets"] = g("tx_packets_phy")
    c["port_rcv_packets"] = g("rx_packets_phy")
    c["unicast_xmit_packets"] = g("tx_vport_rdma_unicast_packets", "tx_packets_phy")
    c["unicast_rcv_packets"] = g("rx_vport_rdma_unicast_packets", "rx_packets_phy")
    c["multicast_xmit_packets"] = g("tx_multicast_phy")
    c["multicast_rcv_packets"] = g("rx_multicast_phy")
    c["symbol_error"] = g("rx_symbol_err_phy")
    c["link_downed"] = np.maximum(g("link_down_events_phy") - 1, 0)
    c["port_rcv_errors"] = g("rx_crc_errors_phy")
    c["port_xmit_wait"] = xmit_wait(plan, h, nic, g("rx_prio3_pause_duration"), times)
    c["link_error_recovery"] = _cum(plan, extra.get("_ib_link_error_recovery"), times)
    hw = {name: z for name in HW_COUNTERS}
    hw["lifespan"] = z + 12
    hw["out_of_buffer"] = g("rx_out_of_buffer")
    hw["rx_write_requests"] = c["unicast_rcv_packets"] // 4
    hw["rx_read_requests"] = c["unicast_rcv_packets"] // 64
    if not nic.infiniband:
        hw.update(dcqcn_values(plan, h, nic, times))
    return c, hw


def sysfs_series(plan, h: int, nic, eth: dict, times: np.ndarray, stamps_host: np.ndarray, argv: str) -> bytes:
    """The collector's ``grep -H`` of one port every sample: marker, the port's attribute files, its
    counters and hw_counters (names sorted; grep prints the order the folder lists them in)."""
    c, hw = ib_values(plan, h, nic, eth, times)
    hw_names = sorted(hw)
    base = f"/sys/class/infiniband/{nic.rdma}/ports/1"
    out = []
    for j, t in enumerate(times):
        ts, down, width, gbps = _port_at(plan, h, nic, float(t), float(stamps_host[j]))
        speed = SPEED.get(nic.speed_mbps // 1000, "NDR")
        out.append(format_marker(ts, argv) + "\n")
        out.append(f"{base}/state:{'1: DOWN' if down else '4: ACTIVE'}\n")
        out.append(f"{base}/phys_state:{'2: Polling' if down else '5: LinkUp'}\n")
        out.append(f"{base}/rate:{gbps} Gb/sec ({width}X {speed})\n")
        out.append(f"{base}/link_layer:{nic.link_layer}\n")
        out.extend(f"{base}/counters/{name}:{int(c[name][j])}\n" for name in COUNTERS)
        out.extend(f"{base}/hw_counters/{name}:{int(hw[name][j])}\n" for name in hw_names)
    return "".join(out).encode()


#: ``perfquery -x``'s header of an HCA port whose PMA has the 64-bit error counters and PortXmitWait in
#: PortCountersExtended (tests/fixtures/infiniband, treydock/infiniband_exporter's HCA samples)
PQ_CAPS = "(CapMask: 0x5300 CapMask2: 0x0000002)"
#: PortCountersExtended as perfquery -x prints it with CapMask2 bit 1: (name, counter of ib_values, or None: 0)
PQ_EXT = (("PortXmitData", "port_xmit_data"), ("PortRcvData", "port_rcv_data"), ("PortXmitPkts", "port_xmit_packets"),
          ("PortRcvPkts", "port_rcv_packets"), ("PortUnicastXmitPkts", "unicast_xmit_packets"),
          ("PortUnicastRcvPkts", "unicast_rcv_packets"), ("PortMulticastXmitPkts", "multicast_xmit_packets"),
          ("PortMulticastRcvPkts", "multicast_rcv_packets"))
PQ_EXT2 = (("SymbolErrorCounter", "symbol_error"), ("LinkErrorRecoveryCounter", "link_error_recovery"),
           ("LinkDownedCounter", "link_downed"), ("PortRcvErrors", "port_rcv_errors"),
           ("PortRcvRemotePhysicalErrors", None), ("PortRcvSwitchRelayErrors", None), ("PortXmitDiscards", None),
           ("PortXmitConstraintErrors", None), ("PortRcvConstraintErrors", None), ("LocalLinkIntegrityErrors", None),
           ("ExcessiveBufferOverrunErrors", None), ("VL15Dropped", None), ("PortXmitWait", "port_xmit_wait"),
           ("QP1Dropped", None))


def _pq(name: str, value) -> str:
    """One perfquery field line: name, colon and dots to column 33, the value (libibmad's mad_dump_field)."""
    return f"{(name + ':').ljust(33, '.')}{value}\n"


def perfquery_x_series(host, plan, h: int, nic, eth: dict, times: np.ndarray, stamps_host: np.ndarray, argv: str) -> bytes:
    """The collector's ``perfquery -x -C <dev> -P 1`` of an InfiniBand port at true `times`: PortCountersExtended
    with the 64-bit PortXmitWait (the same waiting as sysfs' port_xmit_wait, not stopped at 2^32 - 1)."""
    c, _ = ib_values(plan, h, nic, eth, times)
    c["port_xmit_wait"] = xmit_wait(plan, h, nic, eth.get("rx_prio3_pause_duration"), times, bits=64)
    head = f"# Port extended counters: Lid {_lid(host, nic)} port 1 {PQ_CAPS}\n"
    out = []
    for j in range(len(times)):
        ts = dt.datetime.fromtimestamp(round(float(stamps_host[j]), 6), dt.timezone.utc)
        out += [format_marker(ts, argv), "\n", head, _pq("PortSelect", 1), _pq("CounterSelect", "0x0000")]
        out += [_pq(name, int(c[key][j])) for name, key in PQ_EXT]
        out.append(_pq("CounterSelect2", "0x00000000"))
        out += [_pq(name, int(c[key][j]) if key else 0) for name, key in PQ_EXT2]
    return "".join(out).encode()


GID_TABLE = 255  #: GID table length of a ConnectX port (ibv_devinfo gid_tbl_len); unused entries read all zero


def _gid_text(value: int) -> str:
    """A GID as the kernel's sysfs prints it (``%pI6``: 8 groups of 4 hex digits)."""
    h = f"{value:032x}"
    return ":".join(h[i:i + 4] for i in range(0, 32, 4))


def gid_table(nic) -> list[tuple[str, str]]:
    """(gid, type) of each GID table entry of a RoCE port, as mlx5 fills it: the link-local GID of
    the MAC (EUI-64) and the IPv4-mapped GID of the netdev's address, each as RoCE v1 and v2
    (show_gids of ConnectX nodes, tests/fixtures/infiniband), then empty entries."""
    if nic.infiniband:  # the port GUID's link-local GID only, in a table of 8 (ibv_devinfo -v: gid_tbl_len 8)
        return [(_gid_text((0xFE80 << 112) | int(_guids(nic.mac)[0], 16)), "IB/RoCE v1")] + [(_gid_text(0), "")] * 7
    port_guid = int(_guids(nic.mac)[1], 16)
    link_local = (0xFE80 << 112) | port_guid
    a, b, c, d = (int(x) for x in nic.ip.split("."))
    mapped = (0xFFFF << 32) | (a << 24) | (b << 16) | (c << 8) | d
    used = [(link_local, "IB/RoCE v1"), (link_local, "RoCE v2"), (mapped, "IB/RoCE v1"), (mapped, "RoCE v2")]
    return [(_gid_text(g), t) for g, t in used] + [(_gid_text(0), "")] * (GID_TABLE - len(used))


def gid_snapshots(nic, stamps_host, argv: str) -> bytes:
    """The collector's ``grep -H -s -r .`` of one port's ``gids``, ``gid_attrs/types`` and
    ``gid_attrs/ndevs`` at each host time in `stamps_host` (unused entries: a zero GID, and no type
    or netdev line, since reading those fails with EINVAL and ``grep -s`` is silent about it)."""
    base = f"/sys/class/infiniband/{nic.rdma}/ports/1"
    table = gid_table(nic)
    body = [f"{base}/gids/{i}:{g}\n" for i, (g, _) in enumerate(table)]
    body += [f"{base}/gid_attrs/types/{i}:{t}\n" for i, (_, t) in enumerate(table) if t]
    if not nic.infiniband:  # (an InfiniBand port has no netdev: reading ndevs fails, grep -s says nothing)
        body += [f"{base}/gid_attrs/ndevs/{i}:{nic.iface}\n" for i, (_, t) in enumerate(table) if t]
    text = "".join(body)
    out = []
    for ts in stamps_host:
        out.append(format_marker(dt.datetime.fromtimestamp(round(float(ts), 6), dt.timezone.utc), argv) + "\n")
        out.append(text)
    return "".join(out).encode()


MLXLINK_FW = {"ConnectX-7": "28.39.1002", "ConnectX-6 Dx": "22.39.1002"}


def _ber(errors: float, bits: float) -> str:
    """mlxlink's BER text: one or two significant digits and a negative exponent; 15E-255 when none."""
    if errors <= 0 or bits <= 0:
        return "15E-255"
    ber = errors / bits
    exp = int(np.ceil(-np.log10(ber)))
    return f"{max(1, int(round(ber * 10 ** exp)))}E-{exp}"


def _kv(key: str, value) -> str:
    return f"{key:<35}: {value}\n"


def mlxlink_series(host, plan, h: int, nic, eth: dict, times: np.ndarray, stamps_host: np.ndarray, argv: str) -> bytes:
    """The collector's mlxlink snapshots of one port at true `times` (markers with the host's clock)."""
    c, _ = ib_values(plan, h, nic, eth, times)
    out = []
    for j, t in enumerate(times):
        ts, down, width, gbps = _port_at(plan, h, nic, float(t), float(stamps_host[j]))
        up_s = max(1.0, float(t) - host.boot_true)
        bits = up_s * nic.speed_mbps * 1e6
        lanes = [int(eth[f"rx_err_lane_{k}_phy"][j]) for k in range(4)] if "rx_err_lane_0_phy" in eth else [0, 0, 0, 0]
        eff = int(c["symbol_error"][j])
        out.append(format_marker(ts, argv) + "\n\nOperational Info\n----------------\n")
        out += [_kv("State", "Polling" if down else "Active"), _kv("Physical state", "Polling" if down else "LinkUp"),
                _kv("Speed", "N/A" if down else (f"IB-{SPEED.get(nic.speed_mbps // 1000, 'NDR')}" if nic.infiniband
                                                 else f"{gbps}G")),
                _kv("Width", "N/A" if down else f"{width}x"),
                _kv("FEC", "Standard RS-FEC - RS(544,514)"), _kv("Loopback Mode", "No Loopback"),
                _kv("Auto Negotiation", "ON")]
        out.append("\nTroubleshooting Info\n--------------------\n")
        out += [_kv("Status Opcode", 0), _kv("Group Opcode", "N/A"), _kv("Recommendation", "No issue was observed")]
        out.append("\nTool Information\n----------------\n")
        out += [_kv("Firmware Version", MLXLINK_FW.get(nic.model, "28.39.1002")), _kv("amBER Version", "3.6"),
                _kv("MFT Version", "mft 4.30.1-8")]
        out.append("\nModule Info\n-----------\n")
        out += [_kv("Temperature [C]", 48 + nic.func % 5), _kv("Identifier", "OSFP"), _kv("Vendor Name", "NVIDIA")]
        out.append("\nPhysical Counters and BER Info\n------------------------------\n")
        out += [_kv("Time Since Last Clear [Min]", f"{up_s / 60:.1f}"), _kv("Effective Physical Errors", eff),
                _kv("Effective Physical BER", _ber(eff, bits)), _kv("Raw Physical Errors Per Lane", ",".join(map(str, lanes))),
                _kv("Link Down Counter", int(c["link_downed"][j])),
                _kv("Link Error Recovery Counter", int(c["link_error_recovery"][j])),
                _kv("Raw Physical BER", _ber(sum(lanes), bits))]
    return "".join(out).encode()
