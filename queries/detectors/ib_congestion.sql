-- kind: ib_congestion
-- severity: warning
-- locality: host
-- layer: nic_fabric
-- root_rank: 14
-- caused_by: ib_link_degraded@path, link_flap@path
-- confirm: grep -H . /sys/class/infiniband/<dev>/ports/<port>/{rate,link_layer,counters/port_xmit_wait,counters/port_xmit_data}; perfquery -x -C <dev> -P <port> (PortXmitWait); perfquery -c <lid> <port> (PortSamplesControl Tick); ibdiagnet --pm_pause_time 10 (the fabric's xmit-wait per port, the switch side of this link)
-- remediation: The fabric holds this InfiniBand port back (no credits from the switch): find the congested switch port (ibdiagnet's xmit-wait per port, the UFM congestion map) and its cause, usually an incast or a slow receiver behind it; check the routing (ibdiagnet --routing) and that congestion control is enabled on the fabric; a port waiting while its peers do not points to the switch port or the receiver behind it.
-- description: Congestion on an InfiniBand link-layer port: the share of the elapsed time the port had data to send but sent none (PortXmitWait) over consecutive samples of the same port, for at least min_duration_s. The series read is the 64-bit PortXmitWait of PortCountersExtended (perfquery -x) where the capture has it, else the 32-bit one (sysfs counters/port_xmit_wait, perfquery's PortCounters); the evidence says which (counter_bits). RoCE (Ethernet link-layer) ports are not judged here: there the wait is PFC pause time, which pfc_storm judges from the NIC's pause counters
-- source: IBTA PortXmitWait as NVIDIA's ibdiagnet user manual v2.13 "Congestion Assessment on InfiniBand Links" states it: "the number of ticks in which the selected port had data to transmit, but no data was sent during the entire tick" (insufficient credits or lack of arbitration); on Quantum/Quantum-2/Quantum-3 the counter "increments xmit_wait every 8 bytes - regardless of the port width" (tick == 7, lost bytes per port = counter x (tick + 1)), so the share of time waiting over an interval is increase x 8 bytes x 8 bits / (port rate x seconds). The manual's table gives no ConnectX (HCA) tick; we assume the same 8-byte tick (perfquery -c shows a port's Tick) and say so in the evidence (tick_bytes). Counter width: sysfs has only the 32-bit PortCounters field (drivers/infiniband/core/sysfs.c PORT_PMA_ATTR(port_xmit_wait, 0, 32, 320), in its extended attribute group too) and IBTA counters stop at all ones, so with the 8-byte tick 2^32 ticks are 0.69 s of waiting at 400 Gb/s (1.4 s at 200 Gb/s): a port that has carried traffic since boot reads 4294967295, gives no increase and is not judged. PortCountersExtended has a 64-bit PortXmitWait, which perfquery -x prints only when the PMA's ClassPortInfo CapabilityMask2 has IsAdditionalPortCountersExtendedSupported (rdma-core infiniband-diags/perfquery.c dump_perfcounters_ext; real output: tests/fixtures/infiniband, CapMask 0x5300 CapMask2 0x0000002); that series is judged in preference. A port whose PMA lacks it (the mlx5 driver answers PMA Gets itself on devices with vport counters and declares CapMask 0x200 only, drivers/infiniband/hw/mlx5/mad.c process_pma_cmd; real perfquery -x of such ports print no PortXmitWait) has only the 32-bit counter, so congestion there is seen only after a counter reset (perfquery -R, ibdiagnet --pc). Threshold by the same physics as pfc_storm: waiting 20% of the time takes a fifth of the port's capacity (warning), 50% half of it (critical)
-- param: min_wait_share = 0.2   share of the elapsed time waiting to transmit that is congestion (warning)
-- param: critical_wait_share = 0.5   share that halves the port's capacity (critical)
-- param: min_duration_s = 10   shortest congestion episode reported
-- param: tick_bytes = 8   bytes of port time one PortXmitWait increment stands for (ibdiagnet: Quantum tick == 7, counter x (tick+1))
WITH ports AS (  -- InfiniBand link-layer ports and their highest active rate in the capture
  SELECT host, device, port, max(rate_gbps) FILTER (WHERE coalesce(state, 'ACTIVE') = 'ACTIVE') AS rate_gbps
  FROM ib_ports WHERE device IS NOT NULL AND port IS NOT NULL
  GROUP BY ALL HAVING bool_or(link_layer = 'InfiniBand') AND NOT bool_or(link_layer = 'Ethernet')
), w AS (  -- each port's series: the 64-bit PortCountersExtended one where the capture has it, else the 32-bit ones
  SELECT c.host, c.device, c.port, c.file, c.counter_set, c.ts, c.value,
         lag(c.value) OVER s AS prev, lag(c.ts) OVER s AS prev_ts, p.rate_gbps,
         CASE WHEN c.counter_set = 'PortCountersExtended' THEN 64 ELSE 32 END AS counter_bits
  FROM ib_counters c JOIN ports p USING (host, device, port)
  WHERE c.counter = 'port_xmit_wait' AND c.ts IS NOT NULL AND p.rate_gbps > 0
  WINDOW s AS (PARTITION BY c.host, c.device, c.port, c.file, c.counter_set ORDER BY c.sample_no, c.line_no)
  QUALIFY c.counter_set = 'PortCountersExtended'
          OR NOT bool_or(c.counter_set = 'PortCountersExtended') OVER (PARTITION BY c.host, c.device, c.port)
), iv AS (  -- one interval per pair of consecutive samples; a reset (value below the one before) is skipped
  SELECT *, (value - prev) * $tick_bytes * 8 / (rate_gbps * 1e9 * epoch(ts - prev_ts)) AS share
  FROM w WHERE prev IS NOT NULL AND value >= prev AND ts > prev_ts
), f AS (
  SELECT *, share >= $min_wait_share AS bad FROM iv
), hot AS (
  SELECT DISTINCT host, device, port, file, counter_set FROM f WHERE bad
), e AS (
  SELECT host, device, port, min(prev_ts) AS start, max(ts) AS "end", count(*) AS intervals,
         max(share) AS max_share, sum(share * epoch(ts - prev_ts) ORDER BY share * epoch(ts - prev_ts)) / sum(epoch(ts - prev_ts) ORDER BY epoch(ts - prev_ts)) AS avg_share,
         sum(value - prev) AS wait_ticks, any_value(rate_gbps) AS rate_gbps, any_value(counter_bits) AS counter_bits
  FROM (SELECT *, flag_run(bad, (host, device, port, file, counter_set), ts) AS ep
        FROM f SEMI JOIN hot USING (host, device, port, file, counter_set)) i
  WHERE bad GROUP BY host, device, port, file, counter_set, ep
  HAVING epoch(max(ts) - min(prev_ts)) >= $min_duration_s
), n AS (
  SELECT host, rdma_dev, min(iface) AS iface FROM nics WHERE rdma_dev IS NOT NULL GROUP BY ALL
)
SELECT e.host, device || ' port ' || port || coalesce(' (' || n.iface || ')', '') AS subject, start, "end",
       least(1.0, 0.6 + max_share / 2) AS score,
       CASE WHEN max_share >= $critical_wait_share THEN 'critical' ELSE 'warning' END AS severity,
       'InfiniBand port ' || device || ' port ' || port || ' on ' || e.host || ' waited to transmit '
         || int_text(100 * avg_share) || '% of the time (up to ' || int_text(100 * max_share) || '%) for '
         || int_text(epoch("end" - start)) || ' s at ' || rate_gbps || ' Gb/s: the fabric gives it no credits (congestion)'
         AS summary,
       to_json({device: device, port: port, iface: n.iface, rate_gbps: rate_gbps, max_wait_share: round(max_share, 3),
                avg_wait_share: round(avg_share, 3), wait_ticks: wait_ticks, tick_bytes: $tick_bytes, counter_bits: counter_bits,
                intervals: intervals, duration_s: epoch("end" - start)})::VARCHAR AS evidence
FROM e LEFT JOIN n ON n.host = e.host AND n.rdma_dev = e.device
ORDER BY start
