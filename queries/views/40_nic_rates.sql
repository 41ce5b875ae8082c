-- nic_rates: per-interval rates of every ethtool -S counter, per host/iface/counter/queue: one row
-- per pair of consecutive samples (ts_start, ts], delta = increase (a counter that went down was
-- reset: delta = its new value, reset = true, never a negative rate), rate_per_s = delta / dt_s.
-- ts_aligned is ts on the reference clock (see hosts.clock_offset_s).
CREATE OR REPLACE VIEW nic_rates AS
WITH s AS (
    SELECT host, iface, counter, queue, raw_name, ts, value, file,
           lag(ts) OVER w AS ts_start,
           lag(value) OVER w AS prev
    FROM raw.nic_counters
    WHERE ts IS NOT NULL AND value IS NOT NULL
    WINDOW w AS (PARTITION BY host, iface, counter, queue, raw_name ORDER BY ts)
)
SELECT s.host, s.iface, s.counter, s.queue, s.raw_name,
       s.ts_start, s.ts, align_ts(s.ts, c.clock_offset_s) AS ts_aligned,
       (epoch_us(s.ts) - epoch_us(s.ts_start)) / 1e6 AS dt_s,
       s.value,
       counter_delta(s.value, s.prev) AS delta,
       per_second(counter_delta(s.value, s.prev), (epoch_us(s.ts) - epoch_us(s.ts_start)) / 1e6) AS rate_per_s,
       s.value < s.prev AS reset,
       s.file
FROM s
LEFT JOIN raw.clock_offsets c ON c.host = s.host
WHERE s.prev IS NOT NULL;
