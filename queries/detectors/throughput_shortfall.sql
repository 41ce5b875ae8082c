-- kind: throughput_shortfall
-- severity: warning
-- locality: host
-- layer: job
-- root_rank: 45
-- caused_by: busy_but_slow@path, nccl_misconfig@path, numa_misplacement@path, gpu_throttle@path, pfc_storm@path, packet_drops@path, link_flap@path, straggler@path, io_starvation@path, cpu_saturation@path, memory_pressure@path, nccl_transport_error@path, nic_wedged@path, pcie_aer@path
-- confirm: grep -E 'tps:|tokens per sec' train.log | tail -50; compare with the reference run's tokens/s per GPU (same model, sequence length and parallelism)
-- remediation: The job's own logged tokens/s per GPU stays below the rate you expect of it for the whole interval: the slowdown is real work lost, not a metric artefact (nvidia-smi's utilisation counts spin-waiting kernels as busy). Follow the findings it is linked to (fabric, NCCL configuration, NUMA placement, GPU clocks); check the reference is for the same model size, sequence length, batch and parallelism.
-- description: the job's own training log: its median tokens/s per GPU over the capture against the rate expected of it (forensics analyze --expect-tokens-per-s); nothing is reported when no expectation is given
-- source: the reference is the user's (a benchmark or the same model on healthy hardware: seed 000's team compared 1,840 tokens/s/GPU with ~3,200 published for identical silicon). Reported below max_ratio (0.9) of it: a threshold of ours, twice the logged step-to-step spread of the real logs in tests/fixtures/train_log (within 5%), so a run at its reference never reads as short
-- param: expect_tokens_per_s = 0   expected tokens/s per GPU (analyze --expect-tokens-per-s); 0: none given, the detector reports nothing
-- param: max_ratio = 0.9   median logged tokens/s over expected below which the job falls short
WITH s AS (
  SELECT host, file, coalesce("rank", -1) AS rk, framework, line_no, step, ts, tokens_per_s
  FROM train_steps WHERE record = 'step' AND tokens_per_s > 0 AND NOT isnan(tokens_per_s)
), a AS (
  SELECT host, file, rk, any_value(framework) AS framework, count(*) AS n, median(tokens_per_s) AS med,
         min(tokens_per_s) AS lo, max(tokens_per_s) AS hi, min(ts) AS start, max(ts) AS "end",
         min(step) AS first_step, max(step) AS last_step, min(line_no) AS line_no
  FROM s GROUP BY ALL
)
SELECT host, 'training throughput' AS subject, start, "end",
       least(0.9, 0.5 + (1 - med / $expect_tokens_per_s)) AS score,
       framework || ' log ' || file || CASE WHEN rk >= 0 THEN ' (rank ' || rk || ')' ELSE '' END || ': '
         || int_text(med) || ' tokens/s per GPU (median of ' || n || ' logged step(s)'
         || coalesce(', steps ' || first_step || '-' || last_step, '') || '), '
         || int_text(100 * (1 - med / $expect_tokens_per_s)) || '% below the expected '
         || int_text($expect_tokens_per_s) || ' tokens/s per GPU' AS summary,
       to_json({metric: 'tokens/s per GPU', median: med, min: lo, max: hi, expected: $expect_tokens_per_s,
                shortfall_pct: 100 * (1 - med / $expect_tokens_per_s), steps: n, first_step: first_step,
                last_step: last_step, "rank": CASE WHEN rk >= 0 THEN rk END, framework: framework,
                first: {file: file, line_no: line_no}})::VARCHAR AS evidence
FROM a
WHERE $expect_tokens_per_s > 0 AND med < $max_ratio * $expect_tokens_per_s
ORDER BY start NULLS LAST, host
