-- kind: ib_link_degraded
-- severity: warning
-- locality: host
-- layer: nic_fabric
-- root_rank: 13
-- caused_by: nic_wedged@host, pcie_aer@host
-- confirm: ibstat <dev>; grep -H . /sys/class/infiniband/<dev>/ports/<port>/{rate,state,phys_state} /sys/class/infiniband/<dev>/ports/<port>/counters/{symbol_error,link_error_recovery,port_rcv_errors,local_link_integrity_errors}; mlxlink -d <dev> -c -e (effective/raw BER, FEC, eye); perfquery -x -C <dev> -P <port>
-- remediation: A marginal link: reseat or replace the cable/transceiver (check mlxlink's BER and eye on both ends and the switch port's counters), then retrain the port; until it is fixed take the node (or its rail) out of the job, since every collective runs at the pace of its slowest rail.
-- description: An InfiniBand or RoCE port that is down (not ACTIVE/LinkUp) while the capture ran, trained at a lower rate than it had earlier in the capture or than the host's other ports of its kind (reduced width or lane speed), whose physical-layer error counters grew past infiniband-diags' error thresholds during the capture, or whose bit error rate after FEC (mlxlink's effective or symbol BER) is above the InfiniBand specification's 1e-12 or whose post-FEC errors grew; a port whose link_downed counter rose is a link flap (link_flap), not this
-- source: infiniband-diags default error thresholds (rdma-core infiniband-diags/etc/error_thresholds @691953d, what ibqueryerrors checks): SymbolErrorCounter, LinkErrorRecoveryCounter, PortRcvErrors, LocalLinkIntegrityErrors, ExcessiveBufferOverrunErrors 10, PortRcvRemotePhysicalErrors 100, applied to the increase within the capture; ibstat/ibstatus/sysfs rate = active width x lane speed (IBTA PortInfo LinkWidthActive/LinkSpeedActive), so a rate below the port's own earlier rate or below its host's other ports of the same CA type or lane speed is a link trained at reduced width or speed. Mlxlink (NVIDIA MFT) where collected: its Effective Physical BER / Symbol BER are the errors left after FEC (NVIDIA ibdiagnet user manual, "Bit Error Rate (BER)": for NDR/HDR/EDR links symbol errors or effective errors "are the actual errors seen by the application level after error correction"; its BER check's threshold is 10^-12), and "the InfiniBand specification requires less than one bit error per 10^12 bits transmitted" (NVIDIA DGX SuperPOD cabling design guide, "Bit Error Rate"): an effective or symbol BER above max_effective_ber, or effective/symbol errors growing by symbol_errors within the capture, is a link out of specification; the raw (pre-FEC) BER is shown, not judged (no vendor limit per FEC type found)
-- param: max_effective_ber = 1e-12   mlxlink effective/symbol BER (after FEC) above which a link is out of the InfiniBand specification
-- param: symbol_errors = 10   SymbolErrorCounter increase for a finding
-- param: recoveries = 10   LinkErrorRecoveryCounter increase for a finding
-- param: rcv_errors = 10   PortRcvErrors increase for a finding
-- param: integrity_errors = 10   LocalLinkIntegrityErrors increase for a finding
-- param: overrun_errors = 10   ExcessiveBufferOverrunErrors increase for a finding
-- param: remote_physical_errors = 100   PortRcvRemotePhysicalErrors increase for a finding
WITH s0 AS (
  SELECT *, coalesce(iface, device || ' port ' || port) AS port_name,
         median(max_rate_gbps) OVER (PARTITION BY host, coalesce(ca_type, speed), link_layer) AS peer_rate_gbps,
         count(*) OVER (PARTITION BY host, coalesce(ca_type, speed), link_layer) AS peers
  FROM det_ib_port_summary
), ml AS (  -- mlxlink per port: worst BER after FEC, growth of post-FEC errors over its snapshots, last raw BER
  SELECT host, device, coalesce(port, 1) AS port, min(ts) AS ml_first_ts, max(ts) AS ml_last_ts,
         greatest(max(value_num) FILTER (WHERE field = 'effective_physical_ber'),
                  max(value_num) FILTER (WHERE field = 'symbol_ber')) AS effective_ber,
         arg_max(value_num, sample_no) FILTER (WHERE field = 'raw_physical_ber') AS raw_ber,
         greatest(max(value_num) FILTER (WHERE field = 'effective_physical_errors')
                    - min(value_num) FILTER (WHERE field = 'effective_physical_errors'),
                  max(value_num) FILTER (WHERE field = 'symbol_errors') - min(value_num) FILTER (WHERE field = 'symbol_errors'))
           AS effective_errors_grew,
         arg_max(value, sample_no) FILTER (WHERE field = 'fec') AS fec
  FROM mlxlink WHERE device IS NOT NULL GROUP BY ALL
), s AS (
  SELECT * FROM s0 FULL JOIN ml USING (host, device, port)
), f AS (
  SELECT *,
         coalesce(effective_ber > $max_effective_ber, false) AS ber_high,
         coalesce(effective_errors_grew >= $symbol_errors, false) AS post_fec_grew,
         coalesce(not_up, 0) > 0 AS is_down,
         coalesce(min_rate_gbps < max_rate_gbps, false) AS rate_dropped,
         coalesce(peers >= 3 AND max_rate_gbps < peer_rate_gbps, false) AS below_peers,
         coalesce(symbol_error >= $symbol_errors, false) OR coalesce(link_error_recovery >= $recoveries, false)
           OR coalesce(port_rcv_errors >= $rcv_errors, false) OR coalesce(local_link_integrity_errors >= $integrity_errors, false)
           OR coalesce(excessive_buffer_overrun_errors >= $overrun_errors, false)
           OR coalesce(port_rcv_remote_physical_errors >= $remote_physical_errors, false) AS errors_grew
  FROM s WHERE coalesce(link_downed, 0) = 0
)
SELECT host, device || ' port ' || port || coalesce(' (' || iface || ')', '') AS subject,
       coalesce(least(not_up_from, rate_low_from, errors_from), first_ts, ml_first_ts) AS start,
       coalesce(greatest(not_up_to, errors_to, last_ts), first_ts, ml_last_ts) AS "end",
       CASE WHEN is_down THEN 0.85 WHEN rate_dropped OR below_peers THEN 0.8 ELSE 0.65 END AS score,
       CASE WHEN is_down OR rate_dropped OR below_peers THEN 'critical' ELSE 'warning' END AS severity,
       'RDMA port ' || device || ' port ' || port || coalesce(' (' || iface || ')', '') || ' on ' || host || ': '
         || concat_ws('; ',
              CASE WHEN is_down THEN 'not up in ' || not_up || ' of ' || snapshots || ' snapshot(s) (last ' || coalesce(last_state, '?') || '/' || coalesce(last_phys_state, '?') || ')' END,
              CASE WHEN rate_dropped THEN 'rate fell from ' || max_rate_gbps || ' to ' || min_rate_gbps || ' Gb/s' || coalesce(' (now ' || width || ' ' || speed || ')', '') END,
              CASE WHEN below_peers AND NOT rate_dropped THEN 'runs at ' || max_rate_gbps || ' Gb/s while its ' || (peers - 1) || ' peer port(s) run at ' || peer_rate_gbps || ' Gb/s' END,
              CASE WHEN errors_grew THEN 'physical-layer errors grew: ' || concat_ws(', ',
                   CASE WHEN symbol_error > 0 THEN 'symbol_error +' || symbol_error END,
                   CASE WHEN link_error_recovery > 0 THEN 'link_error_recovery +' || link_error_recovery END,
                   CASE WHEN port_rcv_errors > 0 THEN 'port_rcv_errors +' || port_rcv_errors END,
                   CASE WHEN local_link_integrity_errors > 0 THEN 'local_link_integrity_errors +' || local_link_integrity_errors END,
                   CASE WHEN excessive_buffer_overrun_errors > 0 THEN 'excessive_buffer_overrun_errors +' || excessive_buffer_overrun_errors END,
                   CASE WHEN port_rcv_remote_physical_errors > 0 THEN 'port_rcv_remote_physical_errors +' || port_rcv_remote_physical_errors END) END,
              CASE WHEN ber_high THEN 'mlxlink BER after FEC ' || printf('%.1e', effective_ber) || ' (InfiniBand spec: < 1e-12)' END,
              CASE WHEN post_fec_grew THEN 'mlxlink errors after FEC +' || int_text(effective_errors_grew) END,
              CASE WHEN (ber_high OR post_fec_grew) AND raw_ber IS NOT NULL THEN 'raw BER ' || printf('%.1e', raw_ber) || coalesce(' (' || fec || ')', '') END)
         AS summary,
       to_json({device: device, port: port, iface: iface, tools: tools, snapshots: snapshots, not_up: not_up,
                last_state: last_state, last_phys_state: last_phys_state, min_rate_gbps: min_rate_gbps,
                max_rate_gbps: max_rate_gbps, peer_rate_gbps: peer_rate_gbps, width: width, speed: speed,
                link_layer: link_layer, ca_type: ca_type, symbol_error: symbol_error,
                link_error_recovery: link_error_recovery, port_rcv_errors: port_rcv_errors,
                local_link_integrity_errors: local_link_integrity_errors,
                excessive_buffer_overrun_errors: excessive_buffer_overrun_errors,
                port_rcv_remote_physical_errors: port_rcv_remote_physical_errors, counter_samples: counter_samples,
                effective_ber: effective_ber, effective_errors_grew: effective_errors_grew, raw_ber: raw_ber, fec: fec})::VARCHAR AS evidence
FROM f WHERE is_down OR rate_dropped OR below_peers OR errors_grew OR ber_high OR post_fec_grew
ORDER BY start
