-- kind: dcgm_diag_failure
-- severity: critical
-- locality: host
-- layer: gpu
-- root_rank: 11
-- caused_by: gpu_xid@host, ecc_error@host, gpu_unreachable@host, pcie_aer@host
-- confirm: dcgmi diag -r 3 -j (the failing test's warnings and error codes); nvidia-smi -q -d ECC,ROW_REMAPPER; dmesg -T | grep -i xid; systemctl status nvidia-fabricmanager
-- remediation: Act on the failing test's message: a hardware test (Integration, Hardware, Stress: PCIe, GPU Memory, Memtest, Diagnostic, Targeted Stress/Power, Memory Bandwidth) failing means drain the node and follow the message (reset the GPU, activate pending row remaps, check the fabric manager or the PCIe link, RMA if it repeats); a Deployment check failing (persistence mode, environment, page retirement/row remap, inforom, denylist) means fix the node's configuration or the GPU state it names before the next job.
-- description: DCGM's diagnostic (dcgmi diag) failed or warned on a test: its own verdict that a GPU or the node's GPU software stack does not meet the test's criteria, with the message it printed
-- source: NVIDIA DCGM user guide, "DCGM Diagnostics" (dcgmi diag levels 1-4; each plugin's Pass/Fail/Warn/Skip verdict; level 1 = deployment checks, 2-4 add hardware and stress plugins) and dcgm_errors.h (the DCGM_FR_* messages): Fail is DCGM's verdict, no threshold of ours; Warn is a warning; Skip and Not Run tested nothing and give no finding. A Deployment failure is configuration or GPU state (warning unless it names row remaps or retired pages, which are memory faults: critical), a failure of the other categories is hardware (critical)
WITH f AS (
  SELECT host, sample_no, file, category, test, result, gpus, gpu, ts, line_no, dcgm_version
  FROM dcgm_diag WHERE record = 'result' AND result IN ('fail', 'warn')
), m AS (
  SELECT host, sample_no, file, test, string_agg(message, ' | ' ORDER BY line_no) AS messages,
         min(gpu) FILTER (WHERE gpu IS NOT NULL) AS msg_gpu, count(DISTINCT gpu) AS msg_gpus
  FROM dcgm_diag WHERE record IN ('warning', 'error') GROUP BY ALL
), j AS (
  SELECT f.*, m.messages, CASE WHEN f.gpu IS NOT NULL THEN f.gpu WHEN m.msg_gpus = 1 THEN m.msg_gpu END AS one_gpu
  FROM f LEFT JOIN m USING (host, sample_no, file, test)
)
SELECT host, coalesce('GPU' || one_gpu || ' ', '') || test AS subject, ts AS start, ts AS "end",
       CASE WHEN result = 'fail' THEN 0.8 ELSE 0.5 END AS score,
       CASE WHEN result = 'warn' THEN 'warning'
            WHEN category = 'Deployment' AND NOT regexp_matches(test || coalesce(messages, ''), '(?i)row remap|retire') THEN 'warning'
            ELSE 'critical' END AS severity,
       'DCGM diagnostic ' || upper(result) || ' on ' || host || ': ' || coalesce(category || ' / ', '') || test
         || CASE WHEN one_gpu IS NOT NULL THEN ' (GPU ' || one_gpu || ')' WHEN gpus IS NOT NULL THEN ' (' || gpus || ')' ELSE '' END
         || coalesce(': ' || left(messages, 300), '') AS summary,
       to_json({category: category, test: test, result: result, gpus: gpus, gpu: one_gpu, messages: messages,
                dcgm_version: dcgm_version, first: {file: file, line_no: line_no}})::VARCHAR AS evidence
FROM j
ORDER BY start, host, test
