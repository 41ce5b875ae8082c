-- Per-host step-time proxies: NIC traffic bursts (one per all-reduce step), throughput, GPU busy, power and clocks vs the cluster median.
-- @param since TIMESTAMPTZ = NULL     only from this time (aligned)
-- @param until TIMESTAMPTZ = NULL     only before this time (aligned)
-- A data-parallel job moves the same bytes per step on every host: the NIC transmit rate rises
-- once per step (a burst = the summed rate crossing its median upwards), so window / bursts
-- estimates the step time a host saw, and throughput relative to the median shows slow hosts.
WITH bytes AS (
    -- the best byte counter each interface has: the physical port, else RDMA, else the netdev counter
    SELECT host, iface, counter FROM (
        SELECT host, iface, counter,
               row_number() OVER (PARTITION BY host, iface ORDER BY
                   CASE counter WHEN 'tx_bytes_phy' THEN 0 WHEN 'tx_vport_rdma_unicast_bytes' THEN 1
                                WHEN 'tx_bytes' THEN 2 ELSE 3 END) AS k
        FROM (SELECT DISTINCT host, iface, counter FROM nic_counter_summary
              WHERE queue IS NULL AND counter IN ('tx_bytes_phy', 'tx_vport_rdma_unicast_bytes', 'tx_bytes'))
    ) WHERE k = 1
), tx AS (
    SELECT r.host, r.ts_aligned AS t, sum(r.rate_per_s ORDER BY r.rate_per_s) AS tx_bytes_s, sum(r.dt_s ORDER BY r.dt_s) / count(*) AS dt_s
    FROM nic_rates r JOIN bytes USING (host, iface, counter)
    WHERE r.class = 'bytes' AND r.counter IN ('tx_bytes_phy', 'tx_vport_rdma_unicast_bytes', 'tx_bytes')
      AND r.queue IS NULL AND ($since IS NULL OR r.ts_aligned >= $since) AND ($until IS NULL OR r.ts_aligned < $until)
    GROUP BY r.host, r.ts_aligned
), med AS (
    SELECT host, median(tx_bytes_s) AS m FROM tx GROUP BY host
), bursts AS (
    SELECT tx.host, count(*) FILTER (WHERE tx.tx_bytes_s > med.m AND coalesce(tx.prev, 0) <= med.m) AS bursts,
           seconds_between(min(tx.t), max(tx.t)) AS window_s, avg(tx.tx_bytes_s ORDER BY tx.tx_bytes_s) AS tx_bytes_s
    FROM (SELECT *, lag(tx_bytes_s) OVER (PARTITION BY host ORDER BY t) AS prev FROM tx) tx JOIN med USING (host)
    GROUP BY tx.host
), gpu AS (
    SELECT s.host, avg(s.util_pct ORDER BY s.util_pct) AS util_pct, avg(s.power_w ORDER BY s.power_w) AS power_w, avg(s.sm_clock_mhz ORDER BY s.sm_clock_mhz) AS sm_clock_mhz
    FROM gpu_samples s LEFT JOIN hosts h USING (host)
    WHERE ($since IS NULL OR align_ts(s.ts, h.clock_offset_s) >= $since)
      AND ($until IS NULL OR align_ts(s.ts, h.clock_offset_s) < $until)
    GROUP BY s.host
), per AS (
    SELECT host, b.bursts, b.window_s,
           CASE WHEN b.bursts > 1 THEN b.window_s / b.bursts END AS est_step_s,
           b.tx_bytes_s, g.util_pct, g.power_w, g.sm_clock_mhz
    FROM hosts LEFT JOIN bursts b USING (host) LEFT JOIN gpu g USING (host)
    WHERE b.host IS NOT NULL OR g.host IS NOT NULL
)
SELECT host, bursts, round(window_s, 1) AS window_s, round(est_step_s, 3) AS est_step_s,
       round(est_step_s / nullif(median(est_step_s) OVER (), 0), 3) AS step_vs_median,
       round(tx_bytes_s / 1e9, 3) AS tx_gb_s,
       round(tx_bytes_s / nullif(median(tx_bytes_s) OVER (), 0), 3) AS tx_vs_median,
       round(util_pct, 1) AS gpu_util_pct, round(power_w, 1) AS gpu_power_w,
       round(power_w / nullif(median(power_w) OVER (), 0), 3) AS power_vs_median,
       round(sm_clock_mhz) AS sm_clock_mhz,
       round(sm_clock_mhz / nullif(median(sm_clock_mhz) OVER (), 0), 3) AS clock_vs_median
FROM per
ORDER BY step_vs_median DESC NULLS LAST, tx_vs_median NULLS LAST, host;
