-- kind: hang_origin
-- severity: critical
-- locality: cross
-- variant_of: hang_origin
-- (layer, root rank, causes, confirm and remediation are the kind's, declared in hang_origin.sql)
-- description: the rank(s) PyTorch's desync report (TORCH_NCCL_DESYNC_DEBUG) blames: finished a collective but never joined the next one, never joined any, or (when no rank is named so) joined the lowest collective and never finished it; on the host the launcher or the rank's own lines name
-- source: PyTorch c10d TraceUtils.h retrieveDesyncReport: every rank records the start and end of its collectives in the c10d store; on a timeout the report reads them all and names the ranks whose last event is at the lowest collective (analyzeLaggingRanks) or that recorded none (analyzeMissingRanks). No threshold: the report names the ranks.
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
), own AS (
  -- the host of the rank's own lines (behind torchrun's [rankN]: prefix), when it is one host
  SELECT "rank", CASE WHEN count(DISTINCT host) = 1 THEN any_value(host) END AS host FROM nccl_log
  WHERE torchrun_rank(prefix, "rank") IS NOT NULL GROUP BY "rank"
), placed AS (
  SELECT c.*, coalesce(n.node, o.host) AS on_host,
         CASE WHEN n.node IS NOT NULL THEN array_to_string(n.how, '+') WHEN o.host IS NOT NULL THEN 'its own log lines' END AS host_from
  FROM culprit c LEFT JOIN rank_nodes n ON n."rank" = c."rank" AND n.n_nodes = 1 LEFT JOIN own o ON o."rank" = c."rank"
)
SELECT CASE WHEN on_host IS NULL THEN []::VARCHAR[] ELSE [on_host] END AS hosts,
       'rank ' || "rank" AS subject, t0 AS start, NULL::TIMESTAMPTZ AS "end", 0.9 AS score,
       'PyTorch desync report: rank ' || "rank" || ' '
         || CASE state WHEN 'finished_not_joined' THEN 'finished collective #' || (seq - 1) || ' but never joined #' || seq
                       WHEN 'never_joined' THEN 'never joined any collective'
                       ELSE 'joined collective #' || seq || ' and never finished it' END
         || ' (desync trace numbering, from 1), while the reporting ranks waited; '
         || coalesce('on ' || on_host || ' (host from ' || host_from || ')', 'its host is not known (report taken on '
                     || array_to_string(taken_on, ', ') || ')')
         || '; named by ' || reports || ' report(s)' AS summary,
       to_json({"rank": "rank", state: state, seq: seq, reports: reports, taken_on: taken_on, host_from: host_from,
                first: {file: file, line_no: line_no}})::VARCHAR AS evidence
FROM placed
ORDER BY "rank"
