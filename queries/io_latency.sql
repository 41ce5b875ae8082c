-- Disk IO latency, queue depth, throughput and utilisation per host and device (iostat/sar), worst first.
-- @param host VARCHAR = NULL          only this host
-- @param min_util_pct DOUBLE = 0      only devices whose peak utilisation reaches this
SELECT d.host, d.device, d.source, count(*) AS samples,
       min(align_ts(d.ts, h.clock_offset_s)) AS first_sample, max(align_ts(d.ts, h.clock_offset_s)) AS last_sample,
       round(avg(d.util_pct ORDER BY d.util_pct), 1) AS avg_util_pct, max(d.util_pct) AS max_util_pct,
       round(avg(coalesce(d.r_await_ms, d.await_ms) ORDER BY coalesce(d.r_await_ms, d.await_ms)), 2) AS avg_r_await_ms, max(coalesce(d.r_await_ms, d.await_ms)) AS max_r_await_ms,
       round(avg(coalesce(d.w_await_ms, d.await_ms) ORDER BY coalesce(d.w_await_ms, d.await_ms)), 2) AS avg_w_await_ms, max(coalesce(d.w_await_ms, d.await_ms)) AS max_w_await_ms,
       round(avg(d.aqu_sz ORDER BY d.aqu_sz), 2) AS avg_queue, max(d.aqu_sz) AS max_queue,
       round(avg(coalesce(d.rkb_s, d.kb_read_s) ORDER BY coalesce(d.rkb_s, d.kb_read_s)) / 1024, 1) AS avg_read_mb_s,
       round(avg(coalesce(d.wkb_s, d.kb_wrtn_s) ORDER BY coalesce(d.wkb_s, d.kb_wrtn_s)) / 1024, 1) AS avg_write_mb_s,
       count(*) FILTER (WHERE d.util_pct >= 90) AS saturated_samples
FROM disk_io d LEFT JOIN hosts h ON h.host = d.host
WHERE NOT coalesce(d.since_boot, false) AND ($host IS NULL OR d.host = $host)
GROUP BY d.host, d.device, d.source
HAVING coalesce(max(d.util_pct), 0) >= $min_util_pct
ORDER BY max_r_await_ms DESC NULLS LAST, max_util_pct DESC NULLS LAST, d.host, d.device;
