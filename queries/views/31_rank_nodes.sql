-- rank_nodes: the host each global rank ran on, where the job's own output says so, one row per
-- (rank, node, how):
--   torchrun_failure / torchrun_root_cause: torchrun's ChildFailedError records (rank_hosts: the
--     elastic agent names its host, the worker's global and local rank);
--   nccl_header: an NCCL line behind torchrun's "[rankN]:" prefix, whose own header names its host
--     ("node03:1234:1240 [2] NCCL INFO ...": host as NCCL's gethostname() printed it);
--   process_env: a GPU process the collector recorded on that host with RANK=N in its environment
--     (torchrun sets RANK and LOCAL_RANK for each worker).
-- A rank with more than one node here (two jobs in one bundle, a restart on other hosts) is not
-- placed by it: `n_nodes` says how many.
CREATE OR REPLACE VIEW rank_nodes AS
WITH r AS (
    SELECT "rank", node, local_rank, how, file, line_no FROM rank_hosts WHERE "rank" IS NOT NULL AND node IS NOT NULL
    UNION ALL
    SELECT "rank", host AS node, NULL::INTEGER AS local_rank, 'nccl_header' AS how, file, line_no FROM nccl_log
    WHERE pid IS NOT NULL AND host IS NOT NULL AND torchrun_rank(prefix, "rank") IS NOT NULL
    UNION ALL
    SELECT TRY_CAST(e.value AS INTEGER) AS "rank", e.host AS node,
           (SELECT TRY_CAST(any_value(l.value) AS INTEGER) FROM process_env l
            WHERE l.host = e.host AND l.pid = e.pid AND l.key = 'LOCAL_RANK') AS local_rank,
           'process_env' AS how, e.file, e.line_no
    FROM process_env e WHERE e.key = 'RANK' AND TRY_CAST(e.value AS INTEGER) IS NOT NULL AND e.host IS NOT NULL
), g AS (
    SELECT "rank", node, any_value(local_rank) FILTER (WHERE local_rank IS NOT NULL) AS local_rank,
           list(DISTINCT how ORDER BY how) AS how, min(file) AS file, min(line_no) AS line_no
    FROM r GROUP BY "rank", node
)
SELECT *, count(*) OVER (PARTITION BY "rank") AS n_nodes FROM g;
-- placed_host(g_rank, taken_host): the host the job's launcher put global rank g_rank on (the
-- rank_nodes view, when it names one host), else `taken_host` (where the line was taken).
CREATE OR REPLACE MACRO placed_host(g_rank, taken_host) AS
    coalesce((SELECT any_value(n.node) FROM rank_nodes n WHERE n."rank" = g_rank AND n.n_nodes = 1), taken_host);
