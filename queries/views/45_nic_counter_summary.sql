-- nic_counter_summary: one row per host/iface/counter/queue/raw_name over the whole capture:
-- intervals, total increase, mean rate over the span, peak interval rate, resets, first and last
-- sample, first and last interval in which it increased (host clock), and last value. Answers "which counters moved, where, how much" without reading every
-- interval. (raw.nic_summary is the definition; forensics.db.derived caches it for big bundles.)
CREATE OR REPLACE VIEW raw.nic_summary AS
SELECT host, iface, class, counter, queue, raw_name,
       count(*) AS intervals,
       sum(CAST(delta AS HUGEINT)) AS total,  -- (HUGEINT: a sum of untrusted BIGINT deltas passes 9.2e18, where CAST AS BIGINT raised)
       sum(delta) / nullif((epoch_us(max(ts)) - epoch_us(min(ts_start))) / 1e6, 0) AS mean_per_s,
       max(rate_per_s) AS peak_per_s,
       count(*) FILTER (WHERE reset) AS resets,
       count(*) FILTER (WHERE delta > 0) AS active_intervals,
       min(ts_start) AS first_sample, max(ts) AS last_sample,
       min(ts) FILTER (WHERE delta > 0) AS first_active, max(ts) FILTER (WHERE delta > 0) AS last_active,
       arg_max(value, {'ts': ts, 'line_no': line_no}) AS last_value
FROM raw.nic_intervals
GROUP BY host, iface, class, counter, queue, raw_name;

CREATE OR REPLACE VIEW nic_counter_summary AS SELECT * FROM raw.nic_summary;
