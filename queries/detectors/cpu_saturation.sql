-- kind: cpu_saturation
-- severity: warning
-- locality: host
-- layer: host_cpu
-- root_rank: 23
-- caused_by: none
-- confirm: sar -u 1; sar -q 1; top -H -p <pid>; perf top
-- remediation: Host CPU is saturated: move preprocessing to the GPU (DALI), add dataloader workers only if cores are free, check for competing processes and CPU governor/frequency.
-- description: host CPU saturated (little idle, long run queue) while the GPUs are underfed
-- source: set by hand against the simulator; issue 16 item 2 grounds these thresholds in physics and vendor figures
-- param: min_cpu_busy = 90   CPU busy (100 - %idle) that counts as saturated
-- param: max_gpu_util = 60   only while GPUs are below this utilisation (%)
-- param: min_windows = 3   consecutive 30 s windows (a third of a short capture, at least 2: a 3-minute capture still gets a verdict, its confidence stated)
WITH w AS (
  SELECT *, (cpu_busy_pct >= $min_cpu_busy AND coalesce(gpu_util_pct, 0) < $max_gpu_util) AS bad FROM det_host_windows
  WHERE cpu_busy_pct IS NOT NULL
), m AS (
  SELECT *, CASE WHEN bad AND NOT coalesce(lag(bad) OVER o, false) THEN 1 ELSE 0 END AS s FROM w WINDOW o AS (PARTITION BY host ORDER BY w)
), i AS (SELECT *, sum(s) OVER (PARTITION BY host ORDER BY w ROWS UNBOUNDED PRECEDING) AS ep,
                count(*) OVER (PARTITION BY host) AS cap_windows FROM m),
e AS (
  SELECT host, ep, min(w) AS start, max(w) + INTERVAL 30 SECOND AS "end", count(*) AS windows,
         avg(cpu_busy_pct) AS cpu_busy, avg(cpu_iowait_pct) AS iowait, avg(gpu_util_pct) AS gpu_util, avg(runq) AS runq
         , any_value(cap_windows) AS cap_windows
  FROM i WHERE bad GROUP BY host, ep
  HAVING count(*) >= least($min_windows, greatest(2, floor(any_value(cap_windows) / 3)))
)
SELECT host, 'CPU' AS subject, start, "end", least(1.0, 0.55 + windows / 40) * CASE WHEN windows < $min_windows THEN 0.8 ELSE 1 END AS score,
       'CPUs on ' || host || ' ' || round(cpu_busy)::BIGINT || '% busy' || coalesce(' (iowait ' || round(iowait, 1) || '%)', '')
         || coalesce(', run queue ' || round(runq)::BIGINT, '') || ' while GPUs average '
         || coalesce(round(gpu_util)::BIGINT || '%', '?') || ' for ' || windows * 30 || ' s' || CASE WHEN windows < $min_windows THEN ' (a short capture of '
         || cap_windows * 30 || ' s: lower confidence)' ELSE '' END AS summary,
       to_json({cpu_busy_pct: round(cpu_busy, 1), iowait_pct: round(iowait, 1), gpu_util_pct: round(gpu_util, 1),
                run_queue: runq, windows: windows})::VARCHAR AS evidence
FROM e ORDER BY start
