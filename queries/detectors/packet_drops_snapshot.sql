-- kind: packet_drops
-- severity: warning
-- locality: host
-- variant_of: packet_drops
-- (layer, root rank, causes, confirm and remediation are the kind's, declared in packet_drops.sql)
-- description: drops and discards in a single ethtool -S snapshot (a pasted excerpt or a one-shot capture: no series, so no rate): the counters' totals since they were last reset
-- source: set by hand against the simulator; issue 16 item 2 grounds these thresholds in physics and vendor figures
-- param: min_total = 10000   packets dropped since the counters were reset (the largest drop counter of the port)
WITH names AS (
  SELECT counter, nic_counter_signal(counter) AS class FROM (SELECT DISTINCT counter FROM det_nic_snapshot)
), per_counter AS (  -- per-queue copies of a counter add up to one figure
  SELECT o.host, o.port, o.counter, n.class, sum(o.value) AS value, min(o.ts) AS ts, min(o.file) AS file, min(o.line_no) AS line_no
  FROM det_nic_snapshot o JOIN names n USING (counter)
  GROUP BY ALL
), drops AS (
  SELECT * FROM per_counter
  WHERE class = 'drops' AND value > 0
), port AS (
  SELECT host, port, max(value) AS total, arg_max(counter, value) AS top_counter,
         list({counter: counter, value: value} ORDER BY value DESC) AS counters, min(ts) AS ts,
         min(file) AS file, min(line_no) AS line_no
  FROM drops GROUP BY ALL
), rx AS (
  SELECT host, port, max(value) FILTER (WHERE counter IN ('rx_packets_phy', 'rx_packets', 'rx_pkts', 'rx_ucast_packets',
                                                           'rx_total_packets', 'rx_frames_ok')) AS rx_packets
  FROM per_counter GROUP BY ALL
)
SELECT p.host, p.port AS subject, p.ts AS start, p.ts AS "end",
       least(0.85, 0.45 + ln(p.total) / 60) AS score,
       p.host || ' ' || p.port || ': ' || p.total || ' packets dropped since the counters were last reset (' || p.top_counter || ')'
         || coalesce(', ' || round(100.0 * p.total / nullif(r.rx_packets, 0), 3) || '% of ' || r.rx_packets || ' received', '')
         || '; one snapshot: no rate or time window (collect a series with forensics collect to see when)' AS summary,
       to_json({iface: CASE WHEN p.port NOT LIKE 'unnamed port in %' THEN p.port END, total: p.total, counter: p.top_counter, counters: p.counters, rx_packets: r.rx_packets,
                snapshot: true, first: {file: p.file, line_no: p.line_no}})::VARCHAR AS evidence
FROM port p LEFT JOIN rx r USING (host, port)
WHERE p.total >= $min_total
ORDER BY p.host, p.port
