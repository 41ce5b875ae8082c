-- nic_rates: per-interval rates of every ethtool -S counter, per host/iface/counter/queue: one row
-- per pair of consecutive samples (ts_start, ts], delta = increase (a counter that went down was
-- reset: delta = its new value, reset = true, never a negative rate), rate_per_s = delta / dt_s.
-- class = nic_counter_class(counter) (link, storm, pause, drop, error, bytes, packets, other):
-- filter on it (WHERE class = 'pause') to read only those counters of a big bundle.
-- ts_aligned is ts on the reference clock (see hosts.clock_offset_s); file/line_no: the sample's line.
-- (raw.nic_interval_rows is the definition; forensics.db.derived caches it as Parquet for big
-- bundles, sorted by class and counter so that such filters skip the rest.)
CREATE OR REPLACE VIEW raw.nic_interval_rows AS
WITH s AS (
    SELECT host, iface, counter, queue, raw_name, ts, ts_quality, value, file, line_no,
           lag(ts) OVER w AS ts_start,
           lag(value) OVER w AS prev
    FROM raw.nic_counters
    WHERE ts IS NOT NULL AND value IS NOT NULL
    WINDOW w AS (PARTITION BY host, iface, counter, queue, raw_name ORDER BY ts, line_no)
)
SELECT host, iface, nic_counter_class(counter) AS class, counter, queue, raw_name, ts,
       (epoch_us(ts) - epoch_us(ts_start)) / 1e6 AS dt_s,
       value,
       counter_delta(value, prev) AS delta,
       value < prev AS reset,
       ts_quality, file, line_no
FROM s
WHERE prev IS NOT NULL;

CREATE OR REPLACE VIEW raw.nic_intervals AS
SELECT host, iface, class, counter, queue, raw_name,
       shift_s(ts, -dt_s) AS ts_start, ts, dt_s, value, delta, per_second(delta, dt_s) AS rate_per_s, reset,
       ts_quality, file, line_no
FROM raw.nic_interval_rows;

CREATE OR REPLACE VIEW nic_rates AS
SELECT i.host, i.iface, i.class, i.counter, i.queue, i.raw_name, i.ts_start, i.ts, align_ts(i.ts, c.clock_offset_s) AS ts_aligned,
       i.dt_s, i.value, i.delta, i.rate_per_s, i.reset, i.ts_quality, i.file, i.line_no
FROM raw.nic_intervals i
LEFT JOIN raw.clock_offsets c ON c.host = i.host;
