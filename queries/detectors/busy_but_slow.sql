-- kind: busy_but_slow
-- severity: warning
-- layer: gpu
-- root_rank: 42
-- caused_by: pfc_storm@path, packet_drops@path, link_flap@path, gpu_xid@path, ecc_error@path, nccl_transport_error@path, nccl_misconfig@path, gpu_throttle@path, numa_misplacement@path, io_starvation@path, cpu_saturation@path, memory_pressure@path, straggler@path
-- confirm: nsys profile -t cuda,nvtx,osrt python train.py; nvidia-smi dmon -s pucm
-- remediation: GPUs report ~100% utilisation while power/clocks/traffic show they are spin-waiting in NCCL kernels: the bottleneck is communication; inspect compute/communication overlap and the fabric findings (check NCCL_NET_GDR_LEVEL=5).
-- description: "the illusion of 100% utilisation": GPUs report near-full utilisation while their power draw falls well below what the same GPU draws when it really computes (spin-waiting in NCCL kernels), host by host
-- source: set by hand against the simulator; issue 16 item 2 grounds these thresholds in physics and vendor figures
-- param: min_util = 90   utilisation (%) that looks busy
-- param: max_power_ratio = 0.85   power draw / the GPU's own busy baseline (90th percentile of its busy windows) below which it is waiting
-- param: min_windows = 3   consecutive 30 s windows needed
-- param: min_gpus_fraction = 0.5   fraction of a host's GPUs in that state at once
WITH ref AS (
  SELECT host, gpu, quantile_cont(power, 0.9) AS ref_power, count(*) AS busy_windows
  FROM det_gpu_windows WHERE util >= $min_util AND power IS NOT NULL GROUP BY ALL
), g AS (
  SELECT w.host, w.w, w.gpu, w.util, w.power, r.ref_power,
         (w.util >= $min_util AND w.power / nullif(r.ref_power, 0) <= $max_power_ratio) AS waiting
  FROM det_gpu_windows w JOIN ref r USING (host, gpu) WHERE w.power IS NOT NULL AND r.busy_windows >= $min_windows + 2
), h AS (
  SELECT host, w, count(*) AS gpus, count(*) FILTER (WHERE waiting) AS waiting_gpus, avg(util) AS util,
         avg(power / nullif(ref_power, 0)) FILTER (WHERE waiting) AS power_ratio, avg(power) FILTER (WHERE waiting) AS power_w,
         avg(ref_power) AS ref_power_w
  FROM g GROUP BY ALL
), f AS (
  SELECT *, waiting_gpus >= greatest(1, $min_gpus_fraction * gpus) AS bad FROM h
), m AS (
  SELECT *, CASE WHEN bad AND NOT coalesce(lag(bad) OVER o, false) THEN 1 ELSE 0 END AS s FROM f WINDOW o AS (PARTITION BY host ORDER BY w)
), i AS (SELECT *, sum(s) OVER (PARTITION BY host ORDER BY w ROWS UNBOUNDED PRECEDING) AS ep FROM m),
e AS (
  SELECT host, ep, min(w) AS start, max(w) + INTERVAL 30 SECOND AS "end", count(*) AS windows, avg(util) AS util,
         avg(power_ratio) AS power_ratio, avg(power_w) AS power_w, avg(ref_power_w) AS ref_power_w,
         max(waiting_gpus) AS waiting_gpus, max(gpus) AS gpus
  FROM i WHERE bad GROUP BY host, ep HAVING count(*) >= $min_windows
)
SELECT host, waiting_gpus || '/' || gpus || ' GPUs' AS subject, start, "end", least(1.0, 0.55 + windows / 60) AS score,
       waiting_gpus || ' of ' || gpus || ' GPUs on ' || host || ' report ' || round(util)::BIGINT || '% utilisation but draw '
         || round(power_w)::BIGINT || ' W, ' || round(100 * power_ratio)::BIGINT || '% of the ' || round(ref_power_w)::BIGINT
         || ' W they draw when computing, for ' || windows * 30 || ' s: they are spin-waiting, not computing' AS summary,
       to_json({util_pct: round(util, 1), power_w: round(power_w, 1), busy_baseline_w: round(ref_power_w, 1),
                power_ratio: round(power_ratio, 3), waiting_gpus: waiting_gpus, gpus: gpus, windows: windows})::VARCHAR AS evidence
FROM e ORDER BY start
