-- NUMA layout per host: each node's CPUs and memory with the GPUs, NICs and GPU processes attached to it.
-- @param host VARCHAR = NULL          only this host
WITH nodes AS (
    SELECT host, node, cpu_count, mem_total_mb, mem_free_mb, cpus FROM numa_nodes WHERE $host IS NULL OR host = $host
), g AS (
    SELECT host, numa_node AS node, list('gpu' || gpu || coalesce(' ' || pci_bus_id, '') ORDER BY gpu) AS gpus
    FROM gpus WHERE numa_node IS NOT NULL GROUP BY ALL
), n AS (
    SELECT host, numa_node AS node,
           list(iface || coalesce('/' || rdma_dev, '') || coalesce(' ' || pci_addr, '') ORDER BY iface) AS nics
    FROM nics WHERE numa_node IS NOT NULL GROUP BY ALL
), p AS (
    -- a process is on a node when all its allowed memory nodes are that node
    SELECT pr.host, m AS node,
           list('pid ' || pr.pid || ' gpus ' || coalesce(array_to_string(pr.gpus, ','), '?') || ' cpus '
                || coalesce(pr.cpus_allowed_list, '?') ORDER BY pr.pid) AS processes
    FROM processes pr, unnest(pr.mems_allowed) AS u(m)
    GROUP BY ALL
), every AS (
    SELECT host, node FROM nodes UNION SELECT host, node FROM g UNION SELECT host, node FROM n
)
SELECT e.host, e.node, nodes.cpu_count, nodes.mem_total_mb, nodes.mem_free_mb,
       g.gpus, n.nics, p.processes,
       CASE WHEN nodes.cpus IS NULL THEN NULL
            ELSE list_min(nodes.cpus) || '-' || list_max(nodes.cpus) || ' (' || len(nodes.cpus) || ' CPUs)' END AS cpu_span
FROM every e
LEFT JOIN nodes USING (host, node)
LEFT JOIN g USING (host, node)
LEFT JOIN n USING (host, node)
LEFT JOIN p USING (host, node)
WHERE $host IS NULL OR e.host = $host
ORDER BY e.host, e.node;
