-- GPU clock throttling episodes (power cap, HW slowdown, thermal, power brake) with durations, longest first.
-- @param host VARCHAR = NULL          only this host
-- @param min_duration_s DOUBLE = 0    only episodes lasting at least this long
-- @param all_reasons BOOLEAN = false  also list idle, application clocks, sync boost and display episodes
SELECT host, gpu, reason, start_aligned, end_aligned, duration_s, ongoing, samples,
       min_sm_clock_mhz, round(avg_sm_clock_mhz, 1) AS avg_sm_clock_mhz, max_temp_c,
       round(avg_power_w, 1) AS avg_power_w, round(avg_util_pct, 1) AS avg_util_pct
FROM gpu_episodes
WHERE (throttle OR $all_reasons) AND duration_s >= $min_duration_s AND ($host IS NULL OR host = $host)
ORDER BY duration_s DESC, host, gpu, start_aligned;
