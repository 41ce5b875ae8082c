-- kind: busy_but_slow
-- severity: warning
-- locality: host
-- layer: gpu
-- root_rank: 42
-- caused_by: pfc_storm@path, packet_drops@path, link_flap@path, ib_link_degraded@path, hang_origin@path, gpu_xid@path, ecc_error@path, nvswitch_sxid@path, nccl_transport_error@path, nccl_misconfig@path, gpu_throttle@path, numa_misplacement@path, io_starvation@path, cpu_saturation@path, memory_pressure@path, straggler@path, nic_wedged@path, gpu_unreachable@path, hung_task@path, cpu_stall@path
-- confirm: nsys profile -t cuda,nvtx,osrt python train.py; nvidia-smi dmon -s pucm
-- remediation: GPUs report ~100% utilisation while power/clocks/traffic show they are spin-waiting in NCCL kernels: the bottleneck is communication; inspect compute/communication overlap and the fabric findings (check NCCL_NET_GDR_LEVEL=5).
-- description: "the illusion of 100% utilisation": GPUs report near-full utilisation while their power draw falls well below what the same GPU draws when it really computes (spin-waiting in NCCL kernels), host by host
-- source: two references for what a GPU draws when it computes: its own busiest windows (a drop below max_power_ratio of them at ~100% utilisation is waiting), and its power limit, else the board power NVIDIA publishes for the model (H100 SXM5 700 W, H100 PCIe 350 W, H100 NVL 400 W, H200 SXM 700 W: NVIDIA H100/H200 Tensor Core GPU datasheets; A100 SXM4 400 W, A100 PCIe 250/300 W: A100 datasheet; B200 1000 W: DGX B200 datasheet; L40S 350 W: L40S datasheet; V100 SXM2 300 W, PCIe 250 W: V100 datasheet), so a job slow from its first sample is seen too (a limit NVML cannot report, outside 0.001 W .. 2^32-1 mW: nvmlDeviceGetEnforcedPowerLimit / nvmlDeviceGetPowerManagementLimit return milliwatts as an unsigned int, is no reference; nor is a 30 s window whose draw is outside 0 .. 2^32-1 mW, nvmlDeviceGetPowerUsage's range, a power reading): dense training holds these boards near their limit (the seed 000 case study: 99% utilisation at 42% below the expected throughput), and a GPU whose busiest windows at >=90% utilisation stay under max_limit_ratio of its limit for the whole capture is spin-waiting, not computing; waiting is told from a lower-power phase that still computes (evaluation: forward passes only) by memory utilisation (nvidia-smi utilization.memory, the fraction of time the memory controller is busy): spin-waiting NCCL kernels barely touch memory. Where the node has a dcgmi dmon series (dcgm_dmon), DCGM's own activity decides instead of power: NVIDIA's DCGM user guide, "Profiling Metrics" (DCGM_FI_PROF_SM_ACTIVE, field 1002: the fraction of time at least one warp was active on an SM, averaged over all SMs; "a value of 0.8 or greater is necessary, but not sufficient, for effective use of the GPU. A value less than 0.5 likely indicates ineffective GPU usage"), while nvidia-smi utilisation counts a window busy as soon as any kernel runs: an NCCL kernel spinning on a few SMs (its channels) keeps utilisation at ~100% with SM active low and tensor active near 0. A GPU at >= min_util whose SM active stays below max_sm_active (the midpoint of NVIDIA's two marks) is waiting for part of its "busy" time; one at or above it computes, whatever its power says (an evaluation phase at lower power)
-- param: min_util = 90   utilisation (%) that looks busy
-- param: max_power_ratio = 0.85   power draw / the GPU's own busy baseline (90th percentile of its busy windows) below which it is waiting
-- param: max_mem_ratio = 0.85   and memory utilisation / its own busy baseline below which the kernels barely touch memory (NCCL spin-wait; an evaluation phase at lower power keeps its memory traffic)
-- param: min_windows = 3   consecutive 30 s windows needed
-- param: min_windows_with_peer = 2   enough while an NCCL peer host (nccl_peers) waits in a full episode at the same time: in synchronous training every rank waits for the same slow one, and a host whose wait starts or ends mid-window shows fewer whole windows under max_power_ratio than its peers (sample pfc_storm: node01 at 431-441 W of 548-563 for two windows, 488 and 473 W in the two around them, while its three peers wait for three)
-- param: min_gpus_fraction = 0.5   fraction of a host's GPUs in that state at once
-- param: min_sm_computing = 0.8   DCGM SM active (ratio) at or above which GPUs compute (NVIDIA: 0.8 or greater is necessary for effective use): a power-based episode on a host whose GPUs stay at it is a lower-power phase that computes, not waiting
-- param: max_sm_active = 0.65   DCGM SM active (ratio) below which a GPU at >= min_util is spin-waiting, not computing
-- param: max_limit_ratio = 0.72   busiest power at ~100% utilisation / power limit (or published board power) below which the GPU never computed at full rate
-- every avg() orders its input: a float sum's last bits depend on the order DuckDB's threads add it in, and a rounded
-- evidence value (SM active 0.5685 -> 0.568 or 0.569) differed between two runs of one 64-node bundle
WITH dcgm AS (  -- DCGM activity per GPU and 30 s window (dcgmi dmon); its utilisation, else nvidia-smi's
  SELECT d.host, d.gpu, d.w, d.sm_active, d.tensor_active, coalesce(d.util, s.util) AS util FROM (
    SELECT host, gpu, ref_bucket(ts, off, 30) AS w,  -- det_gpu_windows' reference-clock windows
           avg(value ORDER BY value) FILTER (WHERE metric = 'sm_active') AS sm_active,
           avg(value ORDER BY value) FILTER (WHERE metric = 'tensor_active') AS tensor_active,
           avg(value ORDER BY value) FILTER (WHERE metric = 'gpu_util_pct') AS util
    FROM dcgm_dmon LEFT JOIN det_host_offset USING (host) WHERE entity = 'GPU' AND ts IS NOT NULL AND value IS NOT NULL
      AND metric IN ('sm_active', 'tensor_active', 'gpu_util_pct') GROUP BY ALL) d
  LEFT JOIN det_gpu_windows s ON s.host IS NOT DISTINCT FROM d.host AND s.gpu = d.gpu AND s.w = d.w
  WHERE d.sm_active IS NOT NULL
), dcgm_hosts AS (SELECT DISTINCT host FROM dcgm),
dg AS (
  SELECT host, w, count(*) AS gpus, count(*) FILTER (WHERE util >= $min_util AND sm_active < $max_sm_active) AS waiting_gpus,
         avg(util ORDER BY util) FILTER (WHERE util >= $min_util AND sm_active < $max_sm_active) AS util,
         avg(sm_active ORDER BY sm_active) FILTER (WHERE util >= $min_util AND sm_active < $max_sm_active) AS sm_active,
         avg(tensor_active ORDER BY tensor_active) FILTER (WHERE util >= $min_util AND sm_active < $max_sm_active) AS tensor_active
  FROM dcgm GROUP BY ALL
), board(pattern, watts) AS (VALUES ('H100.*(PCIe)', 350), ('H100 NVL', 400), ('H100|H800', 700), ('H200', 700),
                                     ('B200', 1000), ('A100.*PCIE.*40GB', 250), ('A100.*PCIe', 300), ('A100|A800', 400),
                                     ('L40S', 350), ('V100.*PCIE', 250), ('V100', 300)),
