-- Shared by _host_reports.sql and _host_windows.sql: the whole-host rows of cpu_util (cpu = 'all':
-- sar -u, iostat's avg-cpu, the 'all' line of sar -P ALL / mpstat) that have a time and are not
-- since-boot averages, read once here instead of once per reader (a sar -P ALL capture is mostly
-- per-CPU rows: 0.48 M of 5.6 M rows on 64 nodes x 224 CPUs x 1 h).
CREATE OR REPLACE TEMP TABLE det_cpu_all AS
SELECT host, ts, idle_pct, iowait_pct, steal_pct FROM cpu_util
WHERE ts IS NOT NULL AND cpu = 'all' AND NOT coalesce(since_boot, false);
