-- kind: pulsing_utilization
-- severity: warning
-- locality: host
-- layer: host_cpu
-- root_rank: 31
-- caused_by: io_starvation@host, cpu_saturation@host, memory_pressure@host
-- confirm: nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader -l 1; nsys profile
-- remediation: GPUs take turns between 100% and idle: the pipeline is serialised (GIL contention, synchronous .item() calls, CPU-side preprocessing per step); profile and overlap the CPU work.
-- description: GPUs taking turns between ~100% and ~0% utilisation (a serialised pipeline), found per GPU over time and across the host's GPUs
-- source: nvidia-smi utilization.gpu is the fraction of the sample period in which a kernel ran (NVML nvmlDeviceGetUtilizationRates), so >= 90% then <= 10% on one GPU means it computed and then waited; the seed 004 operator saw it in five untimed --query-gpu=index,utilization.gpu snapshots, so samples without times count in their order (sample_no) and the swings needed scale with the samples there are (half of them); under 5 samples it is only a hint (info); the shares are counted from a GPU's first busy sample to its last: idle before the job's first burst (not started) or after its last (ended, aborted after an NCCL error, crashed) is not a wait between bursts, and with checkpoints (GPUs idle for seconds every few minutes, the only other swings of a training job) a dead tail of 40 minutes made 69% idle and 9 swings a GPU read as pulsing (detection_eval --full development run packet_drops 2x10s/60min seed 103)
-- param: min_share = 0.2   fraction of samples both at >= 90% and at <= 10% utilisation
-- param: min_swings = 6   high/low transitions needed (at most half the GPU's samples, for a handful of snapshots)
-- param: min_samples_warning = 5   samples per GPU below which the finding is only info
-- param: min_gpus = 2   GPUs of a host that pulse
WITH s AS (  -- ord: the sample's time, or its order when the source printed no time (a pasted loop)
  SELECT host, gpu, ts, coalesce(epoch(ts), sample_no::DOUBLE) AS ord, util_pct, util_pct >= 90 AS hi, util_pct <= 10 AS lo
  FROM gpu_samples
  WHERE (ts IS NOT NULL OR sample_no IS NOT NULL) AND gpu IS NOT NULL AND util_pct IS NOT NULL
), span AS (  -- each GPU's active span: from its first busy sample to its last
  SELECT host, gpu, min(ord) FILTER (WHERE hi) AS a, max(ord) FILTER (WHERE hi) AS b FROM s GROUP BY ALL
), per_gpu AS (  -- the shares within the active span; the samples (severity, swings needed) of the whole series
  SELECT host, gpu, count(*) AS samples, avg(hi::INT) FILTER (WHERE ord BETWEEN a AND b) AS share_hi,
         avg(lo::INT) FILTER (WHERE ord BETWEEN a AND b) AS share_lo,
         min(ts) FILTER (WHERE ord BETWEEN a AND b) AS t0, max(ts) FILTER (WHERE ord BETWEEN a AND b) AS t1,
         count(ts) = 0 AS untimed
  FROM s JOIN span USING (host, gpu) GROUP BY ALL
), cand AS (  -- busy and idle often enough: only these GPUs' swings are counted (a window over their samples)
  SELECT * FROM per_gpu WHERE share_hi >= $min_share AND share_lo >= $min_share
), st AS (
  SELECT *, CASE WHEN hi THEN 1 WHEN lo THEN -1 END AS state FROM s SEMI JOIN cand USING (host, gpu)
), sw AS (
  SELECT host, gpu, ord, state, lag(state) OVER (PARTITION BY host, gpu ORDER BY ord) AS prev FROM st WHERE state IS NOT NULL
), swings AS (
  SELECT host, gpu, count(*) FILTER (WHERE state IS NOT NULL AND prev IS NOT NULL AND state <> prev) AS swings FROM sw GROUP BY ALL
), pulsing AS (
  SELECT p.*, w.swings FROM cand p JOIN swings w USING (host, gpu)
  WHERE w.swings >= least($min_swings, greatest(1, floor((p.samples - 1) / 2)))
), turns AS (
  -- at each moment, how many of the host's pulsing GPUs are busy: turn-taking keeps it between all and none
  -- (within each GPU's active span: a dead tail would read as all of them idle at once)
  SELECT s.host, s.ord, avg(s.hi::INT) AS busy_share FROM s JOIN pulsing p USING (host, gpu) JOIN span USING (host, gpu)
  WHERE s.ord BETWEEN span.a AND span.b GROUP BY ALL
)
SELECT p.host, 'GPU' || string_agg(p.gpu::VARCHAR, ',GPU' ORDER BY p.gpu) AS subject, min(p.t0) AS start, max(p.t1) AS "end",
       least(1.0, 0.6 + count(*) / 20) AS score,
       CASE WHEN min(p.samples) >= $min_samples_warning THEN 'warning' ELSE 'info' END AS severity,
       count(*) || ' GPUs on ' || p.host || ' swing between >=90% and <=10% utilisation (' || int_text(100 * avg(p.share_hi ORDER BY p.share_hi))
         || '% of samples busy, ' || int_text(100 * avg(p.share_lo ORDER BY p.share_lo)) || '% idle, ' || sum(p.swings)
         || ' swings in ' || max(p.samples) || CASE WHEN bool_and(p.untimed) THEN ' untimed samples' ELSE ' samples' END || '); ' || CASE WHEN (SELECT median(busy_share) FROM turns t WHERE t.host = p.host) BETWEEN 0.15 AND 0.85
              THEN 'at a typical moment only ' || int_text(100 * (SELECT median(busy_share) FROM turns t WHERE t.host = p.host))
                   || '% of them are busy: they take turns (a serialised pipeline)'
              ELSE 'they pulse together: all wait on a shared input (dataloader, host CPU) between bursts' END AS summary,
       to_json({gpus: list(p.gpu ORDER BY p.gpu),
                median_busy_share: (SELECT round(median(busy_share), 3) FROM turns t WHERE t.host = p.host), share_busy: round(avg(p.share_hi ORDER BY p.share_hi), 3), share_idle: round(avg(p.share_lo ORDER BY p.share_lo), 3),
                swings: sum(p.swings), samples: max(p.samples), untimed: bool_and(p.untimed)})::VARCHAR AS evidence
FROM pulsing p GROUP BY p.host HAVING count(*) >= $min_gpus
