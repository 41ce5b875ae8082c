-- CPU iowait, user+system and idle per host over time (aligned buckets; all-CPU rows of iostat and sar).
-- @param bucket_s DOUBLE = 60         bucket width in seconds
-- @param host VARCHAR = NULL          only this host
SELECT bucket(align_ts(c.ts, h.clock_offset_s), $bucket_s) AS t, c.host,
       round(avg(c.iowait_pct ORDER BY c.iowait_pct), 2) AS avg_iowait_pct, max(c.iowait_pct) AS max_iowait_pct,
       round(avg(c.user_pct + coalesce(c.system_pct, 0) ORDER BY c.user_pct + coalesce(c.system_pct, 0)), 2) AS avg_busy_pct,
       round(min(c.idle_pct), 2) AS min_idle_pct, round(avg(c.steal_pct ORDER BY c.steal_pct), 2) AS avg_steal_pct,
       list(DISTINCT c.source ORDER BY c.source) AS sources
FROM cpu_util c LEFT JOIN hosts h ON h.host = c.host
WHERE c.cpu = 'all' AND c.ts IS NOT NULL AND NOT coalesce(c.since_boot, false) AND ($host IS NULL OR c.host = $host)
GROUP BY ALL
ORDER BY t, c.host;
