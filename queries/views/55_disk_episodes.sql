-- disk_saturation(min_util_pct): contiguous intervals per (host, device, source) in which disk_io
-- showed util_pct >= min_util_pct (reports averaged since boot excluded). end = first later sample
-- below the threshold (the last saturated sample when none followed: ongoing = true).
-- disk_episodes: the same at the default threshold of 90 %.
CREATE OR REPLACE MACRO disk_saturation(min_util_pct) AS TABLE
WITH s AS (
    SELECT host, device, source, ts, ts_quality, util_pct, aqu_sz, r_s, w_s, rkb_s, wkb_s,
           coalesce(await_ms, greatest(r_await_ms, w_await_ms)) AS await_ms,
           util_pct >= min_util_pct AS active
    FROM raw.disk_io
    WHERE ts IS NOT NULL AND util_pct IS NOT NULL AND NOT coalesce(since_boot, false)
), g AS (
    SELECT *, flag_run(active, (host, device, source), ts) AS run, lead(ts) OVER (PARTITION BY (host, device, source) ORDER BY ts) AS next_ts FROM s
)
SELECT e.*, align_ts(e.start, c.clock_offset_s) AS start_aligned, align_ts(e."end", c.clock_offset_s) AS end_aligned,
       (epoch_us(e."end") - epoch_us(e.start)) / 1e6 AS duration_s
FROM (
    SELECT host, device, source, run_number((host, device, source), run) AS episode, min(ts) AS start,
           coalesce(arg_max_null(next_ts, ts), max(ts)) AS "end", arg_max_null(next_ts, ts) IS NULL AS ongoing,
           count(*) AS samples, any_value(ts_quality) AS ts_quality,
           max(util_pct) AS max_util_pct, avg(util_pct ORDER BY util_pct) AS avg_util_pct,
           max(await_ms) AS max_await_ms, avg(await_ms ORDER BY await_ms) AS avg_await_ms, max(aqu_sz) AS max_aqu_sz,
           avg(coalesce(rkb_s, 0) + coalesce(wkb_s, 0) ORDER BY coalesce(rkb_s, 0) + coalesce(wkb_s, 0)) AS avg_kb_s
    FROM g WHERE active GROUP BY host, device, source, run
) e
LEFT JOIN raw.clock_offsets c ON c.host = e.host;

CREATE OR REPLACE VIEW disk_episodes AS SELECT * FROM disk_saturation(90);
