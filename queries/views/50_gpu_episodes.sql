-- gpu_episodes: contiguous intervals, per GPU, during which one clock event (throttle) reason was
-- active in gpu_samples (the reason flags, or the nvmlClocksEventReason bitmask where only that was
-- printed). start = first sample with the reason active; end = first later sample without it (the
-- last active sample when none followed: ongoing = true). `throttle` marks the reasons that slow
-- the GPU down (power cap, HW slowdown, thermal, power brake), as opposed to idle/app clocks/sync.
-- (raw.gpu_episode_rows is the definition; forensics.db.derived may cache it as Parquet.)
CREATE OR REPLACE VIEW raw.gpu_episode_rows AS
WITH s AS (
    SELECT host, gpu, ts, ts_quality, sm_clock_mhz, temp_c, power_w, util_pct,
           unnest([
               {'reason': 'gpu_idle', 'active': coalesce(reason_gpu_idle, (clocks_event_reasons & 1) <> 0)},
               {'reason': 'applications_clocks', 'active': coalesce(reason_applications_clocks, (clocks_event_reasons & 2) <> 0)},
               {'reason': 'sw_power_cap', 'active': coalesce(reason_sw_power_cap, (clocks_event_reasons & 4) <> 0)},
               {'reason': 'hw_slowdown', 'active': coalesce(reason_hw_slowdown, (clocks_event_reasons & 8) <> 0)},
               {'reason': 'sync_boost', 'active': coalesce(reason_sync_boost, (clocks_event_reasons & 16) <> 0)},
               {'reason': 'sw_thermal_slowdown', 'active': coalesce(reason_sw_thermal_slowdown, (clocks_event_reasons & 32) <> 0)},
               {'reason': 'hw_thermal_slowdown', 'active': coalesce(reason_hw_thermal_slowdown, (clocks_event_reasons & 64) <> 0)},
               {'reason': 'hw_power_brake', 'active': coalesce(reason_hw_power_brake, (clocks_event_reasons & 128) <> 0)},
               {'reason': 'display_clocks', 'active': coalesce(reason_display_clocks, (clocks_event_reasons & 256) <> 0)}
           ], recursive := true)
    FROM raw.gpu_samples
    WHERE ts IS NOT NULL AND gpu IS NOT NULL
), act AS (  -- only series with an active sample can have episodes: the windows skip the rest
    SELECT DISTINCT host, gpu, reason FROM s WHERE active
), g AS (
    SELECT s.*, flag_run(active, (host, gpu, reason), ts) AS run,
           lead(ts) OVER (PARTITION BY (host, gpu, reason) ORDER BY ts) AS next_ts
    FROM s SEMI JOIN act USING (host, gpu, reason)
    WHERE active IS NOT NULL
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
