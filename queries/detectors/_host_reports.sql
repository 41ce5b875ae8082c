-- Shared by io_starvation and cpu_saturation: per host x sysstat report (iostat -x, sar -u, sar -q),
-- with the GPU utilisation of the same moment, at the host's own sampling interval (not 30 s windows:
-- at 10 s sampling a 20 s fault is two reports, and a 30 s window would average it away).
-- The grid: the host's shortest measured report interval (median spacing of its disk and of its CPU
-- reports), at least 10 s; every sample (disk, CPU, run queue, each GPU's) goes to the nearest grid
-- point and is averaged there, so series stamped a few ms or a second apart on one host meet, and a
-- host's clock skew does not matter.
-- Reads in flight (Little's law, L = lambda x W): r/s x r_await, iostat's aqu-sz for the reads alone;
-- where only a combined figure exists (old iostat await, sar -d aqu-sz) it counts when reads carry most
-- of the bytes. CPU utilisation as the USE method counts it: every field but %idle and %iowait
-- (%iowait is idle time with an I/O outstanding; %steal is time the hypervisor took: busy for us).
CREATE OR REPLACE TEMP TABLE det_host_reports AS
WITH dts AS (
  SELECT host, epoch(ts) AS t FROM disk_io WHERE ts IS NOT NULL AND NOT coalesce(since_boot, false) GROUP BY ALL
), cts AS (
  SELECT host, epoch(ts) AS t FROM det_cpu_all GROUP BY ALL  -- (queries/detectors/_host_cpu.sql)
), sp AS (  -- the judging unit: the report interval, at least 10 s (several training steps, so one step's
  -- phase, or a dataloader handing out batches in pulses, does not flicker the verdict at 1 s sampling)
  SELECT host, greatest(min(iv), 10.0) AS iv, min(t0) AS t0 FROM (
    SELECT host, median(d) AS iv, min(t) AS t0 FROM (SELECT host, t, t - lag(t) OVER (PARTITION BY host ORDER BY t) AS d FROM dts)
    GROUP BY host
    UNION ALL
    SELECT host, median(d), min(t) FROM (SELECT host, t, t - lag(t) OVER (PARTITION BY host ORDER BY t) AS d FROM cts)
    GROUP BY host)
  WHERE iv > 0 GROUP BY host
), dk AS (
  SELECT host, k, max(rq) AS read_queue, arg_max(device, rq) AS device, arg_max(ra, rq) AS read_await_ms,
         arg_max(rkb, rq) AS read_kb_s, max(u) AS disk_util_max_pct, max(wq) AS write_queue
  FROM (
    SELECT d.host, round((epoch(d.ts) - sp.t0) / sp.iv) AS k, d.device, d.util_pct AS u,
           coalesce(d.rkb_s, d.kb_read_s, 0) AS rkb,
           coalesce(d.rkb_s, d.kb_read_s, 0) >= coalesce(d.wkb_s, d.kb_wrtn_s, 0) AS reads_dominate,
           CASE WHEN d.r_await_ms IS NOT NULL OR reads_dominate THEN coalesce(d.r_await_ms, d.await_ms) END AS ra,
           coalesce(d.r_s * d.r_await_ms / 1000,
                    CASE WHEN reads_dominate THEN coalesce(d.r_s * d.await_ms / 1000, d.aqu_sz) END, 0) AS rq,
           coalesce(d.w_s * d.w_await_ms / 1000, 0) AS wq
    FROM disk_io d JOIN sp USING (host) WHERE d.ts IS NOT NULL AND NOT coalesce(d.since_boot, false))
  GROUP BY ALL
), c AS (
  SELECT c.host, round((epoch(c.ts) - sp.t0) / sp.iv) AS k,
         fixed_avg(100 - c.idle_pct - coalesce(c.iowait_pct, 0)) AS cpu_util_pct, fixed_avg(c.iowait_pct) AS cpu_iowait_pct,
         fixed_avg(c.steal_pct) AS cpu_steal_pct
  FROM det_cpu_all c JOIN sp USING (host) WHERE c.idle_pct IS NOT NULL GROUP BY ALL
), q AS (
  SELECT q.host, round((epoch(q.ts) - sp.t0) / sp.iv) AS k, max(q.runq_sz) AS runq, max(q.blocked) AS blocked
  FROM sar_queue q JOIN sp USING (host) WHERE q.ts IS NOT NULL GROUP BY ALL
), g AS (
  SELECT g.host, round((epoch(g.ts) - sp.t0) / sp.iv) AS k, fixed_avg(g.util_pct) AS gpu_util_pct, count(DISTINCT g.gpu) AS gpus
  FROM gpu_samples g JOIN sp USING (host) WHERE g.ts IS NOT NULL AND g.util_pct IS NOT NULL GROUP BY ALL
), ncpu AS (  -- logical CPUs: per-CPU rows of sar -P ALL / mpstat, else numactl -H's node lists; 0 (numactl
  -- showing only CPU-less nodes: HBM, CXL memory) is no count
  SELECT host, nullif(max(n), 0) AS ncpu FROM (
    SELECT host, count(DISTINCT cpu) AS n FROM cpu_util WHERE cpu <> 'all' GROUP BY host
    UNION ALL SELECT host, sum(len(cpus)) FROM numa_nodes GROUP BY host) GROUP BY host
), keys AS (
  SELECT host, k FROM dk UNION SELECT host, k FROM c
)
SELECT keys.host, keys.k, to_timestamp(sp.t0 + keys.k * sp.iv) AS ts, sp.iv AS interval_s, ncpu.ncpu,
       g.gpu_util_pct, g.gpus, dk.* EXCLUDE (host, k), c.* EXCLUDE (host, k), q.* EXCLUDE (host, k)
FROM keys JOIN sp USING (host) LEFT JOIN g USING (host, k) LEFT JOIN dk USING (host, k) LEFT JOIN c USING (host, k)
LEFT JOIN q USING (host, k) LEFT JOIN ncpu USING (host);
