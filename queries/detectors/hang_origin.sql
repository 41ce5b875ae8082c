-- kind: hang_origin
-- severity: critical
-- locality: cross
-- layer: job
-- root_rank: 35
-- caused_by: gpu_xid@host, gpu_unreachable@host, ecc_error@host, pcie_aer@host, nic_wedged@host, link_flap@host, hung_task@host, cpu_stall@host, memory_pressure@host, io_starvation@host, cpu_saturation@host
-- confirm: grep -E 'Watchdog caught|last enqueued|Last enqueued|PG status' <logs of every rank>; py-spy dump --pid <pid> on its host (the named rank's process)
-- remediation: The named rank stopped first: it never entered (or never finished) the collective every other rank of its process group reached, so their watchdog timeouts are its consequence. Investigate that rank on that host first (py-spy dump of its stack, its host's kernel log, GPU and NIC), not the ranks that timed out.
-- description: the rank(s) whose last enqueued (or last completed) collective sequence number in a process group is behind the others' when the job hung, from the PyTorch watchdog and dump-signal lines of every rank and from Flight Recorder dumps (pg_status); a rank's host is the one the launcher named (rank_nodes) where its log was taken elsewhere
-- source: PyTorch ProcessGroupNCCL: each work item of a process group gets the next sequence number when a rank enqueues it (lastEnqueuedSeq_) and counts as completed when its CUDA event finished (lastCompletedSeq_); a collective completes on no rank until every member entered it. So the collective the timed-out ranks wait in (the lowest SeqNum of their timeouts; else the highest completed + 1) is one a rank whose last enqueued number is below it never entered; failing that, a rank whose last completed number is below the others' is the one behind. No threshold: sequence numbers are exact counts; ranks that printed nothing cannot be placed and are not named.
WITH p AS (
  -- a line of a rank whose host the job's launcher named (rank_nodes: torchrun's failure records,
  -- NCCL headers behind "[rankN]:") is that host's, wherever its log was taken (one merged stdout)
  SELECT c.* REPLACE (coalesce(n.node, c.host) AS host),
         CASE WHEN n.node IS NOT NULL AND n.node <> c.host THEN c.host END AS taken_on,
         CASE WHEN n.node IS NOT NULL AND n.node <> c.host THEN array_to_string(n.how, '+') END AS placed_by
  FROM collective_progress c LEFT JOIN rank_nodes n ON n."rank" = c.global_rank AND n.n_nodes = 1
), tagged AS (
  -- lines without a PG prefix ("[Rank 7] Watchdog caught ... SeqNum=S") take the group of the same
  -- rank's PG-prefixed line with the same sequence number
  SELECT p.* REPLACE (coalesce(p.pg, (SELECT any_value(q.pg) FROM p q WHERE q.host = p.host AND q."rank" IS NOT DISTINCT FROM p."rank"
                                        AND q.seq = p.seq AND q.pg IS NOT NULL)) AS pg)
  FROM p
), st AS (
  SELECT pg, host, "rank", any_value(pg_desc) AS pg_desc, any_value(group_rank) AS group_rank,
         max(last_enqueued) AS enq, max(last_completed) AS comp,
         min(seq) FILTER (WHERE kind IN ('watchdog_timeout', 'watchdog_exception')) AS stuck_seq,
         any_value(op_type) FILTER (WHERE kind IN ('watchdog_timeout', 'watchdog_exception') AND op_type IS NOT NULL) AS op_type,
         max(timeout_ms) AS timeout_ms,
         min(ts - to_milliseconds(coalesce(ran_ms, 0))) AS t_hang, min(ts) AS t0, max(ts) AS t1,
         min(line_no) AS line_no, any_value(file) AS file,
         any_value(taken_on) AS taken_on, any_value(placed_by) AS placed_by
  FROM tagged WHERE pg IS NOT NULL GROUP BY pg, host, "rank"
), g AS (
  SELECT pg, any_value(pg_desc) AS pg_desc, count(*) AS n, max(enq) AS max_enq, max(comp) AS max_comp,
         coalesce(min(stuck_seq), max(comp) + 1) AS target, min(stuck_seq) AS stuck_seq,
         arg_min(op_type, stuck_seq) FILTER (WHERE op_type IS NOT NULL) AS op_type,
         max(timeout_ms) AS timeout_ms, count(*) FILTER (WHERE stuck_seq IS NOT NULL) AS n_timed_out,
         min(t_hang) AS t_hang, max(t1) AS t_end
  FROM st GROUP BY pg HAVING count(*) >= 2
), gop AS (
  -- the operation of the collective the origin never entered (or never finished), from any rank's
  -- line or Flight Recorder entry of that sequence number when no timeout line names it
  SELECT g.* REPLACE (coalesce(g.op_type, (SELECT any_value(t.op_type) FROM tagged t WHERE t.pg = g.pg AND t.op_type IS NOT NULL
                                             AND t.seq = g.target)) AS op_type)
  FROM g
), b AS (
  SELECT st.*, g.target, g.max_enq, g.max_comp, g.n,
         st.enq IS NOT NULL AND st.enq < g.target AS never_entered,
         st.comp IS NOT NULL AND st.comp < g.max_comp AS not_completed
  FROM st JOIN g USING (pg)
), o AS (
  -- the origin of each group: ranks that never entered the target collective; else the ranks with
  -- the lowest last completed number, when it is below another rank's
  SELECT b.* FROM b
  WHERE CASE WHEN (SELECT count(*) FROM b b2 WHERE b2.pg = b.pg AND b2.never_entered) > 0 THEN b.never_entered
             ELSE b.not_completed AND b.comp = (SELECT min(b3.comp) FROM b b3 WHERE b3.pg = b.pg) END
), og AS (
  SELECT pg, count(*) AS n_origin, list(DISTINCT host ORDER BY host) AS hosts,
         list("rank" ORDER BY "rank" NULLS LAST) AS ranks,
         string_agg(coalesce('rank ' || "rank", 'group rank ' || group_rank, '?') || ' on ' || host || ' (last enqueued '
                    || coalesce(enq::VARCHAR, '?') || ', last completed ' || coalesce(comp::VARCHAR, '?')
                    || coalesce('; host from ' || placed_by || ', log taken on ' || taken_on, '') || ')', ', '
                    ORDER BY "rank" NULLS LAST) AS who,
         list({"rank": "rank", host: host, "from": placed_by, log_taken_on: taken_on} ORDER BY "rank")
           FILTER (WHERE placed_by IS NOT NULL) AS placed,
         bool_or(never_entered) AS never_entered, min(t0) AS t0, min(file) AS file, min(line_no) AS line_no
  FROM o GROUP BY pg
), opid AS (
  -- the process of a lone origin rank, where the bundle names one: the GPU process on its host whose
  -- RANK variable is that rank (collect's process record), torchrun's failure record of that rank, else
  -- the pid of the NCCL header lines behind its [rankN]: prefix (one pid, or none)
  SELECT og.pg, coalesce(
           (SELECT CASE WHEN count(DISTINCT e.pid) = 1 THEN any_value(e.pid) END FROM process_env e
            WHERE e.key = 'RANK' AND e.value = og.ranks[1]::VARCHAR AND e.host = og.hosts[1]),
           (SELECT CASE WHEN count(DISTINCT h.pid) = 1 THEN any_value(h.pid) END FROM rank_hosts h
            WHERE h."rank" = og.ranks[1] AND h.pid IS NOT NULL),
           (SELECT CASE WHEN count(DISTINCT l.pid) = 1 THEN any_value(l.pid) END FROM nccl_log l
            WHERE l.pid IS NOT NULL AND torchrun_rank(l.prefix, l."rank") = og.ranks[1])) AS pid
  FROM og WHERE og.n_origin = 1 AND og.ranks[1] IS NOT NULL
), sg AS (
  -- the sequence numbers per rank group (ranks with the same last enqueued and last completed)
  SELECT pg, enq, comp, count(*) AS n_ranks, list("rank" ORDER BY "rank" NULLS LAST)[1:64] AS ranks,
         list(DISTINCT host ORDER BY host)[1:16] AS hosts, count(DISTINCT host) AS n_hosts
  FROM b GROUP BY pg, enq, comp
), sgl AS (
  SELECT pg, list({last_enqueued: enq, last_completed: comp, n_ranks: n_ranks, ranks: ranks, n_hosts: n_hosts, hosts: hosts}
                  ORDER BY enq NULLS FIRST, comp NULLS FIRST) AS groups
  FROM sg GROUP BY pg
)
SELECT og.hosts AS hosts,
       CASE WHEN og.n_origin = 1 THEN coalesce('rank ' || og.ranks[1], 'PG ' || og.pg)
            ELSE 'ranks ' || array_to_string(og.ranks, ', ') END AS subject,
       coalesce(g.t_hang, og.t0) AS start, g.t_end AS "end", 0.95 AS score,
       og.who || CASE WHEN og.never_entered THEN ' never entered collective ' ELSE ' did not complete collective ' END
         || CASE WHEN og.never_entered THEN g.target ELSE g.max_comp END
         || coalesce(' (' || g.op_type || ')', '') || ' of process group ' || og.pg || coalesce(' (' || g.pg_desc || ')', '')
         || ' that the group''s other ' || (g.n - og.n_origin) || ' reporting rank(s) reached (last enqueued up to '
         || coalesce(g.max_enq::VARCHAR, '?') || ', last completed up to ' || coalesce(g.max_comp::VARCHAR, '?') || ')'
         || CASE WHEN g.n_timed_out > 0 THEN '; ' || g.n_timed_out || ' rank(s) then timed out'
                 || coalesce(' after ' || (g.timeout_ms // 1000) || ' s', '') ELSE '' END AS summary,
       to_json({pg: og.pg, pg_desc: g.pg_desc, op_type: g.op_type, target_seq: g.target, timed_out_seq: g.stuck_seq,
                timeout_ms: g.timeout_ms, origin_ranks: og.ranks, origin: og.who, never_entered: og.never_entered,
                reporting_ranks: g.n, timed_out_ranks: g.n_timed_out, seq_groups: sgl.groups, hosts_from_launcher: og.placed,
                pid: opid.pid,
                first: {file: og.file, line_no: og.line_no}})::VARCHAR AS evidence
FROM og JOIN gop g USING (pg) JOIN sgl USING (pg) LEFT JOIN opid USING (pg)
WHERE og.n_origin < g.n
ORDER BY start NULLS LAST, og.pg
