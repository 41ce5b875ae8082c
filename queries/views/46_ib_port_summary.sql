-- ib_port_summary: one row per RDMA port (host, device, port) over the capture, from ib_ports and
-- ib_counters (ibstat, ibstatus, perfquery, the collector's /sys/class/infiniband series): the
-- interface it backs (nics.rdma_dev), its snapshots, how many were not ACTIVE / not LinkUp and
-- when, its lowest, highest and last rate (and when it first ran below its highest), its width,
-- lane speed, link layer and CA type, and per counter of the link's health the increase between
-- the port's first and last sample (a value below the one before is a reset: the new value counts
-- as the increase) with when the error counters first and last rose. One snapshot gives no increase.
-- A counter read by two tools (sysfs and perfquery -x of the same port) is taken from one counter set
-- only, or its increase would count twice: PortCountersExtended (64 bits, perfquery -x) where the capture
-- has it, else sysfs' counters (16 and 8 bits, they saturate), else perfquery's other attributes.
-- RoCE congestion control (DCQCN) counters of the driver (mlx5 hw_counters, sysfs or rdma statistic):
-- np_ecn_marked_roce_packets and np_cnp_sent (this port received ECN-marked packets and answered with
-- CNPs), rp_cnp_handled and rp_cnp_ignored (this port was told to slow down) are summed the same way
-- and shown as counts only: no vendor document found gives a rate of CNPs that is abnormal.
CREATE OR REPLACE VIEW ib_port_summary AS
WITH c00 AS (
  SELECT host, device, port, counter, file, ts, value, sample_no, line_no,
         CASE counter_set WHEN 'PortCountersExtended' THEN 0 WHEN 'counters' THEN 1 ELSE 2 END AS pref
  FROM ib_counters
  WHERE device IS NOT NULL AND port IS NOT NULL
    AND counter IN ('symbol_error', 'link_error_recovery', 'link_downed', 'port_rcv_errors', 'local_link_integrity_errors',
                    'excessive_buffer_overrun_errors', 'port_rcv_remote_physical_errors', 'port_xmit_discards',
                    'np_ecn_marked_roce_packets', 'np_cnp_sent', 'rp_cnp_handled', 'rp_cnp_ignored')
), s AS (  -- per series of one counter set: one whose value never changed rose by 0 (one hash pass; the window below
  -- skips it); of a port's counter only the series of its preferred set (the lowest pref) are kept
  SELECT * FROM (
    SELECT host, device, port, counter, file, pref, count(*) AS samples, coalesce(min(value) <> max(value), false) AS moved
    FROM c00 WHERE host IS NOT NULL GROUP BY ALL)
  QUALIFY pref = min(pref) OVER (PARTITION BY host, device, port, counter)
), c AS (  -- the moved series' samples in order; each series numbered (sid) so the window sorts on one integer
  SELECT host, device, port, counter, ts, value, lag(value) OVER (PARTITION BY sid ORDER BY sample_no, line_no) AS prev
  FROM c00 JOIN (SELECT host, device, port, counter, file, pref, row_number() OVER () AS sid FROM s WHERE moved) m
    USING (host, device, port, counter, file, pref)
), d AS (
  SELECT host, device, port, counter, CAST(sum(samples) AS BIGINT) AS samples, sum(increase) AS increase,
         min(first_rise) AS first_rise, max(last_rise) AS last_rise FROM (
    SELECT host, device, port, counter, count(*) AS samples,
           sum(CASE WHEN prev IS NULL THEN 0 WHEN value >= prev THEN CAST(value AS HUGEINT) - prev ELSE value END) AS increase,
           min(ts) FILTER (WHERE prev IS NOT NULL AND value <> prev) AS first_rise,
           max(ts) FILTER (WHERE prev IS NOT NULL AND value <> prev) AS last_rise
    FROM c GROUP BY ALL
    UNION ALL BY NAME
    SELECT host, device, port, counter, samples, 0 AS increase FROM s WHERE NOT moved)
  GROUP BY ALL
), e AS (  -- (the increases stay HUGEINT: a sum of untrusted counter increases passes BIGINT's 9.2e18, where CAST AS BIGINT raised)
  SELECT host, device, port, max(samples) AS counter_samples,
         sum(increase) FILTER (WHERE counter = 'symbol_error') AS symbol_error,
         sum(increase) FILTER (WHERE counter = 'link_error_recovery') AS link_error_recovery,
         sum(increase) FILTER (WHERE counter = 'link_downed') AS link_downed,
         sum(increase) FILTER (WHERE counter = 'port_rcv_errors') AS port_rcv_errors,
         sum(increase) FILTER (WHERE counter = 'local_link_integrity_errors') AS local_link_integrity_errors,
         sum(increase) FILTER (WHERE counter = 'excessive_buffer_overrun_errors') AS excessive_buffer_overrun_errors,
         sum(increase) FILTER (WHERE counter = 'port_rcv_remote_physical_errors') AS port_rcv_remote_physical_errors,
         sum(increase) FILTER (WHERE counter = 'port_xmit_discards') AS port_xmit_discards,
         sum(increase) FILTER (WHERE counter = 'np_ecn_marked_roce_packets') AS np_ecn_marked_roce_packets,
         sum(increase) FILTER (WHERE counter = 'np_cnp_sent') AS np_cnp_sent,
         sum(increase) FILTER (WHERE counter = 'rp_cnp_handled') AS rp_cnp_handled,
         sum(increase) FILTER (WHERE counter = 'rp_cnp_ignored') AS rp_cnp_ignored,
         min(first_rise) FILTER (WHERE counter NOT IN ('link_downed', 'port_xmit_discards', 'np_ecn_marked_roce_packets',
                                                      'np_cnp_sent', 'rp_cnp_handled', 'rp_cnp_ignored')) AS errors_from,
         max(last_rise) FILTER (WHERE counter NOT IN ('link_downed', 'port_xmit_discards', 'np_ecn_marked_roce_packets',
                                                     'np_cnp_sent', 'rp_cnp_handled', 'rp_cnp_ignored')) AS errors_to,
         min(first_rise) FILTER (WHERE counter = 'link_downed') AS downed_from
  FROM d GROUP BY ALL
), p0 AS (
  SELECT *, max(rate_gbps) OVER (PARTITION BY host, device, port) AS top_rate,
         coalesce(state, 'ACTIVE') <> 'ACTIVE' OR coalesce(phys_state, 'LinkUp') <> 'LinkUp' AS bad
  FROM ib_ports WHERE device IS NOT NULL AND port IS NOT NULL
), p AS (
  SELECT host, device, port, count(*) AS snapshots, min(ts) AS first_ts, max(ts) AS last_ts,
         count(*) FILTER (WHERE bad) AS not_up, min(ts) FILTER (WHERE bad) AS not_up_from, max(ts) FILTER (WHERE bad) AS not_up_to,
         arg_max(state, {s: sample_no, l: line_no}) AS last_state, arg_max(phys_state, {s: sample_no, l: line_no}) AS last_phys_state,
         min(rate_gbps) FILTER (WHERE NOT bad) AS min_rate_gbps, max(rate_gbps) FILTER (WHERE NOT bad) AS max_rate_gbps,
         arg_max(rate_gbps, {s: sample_no, l: line_no}) AS last_rate_gbps,
         min(ts) FILTER (WHERE NOT bad AND rate_gbps < top_rate) AS rate_low_from,
         arg_max(width, {s: sample_no, l: line_no}) FILTER (WHERE width IS NOT NULL) AS width,
         arg_max(speed, {s: sample_no, l: line_no}) FILTER (WHERE speed IS NOT NULL) AS speed,
         max(link_layer) AS link_layer, max(ca_type) AS ca_type,
         string_agg(DISTINCT tool, ',' ORDER BY tool) AS tools
  FROM p0 GROUP BY ALL
), n AS (
  SELECT host, rdma_dev, min(iface) AS iface FROM nics WHERE rdma_dev IS NOT NULL GROUP BY ALL
)
SELECT coalesce(p.host, e.host) AS host, coalesce(p.device, e.device) AS device, coalesce(p.port, e.port) AS port,
       n.iface, p.snapshots, p.first_ts, p.last_ts, p.not_up, p.not_up_from, p.not_up_to, p.last_state, p.last_phys_state,
       p.min_rate_gbps, p.max_rate_gbps, p.last_rate_gbps, p.rate_low_from, p.width, p.speed, p.link_layer, p.ca_type,
       p.tools, e.counter_samples, e.symbol_error, e.link_error_recovery, e.link_downed, e.port_rcv_errors,
       e.local_link_integrity_errors, e.excessive_buffer_overrun_errors, e.port_rcv_remote_physical_errors,
       e.port_xmit_discards, e.errors_from, e.errors_to, e.downed_from,
       e.np_ecn_marked_roce_packets, e.np_cnp_sent, e.rp_cnp_handled, e.rp_cnp_ignored
FROM p FULL OUTER JOIN e ON p.host = e.host AND p.device = e.device AND p.port = e.port
LEFT JOIN n ON n.host = coalesce(p.host, e.host) AND n.rdma_dev = coalesce(p.device, e.device);
