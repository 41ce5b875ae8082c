-- Every NIC counter on every host and interface: total increase, mean and peak rate, resets; most active first.
-- @param host VARCHAR = NULL          only this host
-- @param counter_like VARCHAR = %     only counters matching this LIKE pattern (e.g. %pause%)
-- @param per_queue BOOLEAN = false    one row per queue (default: per-queue counters summed, scope 'queues')
-- `scope` is 'port' for counters printed once per interface and 'queues' for the sum of per-queue
-- counters of the same name (rx0_packets, rx1_packets, ... -> rx_packets), never mixed; peak_per_s
-- is the highest rate of one counter in one interval. Reads nic_counter_summary (one row per counter).
SELECT host, iface, class, counter, CASE WHEN queue IS NULL THEN 'port' ELSE 'queues' END AS scope,
       CASE WHEN $per_queue THEN queue END AS queue, count(DISTINCT queue) AS queues,
       sum(CAST(total AS HUGEINT)) AS total,  -- (HUGEINT: totals of untrusted counters sum past BIGINT, where a cast raised)
       round(sum(total) / nullif(seconds_between(min(first_sample), max(last_sample)), 0), 3) AS mean_per_s,
       max(peak_per_s) AS peak_per_s, CAST(sum(resets) AS BIGINT) AS resets,
       min(first_sample) AS first_sample, max(last_sample) AS last_sample
FROM nic_counter_summary
WHERE ($host IS NULL OR host = $host) AND counter LIKE $counter_like
GROUP BY host, iface, class, counter, queue IS NULL, CASE WHEN $per_queue THEN queue END
ORDER BY total DESC, host, iface, counter, queue;
