-- kind: collective_timeout
-- severity: critical
-- locality: cross
-- layer: nccl
-- root_rank: 41
-- caused_by: hang_origin@path, pfc_storm@path, packet_drops@path, link_flap@path, ib_link_degraded@path, gpu_xid@path, ecc_error@path, nccl_transport_error@path, gpu_throttle@path, numa_misplacement@path, io_starvation@path, cpu_saturation@path, memory_pressure@path, straggler@path, nic_wedged@path, gpu_unreachable@path, pcie_aer@path, hung_task@path, cpu_stall@path, nvswitch_sxid@path
-- confirm: grep -E 'Watchdog caught|last completed' <logs>; py-spy dump on the lowest-SeqNum rank
-- remediation: A collective timed out: the rank with the lowest last-completed sequence number is the one the others waited for; investigate that rank's node first.
-- description: PyTorch NCCL watchdog timeouts; the rank with the lowest last-completed sequence number is the one the others waited for; a rank behind torchrun's [rankN]: prefix is on the host the launcher names for it (rank_nodes) where its log was taken elsewhere
-- source: PyTorch ProcessGroupNCCL watchdog messages (no threshold)
WITH t AS (
  -- a rank's host is the one the job's launcher names for it (rank_nodes), where its log was taken elsewhere
  SELECT placed_host(torchrun_rank(prefix, rank), host) AS host, rank, seq, op_type, timeout_ms, ran_ms, ts, file, line_no
  FROM nccl_log WHERE kind = 'watchdog_timeout'
), lc AS (
  -- "last completed NCCL work: N" (PyTorch 2.x prints it on the "detected by watchdog at work" and
  -- "Timeout at NCCL work" lines); older 'last_completed' lines without the number give their SeqNum
  SELECT placed_host(torchrun_rank(prefix, rank), host) AS host, rank, max(coalesce(last_completed, seq)) AS last_completed FROM nccl_log
  WHERE (kind = 'last_completed' OR last_completed IS NOT NULL) AND coalesce(last_completed, seq) IS NOT NULL
  GROUP BY ALL
), agg AS (
  SELECT min(ts) AS start, max(ts) AS "end", count(*) AS n, list(DISTINCT host ORDER BY host) AS hosts,
         list(DISTINCT rank ORDER BY rank) FILTER (WHERE rank IS NOT NULL) AS ranks,
         min(seq) AS min_seq, max(seq) AS max_seq, arg_min(op_type, {t: ts, f: file, l: line_no}) AS op_type, max(timeout_ms) AS timeout_ms,
         arg_min(line_no, {t: ts, f: file, l: line_no}) AS first_line, arg_min(file, {t: ts, f: file, l: line_no}) AS file
  FROM t
), slow AS (
  -- every rank at the lowest last completed SeqNum: ties are reported as ties (never broken by
  -- host name, so a redacted bundle names the same ranks), in rank order
  SELECT min(last_completed) AS last_completed, count(*) AS n_tied,
         CASE WHEN count(*) = 1 THEN any_value(host) END AS host,
         CASE WHEN count(*) = 1 THEN any_value(rank) END AS rank,
         list(DISTINCT rank ORDER BY rank) FILTER (WHERE rank IS NOT NULL) AS ranks,
         list({host: host, rank: rank} ORDER BY rank NULLS LAST) AS tied,
         string_agg(host || ' rank ' || coalesce(rank::VARCHAR, '?'), ', ' ORDER BY rank NULLS LAST) AS who
  FROM lc WHERE last_completed = (SELECT min(last_completed) FROM lc)
  HAVING count(*) > 0
)
SELECT agg.hosts AS hosts,
       coalesce(CASE WHEN len(slow.ranks) = 1 THEN 'rank ' || slow.ranks[1]
                     WHEN len(slow.ranks) > 1 AND list_max(slow.ranks) - list_min(slow.ranks) + 1 = len(slow.ranks)
                          THEN 'ranks ' || list_min(slow.ranks) || '-' || list_max(slow.ranks)
                     WHEN len(slow.ranks) > 1 THEN 'ranks ' || array_to_string(slow.ranks, ', ') END,
                'SeqNum ' || agg.min_seq) AS subject,
       agg.start, agg."end", 0.9 AS score,
       agg.n || ' watchdog timeouts (' || coalesce(agg.op_type, '?') || ', SeqNum ' || agg.min_seq
         || CASE WHEN agg.max_seq <> agg.min_seq THEN '-' || agg.max_seq ELSE '' END
         || ', timeout ' || coalesce(agg.timeout_ms / 1000, 0) || ' s) on ' || len(agg.hosts) || ' hosts'
         || coalesce('; lowest last completed work ' || slow.last_completed || ' on '
                     || CASE WHEN slow.n_tied > 1 THEN slow.n_tied || ' ranks alike (' || slow.who || ')' ELSE slow.who END, '') AS summary,
       to_json({timeouts: agg.n, ranks: agg.ranks, seq_min: agg.min_seq, seq_max: agg.max_seq, op_type: agg.op_type,
                timeout_ms: agg.timeout_ms, straggler_host: slow.host, straggler_rank: slow.rank,
                straggler_last_completed: slow.last_completed, lowest_ranks: slow.tied, first: {file: agg.file, line_no: agg.first_line}})::VARCHAR AS evidence
FROM agg LEFT JOIN slow ON true
WHERE agg.n > 0
