-- kind: packet_drops
-- severity: critical
-- locality: host
-- layer: nic_fabric
-- root_rank: 14
-- caused_by: link_flap@host, pfc_storm@path, ib_link_degraded@host
-- confirm: ethtool -S <iface> | grep -iE 'drop|discard|out_of_buffer|err'
-- remediation: Discards on the port: check PFC/ECN configuration for the RoCE priority, rx ring sizes (ethtool -G), and congestion on the switch; drops on a lossless class trigger RoCE Go-Back-N retransmission collapse.
-- description: drops and discards per port (rx_discards_phy, rx_out_of_buffer, *_dropped, missed/no-buffer, physical errors) and sar EDEV drops
-- source: a rate, never a total: frontend ports of healthy fleets count a steady trickle of rx_out_of_buffer/discards (a few per second of bursty management traffic, modelled by the simulator's confounders), so an episode needs an average of min_rate_per_s over its length; on a RoCE port every drop costs a go-back-N retransmission of the whole window and throughput collapses at loss rates around 1e-3 (Mittal et al., Revisiting Network Support for RDMA, SIGCOMM 2018), which at 400 Gb/s (~12 M packets/s of 4 KB) is ~10^4 drops/s: critical_rate_per_s = 1000 is a tenth of that, job-impacting on any RDMA port
-- param: min_rate_per_s = 10   drops per second, averaged over the episode, that are reported (warning)
-- param: critical_rate_per_s = 1000   drops per second (peak interval) that impact the job (critical)
-- param: max_gap_s = 30   seconds without drops that still continue an episode (or 2.5 counter intervals when longer)
WITH c AS (
  SELECT host, iface, ts, ts_start, counter, delta, rate_per_s, class FROM det_nic_class
  WHERE class IN ('drops', 'errors') AND delta > 0 AND NOT coalesce(reset, false)
    -- physical-layer errors on a port whose link went down belong to that link flap (link_flap evidence)
    AND NOT (class = 'errors' AND EXISTS (SELECT 1 FROM det_nic_class l WHERE l.class = 'link_down' AND l.delta > 0
                                          AND l.host = det_nic_class.host AND l.iface = det_nic_class.iface))
), m AS (
  SELECT *, CASE WHEN lag(ts) OVER o IS NULL
                   OR epoch(ts_start) - epoch(lag(ts) OVER o) > greatest($max_gap_s, 2.5 * (epoch(ts) - epoch(ts_start)))
                 THEN 1 ELSE 0 END AS s
  FROM c WINDOW o AS (PARTITION BY host, iface ORDER BY ts, counter)
), i AS (SELECT *, sum(s) OVER (PARTITION BY host, iface ORDER BY ts, counter ROWS UNBOUNDED PRECEDING) AS ep FROM m),
e AS (
  SELECT host, iface, ep, min(ts_start) AS start, max(ts) AS "end", sum(delta) AS total, max(rate_per_s) AS peak_per_s,
         list(DISTINCT counter ORDER BY counter) AS counters,
         sum(delta) FILTER (WHERE class = 'errors') AS phy_errors
  FROM i GROUP BY ALL
), nic AS (
  SELECT host, iface || ' (' || array_to_string(counters, ', ') || ')' AS subject, start, "end", total, peak_per_s, counters,
         phy_errors, iface
  FROM e WHERE total / greatest(epoch("end" - start), 1) >= $min_rate_per_s
), edev AS (
  SELECT host, iface, min(ts) AS start, max(ts) AS "end", sum(rxdrop_s + txdrop_s ORDER BY rxdrop_s + txdrop_s) AS s_sum, max(rxdrop_s + txdrop_s) AS peak
  FROM sar_net_edev WHERE rxdrop_s + txdrop_s > 0 AND ts IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM nic n WHERE n.host = sar_net_edev.host AND n.iface = sar_net_edev.iface)
  GROUP BY ALL HAVING avg(rxdrop_s + txdrop_s ORDER BY rxdrop_s + txdrop_s) >= $min_rate_per_s
)
SELECT host, iface AS subject, start, "end", least(1.0, 0.7 + ln(total) / 40) AS score,
       CASE WHEN peak_per_s >= $critical_rate_per_s THEN 'critical' ELSE 'warning' END AS severity,
       total || ' packets dropped/discarded on ' || host || ' ' || iface || ' (' || array_to_string(counters, ', ')
         || '), peak ' || int_text(peak_per_s) || '/s, '
         || int_text(total / greatest(epoch("end" - start), 1)) || '/s on average over ' || int_text(epoch("end" - start)) || ' s' AS summary,
       to_json({iface: iface, total: total, peak_per_s: round(peak_per_s, 1), counters: counters, phy_errors: phy_errors})::VARCHAR AS evidence
FROM nic
UNION ALL
SELECT host, iface, start, "end", 0.6, CASE WHEN peak >= $critical_rate_per_s THEN 'critical' ELSE 'warning' END,
       'sar -n EDEV shows up to ' || int_text(peak) || ' drops/s on ' || host || ' ' || iface,
       to_json({iface: iface, peak_drops_per_s: peak, source: 'sar_net_edev'})::VARCHAR
FROM edev
ORDER BY start
