"""``ethtool -S <iface>`` of mlx5 ports (inbox driver of 5.15), as repeated snapshots with markers.

Counter names and their order follow the driver's stats groups as real mlx5 dumps print them
(``sw``, ``qcnt``/``vnic_env``, ``vport``, ``802_3``, ``2863``, ``2819``, ``phy``, ``eth_ext``,
``pcie``, ``per_prio`` with the PFC block of the enabled priorities (``rx_prio3_pause`` ...)
or the global pause block, the PFC stall counters, ``pme``, the channels, and
``per_port_buff_congest``): see tests/fixtures/ethtool and the kernel's en_stats.c. The rail ports
have PFC on priority 3 (RoCE traffic class); the frontend port uses global pause.
"""
from __future__ import annotations

import datetime as dt

import numpy as np

from forensics.layout import format_marker

CHANNELS = 2

SW = ("rx_packets rx_bytes tx_packets tx_bytes tx_tso_packets tx_tso_bytes tx_tso_inner_packets tx_tso_inner_bytes "
      "tx_added_vlan_packets tx_nop tx_mpwqe_blks tx_mpwqe_pkts tx_tls_encrypted_packets tx_tls_encrypted_bytes "
      "tx_tls_ooo tx_tls_dump_packets tx_tls_dump_bytes tx_tls_resync_bytes tx_tls_skip_no_sync_data "
      "tx_tls_drop_no_sync_data tx_tls_drop_bypass_req rx_lro_packets rx_lro_bytes rx_ecn_mark "
      "rx_removed_vlan_packets rx_csum_unnecessary rx_csum_none rx_csum_complete rx_csum_complete_tail "
      "rx_csum_complete_tail_slow rx_csum_unnecessary_inner rx_xdp_drop rx_xdp_redirect rx_xdp_tx_xmit "
      "rx_xdp_tx_mpwqe rx_xdp_tx_inlnw rx_xdp_tx_nops rx_xdp_tx_full rx_xdp_tx_err rx_xdp_tx_cqe tx_csum_none "
      "tx_csum_partial tx_csum_partial_inner tx_queue_stopped tx_queue_dropped tx_xmit_more tx_recover tx_cqes "
      "tx_queue_wake tx_cqe_err tx_xdp_xmit tx_xdp_mpwqe tx_xdp_inlnw tx_xdp_nops tx_xdp_full tx_xdp_err "
      "tx_xdp_cqes rx_wqe_err rx_mpwqe_filler_cqes rx_mpwqe_filler_strides rx_oversize_pkts_sw_drop "
      "rx_buff_alloc_err rx_cqe_compress_blks rx_cqe_compress_pkts rx_cache_reuse rx_cache_full rx_cache_empty "
      "rx_cache_busy rx_cache_waive rx_congst_umr rx_arfs_err rx_recover rx_tls_decrypted_packets "
      "rx_tls_decrypted_bytes rx_tls_resync_req_pkt rx_tls_resync_req_start rx_tls_resync_req_end "
      "rx_tls_resync_req_skip rx_tls_resync_res_ok rx_tls_resync_res_retry rx_tls_resync_res_skip rx_tls_err "
      "ch_events ch_poll ch_arm ch_aff_change ch_force_irq ch_eq_rearm rx_xsk_packets rx_xsk_bytes "
      "rx_xsk_csum_complete rx_xsk_csum_unnecessary rx_xsk_csum_unnecessary_inner rx_xsk_csum_none "
      "rx_xsk_ecn_mark rx_xsk_removed_vlan_packets rx_xsk_xdp_drop rx_xsk_xdp_redirect rx_xsk_wqe_err "
      "rx_xsk_mpwqe_filler_cqes rx_xsk_mpwqe_filler_strides rx_xsk_oversize_pkts_sw_drop rx_xsk_buff_alloc_err "
      "rx_xsk_cqe_compress_blks rx_xsk_cqe_compress_pkts rx_xsk_congst_umr rx_xsk_arfs_err tx_xsk_xmit "
      "tx_xsk_mpwqe tx_xsk_inlnw tx_xsk_full tx_xsk_err tx_xsk_cqes").split()
