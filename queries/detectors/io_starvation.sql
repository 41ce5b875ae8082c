-- kind: io_starvation
-- severity: warning
-- locality: host
-- layer: storage
-- root_rank: 22
-- caused_by: none
-- confirm: iostat -xz 1; sar -u 1; py-spy dump --pid <dataloader pid>
-- remediation: The dataloader is starving the GPUs: increase DataLoader num_workers, pin memory, prefetch, and cache the dataset on local NVMe instead of shared storage.
-- description: dataloader/storage starvation: GPUs mostly idle while reads queue on a disk, report by report at the host's own sampling interval
-- source: GPU side: NVML's utilization.gpu is the percent of time over the sample period during which a kernel ran (nvmlUtilization_t, docs.nvidia.com/deploy/nvml-api), so under 50 the GPUs wait longer than they compute. Disk side: the USE method's storage saturation is a queue, iostat "avgqu-sz > 1" (Gregg, brendangregg.com/USEmethod/use-linux.html); iostat(1) says %util near 100 is saturation only for devices serving requests serially, not for SSDs/NVMe or RAID, so %util is evidence, not the criterion; the dataloader reads, so the queue counted is the reads' own, r/s x r_await (Little's law; r_await includes the time in queue, iostat(1)): at least one read always in flight means the reader is waiting on the device at every moment, on a serial device and on a parallel one. A checkpoint writes (its GPUs idle by design while state is saved) and %iowait is idle time with any I/O outstanding, reads or writes (sar(1)): neither is the criterion. Duration: judged per unit of the host's measured report interval, at least 10 s (several training steps, so one step's phase or a dataloader's pulses do not decide; 10 s sampling is judged report by report); a finding needs two consecutive units (one may be a glitch), gaps counted in units as gpu_throttle does
-- param: max_gpu_util = 50   host GPU utilisation (%) under which the GPUs wait longer than they compute
-- param: min_read_queue = 1   reads in flight on the busiest device (r/s x r_await / 1000) at or above which the reader always waits on it
-- param: min_units = 2   consecutive units (the report interval, at least 10 s) showing it
-- param: gap_intervals = 2.5   starving units further apart than this many units split an episode
WITH b AS (
  SELECT *, CASE WHEN lag(k) OVER o IS NULL OR k - lag(k) OVER o > $gap_intervals THEN 1 ELSE 0 END AS s
  FROM det_host_reports
  WHERE gpu_util_pct < $max_gpu_util AND read_queue >= $min_read_queue
  WINDOW o AS (PARTITION BY host ORDER BY k)
), i AS (SELECT *, sum(s) OVER (PARTITION BY host ORDER BY k ROWS UNBOUNDED PRECEDING) AS ep FROM b),
e AS (
  SELECT host, ep, min(ts) - to_seconds(any_value(interval_s)) AS start, max(ts) AS "end", count(*) AS units,
         any_value(interval_s) AS interval_s, avg(gpu_util_pct ORDER BY gpu_util_pct) AS gpu_util, avg(disk_util_max_pct ORDER BY disk_util_max_pct) AS disk_util,
         avg(read_queue ORDER BY read_queue) AS read_queue, avg(read_await_ms ORDER BY read_await_ms) AS await_ms, avg(cpu_iowait_pct ORDER BY cpu_iowait_pct) AS iowait,
         avg(cpu_util_pct ORDER BY cpu_util_pct) AS cpu_util, mode(device) AS device, avg(read_kb_s ORDER BY read_kb_s) AS read_kb_s
  FROM i GROUP BY host, ep
  HAVING count(*) >= $min_units
)
SELECT host, coalesce(device, 'storage') AS subject, start, "end",
       least(1.0, 0.6 + epoch("end" - start) / 1200) * CASE WHEN units < 3 * $min_units THEN 0.8 ELSE 1 END AS score,
       'GPUs on ' || host || ' average ' || int_text(gpu_util) || '% busy while reads queue on ' || coalesce(device, 'the disk')
         || ' (' || round(read_queue, 1) || ' in flight' || coalesce(', r_await ' || round(await_ms, 1) || ' ms', '')
         || coalesce(', ' || int_text(read_kb_s / 1024) || ' MB/s read', '') || coalesce(', ' || int_text(disk_util) || '% utilised', '')
         || ')' || coalesce(', iowait ' || round(iowait, 1) || '%', '') || coalesce(', CPU ' || int_text(cpu_util) || '% busy', '')
         || ' for ' || int_text(epoch("end" - start)) || ' s (' || units || ' x ' || round(interval_s, 1) || ' s'
         || CASE WHEN units < 3 * $min_units THEN ': few, lower confidence' ELSE '' END || '): the dataloader is starving the GPUs' AS summary,
       to_json({gpu_util_pct: round(gpu_util, 1), reads_in_flight: round(read_queue, 2), r_await_ms: round(await_ms, 2),
                read_kb_s: round(read_kb_s), disk_util_pct: round(disk_util, 1), iowait_pct: round(iowait, 1),
                cpu_util_pct: round(cpu_util, 1), device: device, units: units, unit_s: round(interval_s, 2)})::VARCHAR AS evidence
FROM e ORDER BY start
