-- gpu_episodes: contiguous intervals, per GPU, during which one clock event (throttle) reason was
-- active in gpu_samples (the reason flags, or the nvmlClocksEventReason bitmask where only that was
-- printed). start = first sample with the reason active; end = first later sample without it (the
-- last active sample when none followed: ongoing = true). `throttle` marks the reasons that slow
-- the GPU down (power cap, HW slowdown, thermal, power brake), as opposed to idle/app clocks/sync.
-- (raw.gpu_episode_rows is the definition; forensics.db.derived may cache it as Parquet.)
CREATE OR REPLACE VIEW raw.gpu_episode_rows AS
-- (Only the series with an active sample are windowed, and each by a number: unnesting every sample's nine
-- reasons into a CTE that two parts read, and partitioning by a (host, gpu, reason) struct, cost 6.6 CPU s on the
-- 64 x 8 GPU x 1 h simulated bundle's 1.9 M samples, this 2.4: benchmarks/results/derived-2026-12-07-64x1h-speed2.md.)
WITH f AS NOT MATERIALIZED (  -- each sample's reasons: the flags, or the bitmask where only that was printed
    SELECT host, gpu, ts, ts_quality, sm_clock_mhz, temp_c, power_w, util_pct,
           coalesce(reason_gpu_idle, (clocks_event_reasons & 1) <> 0) AS gpu_idle,
           coalesce(reason_applications_clocks, (clocks_event_reasons & 2) <> 0) AS applications_clocks,
           coalesce(reason_sw_power_cap, (clocks_event_reasons & 4) <> 0) AS sw_power_cap,
           coalesce(reason_hw_slowdown, (clocks_event_reasons & 8) <> 0) AS hw_slowdown,
           coalesce(reason_sync_boost, (clocks_event_reasons & 16) <> 0) AS sync_boost,
           coalesce(reason_sw_thermal_slowdown, (clocks_event_reasons & 32) <> 0) AS sw_thermal_slowdown,
           coalesce(reason_hw_thermal_slowdown, (clocks_event_reasons & 64) <> 0) AS hw_thermal_slowdown,
           coalesce(reason_hw_power_brake, (clocks_event_reasons & 128) <> 0) AS hw_power_brake,
           coalesce(reason_display_clocks, (clocks_event_reasons & 256) <> 0) AS display_clocks
    FROM raw.gpu_samples
    WHERE ts IS NOT NULL AND gpu IS NOT NULL
), act AS (  -- only series with an active sample can have episodes: the windows skip the rest
    SELECT host, gpu, reason, row_number() OVER () AS series  -- (any numbering: only a partition key)
    FROM (SELECT host, gpu,
                 bool_or(gpu_idle) AS gpu_idle,
                 bool_or(applications_clocks) AS applications_clocks,
                 bool_or(sw_power_cap) AS sw_power_cap,
                 bool_or(hw_slowdown) AS hw_slowdown,
                 bool_or(sync_boost) AS sync_boost,
                 bool_or(sw_thermal_slowdown) AS sw_thermal_slowdown,
                 bool_or(hw_thermal_slowdown) AS hw_thermal_slowdown,
                 bool_or(hw_power_brake) AS hw_power_brake,
                 bool_or(display_clocks) AS display_clocks
          FROM f GROUP BY host, gpu)
    UNPIVOT (any_active FOR reason IN (gpu_idle, applications_clocks, sw_power_cap, hw_slowdown, sync_boost, sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake, display_clocks))
    WHERE any_active
), g AS (  -- the samples of each such series, with its reason's flag
    SELECT f.host, f.gpu, f.ts, f.ts_quality, f.sm_clock_mhz, f.temp_c, f.power_w, f.util_pct, act.reason, r.active,
           flag_run(r.active, act.series, f.ts) AS run,
           lead(f.ts) OVER (PARTITION BY act.series ORDER BY f.ts) AS next_ts
    FROM f JOIN act ON f.host = act.host AND f.gpu = act.gpu,
         LATERAL (SELECT CASE act.reason
                              WHEN 'gpu_idle' THEN f.gpu_idle
                              WHEN 'applications_clocks' THEN f.applications_clocks
                              WHEN 'sw_power_cap' THEN f.sw_power_cap
                              WHEN 'hw_slowdown' THEN f.hw_slowdown
                              WHEN 'sync_boost' THEN f.sync_boost
                              WHEN 'sw_thermal_slowdown' THEN f.sw_thermal_slowdown
                              WHEN 'hw_thermal_slowdown' THEN f.hw_thermal_slowdown
                              WHEN 'hw_power_brake' THEN f.hw_power_brake
                              WHEN 'display_clocks' THEN f.display_clocks
                         END AS active) r
    WHERE r.active IS NOT NULL
)
SELECT e.host, e.gpu, e.reason,
       e.reason IN ('sw_power_cap', 'hw_slowdown', 'sw_thermal_slowdown', 'hw_thermal_slowdown', 'hw_power_brake') AS throttle,
       e.episode, e.start, e."end", (epoch_us(e."end") - epoch_us(e.start)) / 1e6 AS duration_s,
       e.ongoing, e.samples, e.ts_quality, e.min_sm_clock_mhz, e.avg_sm_clock_mhz, e.max_temp_c, e.avg_power_w,
       e.avg_util_pct
FROM (
    SELECT host, gpu, reason, run_number((host, gpu, reason), run) AS episode,
           min(ts) AS start,
           coalesce(arg_max_null(next_ts, ts), max(ts)) AS "end",
           arg_max_null(next_ts, ts) IS NULL AS ongoing,
           count(*) AS samples, any_value(ts_quality) AS ts_quality,
           min(sm_clock_mhz) AS min_sm_clock_mhz, avg(sm_clock_mhz ORDER BY sm_clock_mhz) AS avg_sm_clock_mhz,
           max(temp_c) AS max_temp_c, avg(power_w ORDER BY power_w) AS avg_power_w, avg(util_pct ORDER BY util_pct) AS avg_util_pct
    FROM g WHERE active
    GROUP BY host, gpu, reason, run
) e;

CREATE OR REPLACE VIEW gpu_episodes AS
SELECT e.host, e.gpu, e.reason, e.throttle, e.episode, e.start, e."end",
       align_ts(e.start, c.clock_offset_s) AS start_aligned, align_ts(e."end", c.clock_offset_s) AS end_aligned,
       e.duration_s, e.ongoing, e.samples, e.ts_quality, e.min_sm_clock_mhz, e.avg_sm_clock_mhz, e.max_temp_c,
       e.avg_power_w, e.avg_util_pct
FROM raw.gpu_episode_rows e
LEFT JOIN raw.clock_offsets c ON c.host = e.host;
