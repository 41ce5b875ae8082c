-- kind: numa_misplacement
-- severity: warning
-- locality: host
-- layer: numa
-- root_rank: 21
-- caused_by: none
-- confirm: numactl -H; nvidia-smi topo -m; taskset -cp <pid>; grep -E 'Cpus_allowed_list|Mems_allowed_list' /proc/<pid>/status
-- remediation: Pin each worker to the NUMA node of its GPU and NIC (numactl --cpunodebind=N --membind=N, or the launcher's --cpu-bind); avoid cross-socket DMA.
-- description: GPU worker processes pinned to CPUs or memory of a NUMA node other than their GPU's (cross-socket DMA and interrupts)
-- source: a process's allowed CPUs against its GPU's NUMA affinity (nvidia-smi topo -m): a fraction, no physical threshold
-- param: min_local_fraction = 0.5   fraction of a process's allowed CPUs that should sit on its GPU's NUMA node
WITH node_cpu AS (
  SELECT host, node, unnest(cpus) AS cpu FROM numa_nodes
), nodes_per_host AS (
  SELECT host, count(DISTINCT node) AS n_nodes, count(*) AS n_cpus FROM node_cpu GROUP BY host
), gpu_node AS (
  SELECT host, gpu, any_value(numa_node) AS numa_node FROM gpus WHERE numa_node IS NOT NULL GROUP BY ALL
), proc AS (
  SELECT p.host, p.pid, p.command, unnest(p.gpus) AS gpu, p.cpus_allowed, p.mems_allowed, p.cpus_allowed_list,
         p.mems_allowed_list
  FROM processes p WHERE p.gpus IS NOT NULL AND len(p.gpus) > 0
), placed AS (
  SELECT pr.host, pr.pid, pr.gpu, g.numa_node AS gpu_node, pr.cpus_allowed_list, pr.mems_allowed_list,
         len(pr.cpus_allowed) AS n_allowed,
         (SELECT count(*) FROM node_cpu nc WHERE nc.host = pr.host AND nc.node = g.numa_node
            AND list_contains(pr.cpus_allowed, nc.cpu)) AS n_local,
         pr.mems_allowed, nh.n_cpus
  FROM proc pr JOIN gpu_node g USING (host, gpu) JOIN nodes_per_host nh USING (host)
  WHERE nh.n_nodes > 1
), bad AS (
  SELECT *, n_local / greatest(n_allowed, 1) AS local_fraction FROM placed
  WHERE n_allowed > 0 AND n_allowed < n_cpus  -- pinned at all
    AND (n_local / greatest(n_allowed, 1) < $min_local_fraction
         OR (mems_allowed IS NOT NULL AND len(mems_allowed) > 0 AND NOT list_contains(mems_allowed, gpu_node)))
), span AS (  -- the capture's span, for the hosts with a finding only
  SELECT host, min(ts) AS t0, max(ts) AS t1 FROM gpu_samples WHERE host IN (SELECT host FROM bad) GROUP BY host
)
SELECT b.host, 'GPU' || string_agg(b.gpu::VARCHAR, ',GPU' ORDER BY b.gpu) AS subject,
       min(s.t0) AS start, max(s.t1) AS "end", 0.8 AS score,
       count(*) || ' GPU worker process(es) on ' || b.host || ' run on CPUs/memory of another NUMA node than their GPU: '
         || string_agg('pid ' || b.pid || ' GPU' || b.gpu || ' (node ' || b.gpu_node || ') cpus ' || b.cpus_allowed_list
                       || ' mems ' || coalesce(b.mems_allowed_list, '?'), '; ' ORDER BY b.gpu) AS summary,
       to_json({processes: list({pid: b.pid, gpu: b.gpu, gpu_numa_node: b.gpu_node, cpus_allowed: b.cpus_allowed_list,
                                 mems_allowed: b.mems_allowed_list, local_cpu_fraction: round(b.local_fraction, 2)} ORDER BY b.gpu)})::VARCHAR AS evidence
FROM bad b LEFT JOIN span s USING (host)
GROUP BY b.host
