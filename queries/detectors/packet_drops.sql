-- kind: packet_drops
-- severity: critical
-- layer: nic_fabric
-- root_rank: 14
-- caused_by: link_flap@host, pfc_storm@path
-- confirm: ethtool -S <iface> | grep -iE 'drop|discard|out_of_buffer|err'
-- remediation: Discards on the port: check PFC/ECN configuration for the RoCE priority, rx ring sizes (ethtool -G), and congestion on the switch; drops on a lossless class trigger RoCE Go-Back-N retransmission collapse.
-- description: drops and discards per port (rx_discards_phy, rx_out_of_buffer, *_dropped, missed/no-buffer, physical errors) and sar EDEV drops
-- source: set by hand against the simulator; issue 16 item 2 grounds these thresholds in physics and vendor figures
-- param: min_total = 500   packets dropped in one episode
-- param: max_gap_s = 30   intervals without drops that still continue an episode
WITH c AS (
  SELECT host, iface, ts, ts_start, counter, delta, rate_per_s, class FROM det_nic_class
  WHERE class IN ('drops', 'errors') AND delta > 0 AND NOT coalesce(reset, false)
    -- physical-layer errors on a port whose link went down belong to that link flap (link_flap evidence)
    AND NOT (class = 'errors' AND EXISTS (SELECT 1 FROM det_nic_class l WHERE l.class = 'link_down' AND l.delta > 0
                                          AND l.host = det_nic_class.host AND l.iface = det_nic_class.iface))
), m AS (
  SELECT *, CASE WHEN lag(ts) OVER o IS NULL OR epoch(ts_start) - epoch(lag(ts) OVER o) > $max_gap_s THEN 1 ELSE 0 END AS s
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
  FROM e WHERE total >= $min_total
), edev AS (
  SELECT host, iface, min(ts) AS start, max(ts) AS "end", sum(rxdrop_s + txdrop_s) AS s_sum, max(rxdrop_s + txdrop_s) AS peak
  FROM sar_net_edev WHERE rxdrop_s + txdrop_s > 0 AND ts IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM nic n WHERE n.host = sar_net_edev.host AND n.iface = sar_net_edev.iface)
  GROUP BY ALL HAVING sum(rxdrop_s + txdrop_s) * 1 >= $min_total / 10
)
SELECT host, iface AS subject, start, "end", least(1.0, 0.7 + ln(total) / 40) AS score,
       total || ' packets dropped/discarded on ' || host || ' ' || iface || ' (' || array_to_string(counters, ', ')
         || '), peak ' || round(peak_per_s)::BIGINT || '/s over ' || round(epoch("end" - start))::BIGINT || ' s' AS summary,
       to_json({iface: iface, total: total, peak_per_s: round(peak_per_s, 1), counters: counters, phy_errors: phy_errors})::VARCHAR AS evidence
FROM nic
UNION ALL
SELECT host, iface, start, "end", 0.6, 'sar -n EDEV shows up to ' || round(peak)::BIGINT || ' drops/s on ' || host || ' ' || iface,
       to_json({iface: iface, peak_drops_per_s: peak, source: 'sar_net_edev'})::VARCHAR
FROM edev
ORDER BY start
