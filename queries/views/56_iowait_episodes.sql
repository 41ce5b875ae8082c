-- iowait_above(min_iowait_pct): contiguous intervals per (host, source) in which the all-CPU
-- iowait of cpu_util (iostat avg-cpu, sar -u) was >= min_iowait_pct (since-boot reports excluded).
-- iowait_episodes: the same at the default threshold of 10 %.
CREATE OR REPLACE MACRO iowait_above(min_iowait_pct) AS TABLE
WITH s AS (
    SELECT host, source, ts, ts_quality, iowait_pct, idle_pct, user_pct, system_pct,
           iowait_pct >= min_iowait_pct AS active
    FROM raw.cpu_util
    WHERE ts IS NOT NULL AND iowait_pct IS NOT NULL AND cpu = 'all' AND NOT coalesce(since_boot, false)
), g AS (
    SELECT *, flag_run(active, (host, source), ts) AS run, lead(ts) OVER (PARTITION BY (host, source) ORDER BY ts) AS next_ts FROM s
)
SELECT e.*, align_ts(e.start, c.clock_offset_s) AS start_aligned, align_ts(e."end", c.clock_offset_s) AS end_aligned,
       (epoch_us(e."end") - epoch_us(e.start)) / 1e6 AS duration_s
FROM (
    SELECT host, source, run_number((host, source), run) AS episode, min(ts) AS start,
           coalesce(arg_max_null(next_ts, ts), max(ts)) AS "end", arg_max_null(next_ts, ts) IS NULL AS ongoing,
           count(*) AS samples, any_value(ts_quality) AS ts_quality,
           max(iowait_pct) AS max_iowait_pct, avg(iowait_pct ORDER BY iowait_pct) AS avg_iowait_pct,
           min(idle_pct) AS min_idle_pct, avg(user_pct + coalesce(system_pct, 0) ORDER BY user_pct + coalesce(system_pct, 0)) AS avg_busy_pct
    FROM g WHERE active GROUP BY host, source, run
) e
LEFT JOIN raw.clock_offsets c ON c.host = e.host;

CREATE OR REPLACE VIEW iowait_episodes AS SELECT * FROM iowait_above(10);
