-- kind: throughput_drop
-- severity: warning
-- locality: host
-- layer: job
-- root_rank: 44
-- caused_by: gpu_throttle@path, pfc_storm@path, packet_drops@path, link_flap@path, gpu_xid@path, ecc_error@path, nccl_transport_error@path, io_starvation@path, cpu_saturation@path, memory_pressure@path, straggler@path, nic_wedged@path, pcie_aer@path, busy_but_slow@path
-- confirm: grep -E 'elapsed time per iteration|tps:|SamplesPerSec=|train_steps_per_second' train.log | tail -50; Lightning's bars: tr '\r' '\n' < train.log | grep -E '^Epoch [0-9]+' | tail -50
-- remediation: The job itself logged its throughput falling well below its own best sustained level: look at what else happened in that interval (the fabric, GPU and host findings it is linked to); a drop that starts at a checkpoint or evaluation and ends after it is the job's own work, not a fault.
-- description: the job's own training log: tokens/s (else samples/s, else 1 / step time, else TFLOP/s per GPU) of consecutive logged steps below a fraction of the best level the same job sustained over the capture
-- source: the basis is the job's own best sustained level, not an absolute figure: the highest median rate over sustain_steps consecutive logged steps of the same log, rank and metric (a median, so one fast outlier step does not set the bar; Megatron already averages step time over its log interval; a Lightning progress bar's step time is its own window of at least 20 s, its printed rate being an average since the epoch began, which would flag every epoch's slow first batches). Below max_ratio (0.8, a 20% drop) for min_steps consecutive logged steps: a threshold of ours, chosen well above the step-to-step spread of the real logs in tests/fixtures/train_log (within 5%: Megatron-LM#756 228-240 TFLOP/s, torchtitan#3393 7,272-7,334 tps) and below the shortfall of issue 19's seed 000 (1,840 tokens/s against ~3,200, 42% below)
-- param: sustain_steps = 5   consecutive logged steps whose median defines a sustained level
-- param: max_ratio = 0.8   rate / best sustained level below which a step is slow
-- param: min_steps = 3   consecutive slow logged steps needed
WITH s AS (
  SELECT host, file, coalesce("rank", -1) AS rk, framework, line_no, coalesce(seq, 0) AS seq, step, ts,
         CASE WHEN tokens_per_s IS NOT NULL THEN 'tokens/s' WHEN samples_per_s IS NOT NULL THEN 'samples/s'
              WHEN step_time_s > 0 THEN 'steps/s' WHEN tflops_per_gpu IS NOT NULL THEN 'TFLOP/s/GPU' END AS metric,
         coalesce(tokens_per_s, samples_per_s, 1.0 / CASE WHEN step_time_s > 0 THEN step_time_s END, tflops_per_gpu) AS rate
  FROM train_steps WHERE record = 'step'
), r AS (
  SELECT *, median(rate) OVER o AS sustained, count(*) OVER o AS n
  FROM s WHERE rate IS NOT NULL AND isfinite(rate) AND rate > 0  -- (NaN, or inf: 1 / a step time of 1e-309 s)
  WINDOW o AS (PARTITION BY host, file, rk, metric ORDER BY line_no, seq ROWS BETWEEN $sustain_steps - 1 PRECEDING AND CURRENT ROW)
), b AS (
  SELECT host, file, rk, metric, max(sustained) FILTER (WHERE n >= $sustain_steps) AS best FROM r GROUP BY ALL
), x AS (
  SELECT r.*, b.best, r.rate < $max_ratio * b.best AS low FROM r JOIN b USING (host, file, rk, metric) WHERE b.best > 0
), i AS (
  SELECT *, flag_run(low, (host, file, rk, metric), (line_no, seq)) AS ep FROM x
), e AS (
  SELECT host, file, rk, metric, ep, min(ts) AS start, max(ts) AS "end", count(*) AS steps, min(step) AS first_step,
         max(step) AS last_step, median(rate) AS rate, any_value(best) AS best, min(line_no) AS line_no,
         any_value(framework) AS framework
  FROM i WHERE low GROUP BY ALL HAVING count(*) >= $min_steps
)
SELECT host, 'training throughput' AS subject, start, "end",
       least(0.9, 0.5 + (1 - rate / best)) AS score,
       framework || ' log ' || file || CASE WHEN rk >= 0 THEN ' (rank ' || rk || ')' ELSE '' END || ': ' || metric || ' '
         || CAST(round(rate, 2) AS VARCHAR) || ' over ' || steps || ' logged step(s)'
         || coalesce(' (steps ' || first_step || '-' || last_step || ')', '') || ', '
         || int_text(100 * (1 - rate / best)) || '% below the job''s best sustained '
         || CAST(round(best, 2) AS VARCHAR) AS summary,
       to_json({metric: metric, rate: rate, best_sustained: best, drop_pct: 100 * (1 - rate / best), steps: steps,
                first_step: first_step, last_step: last_step, "rank": CASE WHEN rk >= 0 THEN rk END, framework: framework,
                first: {file: file, line_no: line_no}})::VARCHAR AS evidence
FROM e
ORDER BY start NULLS LAST, host