PORT = ("rx_out_of_buffer rx_if_down_packets rx_steer_missed_packets dev_internal_queue_oob "
        "rx_vport_unicast_packets rx_vport_unicast_bytes tx_vport_unicast_packets tx_vport_unicast_bytes "
        "rx_vport_multicast_packets rx_vport_multicast_bytes tx_vport_multicast_packets tx_vport_multicast_bytes "
        "rx_vport_broadcast_packets rx_vport_broadcast_bytes tx_vport_broadcast_packets tx_vport_broadcast_bytes "
        "rx_vport_rdma_unicast_packets rx_vport_rdma_unicast_bytes tx_vport_rdma_unicast_packets "
        "tx_vport_rdma_unicast_bytes rx_vport_rdma_multicast_packets rx_vport_rdma_multicast_bytes "
        "tx_vport_rdma_multicast_packets tx_vport_rdma_multicast_bytes tx_packets_phy rx_packets_phy "
        "rx_crc_errors_phy tx_bytes_phy rx_bytes_phy tx_multicast_phy tx_broadcast_phy rx_multicast_phy "
        "rx_broadcast_phy rx_in_range_len_errors_phy rx_out_of_range_len_phy rx_oversize_pkts_phy "
        "rx_symbol_err_phy tx_mac_control_phy rx_mac_control_phy rx_unsupported_op_phy rx_pause_ctrl_phy "
        "tx_pause_ctrl_phy rx_discards_phy tx_discards_phy tx_errors_phy rx_undersize_pkts_phy rx_fragments_phy "
        "rx_jabbers_phy rx_64_bytes_phy rx_65_to_127_bytes_phy rx_128_to_255_bytes_phy rx_256_to_511_bytes_phy "
        "rx_512_to_1023_bytes_phy rx_1024_to_1518_bytes_phy rx_1519_to_2047_bytes_phy rx_2048_to_4095_bytes_phy "
        "rx_4096_to_8191_bytes_phy rx_8192_to_10239_bytes_phy link_down_events_phy rx_pcs_symbol_err_phy "
        "rx_corrected_bits_phy rx_err_lane_0_phy rx_err_lane_1_phy rx_err_lane_2_phy rx_err_lane_3_phy "
        "rx_buffer_passed_thres_phy rx_pci_signal_integrity tx_pci_signal_integrity outbound_pci_stalled_rd "
        "outbound_pci_stalled_wr outbound_pci_stalled_rd_events outbound_pci_stalled_wr_events").split()
PRIO_TRAFFIC = ("rx_prio{p}_bytes", "rx_prio{p}_packets", "rx_prio{p}_discards", "tx_prio{p}_bytes", "tx_prio{p}_packets")
PFC = ("rx_{s}_pause", "rx_{s}_pause_duration", "tx_{s}_pause", "tx_{s}_pause_duration", "rx_{s}_pause_transition")
STALL = ("tx_pause_storm_warning_events", "tx_pause_storm_error_events")
PME = ("module_unplug", "module_bus_stuck", "module_high_temp", "module_bad_shorted")
CH = ("events", "poll", "arm", "aff_change", "force_irq", "eq_rearm")
RQ = ("packets", "bytes", "csum_complete", "csum_complete_tail", "csum_complete_tail_slow", "csum_unnecessary",
      "csum_unnecessary_inner", "csum_none", "xdp_drop", "xdp_redirect", "lro_packets", "lro_bytes", "ecn_mark",
      "removed_vlan_packets", "wqe_err", "mpwqe_filler_cqes", "mpwqe_filler_strides", "oversize_pkts_sw_drop",
      "buff_alloc_err", "cqe_compress_blks", "cqe_compress_pkts", "cache_reuse", "cache_full", "cache_empty",
      "cache_busy", "cache_waive", "congst_umr", "arfs_err", "recover")
