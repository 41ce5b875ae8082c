-- kind: gpu_xid
-- severity: critical
-- description: NVIDIA Xid errors per GPU, classified; the first Xid that is not a follow-on is the root cause
-- param: app_xids = '13,31,43,45,68,69'   Xids that usually follow an application fault (warning, not critical)
-- param: followon_xids = '43,45,154'   Xids that follow another error on the same GPU
WITH x AS (
  SELECT k.host, k.pci_addr, k.xid, k.xid_text, k.ts, k.line_no, k.file,
         list_contains(string_split($followon_xids, ',')::INTEGER[], k.xid) AS followon,
         list_contains(string_split($app_xids, ',')::INTEGER[], k.xid) AS app
  FROM kernel_log k WHERE k.xid IS NOT NULL
), g AS (
  SELECT host, coalesce(pci_addr, '?') AS pci_addr,
         min(ts) AS start, max(ts) AS "end", count(*) AS n,
         arg_min(xid, CASE WHEN followon THEN 1 ELSE 0 END * 1e12 + coalesce(epoch(ts), line_no)) AS root_xid,
         arg_min(xid_text, CASE WHEN followon THEN 1 ELSE 0 END * 1e12 + coalesce(epoch(ts), line_no)) AS root_text,
         list(DISTINCT xid ORDER BY xid) AS xids,
         bool_and(app) AS all_app,
         min(line_no) AS first_line, any_value(file) AS file
  FROM x GROUP BY ALL
), named AS (
  SELECT g.*, gp.gpu FROM g
  LEFT JOIN (SELECT DISTINCT host, lower(pci_bus_id) AS pci, gpu FROM gpus WHERE pci_bus_id IS NOT NULL) gp
    ON gp.host = g.host AND gp.pci = lower(g.pci_addr)
)
SELECT host,
       CASE WHEN gpu IS NOT NULL THEN 'GPU' || gpu || ' (' || pci_addr || ')' ELSE 'GPU ' || pci_addr END AS subject,
       start, "end",
       CASE WHEN all_app THEN 0.6 ELSE 0.95 END AS score,
       CASE WHEN all_app THEN 'warning' ELSE 'critical' END AS severity,
       'Xid ' || root_xid || ' on ' || CASE WHEN gpu IS NOT NULL THEN 'GPU' || gpu || ' ' ELSE '' END || pci_addr
         || ' (' || n || ' Xid messages: ' || array_to_string(xids, ', ') || '): '
         || coalesce(left(root_text, 120), '') AS summary,
       to_json({root_xid: root_xid, root_text: root_text, xids: xids, messages: n, pci_addr: pci_addr, gpu: gpu,
                first: {file: file, line_no: first_line}})::VARCHAR AS evidence
FROM named
ORDER BY start
