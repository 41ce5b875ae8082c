-- kind: gpu_xid
-- severity: critical
-- layer: gpu
-- root_rank: 10
-- caused_by: gpu_xid@host, ecc_error@host
-- confirm: dmesg -T | grep -i xid; nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT; nvidia-bug-report.sh
-- remediation: Look up the first (root-cause) Xid in NVIDIA's Xid catalogue. Xid 79/74/119/120: drain the node, reseat or replace the GPU/board, check PCIe/NVLink and GSP firmware; Xid 13/31/43/45 follow an application fault (check the job's CUDA errors first).
-- description: NVIDIA Xid errors per GPU, classified; the first Xid that is not a follow-on is the root cause
-- source: NVIDIA Xid catalogue (docs.nvidia.com/deploy/xid-errors): which Xids follow an application fault or another Xid
-- param: app_xids = '13,31,43,45,68,69'   Xids that usually follow an application fault (warning, not critical)
-- param: followon_xids = '43,45,154'   Xids that follow another error (on the same GPU, or on the node's other GPUs as their processes are torn down)
-- param: followon_window_s = 600   follow-on Xids on other GPUs this soon after a root Xid are folded into its finding
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
         arg_min(line_no, {t: ts, f: file, l: line_no}) AS first_line, arg_min(file, {t: ts, f: file, l: line_no}) AS file
  FROM x GROUP BY ALL
), named AS (
  SELECT g.*, gp.gpu,
         list_has_all(string_split($followon_xids, ',')::INTEGER[], g.xids) AS only_followon
  FROM g
  LEFT JOIN (SELECT DISTINCT host, lower(pci_bus_id) AS pci, gpu FROM gpus WHERE pci_bus_id IS NOT NULL) gp
    ON gp.host = g.host AND gp.pci = lower(g.pci_addr)
), folded AS (
  -- a GPU with only follow-on Xids shortly after a root Xid on another GPU of the node belongs to that finding
  SELECT f.host, f.pci_addr AS f_pci, f.gpu AS f_gpu, f.xids AS f_xids,
         (SELECT r.pci_addr FROM named r WHERE r.host = f.host AND NOT r.only_followon AND r.pci_addr <> f.pci_addr
            AND r.start <= f.start AND f.start <= r.start + to_seconds($followon_window_s)
          ORDER BY r.start LIMIT 1) AS root_pci
  FROM named f WHERE f.only_followon
), kept AS (
  SELECT n.*,
         (SELECT list({gpu: x.f_gpu, pci_addr: x.f_pci, xids: x.f_xids} ORDER BY x.f_pci) FROM folded x
           WHERE x.host = n.host AND x.root_pci = n.pci_addr) AS followers,
         (SELECT max(m.end) FROM named m JOIN folded x ON x.host = m.host AND x.f_pci = m.pci_addr
           WHERE x.host = n.host AND x.root_pci = n.pci_addr) AS followers_end
  FROM named n
  WHERE NOT EXISTS (SELECT 1 FROM folded x WHERE x.host = n.host AND x.f_pci = n.pci_addr AND x.root_pci IS NOT NULL)
)
SELECT host,
       CASE WHEN gpu IS NOT NULL THEN 'GPU' || gpu || ' (' || pci_addr || ')' ELSE 'GPU ' || pci_addr END AS subject,
       start, greatest("end", followers_end) AS "end",
       CASE WHEN all_app THEN 0.6 ELSE 0.95 END AS score,
       CASE WHEN all_app THEN 'warning' ELSE 'critical' END AS severity,
       'Xid ' || root_xid || ' on ' || CASE WHEN gpu IS NOT NULL THEN 'GPU' || gpu || ' ' ELSE '' END || pci_addr
         || ' (' || n || ' Xid messages: ' || array_to_string(xids, ', ') || '): '
         || coalesce(left(root_text, 120), '')
         || CASE WHEN len(followers) > 0 THEN '; then follow-on Xid ' || array_to_string(list_distinct(flatten([f.xids for f in followers])), '/')
                 || ' on ' || len(followers) || ' other GPU(s) of the node' ELSE '' END AS summary,
       to_json({root_xid: root_xid, root_text: root_text, xids: xids, messages: n, pci_addr: pci_addr, gpu: gpu,
                follow_on_gpus: followers, first: {file: file, line_no: first_line}})::VARCHAR AS evidence
FROM kept
ORDER BY start
