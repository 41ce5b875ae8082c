-- kind: hang_origin
-- severity: critical
-- locality: cross
-- variant_of: hang_origin
-- (layer, root rank, causes, confirm and remediation are the kind's, declared in hang_origin.sql)
-- description: the rank(s) PyTorch's desync report (TORCH_NCCL_DESYNC_DEBUG) blames: finished a collective but never joined the next one, never joined any, or (when no rank is named so) joined the lowest collective and never finished it; on the host the launcher or the rank's own lines name; and the rank(s) whose collective differs under TORCH_DISTRIBUTED_DEBUG=DETAIL ("Detected mismatch between collectives on ranks"): the rank most reporting ranks name, when at least two name it and no other as often, else both ranks of each disagreeing pair (which of the two is wrong is then not known, and the summary says so)
-- source: PyTorch c10d TraceUtils.h retrieveDesyncReport: every rank records the start and end of its collectives in the c10d store; on a timeout the report reads them all and names the ranks whose last event is at the lowest collective (analyzeLaggingRanks) or that recorded none (analyzeMissingRanks). ProcessGroupWrapper.cpp (TORCH_DISTRIBUTED_DEBUG=DETAIL): before each collective every rank all-gathers the others' fingerprints (sequence number, op, shapes, dtypes, devices) and raises at the first rank whose fingerprint differs from its own, naming itself and that rank; so the rank that runs a different collective is named by every other reporting rank. No threshold: the reports name the ranks.
WITH d AS (
  SELECT * FROM nccl_desync WHERE state IN ('finished_not_joined', 'never_joined', 'joined_not_finished')
), pick AS (
  -- ranks that did not join come first; 'joined but did not finish' only where no report names such a rank
  SELECT * FROM d WHERE state <> 'joined_not_finished'
     OR NOT EXISTS (SELECT 1 FROM d d2 WHERE d2.state <> 'joined_not_finished')
), culprit AS (
  SELECT "rank", any_value(state) AS state, min(seq) AS seq, count(DISTINCT host || '/' || file) AS reports,
         list(DISTINCT host ORDER BY host) AS taken_on, min(file) AS file, min(line_no) AS line_no,
         (SELECT min(ts) FROM nccl_log l WHERE l.kind IN ('watchdog_timeout', 'watchdog_exception')) AS t0
  FROM pick GROUP BY "rank"
), mm AS (
  -- TORCH_DISTRIBUTED_DEBUG=DETAIL mismatches: the reporting rank and the rank whose fingerprint differs, per line
  SELECT r.host, r.file, r.line_no, r."rank" AS reporter, r.seq AS r_seq, r.op_type AS r_op,
         n."rank" AS named, n.seq AS n_seq, n.op_type AS n_op
  FROM nccl_desync r JOIN nccl_desync n ON n.host = r.host AND n.file = r.file AND n.line_no = r.line_no
                                         AND n.state = 'mismatch_named'
  WHERE r.state = 'mismatch_reporter'
), votes AS (
  SELECT named AS "rank", count(DISTINCT reporter) AS n_rep FROM mm GROUP BY named
), odd AS (
  -- the rank most reporters name, when at least two do and no other rank is named as often
  SELECT "rank" FROM votes WHERE n_rep >= 2 AND n_rep = (SELECT max(n_rep) FROM votes)
    AND (SELECT count(*) FROM votes v WHERE v.n_rep = (SELECT max(n_rep) FROM votes)) = 1
), side AS (
  -- each rank of a disagreeing pair with its own fingerprint and the other rank's
  SELECT named AS "rank", reporter AS other, n_seq AS seq, n_op AS op, r_seq AS o_seq, r_op AS o_op, host, file, line_no FROM mm
  UNION ALL
  SELECT reporter, named, r_seq, r_op, n_seq, n_op, host, file, line_no FROM mm
), mcul AS (
  SELECT s."rank", 'mismatch' AS state, min(s.seq) AS seq, count(DISTINCT s.other) AS reports,
         list(DISTINCT s.host ORDER BY s.host) AS taken_on, min(s.file) AS file, min(s.line_no) AS line_no,
         NULL::TIMESTAMPTZ AS t0,
         'runs ' || coalesce(any_value(s.op), '?') || coalesce(' (sequence number ' || min(s.seq) || ')', '')
           || ' where rank(s) ' || array_to_string(list(DISTINCT s.other ORDER BY s.other), ', ') || ' run '
           || array_to_string(list_sort(list(DISTINCT coalesce(s.o_op, '?') || coalesce(' (sequence number ' || s.o_seq || ')', ''))), ' / ')
           || CASE WHEN EXISTS (SELECT 1 FROM odd) THEN ' (named by ' || count(DISTINCT s.other) || ' reporting ranks)'
                   ELSE '; which of the two runs the wrong one is not known from these reports' END AS detail
  FROM side s
  WHERE CASE WHEN EXISTS (SELECT 1 FROM odd) THEN s."rank" IN (SELECT "rank" FROM odd) ELSE true END
  GROUP BY s."rank"
), culprits AS (
  SELECT *, NULL::VARCHAR AS detail FROM culprit
  UNION ALL BY NAME
  SELECT * FROM mcul
), own AS (
  -- the host of the rank's own lines (behind torchrun's [rankN]: prefix), when it is one host
  SELECT "rank", CASE WHEN count(DISTINCT host) = 1 THEN any_value(host) END AS host FROM nccl_log
  WHERE torchrun_rank(prefix, "rank") IS NOT NULL GROUP BY "rank"
), placed AS (
  SELECT c.*, coalesce(n.node, o.host) AS on_host,
         CASE WHEN n.node IS NOT NULL THEN array_to_string(n.how, '+') WHEN o.host IS NOT NULL THEN 'its own log lines' END AS host_from
  FROM culprits c LEFT JOIN rank_nodes n ON n."rank" = c."rank" AND n.n_nodes = 1 LEFT JOIN own o ON o."rank" = c."rank"
)
SELECT CASE WHEN on_host IS NULL THEN []::VARCHAR[] ELSE [on_host] END AS hosts,
       'rank ' || "rank" AS subject, t0 AS start, NULL::TIMESTAMPTZ AS "end", 0.9 AS score,
       CASE WHEN state = 'mismatch' THEN 'TORCH_DISTRIBUTED_DEBUG=DETAIL: rank ' || "rank" || ' ' || detail || '; '
            ELSE 'PyTorch desync report: rank ' || "rank" || ' '
         || CASE state WHEN 'finished_not_joined' THEN 'finished collective #' || (seq - 1) || ' but never joined #' || seq
                       WHEN 'never_joined' THEN 'never joined any collective'
                       ELSE 'joined collective #' || seq || ' and never finished it' END
         || ' (desync trace numbering, from 1), while the reporting ranks waited; ' END
         || coalesce('on ' || on_host || ' (host from ' || host_from || ')', 'its host is not known (report taken on '
                     || array_to_string(taken_on, ', ') || ')')
         || '; named by ' || reports || ' report(s)' AS summary,
       to_json({"rank": "rank", state: state, seq: seq, reports: reports, taken_on: taken_on, host_from: host_from,
                first: {file: file, line_no: line_no}})::VARCHAR AS evidence
FROM placed
ORDER BY "rank"
