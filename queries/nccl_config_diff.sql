-- NCCL settings (version, network, GPUDirect RDMA, NCCL_* environment, transports) that differ across hosts.
-- @param all_keys BOOLEAN = false     also list keys that are the same everywhere
WITH cfg AS (
    SELECT host, key, value FROM nccl_config
    WHERE key NOT IN ('comm_id', 'cpu_affinity') AND value IS NOT NULL
    UNION
    SELECT host, 'env.' || key, value FROM process_env WHERE key LIKE 'NCCL%'
), per_host AS (
    SELECT key, host, string_agg(DISTINCT value, ' | ' ORDER BY value) AS value FROM cfg GROUP BY key, host
), all_hosts AS (SELECT count(DISTINCT host) AS n FROM cfg)
SELECT p.key,
       count(DISTINCT p.value) + CASE WHEN count(DISTINCT p.host) < any_value(a.n) THEN 1 ELSE 0 END AS variants,
       any_value(a.n) - count(DISTINCT p.host) AS hosts_without,
       list(DISTINCT p.value ORDER BY p.value) AS values,
       string_agg(p.host || '=' || p.value, ', ' ORDER BY p.host) AS by_host
FROM per_host p, all_hosts a
GROUP BY p.key
HAVING $all_keys OR count(DISTINCT p.value) > 1 OR count(DISTINCT p.host) < any_value(a.n)
ORDER BY variants DESC, p.key;
