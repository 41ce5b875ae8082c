-- kind: hang_origin
-- severity: critical
-- locality: cross
-- variant_of: hang_origin
-- (layer, root rank, causes, confirm and remediation are the kind's, declared in hang_origin.sql)
-- description: the process(es) and communicator rank(s) an NCCL RAS report names as not answering (INCOMPLETE), dead (DEAD, PEER_DEAD) or missing (JSON missing_ranks), on the node RAS names, mapped to the bundle's host by the NCCL bootstrap/socket address of that host's logs
-- source: NCCL RAS (docs/userguide/source/troubleshooting/ras.rst, src/ras/client_support.cc): every process's RAS thread answers the client's collective query and keep-alives; a process that does not answer is reported missing, and after 60 s without contact declared dead. No threshold: the report names the processes.
WITH r AS (
  SELECT * FROM nccl_ras
  WHERE problem IN ('DEAD', 'PEER_DEAD', 'missing') OR (problem LIKE 'INCOMPLETE%' AND (pid IS NOT NULL OR "rank" IS NOT NULL))
), procs AS (
  -- processes named by pid (job-wide blocks, monitor events, rank lines of 2.26+, JSON)
  SELECT host AS taken_on, file, node, pid, any_value(gpu) AS gpu, any_value("rank") FILTER (WHERE "rank" IS NOT NULL) AS "rank",
         any_value(comm_hash) FILTER (WHERE comm_hash IS NOT NULL) AS comm_hash,
         list(DISTINCT problem ORDER BY problem) AS problems, min(ts) AS t0, max(ts) AS t1, min(line_no) AS line_no
  FROM r WHERE pid IS NOT NULL GROUP BY host, file, node, pid
), lone AS (
  -- 2.24 names a missing rank without its process: it is the process when the report misses exactly one of each
  SELECT file, any_value("rank") AS "rank", any_value(comm_hash) AS comm_hash, count(DISTINCT "rank") AS n
  FROM r WHERE pid IS NULL AND "rank" IS NOT NULL GROUP BY file
), named AS (
  SELECT p.* REPLACE (coalesce(p."rank", CASE WHEN l.n = 1 AND (SELECT count(*) FROM procs q WHERE q.file = p.file) = 1
                                              THEN l."rank" END) AS "rank",
                      coalesce(p.comm_hash, CASE WHEN l.n = 1 THEN l.comm_hash END) AS comm_hash)
  FROM procs p LEFT JOIN lone l USING (file)
), addr AS (
  -- the bundle host whose NCCL logs bootstrapped on that address
  SELECT DISTINCT host, regexp_extract(value, ':([0-9A-Fa-f.:]+)<', 1) AS ip FROM nccl_config
  WHERE key IN ('bootstrap_if', 'socket_if', 'oob_if') AND regexp_extract(value, ':([0-9A-Fa-f.:]+)<', 1) <> ''
), placed AS (
  SELECT n.*, coalesce((SELECT CASE WHEN count(DISTINCT a.host) = 1 THEN any_value(a.host) END FROM addr a WHERE a.ip = n.node),
                       n.node) AS on_host
  FROM named n
)
SELECT [on_host] AS hosts,
       coalesce('rank ' || "rank", 'process ' || pid) AS subject,
       t0 AS start, t1 AS "end", 0.9 AS score,
       'NCCL RAS: process ' || pid || ' on node ' || node || coalesce(' (GPU ' || gpu || ')', '')
         || coalesce(', rank ' || "rank", '') || coalesce(' of communicator ' || comm_hash, '')
         || CASE WHEN list_has_any(problems, ['DEAD', 'PEER_DEAD']) THEN ' is considered dead (unreachable via the RAS network)'
                 ELSE ' did not answer the RAS query the other processes answered' END
         || CASE WHEN on_host <> node THEN ' (node ' || node || ' is ' || on_host || ' by its NCCL bootstrap address)' ELSE '' END
         || '; report taken on ' || taken_on AS summary,
       to_json({pid: pid, node: node, gpu: gpu, "rank": "rank", comm_hash: comm_hash, problems: problems,
                report: {file: file, line_no: line_no}, taken_on: taken_on})::VARCHAR AS evidence
FROM placed
ORDER BY start NULLS LAST, subject
