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
-- ref_bucket(ts, offset_s, seconds): time_bucket(INTERVAL `seconds` SECOND, align_ts(ts, offset_s)), the
-- start of ts's bucket on the reference clock, in the same bits, by integer arithmetic on the microseconds
-- (time_bucket's default origin for TIMESTAMPTZ, 2000-01-03 00:00:00+00, floored as it floors). The
-- connection's TimeZone is UTC (forensics/db/__init__.py), so the interval arithmetic of align_ts and
-- time_bucket adds plain microseconds: 400,000 random stamps 1906-2096 and around both origins, offsets
-- NULL, +-0, fractional to the half microsecond, widths 1 s to a week, gave the same instants
-- (tests/test_db_views.py). Per row 0.19 against 0.36 CPU s on 5.5 M DCGM samples (time_bucket and the
-- TIMESTAMPTZ - INTERVAL of align_ts go through ICU's calendar). A non-finite ts goes the original way.
CREATE OR REPLACE MACRO ref_bucket(ts, offset_s, seconds) AS
    CASE WHEN isfinite(ts) THEN make_timestamptz(
             (epoch_us(ts) - CAST(round(coalesce(offset_s, 0) * 1e6) AS BIGINT))
             - (((epoch_us(ts) - CAST(round(coalesce(offset_s, 0) * 1e6) AS BIGINT) - 946857600000000)
                 % (CAST(seconds AS BIGINT) * 1000000)) + CAST(seconds AS BIGINT) * 1000000)
               % (CAST(seconds AS BIGINT) * 1000000))
         ELSE time_bucket(to_seconds(seconds), align_ts(ts, offset_s)) END;
-- counter_delta(value, prev): increase of a monotonic counter; a counter that went down was reset
-- (driver reload, port reset) and counted `value` since, as Prometheus' rate() assumes.
CREATE OR REPLACE MACRO counter_delta(value, prev) AS
    CASE WHEN prev IS NULL OR value IS NULL THEN NULL WHEN value >= prev THEN value - prev ELSE value END;
-- per_second(delta, dt_s): delta / dt_s, NULL when dt_s is not positive.
CREATE OR REPLACE MACRO per_second(delta, dt_s) AS CASE WHEN dt_s > 0 THEN delta / dt_s END;
-- int_text(x): x rounded to a whole number, as text (a finding's summary); a value past BIGINT, inf or NaN
-- (a corrupt sample of 1e300 in a file) in %g notation, where round(x)::BIGINT raised a conversion error
-- that lost every finding of the detector.
CREATE OR REPLACE MACRO int_text(x) AS
    CASE WHEN abs(x) < 9.2e18 THEN CAST(round(x) AS BIGINT)::VARCHAR ELSE printf('%.6g', x) END;
-- within_s(ts, center, seconds): ts lies within +-seconds of center.
CREATE OR REPLACE MACRO within_s(ts, center, seconds) AS
    abs(epoch_us(ts) - epoch_us(center)) <= seconds * 1e6;
-- loo_middle(sorted), loo_median(middle, n, k): the median of a group's OTHER rows (leave-one-out),
-- exactly median() over a self-join with them, in linear time where the self-join is quadratic.
-- `sorted`: the group's values ascending without NULLs (list_sort(list(x) FILTER (WHERE x IS NOT NULL)));
-- loo_middle keeps the values around its middle, all loo_median reads; `n`: the group's count(x);
-- `k`: the row's position in `sorted` (rank() OVER (PARTITION BY group ORDER BY x)), NULL when its x is
-- NULL (nothing left out). NULL when no other value is left. (loo_at, loo_median_m: their parts.)
CREATE OR REPLACE MACRO loo_middle(sorted) AS list_slice(sorted, greatest(1, len(sorted) // 2), len(sorted) // 2 + 2);
CREATE OR REPLACE MACRO loo_at(middle, n, k, j) AS
    middle[CASE WHEN j < coalesce(k, n + 1) THEN j ELSE j + 1 END - greatest(1, n // 2) + 1];
CREATE OR REPLACE MACRO loo_median_m(middle, n, k, m) AS
    CASE WHEN m > 0 THEN list_median([loo_at(middle, n, k, (m + 1) // 2), loo_at(middle, n, k, m // 2 + 1)]) END;
CREATE OR REPLACE MACRO loo_median(middle, n, k) AS loo_median_m(middle, n, k, n - CASE WHEN k IS NULL THEN 0 ELSE 1 END);
-- flag_run(flag, part, ord): the episode key of a row whose `flag` is true (NULL on other rows): one
-- value for each run of consecutive flagged rows of the partition `part` (a column, or a row
-- (a, b, ...) of several) in the order `ord`; group the flagged rows by (part, flag_run) to get
-- episodes (consecutive bad windows or intervals). A NULL flag ends a run as false does. The key is
-- the row's position among all rows minus the number of flagged rows up to it: two window functions
-- of one window (one sort, so rows tied on `ord` are in the same order for both), none nested in the
-- other, over the rows as they are (no table macro: filters and joins still push down).
CREATE OR REPLACE MACRO flag_run(flag, part, ord) AS
    CASE WHEN flag THEN row_number() OVER (PARTITION BY part ORDER BY ord)
                        - count(*) FILTER (WHERE flag) OVER (PARTITION BY part ORDER BY ord ROWS UNBOUNDED PRECEDING) END;
-- run_number(part, run): the runs' numbers 1, 2, ... in their order within `part`, in a query grouped
-- by `part`'s columns and run = flag_run(flag, part, ord) (the keys grow along `ord`): what the
-- episode views (gpu_episodes, disk_saturation, iowait_above) call `episode`. A window beside flag_run
-- over the same `part` row and `ord` (their next sample's time) shares its sort: rows tied on `ord`
-- (two sar files reporting the same second) are then in one order for all of them.
CREATE OR REPLACE MACRO run_number(part, run) AS row_number() OVER (PARTITION BY part ORDER BY run);
-- fixed_sum(x), fixed_avg(x): aggregates: the sum and the mean of the doubles x, in the same bits whatever
-- order DuckDB's threads meet the rows in, without sorting them. A float sum's last bits depend on the order
-- of its terms (tests/test_query_determinism.py); sum(x ORDER BY x) fixes the order by sorting each group's
-- rows, once per aggregate (four of them made det_gpu_buckets cost 1.3 CPU s on 1.8 M GPU samples). Here
-- each value is split into a multiple of 2^-20 and a remainder (|r| <= 2^-21, exact: Sterbenz's lemma), the
-- remainder counted in units of 2^-80; both parts add as 128-bit integers, exactly and in any order, and
-- become doubles once: the exact sum of the values (a value under 2^-27 in magnitude is taken to the
-- nearest 2^-80, 8e-25), rounded to about one unit in its last place, where a sorted sum of doubles rounds
-- at each term. Values of magnitude 2^60 (1.2e18) or more, infinities and NaN would overflow the integers:
-- those are added as doubles in value order (sum(x ORDER BY x) of just them: NaN or infinity gives what
-- avg() gives). NULL for a group without a value, as sum()/avg(). Whole numbers (utilisation, clocks) add
-- exactly in doubles too: there the mean is bit for bit avg(x ORDER BY x). A FILTER is written
-- fixed_avg(CASE WHEN cond THEN x END).
CREATE OR REPLACE MACRO fixed_sum(x) AS
    CASE WHEN count(x) > 0 THEN
        coalesce(sum(CASE WHEN abs(x) < 2^60 THEN round(x * 2^20)::HUGEINT END)::DOUBLE / 2^20
                 + sum(CASE WHEN abs(x) < 2^60 THEN round((x - round(x * 2^20) / 2^20) * 2^80)::HUGEINT END)::DOUBLE / 2^80, 0)
        + coalesce(sum(x ORDER BY x) FILTER (WHERE NOT abs(x) < 2^60), 0) END;
CREATE OR REPLACE MACRO fixed_avg(x) AS fixed_sum(x) / count(x);
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
-- nic_counter_signal(counter): the NIC signals detection, the HTML report and the Perfetto export
-- read (one definition for all of them; finer than nic_counter_class, whose classes it refines):
-- pause_frames (PFC/global pause frames; not xon, transitions or durations), pause_time_us (time
-- paused, microseconds), storm_event (the NIC's pause storm watchdog), drops (discards, out of
-- buffer, missed; not XDP/XSK redirects or page-cache events, which are not faults), errors (CRC,
-- symbol, FCS, alignment, length: corrupted frames; not FEC-corrected bits), link_down, bytes (port
-- byte totals); NULL for every other counter.
CREATE OR REPLACE MACRO nic_counter_signal(counter) AS
    CASE
        WHEN regexp_matches(counter, 'pause_storm') THEN 'storm_event'
        WHEN regexp_matches(counter, '(pause_duration|pfc_pri[0-9]+_(rx|tx)_duration_us|pause_time)') THEN 'pause_time_us'
        WHEN regexp_matches(counter, '(pause|pxoff|xoff|pfc)') AND NOT regexp_matches(counter, '(transition|xon|_duration|ena_frames_pri[0-9]+$)')
          THEN 'pause_frames'
        WHEN regexp_matches(counter, '(pfc_ena_frames_pri[0-9]+)') THEN 'pause_frames'
        WHEN regexp_matches(counter, '(discard|drop|out_of_buffer|missed_err|no_buffer|fifo_err|buffer_overflow)')
             AND NOT regexp_matches(counter, '(xdp|xsk|_wqe_err|^rx_cache)') THEN 'drops'
        WHEN regexp_matches(counter, '(crc_err|symbol_err|fcs_err|align_err|length_err|in_range_len)') THEN 'errors'
        WHEN regexp_matches(counter, '(link_down_events|carrier_changes|link_down_count)') THEN 'link_down'
        WHEN counter IN ('tx_bytes_phy', 'tx_bytes', 'rx_bytes_phy', 'rx_bytes', 'rx_octets', 'tx_octets',
                         'rx_bytes_nic', 'tx_bytes_nic') THEN 'bytes'
    END;
-- nic_counter_dir(counter): 'rx' or 'tx' as the counter's name says, else NULL.
CREATE OR REPLACE MACRO nic_counter_dir(counter) AS
    CASE WHEN regexp_matches(counter, '^(rx|.*_rx_|.*_rx$)') THEN 'rx'
         WHEN regexp_matches(counter, '^(tx|.*_tx_|.*_tx$)') THEN 'tx' END;
-- nic_counter_prio(counter): the priority (traffic class) a counter names ('0'..'7'), else 'global'.
CREATE OR REPLACE MACRO nic_counter_prio(counter) AS
    coalesce(nullif(regexp_extract(counter, '(?:prio|pri|priority_|pb_|cos)([0-9])', 1), ''), 'global');
-- torchrun_rank(prefix, rank): `rank` when the line's launcher prefix is torchrun's "[rankN]:" (a
-- global rank), else NULL (a rank the line itself names may be a rank inside a sub-group).
CREATE OR REPLACE MACRO torchrun_rank(prefix, rank) AS
    CASE WHEN regexp_matches(coalesce(prefix, ''), '\[rank[0-9]+\]:') THEN rank END;
