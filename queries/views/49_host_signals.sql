-- disk_signals and cpu_signals: the disk and CPU series the HTML report charts, on the aligned
-- timeline. disk_signals: per device and sample, utilisation and read/write latency (r_await, else
-- await); cpu_signals: per host and sample, iowait and busy (100 - idle) of all CPUs together.
-- Averages since boot (the first sar/iostat report) are left out: they describe no moment.
CREATE OR REPLACE VIEW disk_signals AS
SELECT x.host, x.device, align_ts(x.ts, h.clock_offset_s) AS ts_aligned, max(x.util_pct) AS util_pct,
       max(coalesce(x.r_await_ms, x.await_ms)) AS r_await_ms, max(x.w_await_ms) AS w_await_ms
FROM disk_io x LEFT JOIN hosts h USING (host)
WHERE x.ts IS NOT NULL AND NOT coalesce(x.since_boot, false)
GROUP BY x.host, x.device, align_ts(x.ts, h.clock_offset_s);

CREATE OR REPLACE VIEW cpu_signals AS
SELECT x.host, align_ts(x.ts, h.clock_offset_s) AS ts_aligned, avg(x.iowait_pct ORDER BY x.iowait_pct) AS iowait_pct,
       avg(100 - x.idle_pct ORDER BY 100 - x.idle_pct) AS busy_pct
FROM cpu_util x LEFT JOIN hosts h USING (host)
WHERE x.ts IS NOT NULL AND NOT coalesce(x.since_boot, false) AND lower(x.cpu) = 'all'
GROUP BY x.host, align_ts(x.ts, h.clock_offset_s);
