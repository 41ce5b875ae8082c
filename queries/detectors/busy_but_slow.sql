-- kind: busy_but_slow
-- severity: warning
-- description: "the illusion of 100% utilisation": GPUs report near-full utilisation while their power draw shows they are spin-waiting (in NCCL kernels), host by host
-- param: min_util = 90   utilisation (%) that looks busy
-- param: max_power_ratio = 0.6   power draw / reference power (the enforced limit, else the GPU's own 95th percentile) below which a busy GPU is waiting
-- param: min_windows = 4   30 s windows needed
-- param: min_gpus_fraction = 0.5   fraction of a host's GPUs in that state at once
WITH ref AS (
  SELECT host, gpu, coalesce(max(power_limit), quantile_cont(power, 0.95)) AS ref_power FROM det_gpu_windows GROUP BY ALL
), g AS (
  SELECT w.host, w.w, w.gpu, w.util, w.power, r.ref_power,
         (w.util >= $min_util AND w.power / nullif(r.ref_power, 0) <= $max_power_ratio) AS waiting
  FROM det_gpu_windows w JOIN ref r USING (host, gpu) WHERE w.power IS NOT NULL
), h AS (
  SELECT host, w, count(*) AS gpus, count(*) FILTER (WHERE waiting) AS waiting_gpus, avg(util) AS util,
         avg(power / nullif(ref_power, 0)) AS power_ratio
  FROM g GROUP BY ALL
), f AS (
  SELECT *, waiting_gpus >= greatest(1, $min_gpus_fraction * gpus) AS bad FROM h
), m AS (
  SELECT *, CASE WHEN bad AND NOT coalesce(lag(bad) OVER o, false) THEN 1 ELSE 0 END AS s FROM f WINDOW o AS (PARTITION BY host ORDER BY w)
), i AS (SELECT *, sum(s) OVER (PARTITION BY host ORDER BY w ROWS UNBOUNDED PRECEDING) AS ep FROM m),
e AS (
  SELECT host, ep, min(w) AS start, max(w) + INTERVAL 30 SECOND AS "end", count(*) AS windows, avg(util) AS util,
         avg(power_ratio) AS power_ratio, max(waiting_gpus) AS waiting_gpus, max(gpus) AS gpus
  FROM i WHERE bad GROUP BY host, ep HAVING count(*) >= $min_windows
)
SELECT host, waiting_gpus || '/' || gpus || ' GPUs' AS subject, start, "end", least(1.0, 0.55 + windows / 60) AS score,
       waiting_gpus || ' of ' || gpus || ' GPUs on ' || host || ' report ' || round(util)::BIGINT || '% utilisation but draw only '
         || round(100 * power_ratio)::BIGINT || '% of their reference power for ' || windows * 30
         || ' s: they are spin-waiting, not computing' AS summary,
       to_json({util_pct: round(util, 1), power_ratio: round(power_ratio, 3), waiting_gpus: waiting_gpus, gpus: gpus,
                windows: windows})::VARCHAR AS evidence
FROM e ORDER BY start
