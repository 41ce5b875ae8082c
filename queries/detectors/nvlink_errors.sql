-- kind: nvlink_errors
-- severity: critical
-- locality: host
-- layer: gpu
-- root_rank: 14
-- caused_by: gpu_xid@host, gpu_unreachable@host
-- confirm: nvidia-smi nvlink -e -i <gpu> (twice, a minute apart); nvidia-smi nvlink -s -i <gpu>; nvidia-smi -q -d ECC; dmesg -T | grep -iE 'xid|nvlink'; dcgmi diag -r 2 (NVLink/PCIe plugin)
-- remediation: A marginal NVLink lane: note the GPU and link, reset the counters (nvidia-smi nvlink -r) and watch them under load; recovery or replay errors that keep growing mean drain the node, reseat the GPU/baseboard and check the NVSwitch/fabric manager logs, then RMA the GPU or baseboard (NVIDIA's GPU debug guidelines) if they follow the slot.
-- description: NVLink error counters of a GPU link grew during the capture (a link recovery, replays, or CRC errors), or a link is inactive while the GPU's other links are up
-- source: NVIDIA DCGM health watch for NVLink (DcgmHealthWatch.cpp with DcgmGpuHardwareLimits.h): replay or recovery errors: any increase (DCGM_LIMIT_MAX_NVLINK_ERROR = 1) is a failure (DCGM_FR_NVLINK_ERROR_CRITICAL); CRC flit/data errors: a rate of 100/s or more is a failure (DCGM_LIMIT_MAX_NVLINK_CRC_ERROR, "RM has informed us that CRC errors only matter at rates of 100+ per second"), any lower increase a warning (DCGM_FR_NVLINK_ERROR_THRESHOLD); an <inactive> link beside active ones on the same GPU is a link down (nvidia-smi nvlink -s)
-- param: crc_fail_per_s = 100   CRC errors per second from which a link fails (DCGM)
WITH moved AS (  -- links with a counter whose value changed: only they can have grown (one hash pass; the windows skip the rest)
  SELECT DISTINCT host, gpu, link FROM (
    SELECT host, file, gpu, link, counter FROM nvlink_errors WHERE gpu IS NOT NULL AND link IS NOT NULL
    GROUP BY ALL HAVING min(value) <> max(value))
), c AS (
  SELECT host, gpu, link, counter, ts, value, file, line_no,
         lag(value) OVER (PARTITION BY host, file, gpu, link, counter ORDER BY sample_no, line_no) AS prev,
         lag(ts) OVER (PARTITION BY host, file, gpu, link, counter ORDER BY sample_no, line_no) AS prev_ts
  FROM nvlink_errors n SEMI JOIN moved USING (host, gpu, link) WHERE gpu IS NOT NULL AND link IS NOT NULL
), d AS (
  -- (the increases summed as HUGEINT, not cast back to BIGINT: a sum of counter increases, each up to 2^63-1
  -- in an untrusted bundle, passes BIGINT's 9.2e18 and the cast raised, losing every finding; HUGEINT holds
  -- any such sum exactly and prints as the same integer in the summary and evidence)
  SELECT host, gpu, link,
         sum(CASE WHEN prev IS NULL THEN 0 WHEN value >= prev THEN CAST(value AS HUGEINT) - prev ELSE value END)
              FILTER (WHERE counter = 'replay_errors') AS replay,
         sum(CASE WHEN prev IS NULL THEN 0 WHEN value >= prev THEN CAST(value AS HUGEINT) - prev ELSE value END)
              FILTER (WHERE counter = 'recovery_errors') AS recovery,
         sum(CASE WHEN prev IS NULL THEN 0 WHEN value >= prev THEN CAST(value AS HUGEINT) - prev ELSE value END)
              FILTER (WHERE counter LIKE 'crc%') AS crc,
         max((CAST(value AS HUGEINT) - prev) / nullif(epoch(ts) - epoch(prev_ts), 0)) FILTER (WHERE counter LIKE 'crc%' AND value >= prev) AS crc_peak_per_s,
         min(ts) FILTER (WHERE prev IS NOT NULL AND value > prev) AS start, max(ts) FILTER (WHERE prev IS NOT NULL AND value > prev) AS "end",
         -- (the first line: counters that rose in one sample tie on ts, the lowest file and line wins)
         arg_min(line_no, {t: ts, f: file, l: line_no}) FILTER (WHERE prev IS NOT NULL AND value > prev) AS first_line,
         arg_min(file, {t: ts, f: file, l: line_no}) FILTER (WHERE prev IS NOT NULL AND value > prev) AS first_file
  FROM c GROUP BY ALL
), grew AS (
  SELECT * FROM d WHERE coalesce(replay, 0) + coalesce(recovery, 0) + coalesce(crc, 0) > 0
), l AS (
  SELECT host, gpu, link, bool_and(NOT active) AS always_down, min(ts) AS start, max(ts) AS "end",
         arg_min(line_no, sample_no) AS first_line, arg_min(file, sample_no) AS first_file
  FROM nvlink_links GROUP BY ALL
), down AS (
  SELECT l.* FROM l
  WHERE always_down AND EXISTS (SELECT 1 FROM l o WHERE o.host = l.host AND o.gpu = l.gpu AND NOT o.always_down)
)
SELECT host, 'GPU' || gpu || ' link ' || link AS subject, start, "end",
       CASE WHEN coalesce(recovery, 0) > 0 OR coalesce(replay, 0) > 0 OR coalesce(crc_peak_per_s, 0) >= $crc_fail_per_s THEN 0.8 ELSE 0.5 END AS score,
       CASE WHEN coalesce(recovery, 0) > 0 OR coalesce(replay, 0) > 0 OR coalesce(crc_peak_per_s, 0) >= $crc_fail_per_s THEN 'critical' ELSE 'warning' END AS severity,
       'NVLink errors on ' || host || ' GPU ' || gpu || ' link ' || link || ' during the capture: '
         || concat_ws(', ', CASE WHEN recovery > 0 THEN 'recovery +' || recovery END, CASE WHEN replay > 0 THEN 'replay +' || replay END,
                      CASE WHEN crc > 0 THEN 'CRC +' || crc || ' (peak ' || round(crc_peak_per_s, 1) || '/s)' END) AS summary,
       to_json({gpu: gpu, link: link, recovery: recovery, replay: replay, crc: crc, crc_peak_per_s: crc_peak_per_s,
                first: {file: first_file, line_no: first_line}})::VARCHAR AS evidence
FROM grew
UNION ALL
SELECT host, 'GPU' || gpu || ' link ' || link, start, "end", 0.6, 'warning',
       'NVLink ' || host || ' GPU ' || gpu || ' link ' || link || ' is inactive while the GPU''s other links are up',
       to_json({gpu: gpu, link: link, inactive: true, first: {file: first_file, line_no: first_line}})::VARCHAR
FROM down
ORDER BY start
