-- kind: link_flap
-- severity: critical
-- locality: host
-- layer: nic_fabric
-- root_rank: 12
-- caused_by: nic_wedged@host, pcie_aer@host
-- confirm: dmesg -T | grep -iE 'link (down|up)'; ethtool -S <iface> | grep -E 'link_down|symbol|crc'; mlxlink -d <dev> -m -c
-- remediation: Check the cable/transceiver and switch port (mlxlink eye/BER, swap optics); move the job off the node until the port is stable.
-- description: NIC links going down (and up) during the capture: kernel Link down/up messages and link-down counters (ethtool's, and link_downed of RDMA ports from /sys/class/infiniband or perfquery)
-- source: mlx5 and kernel netdev link messages; one link-down event is an outage (no threshold); every real dmesg starts with the boot's port bring-up (Link down, then Link up while the switch port negotiates), so messages in the first boot_window_s seconds of uptime or more than history_s before the capture are history (info), not this incident
-- param: min_downs = 1   link-down events needed
-- param: boot_window_s = 300   seconds of uptime in which link messages are the boot's bring-up
-- param: history_s = 600   seconds before the capture's first sample beyond which a link event is history
WITH k0 AS (
  SELECT host, coalesce(iface, regexp_extract(message, '([A-Za-z0-9_.-]+): [Ll]ink (is )?[Dd]own', 1)) AS iface, ts, boot_s,
         CASE WHEN regexp_matches(message, '([Ll]ink (is )?[Dd]own|NIC Link is Down|carrier lost|Lost carrier)') THEN 'down'
              WHEN regexp_matches(message, '([Ll]ink (is )?[Uu]p|NIC Link is Up|link becomes ready|Gained carrier)') THEN 'up' END AS ev,
         message, file, line_no
  FROM kernel_log
  WHERE regexp_matches(message, '([Ll]ink (is )?([Dd]own|[Uu]p)|carrier|Link is Up|Link is Down)')
    AND NOT regexp_matches(message, '(veth|cali|docker|cni|flannel|virbr|br-)')
), k AS (
  SELECT k0.* REPLACE (coalesce(k0.boot_s, epoch(k0.ts) - epoch(h.boot_time)) AS boot_s),
         (coalesce(coalesce(k0.boot_s, epoch(k0.ts) - epoch(h.boot_time)) < $boot_window_s, false)
          OR coalesce(k0.ts < c.cap_start - to_seconds($history_s), false)) AS history
  FROM k0 LEFT JOIN det_capture c USING (host) LEFT JOIN (SELECT host, max(boot_time) AS boot_time FROM hosts GROUP BY host) h USING (host)
), hist AS (  -- one history line per host: the boot's bring-up and events long before the capture
  SELECT host, min(ts) AS start, max(ts) AS "end", count(DISTINCT iface) AS ports, count(*) FILTER (WHERE ev = 'down') AS downs,
         bool_and(coalesce(boot_s < $boot_window_s, false)) AS at_boot
  FROM k WHERE history AND ev IS NOT NULL GROUP BY host HAVING count(*) FILTER (WHERE ev = 'down') > 0
), kd AS (
  SELECT host, iface, min(ts) FILTER (WHERE ev = 'down') AS first_down, max(ts) AS last_event,
         count(*) FILTER (WHERE ev = 'down') AS downs, count(*) FILTER (WHERE ev = 'up') AS ups,
         arg_min(message, {t: ts, f: file, l: line_no}) FILTER (WHERE ev = 'down') AS first_message,
         arg_min(line_no, {t: ts, f: file, l: line_no}) FILTER (WHERE ev = 'down') AS first_line, arg_min(file, {t: ts, f: file, l: line_no}) FILTER (WHERE ev = 'down') AS file
  FROM k WHERE ev IS NOT NULL AND iface IS NOT NULL AND iface <> '' AND NOT history GROUP BY ALL
), cd0 AS (
  SELECT host, iface, min(ts_start) AS first_down, max(ts) AS last_event, sum(delta) AS downs
  FROM det_nic_class WHERE class = 'link_down' AND delta > 0 GROUP BY ALL
  UNION ALL  -- RDMA ports: their link_downed counter (an InfiniBand port has no ethtool -S; a RoCE port counts the same downs twice)
  SELECT host, coalesce(iface, device || ' port ' || port), downed_from, downed_from, link_downed
  FROM det_ib_port_summary WHERE link_downed > 0
), cd AS (
  SELECT host, iface, min(first_down) AS first_down, max(last_event) AS last_event, max(downs) AS downs FROM cd0 GROUP BY ALL
), pe AS (
  SELECT host, iface, sum(delta) AS phy_errors FROM det_nic_class WHERE class = 'errors' AND delta > 0 GROUP BY ALL
), j AS (
  SELECT coalesce(kd.host, cd.host) AS host, coalesce(kd.iface, cd.iface) AS iface,
         least(kd.first_down, cd.first_down) AS start, greatest(kd.last_event, cd.last_event) AS "end",
         greatest(coalesce(kd.downs, 0), coalesce(cd.downs, 0)) AS downs, kd.ups, cd.downs AS counter_downs,
         kd.downs AS log_downs, kd.first_message, kd.first_line, kd.file
  FROM kd FULL OUTER JOIN cd ON kd.host = cd.host AND kd.iface = cd.iface
), jp AS (
  SELECT j.*, pe.phy_errors FROM j LEFT JOIN pe USING (host, iface)
)
SELECT host, iface AS subject, start, coalesce("end", start) AS "end", least(1.0, 0.75 + 0.05 * downs) AS score,
       'critical' AS severity,
       'Link ' || iface || ' on ' || host || ' went down ' || downs || ' time(s)'
         || coalesce(' and came back ' || ups || ' time(s)', '') || coalesce(' (link_down counter +' || counter_downs || ')', '')
         || coalesce(', ' || phy_errors || ' physical-layer errors (symbol/CRC)', '') AS summary,
       to_json({iface: iface, downs: downs, ups: ups, counter_downs: counter_downs, log_downs: log_downs, phy_errors: phy_errors,
                first_message: first_message, first: {file: file, line_no: first_line}})::VARCHAR AS evidence
FROM jp WHERE downs >= $min_downs
UNION ALL
SELECT host, 'history', start, "end", 0.1, 'info',
       'History, not this incident: ' || downs || ' link-down message(s) on ' || ports || ' port(s) of ' || host
         || CASE WHEN at_boot THEN ' during the boot''s port bring-up' ELSE ' before the capture' END,
       to_json({ports: ports, downs: downs, at_boot: at_boot, history: true})::VARCHAR
FROM hist
ORDER BY start
