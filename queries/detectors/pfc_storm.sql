-- kind: pfc_storm
-- severity: critical
-- locality: host
-- layer: nic_fabric
-- root_rank: 13
-- caused_by: pfc_storm@path, link_flap@host
-- confirm: ethtool -S <iface> | grep -iE 'pause|pfc|storm'; mlnx_qos -i <iface>; dmesg -T | grep -i pfc
-- remediation: A port is flooding PFC pauses (usually a stuck receiver or a switch buffer mis-tuned): calibrate switch ECN thresholds lower, verify PFC headroom buffers, enable the PFC storm watchdog, and check the host on that port for a stalled NIC or PCIe backpressure.
-- description: PFC/global pause storms per port and priority: sustained pause frame rates, time spent paused, and the NIC's own storm warning/error events. The evidence carries the RoCE port's congestion-control counters over the capture where the bundle has them (cnp_over_capture: np_ecn_marked_roce_packets, np_cnp_sent, rp_cnp_handled, rp_cnp_ignored increases from the mlx5 hw_counters, sysfs or rdma statistic, via ib_port_summary; null without them): counts only, no threshold: none was found in vendor documentation (tests/fixtures/README.md says where we looked). Few CNPs during a pause storm say ECN/DCQCN is not taking the load off PFC
-- source: IEEE 802.1Qbb/802.3 Annex 31B: a pause frame stops the link for at most 65535 quanta of 512 bit times (83.9 us at 400 Gb/s, 335 us at 100 Gb/s), so a pause rate means nothing without the link speed: the detector judges the fraction of time paused, from the NIC's pause-duration counters (mlx5 *_pause_duration, us) or, without them, bounded from the rate as rate x 65535 x 512 / link speed (link speed from /sys, 100 Gb/s when unknown). Normal congestion pauses a RoCE port a few % of the time (NVIDIA RoCE congestion control guidance: PFC is the last resort behind ECN/DCQCN); at 20% of the time paused a fifth of the port's capacity is gone (warning), at 50% half of it (critical, as is the NIC's own pause-storm watchdog, mlx5 tx_pause_storm_*_events)
-- param: min_paused_fraction = 0.2   fraction of the time paused that is a storm (warning)
-- param: critical_paused_fraction = 0.5   fraction of the time paused that halves the port's capacity (critical)
-- param: min_duration_s = 10   shortest storm reported
WITH c AS (
  SELECT host, iface, dir, prio, class, ts, ts_start, rate_per_s FROM det_nic_class
  WHERE class IN ('pause_frames', 'pause_time_us')
), speed AS (
  SELECT host, iface, max(speed_mbps) * 1e6 AS bps FROM nics WHERE speed_mbps > 0 GROUP BY ALL
), has_time AS (  -- ports whose NIC counts pause time: their rate alone never makes a storm
  SELECT DISTINCT host, iface, prio FROM c WHERE class = 'pause_time_us'
), per AS (
  SELECT c.host, c.iface, c.prio, c.ts, any_value(c.ts_start) AS ts_start,
         max(c.rate_per_s) FILTER (WHERE class = 'pause_frames') AS pause_per_s,
         max(c.rate_per_s) FILTER (WHERE class = 'pause_time_us') / 1e6 AS paused_fraction,
         -- no pause-time counter: the most the pause rate can hold the link (every pause at its 65535 quanta)
         CASE WHEN NOT bool_or(t.host IS NOT NULL) THEN
           least(1.0, max(c.rate_per_s) FILTER (WHERE class = 'pause_frames') * 65535 * 512 / coalesce(any_value(sp.bps), 100e9)) END
           AS paused_bound,
         list(dir ORDER BY dir) FILTER (WHERE dir IS NOT NULL AND ((class = 'pause_frames' AND t.host IS NULL
               AND c.rate_per_s * 65535 * 512 / coalesce(sp.bps, 100e9) >= $min_paused_fraction)
               OR (class = 'pause_time_us' AND c.rate_per_s / 1e6 >= $min_paused_fraction))) AS dirs
  FROM c LEFT JOIN speed sp ON sp.host = c.host AND sp.iface = c.iface
  LEFT JOIN has_time t ON t.host IS NOT DISTINCT FROM c.host AND t.iface IS NOT DISTINCT FROM c.iface AND t.prio = c.prio
  GROUP BY c.host, c.iface, c.prio, c.ts
), flagged AS (
  SELECT *, coalesce(paused_fraction, paused_bound, 0) >= $min_paused_fraction AS bad
  FROM per
), hot AS (  -- only ports/priorities with a bad interval can have storms: the windows skip the rest
  SELECT DISTINCT host, iface, prio FROM flagged WHERE bad
), i AS (
  SELECT *, flag_run(bad, (host, iface, prio), ts) AS ep
  FROM flagged f SEMI JOIN hot h ON h.host IS NOT DISTINCT FROM f.host AND h.iface IS NOT DISTINCT FROM f.iface
    AND h.prio IS NOT DISTINCT FROM f.prio
),
e AS (
  SELECT host, iface, prio, ep, min(ts_start) AS start, max(ts) AS "end", count(*) AS intervals,
         max(pause_per_s) AS peak_pause_per_s, avg(pause_per_s ORDER BY pause_per_s) AS avg_pause_per_s, max(paused_fraction) AS max_paused_fraction,
         max(paused_bound) AS max_paused_bound, list_sort(list_distinct(flatten(list(dirs)))) AS dirs
  FROM i WHERE bad GROUP BY ALL HAVING epoch(max(ts) - min(ts_start)) >= $min_duration_s
), storms AS (
  -- the NIC's own pause-storm watchdog (mlx5 tx_pause_storm_warning/error_events): counted per port
  SELECT host, iface, ts_start, ts, delta FROM det_nic_class WHERE class = 'storm_event' AND delta > 0
), ew AS (
  SELECT e.*, (SELECT sum(s.delta) FROM storms s WHERE s.host = e.host AND s.iface = e.iface
                 AND s.ts >= e.start AND s.ts_start <= e."end") AS storm_events
  FROM e
), lone AS (
  SELECT host, iface, 'global' AS prio, min(ts_start) AS start, max(ts) AS "end", count(*) AS intervals,
         NULL::DOUBLE AS peak_pause_per_s, NULL::DOUBLE AS avg_pause_per_s, NULL::DOUBLE AS max_paused_fraction,
         NULL::DOUBLE AS max_paused_bound, ['tx'] AS dirs, sum(delta) AS storm_events
  FROM storms s WHERE NOT EXISTS (SELECT 1 FROM e WHERE e.host = s.host AND e.iface = s.iface
                                    AND s.ts >= e.start AND s.ts_start <= e."end")
  GROUP BY host, iface
), all_e0 AS (
  SELECT host, iface, prio, start, "end", intervals, peak_pause_per_s, avg_pause_per_s, max_paused_fraction, max_paused_bound,
         dirs, storm_events FROM ew
  UNION ALL SELECT * FROM lone
), cnp AS (  -- the RoCE port's DCQCN counters over the capture (ib_port_summary, computed once per analysis into
  -- det_ib_port_summary by _ib_ports.sql: reading the view here computed it a second time, 1.3 CPU s on 64 x 1 h),
  -- shown as counts: no vendor threshold
  SELECT host, iface, sum(np_ecn_marked_roce_packets) AS np_ecn_marked_roce_packets, sum(np_cnp_sent) AS np_cnp_sent,
         sum(rp_cnp_handled) AS rp_cnp_handled, sum(rp_cnp_ignored) AS rp_cnp_ignored
  FROM det_ib_port_summary WHERE iface IS NOT NULL
    AND coalesce(np_ecn_marked_roce_packets, np_cnp_sent, rp_cnp_handled, rp_cnp_ignored) IS NOT NULL
  GROUP BY ALL
), all_e AS (
  SELECT a.*, CASE WHEN c.host IS NOT NULL THEN {np_ecn_marked_roce_packets: c.np_ecn_marked_roce_packets,
         np_cnp_sent: c.np_cnp_sent, rp_cnp_handled: c.rp_cnp_handled, rp_cnp_ignored: c.rp_cnp_ignored} END AS cnp
  FROM all_e0 a LEFT JOIN cnp c ON c.host IS NOT DISTINCT FROM a.host AND c.iface = a.iface
)
SELECT host, iface || CASE WHEN prio = 'global' THEN ' (global pause)' ELSE ' prio ' || prio END AS subject,
       start, "end",
       least(1.0, 0.7 + epoch("end" - start) / 300 + CASE WHEN coalesce(storm_events, 0) > 0 THEN 0.2 ELSE 0 END) AS score,
       CASE WHEN coalesce(storm_events, 0) > 0 OR coalesce(max_paused_fraction, 0) >= $critical_paused_fraction
            THEN 'critical' ELSE 'warning' END AS severity,
       'PFC pause storm on ' || host || ' ' || iface || CASE WHEN prio = 'global' THEN '' ELSE ' priority ' || prio END
         || ' (' || CASE WHEN list_contains(dirs, 'tx') THEN 'this port sends pauses' ELSE 'receives pauses' END || ')'
         || coalesce(': up to ' || int_text(peak_pause_per_s) || ' pause frames/s', '')
         || coalesce(', paused ' || int_text(100 * max_paused_fraction) || '% of the time', '')
         || coalesce(', paused at most ' || int_text(100 * max_paused_bound) || '% of the time (no pause-time counter)', '')
         || CASE WHEN coalesce(storm_events, 0) > 0 THEN ', ' || storm_events || ' pause-storm watchdog events' ELSE '' END
         || ' for ' || int_text(epoch("end" - start)) || ' s' AS summary,
       to_json({iface: iface, priority: prio, directions: list_sort(dirs), peak_pause_per_s: round(peak_pause_per_s),
                avg_pause_per_s: round(avg_pause_per_s), max_paused_fraction: round(max_paused_fraction, 3),
                max_paused_bound: round(max_paused_bound, 3),
                storm_events: storm_events, intervals: intervals, duration_s: epoch("end" - start),
                cnp_over_capture: cnp})::VARCHAR AS evidence
FROM all_e
ORDER BY start