limit_w AS (  -- the GPU's power limit, else the published board power of its model (first pattern that matches)
  SELECT g.host, g.gpu, coalesce(max(g.power_limit_w), arg_min(b.watts, b.pattern IS NULL)) AS watts FROM (
    SELECT host, gpu, max(power_limit_w) AS power_limit_w, any_value(name) AS name FROM gpus GROUP BY ALL) g
  LEFT JOIN board b ON regexp_matches(g.name, b.pattern) GROUP BY ALL
), lim AS (
  SELECT w.host, w.gpu, coalesce(max(w.power_limit), any_value(l.watts)) AS watts
  FROM det_gpu_windows w LEFT JOIN limit_w l ON l.host IS NOT DISTINCT FROM w.host AND l.gpu = w.gpu GROUP BY ALL
), illusion AS (  -- never computing at full rate in the whole capture: the slowdown is there from the first sample
  SELECT w.host, w.gpu, min(w.w) AS first_w, max(w.w) AS last_w, count(*) AS windows, avg(w.util ORDER BY w.util) AS util,
         quantile_cont(w.power, 0.9) AS p90_w, any_value(l.watts) AS limit_w
  FROM det_gpu_windows w JOIN lim l ON l.host IS NOT DISTINCT FROM w.host AND l.gpu = w.gpu
  -- NVML reports a limit and a draw in milliwatts as an unsigned int: one outside 0.001 .. 2^32-1 mW (0 .. for a draw)
  -- is none nvidia-smi printed (a window holding such a sample, a corrupt file's 1e300 W, is no power reading)
  WHERE w.util >= $min_util AND w.power BETWEEN 0 AND 4294967.295 AND l.watts BETWEEN 0.001 AND 4294967.295 GROUP BY ALL
  HAVING count(*) >= $min_windows AND quantile_cont(w.power, 0.9) <= $max_limit_ratio * any_value(l.watts)
), ill_host AS (
  SELECT i.host, min(first_w) AS start, max(last_w) + INTERVAL 30 SECOND AS "end", count(*) AS waiting_gpus,
         (SELECT count(DISTINCT gpu) FROM det_gpu_windows d WHERE d.host IS NOT DISTINCT FROM i.host) AS gpus,
         avg(util ORDER BY util) AS util, avg(p90_w ORDER BY p90_w) AS power_w, avg(limit_w ORDER BY limit_w) AS limit_w, max(windows) AS windows
  FROM illusion i GROUP BY host
), ref AS (
  SELECT host, gpu, quantile_cont(power, 0.9) AS ref_power, quantile_cont(mem_util, 0.9) AS ref_mem, count(*) AS busy_windows
  FROM det_gpu_windows WHERE util >= $min_util AND power BETWEEN 0 AND 4294967.295 GROUP BY ALL  -- (NVML's range: see illusion)
), g AS (
  SELECT w.host, w.w, w.gpu, w.util, w.power, r.ref_power,
         (w.util >= $min_util AND w.power / nullif(r.ref_power, 0) <= $max_power_ratio
          AND coalesce(w.mem_util / nullif(r.ref_mem, 0) <= $max_mem_ratio, true)) AS waiting
  FROM det_gpu_windows w JOIN ref r USING (host, gpu) WHERE w.power BETWEEN 0 AND 4294967.295 AND r.busy_windows >= $min_windows + 2
), h AS (
  SELECT host, w, count(*) AS gpus, count(*) FILTER (WHERE waiting) AS waiting_gpus, avg(util ORDER BY util) AS util,
         avg(power / nullif(ref_power, 0) ORDER BY power / nullif(ref_power, 0)) FILTER (WHERE waiting) AS power_ratio, avg(power ORDER BY power) FILTER (WHERE waiting) AS power_w,
         avg(ref_power ORDER BY ref_power) AS ref_power_w
  FROM g GROUP BY ALL
), f AS (  -- waiting windows by power (h) and by DCGM activity (dg), each a series of its own
  SELECT 'power' AS basis, *, waiting_gpus >= greatest(1, $min_gpus_fraction * gpus) AS bad FROM h
  UNION ALL BY NAME
  SELECT 'dcgm' AS basis, *, waiting_gpus >= greatest(1, $min_gpus_fraction * gpus) AS bad FROM dg
), i AS (SELECT *, flag_run(bad, (host, basis), w) AS ep FROM f),
e0 AS (
  SELECT host, basis, ep, min(w) AS start, max(w) + INTERVAL 30 SECOND AS "end", count(*) AS windows, avg(util ORDER BY util) AS util,
         avg(power_ratio ORDER BY power_ratio) AS power_ratio, avg(power_w ORDER BY power_w) AS power_w, avg(ref_power_w ORDER BY ref_power_w) AS ref_power_w,
         avg(sm_active ORDER BY sm_active) AS sm_active, avg(tensor_active ORDER BY tensor_active) AS tensor_active,
         max(waiting_gpus) AS waiting_gpus, max(gpus) AS gpus
  FROM i WHERE bad GROUP BY host, basis, ep HAVING count(*) >= least($min_windows, $min_windows_with_peer)
), e AS (  -- a full episode, or a shorter one while an NCCL peer of the host waits in a full one (one job, one wait)
  SELECT * FROM e0 WHERE basis = 'power' AND (windows >= $min_windows OR EXISTS (
    SELECT 1 FROM e0 o JOIN nccl_peers p ON p.host = e0.host AND p.peer = o.host
    WHERE o.basis = 'power' AND o.windows >= $min_windows AND o.start < e0."end" AND e0.start < o."end"))
), de AS (SELECT * FROM e0 WHERE basis = 'dcgm' AND windows >= $min_windows
), pf AS (  -- what power tells (no DCGM needed)
SELECT host, waiting_gpus || '/' || gpus || ' GPUs' AS subject, start, "end", least(1.0, 0.55 + windows / 60) AS score,
       waiting_gpus || ' of ' || gpus || ' GPUs on ' || host || ' report ' || int_text(util) || '% utilisation but draw '
         || int_text(power_w) || ' W, ' || int_text(100 * power_ratio) || '% of the ' || int_text(ref_power_w)
         || ' W they draw when computing, for ' || windows * 30 || ' s: they are spin-waiting, not computing' AS summary,
       to_json({util_pct: round(util, 1), power_w: round(power_w, 1), busy_baseline_w: round(ref_power_w, 1),
                power_ratio: round(power_ratio, 3), waiting_gpus: waiting_gpus, gpus: gpus, windows: windows})::VARCHAR AS evidence
FROM e WHERE NOT EXISTS (SELECT 1 FROM ill_host x WHERE x.host IS NOT DISTINCT FROM e.host
                           AND x.waiting_gpus >= greatest(1, $min_gpus_fraction * x.gpus))
UNION ALL
SELECT host, waiting_gpus || '/' || gpus || ' GPUs', start, "end", least(1.0, 0.6 + windows / 60),
       waiting_gpus || ' of ' || gpus || ' GPUs on ' || host || ' report ' || int_text(util)
         || '% utilisation for the whole capture but never draw more than ' || int_text(power_w) || ' W, '
         || int_text(100 * power_w / limit_w) || '% of their ' || int_text(limit_w)
         || ' W power limit (computing boards run near it): spin-waiting from the first sample, not computing',
       to_json({util_pct: round(util, 1), power_w: round(power_w, 1), power_limit_w: limit_w,
                limit_ratio: round(power_w / limit_w, 3), waiting_gpus: waiting_gpus, gpus: gpus, windows: windows,
                reference: 'power limit / published board power'})::VARCHAR
FROM ill_host WHERE waiting_gpus >= greatest(1, $min_gpus_fraction * gpus)
), pd AS (  -- with DCGM on the host: its SM activity over the same windows decides computing vs waiting
  SELECT pf.*, (SELECT avg(d.sm_active ORDER BY d.sm_active) FROM dcgm d WHERE d.host IS NOT DISTINCT FROM pf.host AND d.w >= pf.start
                AND d.w < pf."end" AND d.util >= $min_util) AS sm_active,
         (SELECT avg(d.tensor_active ORDER BY d.tensor_active) FROM dcgm d WHERE d.host IS NOT DISTINCT FROM pf.host AND d.w >= pf.start
                AND d.w < pf."end" AND d.util >= $min_util) AS tensor_active
  FROM pf
)
SELECT host, subject, start, "end", score,
       summary || coalesce('; DCGM: SMs active ' || int_text(100 * sm_active) || '% of the time, tensor cores '
         || int_text(100 * tensor_active) || '%', '') AS summary,
       CASE WHEN sm_active IS NULL THEN evidence ELSE json_merge_patch(evidence, to_json({sm_active: round(sm_active, 3),
         tensor_active: round(tensor_active, 3)}))::VARCHAR END AS evidence
FROM pd WHERE host NOT IN (SELECT host FROM dcgm_hosts) OR sm_active IS NULL OR sm_active < $min_sm_computing
UNION ALL
SELECT host, waiting_gpus || '/' || gpus || ' GPUs', start, "end", least(1.0, 0.6 + windows / 60),
       waiting_gpus || ' of ' || gpus || ' GPUs on ' || host || ' report ' || int_text(util)
         || '% utilisation but DCGM shows their SMs active ' || int_text(100 * sm_active)
         || '% of the time and tensor cores ' || int_text(100 * tensor_active) || '%, for ' || windows * 30
         || ' s: kernels run on a few SMs (NCCL spin-waiting), not computing',
       to_json({util_pct: round(util, 1), sm_active: round(sm_active, 3), tensor_active: round(tensor_active, 3),
                waiting_gpus: waiting_gpus, gpus: gpus, windows: windows, reference: 'DCGM SM active (dcgmi dmon)'})::VARCHAR
FROM de
WHERE NOT EXISTS (SELECT 1 FROM pd WHERE pd.host IS NOT DISTINCT FROM de.host AND pd.start < de."end" AND de.start < pd."end"
                    AND (pd.sm_active IS NULL OR pd.sm_active < $min_sm_computing))
ORDER BY start
