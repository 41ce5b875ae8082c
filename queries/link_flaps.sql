-- Link down/up changes per host and interface: kernel messages and link-down counters, with flap counts.
-- @param host VARCHAR = NULL          only this host
SELECT host, subject AS iface,
       count(*) FILTER (WHERE kind IN ('link_down')) AS kernel_link_down,
       count(*) FILTER (WHERE kind = 'link_up') AS kernel_link_up,
       count(*) FILTER (WHERE kind = 'nic_link_down_counter') AS counter_increments,
       min(ts_aligned) AS first_change, max(ts_aligned) AS last_change,
       list(kind || '@' || strftime(ts_aligned, '%H:%M:%S.%g') ORDER BY ts_aligned) AS changes
FROM events
WHERE kind IN ('link_down', 'link_up', 'nic_link_down_counter') AND ($host IS NULL OR host = $host)
GROUP BY host, subject
ORDER BY kernel_link_down + counter_increments DESC, host, iface;
