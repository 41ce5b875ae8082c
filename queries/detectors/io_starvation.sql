-- kind: io_starvation
-- severity: warning
-- locality: host
-- layer: storage
-- root_rank: 22
-- caused_by: none
-- confirm: iostat -xz 1; sar -u 1; py-spy dump --pid <dataloader pid>
-- remediation: The dataloader is starving the GPUs: increase DataLoader num_workers, pin memory, prefetch, and cache the dataset on local NVMe instead of shared storage.
-- description: dataloader/storage starvation: GPUs mostly idle while the disk is saturated (util, await) or the CPUs wait on IO
-- source: set by hand against the simulator; issue 16 item 2 grounds these thresholds in physics and vendor figures
-- param: max_gpu_util = 50   GPU utilisation (host average, %) below which GPUs are starving
-- param: min_disk_util = 85   disk utilisation (%) that counts as saturated
-- param: min_await_ms = 20   or a latency this high
-- param: min_iowait = 20   or this much CPU iowait (%)
-- param: min_windows = 3   consecutive 30 s windows (a third of a short capture, at least 2: a 3-minute capture still gets a verdict, its confidence stated)
WITH w AS (
  SELECT *, (gpu_util_pct < $max_gpu_util AND (disk_util_max_pct >= $min_disk_util OR disk_await_max_ms >= $min_await_ms
             OR cpu_iowait_pct >= $min_iowait)) AS bad
  FROM det_host_windows WHERE gpu_util_pct IS NOT NULL
), m AS (
  SELECT *, CASE WHEN bad AND NOT coalesce(lag(bad) OVER o, false) THEN 1 ELSE 0 END AS s FROM w WINDOW o AS (PARTITION BY host ORDER BY w)
), i AS (SELECT *, sum(s) OVER (PARTITION BY host ORDER BY w ROWS UNBOUNDED PRECEDING) AS ep,
                count(*) OVER (PARTITION BY host) AS cap_windows FROM m),
e AS (
  SELECT host, ep, min(w) AS start, max(w) + INTERVAL 30 SECOND AS "end", count(*) AS windows,
         avg(gpu_util_pct) AS gpu_util, avg(disk_util_max_pct) AS disk_util, avg(disk_await_max_ms) AS await_ms,
         avg(cpu_iowait_pct) AS iowait, avg(cpu_busy_pct) AS cpu_busy, mode(busiest_device) AS device,
         avg(disk_read_kb_s) AS read_kb_s
         , any_value(cap_windows) AS cap_windows
  FROM i WHERE bad GROUP BY host, ep
  HAVING count(*) >= least($min_windows, greatest(2, floor(any_value(cap_windows) / 3)))
)
SELECT host, coalesce(device, 'storage') AS subject, start, "end", least(1.0, 0.6 + windows / 40) * CASE WHEN windows < $min_windows THEN 0.8 ELSE 1 END AS score,
       'GPUs on ' || host || ' average ' || round(gpu_util)::BIGINT || '% busy while ' || coalesce(device, 'the disk') || ' is '
         || coalesce(round(disk_util)::BIGINT || '% utilised', '?') || coalesce(', await ' || round(await_ms, 1) || ' ms', '')
         || coalesce(', iowait ' || round(iowait, 1) || '%', '') || coalesce(', CPU ' || round(cpu_busy)::BIGINT || '% busy', '')
         || ' for ' || windows * 30 || ' s' || CASE WHEN windows < $min_windows THEN ' (a short capture of '
         || cap_windows * 30 || ' s: lower confidence)' ELSE '' END || ': the dataloader is starving the GPUs' AS summary,
       to_json({gpu_util_pct: round(gpu_util, 1), disk_util_pct: round(disk_util, 1), await_ms: round(await_ms, 2),
                iowait_pct: round(iowait, 1), cpu_busy_pct: round(cpu_busy, 1), read_kb_s: round(read_kb_s),
                device: device, windows: windows})::VARCHAR AS evidence
FROM e ORDER BY start