XDPSQ = ("xmit", "mpwqe", "inlnw", "nops", "full", "err", "cqes")
SQ = ("packets", "bytes", "tso_packets", "tso_bytes", "tso_inner_packets", "tso_inner_bytes", "csum_partial",
      "csum_partial_inner", "added_vlan_packets", "nop", "mpwqe_blks", "mpwqe_pkts", "csum_none", "stopped",
      "dropped", "xmit_more", "recover", "cqes", "wake", "cqe_err")
CONGEST = ("rx_prio{p}_buf_discard", "rx_prio{p}_cong_discard", "rx_prio{p}_marked")

# per-channel counters that split a port-wide sw counter
_SPLIT = {"ch{i}_events": "ch_events", "ch{i}_poll": "ch_poll", "ch{i}_arm": "ch_arm",
          "rx{i}_packets": "rx_packets", "rx{i}_bytes": "rx_bytes", "rx{i}_csum_complete": "rx_csum_complete",
          "rx{i}_csum_none": "rx_csum_none", "rx{i}_cache_reuse": "rx_cache_reuse",
          "tx{i}_packets": "tx_packets", "tx{i}_bytes": "tx_bytes", "tx{i}_csum_none": "tx_csum_none",
          "tx{i}_cqes": "tx_cqes", "tx{i}_mpwqe_blks": "tx_mpwqe_blks", "tx{i}_mpwqe_pkts": "tx_mpwqe_pkts"}


def counter_names(pfc_prio: int | None) -> list[str]:
    names = list(SW) + list(PORT)
    for p in range(8):
        names += [f.format(p=p) for f in PRIO_TRAFFIC]
    if pfc_prio is not None:
        names += [f.format(s=f"prio{pfc_prio}") for f in PFC]
    else:
        names += [f.format(s="global") for f in PFC]
    names += list(STALL) + list(PME)
    for i in range(CHANNELS):
        names += [f"ch{i}_{c}" for c in CH]
    for i in range(CHANNELS):
        names += [f"rx{i}_{c}" for c in RQ] + [f"rx{i}_xdp_tx_{c}" for c in XDPSQ]
    for i in range(CHANNELS):
        names += [f"tx{i}_{c}" for c in SQ]
    for i in range(CHANNELS):
        names += [f"tx{i}_xdp_{c}" for c in XDPSQ]
    for p in range(8):
        names += [f.format(p=p) for f in CONGEST]
    return names


def _values(names: list[str], counters: dict, n: int) -> np.ndarray:
    vals = np.zeros((len(names), n), dtype=np.int64)
    split = {}
    for tmpl, total in _SPLIT.items():
        if total in counters:
            tot = counters[total]
            for i in range(CHANNELS):
                share = tot // CHANNELS + (tot % CHANNELS if i == 0 else 0)
                split[tmpl.format(i=i)] = share
    for k, name in enumerate(names):
        v = counters.get(name)
        if v is None:
            v = split.get(name)
        if v is not None:
            vals[k] = v
    return vals


def ethtool_series(nic, counters: dict, stamps_host: np.ndarray) -> bytes:
    """Snapshots at host-clock times `stamps_host` (epoch s), each preceded by a marker line.

    Counters that never change are rendered once into a template; per snapshot only the changing
    values are formatted (one ``%`` call per snapshot).
    """
    names = counter_names(3 if nic.rail is not None else None)
    n = len(stamps_host)
    vals = _values(names, counters, n)
    dyn = (vals != vals[:, :1]).any(axis=1)
    body = "".join(f"     {nm}: %d\n" if dyn[i] else f"     {nm}: {vals[i, 0]}\n" for i, nm in enumerate(names))
    template = "%s\nNIC statistics:\n" + body
    rows = vals[dyn].T.tolist()
    argv = f"ethtool -S {nic.iface}"
    out = []
    for j in range(n):
        ts = dt.datetime.fromtimestamp(round(float(stamps_host[j]), 6), dt.timezone.utc)
        out.append(template % (format_marker(ts, argv), *rows[j]))
    return "".join(out).encode()
