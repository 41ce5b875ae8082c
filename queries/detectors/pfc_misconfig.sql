-- kind: pfc_misconfig
-- severity: critical
-- locality: cross
-- layer: nic_fabric
-- root_rank: 19
-- caused_by: none
-- confirm: mlnx_qos -i <iface> on this host and on a peer (trust state, PFC enabled row, dscp2prio); cat /sys/class/infiniband/<dev>/tc/1/traffic_class; echo $NCCL_IB_TC; the switch port's PFC/trust configuration
-- remediation: Make the RoCE QoS identical on every node and switch port of the fabric: the same trust mode (dscp for RoCE v2, which carries no VLAN priority), PFC enabled on the one priority RDMA traffic uses (mlnx_qos -i <iface> --trust dscp --pfc 0,0,0,1,0,0,0,0 for priority 3), and the traffic's DSCP (NCCL_IB_TC = DSCP x 4, e.g. 106 for DSCP 26 with ECN) mapped to that priority; persist it across reboots.
-- description: RoCE QoS that cannot be lossless end to end: a host whose trust mode or PFC-enabled priorities on an interface differ from the other hosts' same interface, or an NCCL traffic class (NCCL_IB_TC) whose DSCP maps to a priority without PFC on that host
-- source: NVIDIA (Mellanox) RoCE configuration guidance for lossless fabrics (MLNX_OFED user manual, "Quality of Service" / mlnx_qos; NVIDIA networking "RoCE configuration for ConnectX" recommended configuration): PFC must be enabled on the same priority at every hop, RoCE v2 classification needs trust dscp, and RDMA traffic must be marked with a DSCP mapped to the PFC priority; NCCL_IB_TC is the IB traffic class NCCL sets on its QPs (NCCL environment variables documentation), DSCP = NCCL_IB_TC >> 2. A configuration difference is a finding by itself (no threshold); the majority of hosts is taken as the intended setting; two hosts that differ: the one with the recommended setting (trust dscp, PFC on one priority) is taken as intended, and where neither or both have it, both are named
WITH q AS (  -- the last output per host and interface
  SELECT * FROM nic_qos WHERE iface IS NOT NULL
  QUALIFY sample_no = max(sample_no) OVER (PARTITION BY host, file, iface)
), cfg AS (  -- one configuration per host and interface: the latest output's (deterministic on ties)
  SELECT host, iface, arg_max(trust, {t: ts, f: file, s: sample_no, l: line_no}) AS trust,
         coalesce(string_agg(CAST(priority AS VARCHAR), ',' ORDER BY priority) FILTER (WHERE pfc_enabled), 'none') AS pfc,
         min({f: file, l: line_no}) AS first, max(ts) AS ts
  FROM q GROUP BY host, iface
), votes AS (
  SELECT iface, trust, pfc, count(*) AS n, count(*) OVER (PARTITION BY iface) AS variants,
         sum(count(*)) OVER (PARTITION BY iface) AS hosts,
         -- NVIDIA's recommended RoCE v2 setting: trust dscp and PFC on exactly one priority
         coalesce(trust = 'dscp', false) AND regexp_full_match(pfc, '[0-7]') AS recommended
  FROM cfg GROUP BY iface, trust, pfc
), top AS (  -- the most common settings of each interface (several when tied)
  SELECT * FROM votes WHERE variants > 1 QUALIFY n = max(n) OVER (PARTITION BY iface)
), usual AS (
  -- the majority's setting; on a tie (two hosts that differ), the one setting of the tied that is the
  -- recommended one; else none (both hosts are named below)
  SELECT iface, CASE WHEN count(*) = 1 THEN any_value({trust: trust, pfc: pfc})
                     ELSE min({trust: trust, pfc: pfc}) FILTER (WHERE recommended) END AS cfg,
         max(n) AS n, any_value(hosts) AS hosts, count(*) > 1 AS tied
  FROM top GROUP BY iface
  HAVING count(*) = 1 OR count(*) FILTER (WHERE recommended) = 1
), odd AS (
  SELECT c.*, u.cfg.trust AS usual_trust, u.cfg.pfc AS usual_pfc, u.n AS usual_n, u.hosts
  FROM cfg c JOIN usual u USING (iface)
  WHERE (c.trust IS DISTINCT FROM u.cfg.trust OR c.pfc <> u.cfg.pfc) AND (u.n > u.hosts / 2.0 OR u.hosts = 2)
  UNION ALL  -- two hosts that differ, neither with the recommended setting: each against the other
  SELECT c.*, o.trust, o.pfc, 1, 2
  FROM cfg c JOIN cfg o ON o.iface = c.iface AND o.host <> c.host
  WHERE c.iface IN (SELECT iface FROM votes WHERE hosts = 2 AND variants = 2)
    AND c.iface NOT IN (SELECT iface FROM usual)
), tc AS (  -- NCCL's traffic class where the job states it
  SELECT host, max(TRY_CAST(value AS INTEGER)) AS nccl_ib_tc FROM (
    SELECT host, value FROM process_env WHERE key = 'NCCL_IB_TC'
    UNION ALL SELECT host, value FROM nccl_config WHERE key = 'NCCL_IB_TC') GROUP BY host
), unprotected AS (
  SELECT q.host, q.iface, tc.nccl_ib_tc, q.priority, arg_max(q.trust, {t: q.ts, f: q.file, l: q.line_no}) AS trust,
         min({f: q.file, l: q.line_no}) AS first, max(q.ts) AS ts
  FROM q JOIN tc USING (host)
  WHERE q.trust = 'dscp' AND list_contains(string_split(q.dscp, ','), lpad(CAST(tc.nccl_ib_tc >> 2 AS VARCHAR), 2, '0'))
    AND NOT coalesce(q.pfc_enabled, false)
    AND EXISTS (SELECT 1 FROM q q2 WHERE q2.host = q.host AND q2.iface = q.iface AND q2.pfc_enabled)
  GROUP BY ALL
)
SELECT host, iface AS subject, ts AS start, ts AS "end", 0.75 AS score,
       CASE WHEN usual_n = 1 THEN 'warning' ELSE 'critical' END AS severity,
       'RoCE QoS of ' || iface || ' on ' || host || ' differs from ' || CASE WHEN usual_n = 1 THEN 'the other host''s' ELSE usual_n || ' of ' || hosts || ' hosts' END
         || ': trust ' || coalesce(trust, '?') || ' (others ' || coalesce(usual_trust, '?') || '), PFC on priority ' || pfc
         || ' (others ' || usual_pfc || ')' AS summary,
       to_json({iface: iface, trust: trust, pfc_priorities: pfc, usual_trust: usual_trust, usual_pfc_priorities: usual_pfc,
                hosts_like_usual: usual_n, hosts: hosts, first: {file: first.f, line_no: first.l}})::VARCHAR AS evidence
FROM odd
UNION ALL
SELECT host, iface, ts, ts, 0.7, 'critical',
       'NCCL_IB_TC=' || nccl_ib_tc || ' (DSCP ' || (nccl_ib_tc >> 2) || ') maps to priority ' || priority || ' on ' || iface || ' of ' || host
         || ', where PFC is off: NCCL''s RoCE traffic is not lossless',
       to_json({iface: iface, nccl_ib_tc: nccl_ib_tc, dscp: nccl_ib_tc >> 2, priority: priority, trust: trust,
                first: {file: first.f, line_no: first.l}})::VARCHAR
FROM unprotected
ORDER BY host, subject, summary
