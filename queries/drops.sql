-- Drops, discards and errors per host and interface (ethtool -S counters and sar -n EDEV), largest first.
-- @param host VARCHAR = NULL          only this host
-- @param min_total DOUBLE = 1         only counters that increased by at least this much
WITH c AS (
    SELECT n.host, n.iface, n.counter, n.class,
           CAST(sum(n.total) AS DOUBLE) AS total, max(n.peak_per_s) AS peak_per_s,
           align_ts(min(n.first_active), any_value(h.clock_offset_s)) AS first_seen,
           align_ts(max(n.last_active), any_value(h.clock_offset_s)) AS last_seen,
           CAST(sum(n.resets) AS BIGINT) AS resets
    FROM nic_counter_summary n LEFT JOIN hosts h USING (host)
    WHERE n.class IN ('drop', 'error') AND ($host IS NULL OR n.host = $host)
    GROUP BY n.host, n.iface, n.counter, n.class
), s AS (
    SELECT e.host, e.iface, 'sar.' || m.metric AS counter,
           CASE WHEN m.metric LIKE '%drop%' OR m.metric LIKE '%fifo%' THEN 'drop' ELSE 'error' END AS class,
           sum(m.rate * coalesce(e.dt_s, 0) ORDER BY m.rate * coalesce(e.dt_s, 0)) AS total, max(m.rate) AS peak_per_s,
           align_ts(min(e.ts) FILTER (WHERE m.rate > 0), any_value(h.clock_offset_s)) AS first_seen,
           align_ts(max(e.ts) FILTER (WHERE m.rate > 0), any_value(h.clock_offset_s)) AS last_seen,
           0 AS resets
    FROM (SELECT *, (epoch_us(ts) - epoch_us(lag(ts) OVER (PARTITION BY host, iface ORDER BY ts))) / 1e6 AS dt_s
          FROM sar_net_edev WHERE $host IS NULL OR host = $host) e
         LEFT JOIN hosts h ON h.host = e.host,
         LATERAL (VALUES ('rxerr_s', e.rxerr_s), ('txerr_s', e.txerr_s), ('rxdrop_s', e.rxdrop_s),
                         ('txdrop_s', e.txdrop_s), ('rxfifo_s', e.rxfifo_s), ('txfifo_s', e.txfifo_s),
                         ('rxfram_s', e.rxfram_s), ('txcarr_s', e.txcarr_s)) m(metric, rate)
    WHERE m.rate IS NOT NULL
    GROUP BY ALL
)
SELECT * FROM (SELECT * FROM c UNION ALL SELECT * FROM s)
WHERE total >= $min_total OR peak_per_s >= $min_total
ORDER BY total DESC, host, iface, counter;
