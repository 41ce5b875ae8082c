-- PFC / global pause frames per second per host, port and priority (ethtool -S), busiest first.
-- @param min_rate DOUBLE = 0          only ports whose peak pause rate reaches this many frames/s
-- @param host VARCHAR = NULL          only this host
-- @param since TIMESTAMPTZ = NULL     only intervals ending at or after this time (aligned)
-- @param until TIMESTAMPTZ = NULL     only intervals ending before this time (aligned)
-- Counters: mlx5 rx/tx_prioN_pause, rx/tx_pause_ctrl_phy; bnxt rx/tx_pfc_ena_frames_priN,
-- rx/tx_pause_frames; ice/i40e *_priority_N_xon/xoff, link_xon/xoff_*; ixgbe/igb *_flow_control_*.
-- Durations (pause_duration, *_duration_us) are summed separately as paused microseconds per second.
-- (class = 'pause' is nic_counter_class(); pause storm events are class 'storm'.)
WITH c AS (
    -- classify each pause counter name once, not every interval
    SELECT DISTINCT counter,
           CASE WHEN regexp_matches(counter, '(?i)duration') THEN 'duration' ELSE 'frames' END AS what,
           coalesce(nullif(regexp_extract(counter, '(?i)(?:prio|pri|priority_|pb_)([0-7])', 1), ''), 'global') AS priority,
           CASE WHEN regexp_matches(counter, '(?i)(^|_)tx|_tx_|xmit') THEN 'tx'
                WHEN regexp_matches(counter, '(?i)(^|_)rx|_rx_|recv') THEN 'rx' ELSE '?' END AS direction
    FROM nic_counter_summary
    WHERE class = 'pause' AND NOT regexp_matches(counter, '(?i)(transition|enable|_ena$)')
), r AS (
    SELECT n.host, n.iface, n.counter, c.what, c.priority, c.direction, n.ts_start, n.ts, n.ts_aligned, n.dt_s,
           n.delta, n.rate_per_s
    FROM nic_rates n JOIN c USING (counter)
    WHERE n.class = 'pause'
      AND ($host IS NULL OR n.host = $host)
      AND ($since IS NULL OR n.ts_aligned >= $since) AND ($until IS NULL OR n.ts_aligned < $until)
)
SELECT host, iface, priority, direction,
       CAST(sum(delta) FILTER (WHERE what = 'frames') AS BIGINT) AS pause_frames,
       max(rate_per_s) FILTER (WHERE what = 'frames') AS peak_frames_per_s,
       round(sum(delta) FILTER (WHERE what = 'frames') / nullif(seconds_between(min(ts_start), max(ts)), 0), 3) AS avg_frames_per_s,
       CAST(sum(delta) FILTER (WHERE what = 'duration') AS BIGINT) AS paused_us,
       max(rate_per_s) FILTER (WHERE what = 'duration') AS peak_paused_us_per_s,
       count(*) FILTER (WHERE what = 'frames' AND delta > 0) AS intervals_with_pauses,
       min(ts_aligned) FILTER (WHERE delta > 0) AS first_pause, max(ts_aligned) FILTER (WHERE delta > 0) AS last_pause,
       list(DISTINCT counter ORDER BY counter) AS counters
FROM r
GROUP BY host, iface, priority, direction
HAVING coalesce(max(rate_per_s) FILTER (WHERE what = 'frames'), 0) >= $min_rate
ORDER BY peak_frames_per_s DESC NULLS LAST, host, iface, priority, direction;
