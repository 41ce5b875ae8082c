-- gpu_signals: per GPU and sample on the aligned timeline, the GPU signals the HTML report and the
-- Perfetto export chart (utilisation, SM clock, temperature, power; samples of one GPU at the same
-- moment averaged). Samples without a time or a GPU index are left out.
CREATE OR REPLACE VIEW gpu_signals AS
SELECT x.host, x.gpu, align_ts(x.ts, h.clock_offset_s) AS ts_aligned,
       avg(x.util_pct ORDER BY x.util_pct) AS util_pct, avg(x.sm_clock_mhz ORDER BY x.sm_clock_mhz) AS sm_clock_mhz, avg(x.temp_c ORDER BY x.temp_c) AS temp_c,
       avg(x.power_w ORDER BY x.power_w) AS power_w
FROM gpu_samples x LEFT JOIN hosts h USING (host)
WHERE x.ts IS NOT NULL AND x.gpu IS NOT NULL
GROUP BY x.host, x.gpu, align_ts(x.ts, h.clock_offset_s);
