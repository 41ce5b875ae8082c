-- kind: pause_frames_since_reset
-- layer: nic_fabric
-- severity: info
-- locality: host
-- root_rank: 15
-- caused_by: none
-- confirm: ethtool -S <iface> | grep -iE 'pause|pfc|storm' twice, some seconds apart (a storm is a rate); or forensics collect for a series
-- remediation: A total since the counters were reset says pauses happened, not when: collect a series (forensics collect, or ethtool -S twice a few seconds apart) to see whether the port is pausing now; if it is, treat it as a PFC storm (see pfc_storm).
-- description: pause frames, pause time and pause-storm events in a single ethtool -S snapshot (a pasted excerpt or a one-shot capture: no series, so no rate and no storm): the totals seen since the counters were last reset; storm watchdog events or minutes of pause time make it a warning, never critical
-- source: a total since reset has no time base (IEEE 802.1Qbb pauses are a rate problem); the thresholds only sort what is worth mentioning, set by hand
-- param: min_frames = 100000   pause frames since reset worth reporting
-- param: warn_paused_s = 60   pause time (transmit or receive) since reset that makes it a warning
WITH names AS (
  SELECT counter, CASE nic_counter_signal(counter) WHEN 'storm_event' THEN 'storm' WHEN 'pause_time_us' THEN 'time_us'
                       WHEN 'pause_frames' THEN 'frames' END AS what,
         nic_counter_dir(counter) AS dir
  FROM (SELECT DISTINCT counter FROM det_nic_snapshot)
), c AS (
  SELECT o.host, o.port, o.counter, n.what, n.dir, sum(o.value) AS value, min(o.ts) AS ts, min(o.file) AS file,
         min(o.line_no) AS line_no
  FROM det_nic_snapshot o JOIN names n USING (counter)
  WHERE n.what IS NOT NULL AND o.value > 0
  GROUP BY ALL
), port AS (
  SELECT host, port,
         max(value) FILTER (WHERE what = 'frames' AND dir = 'tx') AS tx_frames,
         max(value) FILTER (WHERE what = 'frames' AND dir = 'rx') AS rx_frames,
         max(value) FILTER (WHERE what = 'time_us' AND dir = 'tx') / 1e6 AS tx_paused_s,
         max(value) FILTER (WHERE what = 'time_us' AND dir = 'rx') / 1e6 AS rx_paused_s,
         sum(value) FILTER (WHERE what = 'storm' AND regexp_matches(counter, '(?i)error')) AS storm_errors,
         sum(value) FILTER (WHERE what = 'storm') AS storm_events,
         list({counter: counter, value: value} ORDER BY counter) AS counters,
         min(ts) AS ts, min(file) AS file, min(line_no) AS line_no
  FROM c GROUP BY ALL
), f AS (
  SELECT *, greatest(coalesce(tx_frames, 0), coalesce(rx_frames, 0)) AS frames,
         greatest(coalesce(tx_paused_s, 0), coalesce(rx_paused_s, 0)) AS paused_s,
         CASE WHEN coalesce(tx_frames, 0) + coalesce(tx_paused_s, 0) > 0 AND coalesce(rx_frames, 0) + coalesce(rx_paused_s, 0) > 0
                THEN 'sends and receives pauses'
              WHEN coalesce(tx_frames, 0) + coalesce(tx_paused_s, 0) > 0 THEN 'sends pauses: its receive side could not keep up'
              ELSE 'receives pauses: the link partner is congested' END AS role
  FROM port
)
SELECT host, port AS subject, ts AS start, ts AS "end",
       CASE WHEN coalesce(storm_events, 0) > 0 THEN 0.8 WHEN paused_s >= $warn_paused_s THEN 0.6 ELSE 0.4 END AS score,
       CASE WHEN coalesce(storm_events, 0) > 0 OR paused_s >= $warn_paused_s THEN 'warning' ELSE 'info' END AS severity,
       'pause frames seen since reset on ' || host || ' ' || port || ': ' || frames || ' pause frames'
         || CASE WHEN paused_s > 0 THEN ', paused ' || int_text(paused_s) || ' s' ELSE '' END
         || CASE WHEN coalesce(storm_events, 0) > 0 THEN ', ' || storm_events || ' pause-storm watchdog events'
                 || CASE WHEN coalesce(storm_errors, 0) > 0 THEN ' (' || storm_errors || ' errors)' ELSE '' END ELSE '' END
         || ' (the port ' || role || '); one snapshot, so no rate and no time: not a storm until a series shows one (collect with forensics collect)' AS summary,
       to_json({iface: CASE WHEN port NOT LIKE 'unnamed port in %' THEN port END, tx_pause_frames: tx_frames, rx_pause_frames: rx_frames, tx_paused_s: round(tx_paused_s, 1),
                rx_paused_s: round(rx_paused_s, 1), storm_events: storm_events, counters: counters, snapshot: true,
                first: {file: file, line_no: line_no}})::VARCHAR AS evidence
FROM f
WHERE frames >= $min_frames OR paused_s >= $warn_paused_s OR coalesce(storm_events, 0) > 0
ORDER BY host, port
