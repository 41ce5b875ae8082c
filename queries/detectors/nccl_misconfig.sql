-- kind: nccl_misconfig
-- severity: warning
-- locality: cross
-- layer: nccl
-- root_rank: 20
-- caused_by: none
-- confirm: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET <job>; env | grep NCCL_
-- remediation: Use the IB/RoCE transport with GPUDirect RDMA (load nvidia-peermem, NCCL_NET_GDR_LEVEL=5 or unset), NCCL_BUFFSIZE of at least 4 MiB (4194304) on 400G links, and the same NCCL version and settings on every node.
-- description: NCCL misconfiguration: Socket transport instead of IB/RoCE, GPUDirect RDMA off, small NCCL_BUFFSIZE, IB disabled, versions or settings that differ across hosts
-- source: NCCL environment variable documentation (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html): NCCL_BUFFSIZE default 4 MiB, NCCL_NET_GDR_LEVEL
-- param: min_buffsize = 4194304   smallest NCCL_BUFFSIZE (bytes) that keeps 400G links busy
WITH cfg AS (SELECT host, pid, key, value FROM nccl_config),
span AS (SELECT host, min(ts) AS t0, max(ts) AS t1 FROM nccl_log GROUP BY host),
rdma_hosts AS (SELECT DISTINCT host FROM nics WHERE rdma_dev IS NOT NULL
               UNION SELECT DISTINCT host FROM cfg WHERE key = 'ib_hca'),
issues AS (
  -- Socket transport
  SELECT host, 'NCCL_NET=Socket' AS subject, 'Socket transport in use instead of IB/RoCE' AS problem,
         'net=' || min(value) AS detail
  FROM cfg WHERE key = 'net' AND lower(value) LIKE 'socket%' GROUP BY host
  UNION ALL
  -- GPUDirect RDMA not used on IB channels
  SELECT host, 'GPUDirect RDMA off', 'network channels run without GPUDirect RDMA (via NET/IB without /GDRDMA): '
         || count(*) || ' channel connections staged through host memory',
         'channel_transport=' || min(value)
  FROM cfg WHERE key = 'channel_transport' AND value LIKE 'NET/IB%' AND value NOT LIKE '%GDR%'
  GROUP BY host
  UNION ALL
  SELECT host, 'GPUDirect RDMA off', 'GPU Direct RDMA disabled for ' || count(*) || ' HCA(s)',
         string_agg(DISTINCT key, ',' ORDER BY key)
  FROM cfg WHERE key LIKE 'gdr.%' AND lower(value) LIKE 'disabled%' AND host NOT IN (
    SELECT host FROM cfg WHERE key = 'channel_transport' AND value LIKE 'NET/IB%' AND value NOT LIKE '%GDR%')
  GROUP BY host
  UNION ALL
  -- small buffers
  SELECT host, 'NCCL_BUFFSIZE=' || min(value),
         'NCCL_BUFFSIZE ' || min(value) || ' bytes is below ' || $min_buffsize || ' (ring buffer starvation on fast links)',
         'env.NCCL_BUFFSIZE=' || min(value)
  FROM cfg WHERE key = 'env.NCCL_BUFFSIZE' AND TRY_CAST(regexp_extract(value, '^[0-9]+') AS BIGINT) < $min_buffsize
  GROUP BY host
  UNION ALL
  SELECT host, 'NCCL_IB_DISABLE=' || min(value), 'InfiniBand/RoCE disabled by NCCL_IB_DISABLE', 'env.NCCL_IB_DISABLE'
  FROM cfg WHERE key = 'env.NCCL_IB_DISABLE' AND trim(value) NOT IN ('0', '') GROUP BY host
  UNION ALL
  SELECT host, 'NCCL_NET_GDR_LEVEL=' || min(value), 'GPUDirect RDMA restricted by NCCL_NET_GDR_LEVEL=' || min(value),
         'env.NCCL_NET_GDR_LEVEL'
  FROM cfg WHERE key = 'env.NCCL_NET_GDR_LEVEL' AND upper(trim(value)) IN ('0', 'LOC') GROUP BY host
),
versions AS (
  SELECT key, value, list(DISTINCT host ORDER BY host) AS hosts FROM cfg
  WHERE key = 'version' OR (key LIKE 'env.%' AND key NOT IN ('env.NCCL_DEBUG', 'env.NCCL_DEBUG_FILE', 'env.NCCL_DEBUG_SUBSYS'))
  GROUP BY key, value
),
differ AS (
  SELECT key, count(*) AS variants, list(value || ' on ' || array_to_string(hosts[1:3], ',') ORDER BY value) AS which,
         flatten(list(hosts ORDER BY value)) AS hosts
  FROM versions GROUP BY key HAVING count(*) > 1
)
SELECT list(DISTINCT i.host ORDER BY i.host) AS hosts, i.subject,
       min(s.t0) AS start, max(s.t1) AS "end", 0.85 AS score,
       min(i.problem) || ' on ' || count(DISTINCT i.host) || ' host(s)' AS summary,
       to_json({problem: min(i.problem), detail: min(i.detail), hosts: list(DISTINCT i.host ORDER BY i.host)})::VARCHAR AS evidence
FROM issues i LEFT JOIN span s USING (host)
GROUP BY i.subject
UNION ALL
SELECT list_sort(list_distinct(d.hosts)) AS hosts,
       CASE WHEN d.key = 'version' THEN 'NCCL version' ELSE substr(d.key, 5) END AS subject,
       (SELECT min(t0) FROM span) AS start, (SELECT max(t1) FROM span) AS "end", 0.7 AS score,
       CASE WHEN d.key = 'version' THEN 'NCCL versions differ across hosts: ' ELSE d.key || ' differs across hosts: ' END
         || array_to_string(d.which, '; ') AS summary,
       to_json({key: d.key, variants: d.which})::VARCHAR AS evidence
FROM differ d
