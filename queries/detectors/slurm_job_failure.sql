-- kind: slurm_job_failure
-- severity: critical
-- locality: cross
-- layer: job
-- root_rank: 38
-- caused_by: gpu_xid@host, gpu_unreachable@host, ecc_error@host, pcie_aer@host, nvswitch_sxid@host, nic_wedged@host, link_flap@host, hung_task@host, cpu_stall@host, memory_pressure@host, io_starvation@host, hang_origin@host
-- confirm: sacct -j <job> --format=JobID,State,ExitCode,Elapsed,NodeList,FailedNode; scontrol show node <node>
-- remediation: Slurm ended the job itself. NODE_FAIL/BOOT_FAIL: look at the node it names (else every node of the job) for what took it away (kernel log, Xid, NIC, power) and keep it out of the next allocation until it passes its checks. OUT_OF_MEMORY: a step on those nodes exceeded its memory limit (host RAM: data loaders, pinned buffers), not GPU memory. TIMEOUT: the job ran to its time limit; if it should have finished, it was most likely hung: look for where it stopped (hang_origin).
-- description: Slurm's own record (scontrol show job, sacct, squeue in the bundle) that a job or step ended NODE_FAIL or BOOT_FAIL (on the node FailedNode names, else on every node of the job), OUT_OF_MEMORY or TIMEOUT (warning: also how a run planned to end at its limit ends)
-- source: Slurm job state codes (sacct(1), squeue(1) JOB STATE CODES; job_state_string in src/common/slurm_protocol_defs.c): NODE_FAIL "terminated due to failure of one or more allocated nodes", BOOT_FAIL "terminated due to launch failure, typically due to a hardware failure", OUT_OF_MEMORY "experienced out of memory error", TIMEOUT "terminated upon reaching its time limit"; FailedNode= of scontrol (src/scontrol/info_job.c) and sacct. No threshold: Slurm's verdict.
WITH r AS (
  SELECT * FROM slurm_jobs
  WHERE state IN ('NODE_FAIL', 'BOOT_FAIL', 'OUT_OF_MEMORY', 'TIMEOUT') AND job_id IS NOT NULL
), j AS (
  -- one finding per job and state, from every output and host that recorded it
  SELECT job_id, state, list(DISTINCT coalesce(step, 'job') ORDER BY coalesce(step, 'job')) AS steps,
         any_value(failed_node) FILTER (WHERE failed_node IS NOT NULL) AS failed_node,
         any_value(reason) FILTER (WHERE reason IS NOT NULL) AS reason,
         any_value(exit_status) FILTER (WHERE step IS NULL) AS exit_status,
         any_value(exit_signal) FILTER (WHERE step IS NULL) AS exit_signal,
         min(start) AS t_start, max("end") AS t_end, list(DISTINCT how ORDER BY how) AS how,
         list(DISTINCT host ORDER BY host) AS taken_on, min(file) AS file, min(line_no) AS line_no
  FROM r GROUP BY job_id, state
), n AS (
  SELECT job_id, list(DISTINCT node ORDER BY node) AS nodes, count(DISTINCT node) AS n_nodes
  FROM slurm_job_nodes WHERE node IS NOT NULL GROUP BY job_id
), l AS (
  SELECT job_id, any_value(node_list) FILTER (WHERE node_list IS NOT NULL) AS node_list,
         max(failed_node) AS any_failed_node, max(start) FILTER (WHERE step IS NULL) AS job_start
  FROM slurm_jobs WHERE job_id IS NOT NULL GROUP BY job_id
)
SELECT CASE WHEN coalesce(j.failed_node, l.any_failed_node) IS NOT NULL AND j.state IN ('NODE_FAIL', 'BOOT_FAIL')
            THEN [coalesce(j.failed_node, l.any_failed_node)]
            ELSE coalesce(n.nodes[1:64], j.taken_on) END AS hosts,
       'job ' || j.job_id AS subject,
       coalesce(j.t_end, j.t_start, l.job_start) AS start, j.t_end AS "end",
       CASE WHEN j.state = 'TIMEOUT' THEN 'warning' ELSE 'critical' END AS severity,
       CASE WHEN j.state = 'TIMEOUT' THEN 0.5 ELSE 0.9 END AS score,
       'Slurm: job ' || j.job_id
         || CASE WHEN j.steps = ['job'] THEN '' ELSE ' (' || array_to_string(j.steps, ', ') || ')' END
         || ' ended ' || j.state
         || coalesce(' (exit ' || j.exit_status || ':' || j.exit_signal || ')', '')
         || coalesce(', reason ' || j.reason, '')
         || CASE WHEN j.state IN ('NODE_FAIL', 'BOOT_FAIL') THEN
                 coalesce('; failed node ' || coalesce(j.failed_node, l.any_failed_node),
                          '; Slurm does not say which of its ' || coalesce(n.n_nodes::VARCHAR, '?') || ' node(s) failed'
                          || coalesce(' (' || l.node_list || ')', ''))
                 WHEN j.state = 'TIMEOUT' THEN '; it ran to its time limit (hung, or planned to end there)'
                 ELSE coalesce(' on ' || l.node_list, '') END
         || CASE WHEN n.nodes IS NULL THEN '; its node list is not in the bundle (hosts: where the output was taken)' ELSE '' END
         || ' [' || array_to_string(j.how, ', ') || ']' AS summary,
       to_json({job: j.job_id, job_id: j.job_id, state: j.state, steps: j.steps,
                failed_node: coalesce(j.failed_node, l.any_failed_node), node: coalesce(j.failed_node, l.any_failed_node),
                reason: j.reason, exit_status: j.exit_status, exit_signal: j.exit_signal, node_list: l.node_list,
                n_nodes: n.n_nodes, "from": j.how, taken_on: j.taken_on, first: {file: j.file, line_no: j.line_no}})::VARCHAR AS evidence
FROM j LEFT JOIN n USING (job_id) LEFT JOIN l USING (job_id)
ORDER BY start NULLS LAST, subject, j.state
