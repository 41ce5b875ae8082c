-- GPU utilisation, power and SM clock per host over time (aligned time buckets), one row per host and bucket.
-- @param bucket_s DOUBLE = 60         bucket width in seconds
-- @param host VARCHAR = NULL          only this host
SELECT bucket(align_ts(s.ts, h.clock_offset_s), $bucket_s) AS t, s.host,
       count(DISTINCT s.gpu) AS gpus,
       round(avg(s.util_pct ORDER BY s.util_pct), 1) AS avg_util_pct, min(s.util_pct) AS min_util_pct, max(s.util_pct) AS max_util_pct,
       round(avg(s.mem_util_pct ORDER BY s.mem_util_pct), 1) AS avg_mem_util_pct,
       round(avg(s.power_w ORDER BY s.power_w), 1) AS avg_power_w, round(avg(s.sm_clock_mhz ORDER BY s.sm_clock_mhz)) AS avg_sm_clock_mhz,
       max(s.temp_c) AS max_temp_c
FROM gpu_samples s LEFT JOIN hosts h ON h.host = s.host
WHERE s.ts IS NOT NULL AND ($host IS NULL OR s.host = $host)
GROUP BY ALL
ORDER BY t, s.host;
