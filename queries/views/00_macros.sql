-- Scalar macros for user SQL (listed by `forensics queries --views`).
-- bucket(ts, seconds): start of the ts's time bucket of `seconds` (aligned to the epoch).
CREATE OR REPLACE MACRO bucket(ts, seconds) AS
    make_timestamptz(CAST(floor(epoch_us(ts) / (seconds * 1e6)) * seconds * 1e6 AS BIGINT));
-- epoch_s(ts): seconds since the Unix epoch as DOUBLE (microsecond precision).
CREATE OR REPLACE MACRO epoch_s(ts) AS epoch_us(ts) / 1e6;
-- seconds_between(a, b): b - a in seconds (DOUBLE), negative when b is earlier.
CREATE OR REPLACE MACRO seconds_between(a, b) AS (epoch_us(b) - epoch_us(a)) / 1e6;
-- shift_s(ts, seconds): ts plus a (fractional, possibly negative) number of seconds.
CREATE OR REPLACE MACRO shift_s(ts, seconds) AS ts + to_microseconds(CAST(round(seconds * 1e6) AS BIGINT));
-- align_ts(ts, offset_s): ts on the reference clock (ts - offset; a NULL offset means 0).
CREATE OR REPLACE MACRO align_ts(ts, offset_s) AS
    ts - to_microseconds(CAST(round(coalesce(offset_s, 0) * 1e6) AS BIGINT));
-- counter_delta(value, prev): increase of a monotonic counter; a counter that went down was reset
-- (driver reload, port reset) and counted `value` since, as Prometheus' rate() assumes.
CREATE OR REPLACE MACRO counter_delta(value, prev) AS
    CASE WHEN prev IS NULL OR value IS NULL THEN NULL WHEN value >= prev THEN value - prev ELSE value END;
-- per_second(delta, dt_s): delta / dt_s, NULL when dt_s is not positive.
CREATE OR REPLACE MACRO per_second(delta, dt_s) AS CASE WHEN dt_s > 0 THEN delta / dt_s END;
-- within_s(ts, center, seconds): ts lies within +-seconds of center.
CREATE OR REPLACE MACRO within_s(ts, center, seconds) AS
    abs(epoch_us(ts) - epoch_us(center)) <= seconds * 1e6;
-- severity_rank(severity): 2 critical, 1 warning, 0 info (for ORDER BY ... DESC).
CREATE OR REPLACE MACRO severity_rank(severity) AS
    CASE severity WHEN 'critical' THEN 2 WHEN 'warning' THEN 1 WHEN 'info' THEN 0 END;
-- nic_counter_class(counter): what an ethtool -S counter counts, by its name (first match wins):
-- link (link down events, carrier changes), storm (pause storm events), pause (PFC/global pause
-- frames and durations, xon/xoff), drop (discards, drops, out of buffer, missed, FIFO), error (CRC,
-- symbol, FCS, signal integrity, stalls, corrected bits), bytes, packets, or other.
CREATE OR REPLACE MACRO nic_counter_class(counter) AS
    CASE
        WHEN regexp_matches(counter, '(?i)(link_down|carrier|link_up|module_unplug)') THEN 'link'
        WHEN regexp_matches(counter, '(?i)storm') THEN 'storm'
        WHEN regexp_matches(counter, '(?i)(pause|pfc|xon|xoff|flow_control)') THEN 'pause'
        WHEN regexp_matches(counter, '(?i)(discard|drop|out_of_buffer|missed|no_?buf|buffer_overflow|fifo|oversize|if_down)') THEN 'drop'
        WHEN regexp_matches(counter, '(?i)(err|crc|symbol|fcs|align|jabber|fragment|undersize|signal_integrity|stalled|corrected|bad_)') THEN 'error'
        WHEN regexp_matches(counter, '(?i)(bytes|octets)') THEN 'bytes'
        WHEN regexp_matches(counter, '(?i)(packets|pkts|frames|ucast|mcast|bcast|multicast|broadcast|unicast)') THEN 'packets'
        ELSE 'other'
    END;
