-- kind: gpu_xid
-- severity: critical
-- locality: host
-- layer: gpu
-- root_rank: 10
-- caused_by: gpu_xid@host, ecc_error@host, pcie_aer@host
-- confirm: dmesg -T | grep -i xid; nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT; nvidia-bug-report.sh
-- remediation: Each finding says the action of its root Xid's resolution bucket in NVIDIA's Xid catalogue (restart the job, reset the GPU, drain and reboot the node, contact support) and the investigatory bucket if it recurs.
-- description: NVIDIA Xid errors per GPU, named by NVIDIA's Xid catalogue (mnemonic, resolution bucket); the first Xid that is not a follow-on is the root cause; severity follows the most severe bucket of the GPU's Xids
-- source: NVIDIA Xid Catalog (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html), shipped as forensics/detect/data/xid_catalog.csv: immediate-action bucket -> severity/action in data/xid_buckets.csv (RESET_GPU, RESTART_BM, CONTACT_SUPPORT, NVLink/Xid-48 workflows critical; RESTART_APP, XID_154, WORKFLOW_XID_45 warning; IGNORE info); Xid 154's own text names the recovery action; an Xid missing from the catalogue is a warning; Xids 144-150 (WORKFLOW_NVLINK5_ERR) are decoded with the catalogue's 'Xid 144-150 Decode' sheet (data/xid_nvlink5_decode.csv): the message's intrInfo (32 bits) against the sheet's v1/v2 patterns and its errorStatus, giving NVIDIA's recovery action for that sub code (RESET_GPU, IGNORE, XID_154_EVAL), whose bucket sets the severity; an undecoded one keeps WORKFLOW_NVLINK5_ERR (critical)
-- param: followon_xids = '43,45,154'   Xids that follow another error (on the same GPU, or on the node's other GPUs as their processes are torn down)
-- param: followon_window_s = 600   follow-on Xids on other GPUs this soon after a root Xid are folded into its finding
WITH kx AS (
  SELECT *, row_number() OVER () AS rid,
         TRY_CAST(regexp_extract(xid_text, '\((0x[0-9a-fA-F]{1,8}) ', 1) AS BIGINT) AS intr,
         lower(regexp_extract(xid_text, '\(0x[0-9a-fA-F]{1,8} (0x[0-9a-fA-F]{1,8})', 1)) AS err_status
  FROM kernel_log WHERE xid IS NOT NULL
), dec AS (
  -- NVIDIA's decode of an NVLink5 Xid (144-150): the row whose intrInfo pattern (v1, else v2) and errorStatus match
  SELECT kx.rid,
         arg_min({sub: n.subcode,
                  action: CASE WHEN lpad(bin(kx.intr), 32, '0') LIKE replace(n.action2_v1_pattern, '-', '_')
                                 OR lpad(bin(kx.intr), 32, '0') LIKE replace(n.action2_v2_pattern, '-', '_') THEN n.action2
                               ELSE n.recovery_action END,
                  investigate: n.investigatory_action, severity: n.severity, origin: n.fault_origin},
                 CASE WHEN lpad(bin(kx.intr), 32, '0') LIKE replace(n.v1_pattern, '-', '_') THEN 0 ELSE 1 END) AS d
  FROM kx JOIN xid_nvlink5_decode n ON n.xid = kx.xid
  WHERE kx.xid BETWEEN 144 AND 150 AND kx.intr IS NOT NULL
    AND (lpad(bin(kx.intr), 32, '0') LIKE replace(n.v1_pattern, '-', '_') OR lpad(bin(kx.intr), 32, '0') LIKE replace(n.v2_pattern, '-', '_'))
    AND (coalesce(n.error_status, '') = '' OR list_contains(string_split(lower(n.error_status), '/'), kx.err_status))
  GROUP BY kx.rid
), x AS (
  SELECT k.host, k.pci_addr, k.xid, k.xid_text, k.ts, k.line_no, k.file,
         list_contains(string_split($followon_xids, ',')::INTEGER[], k.xid) AS followon,
         c.mnemonic, coalesce(dec.d.action, c.immediate_action) AS immediate_action,
         coalesce(dec.d.investigate, c.investigatory_action) AS investigatory_action,
         CASE WHEN dec.d IS NOT NULL THEN 'Xid ' || k.xid || ' ' || dec.d.sub || ' errorStatus ' || k.err_status
                || ' decoded by NVIDIA''s Xid 144-150 sheet: ' || dec.d.action || ' (' || dec.d.severity || ', origin '
                || dec.d.origin || ')' END AS decoded,
         CASE WHEN k.xid = 154 THEN
                CASE WHEN regexp_extract(k.xid_text, 'to 0x[0-9a-fA-F]+ \(([^)]*)\)', 1) ILIKE '%reboot%'
                       OR regexp_extract(k.xid_text, 'to 0x[0-9a-fA-F]+ \(([^)]*)\)', 1) ILIKE '%reset%' THEN 2
                     WHEN regexp_extract(k.xid_text, 'to 0x[0-9a-fA-F]+ \(([^)]*)\)', 1) ILIKE '%drain%' THEN 1
                     WHEN regexp_extract(k.xid_text, 'to 0x[0-9a-fA-F]+ \(([^)]*)\)', 1) ILIKE 'none' THEN 0
                     ELSE 1 END
              WHEN b.severity IS NULL THEN 1
              ELSE list_position(['info', 'warning', 'critical'], b.severity) - 1 END AS sev
  FROM kx k
  LEFT JOIN dec ON dec.rid = k.rid
  LEFT JOIN xid_catalog c ON c.xid = k.xid
  LEFT JOIN xid_buckets b ON b.bucket = coalesce(dec.d.action, c.immediate_action)
), g AS (
  SELECT host, coalesce(pci_addr, '?') AS pci_addr,
         min(ts) AS start, max(ts) AS "end", count(*) AS n,
         arg_min(xid, CASE WHEN followon THEN 1 ELSE 0 END * 1e12 + coalesce(epoch(ts), line_no)) AS root_xid,
         arg_min(xid_text, CASE WHEN followon THEN 1 ELSE 0 END * 1e12 + coalesce(epoch(ts), line_no)) AS root_text,
         list(DISTINCT xid ORDER BY xid) AS xids,
         max(sev) AS sev,
         arg_min(mnemonic, CASE WHEN followon THEN 1 ELSE 0 END * 1e12 + coalesce(epoch(ts), line_no)) AS root_mnemonic,
         arg_min(immediate_action, CASE WHEN followon THEN 1 ELSE 0 END * 1e12 + coalesce(epoch(ts), line_no)) AS root_bucket,
         arg_min(investigatory_action, CASE WHEN followon THEN 1 ELSE 0 END * 1e12 + coalesce(epoch(ts), line_no)) AS root_investigate,
         arg_max(xid, sev * 1e12 - coalesce(epoch(ts), line_no)) AS worst_xid,
         arg_max(immediate_action, sev * 1e12 - coalesce(epoch(ts), line_no)) AS worst_bucket,
         arg_max(investigatory_action, sev * 1e12 - coalesce(epoch(ts), line_no)) AS worst_investigate,
         arg_max(decoded, sev * 1e12 - coalesce(epoch(ts), line_no)) AS worst_decoded,
         arg_min(decoded, CASE WHEN followon THEN 1 ELSE 0 END * 1e12 + coalesce(epoch(ts), line_no)) AS root_decoded,
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
SELECT k.host,
       CASE WHEN gpu IS NOT NULL THEN 'GPU' || gpu || ' (' || pci_addr || ')' ELSE 'GPU ' || pci_addr END AS subject,
       start, greatest("end", followers_end) AS "end",
       [0.3, 0.6, 0.95][sev + 1] AS score,
       ['info', 'warning', 'critical'][sev + 1] AS severity,
       'Xid ' || root_xid || ' ' || coalesce(root_mnemonic, '(not in NVIDIA''s Xid catalogue)')
         || coalesce(' [' || root_bucket || ']', '')
         || ' on ' || CASE WHEN gpu IS NOT NULL THEN 'GPU' || gpu || ' ' ELSE '' END || pci_addr
         || ' (' || n || ' Xid messages: ' || array_to_string(xids, ', ') || '): '
         || coalesce(left(root_text, 120), '')
         || CASE WHEN worst_xid <> root_xid THEN '; most severe: Xid ' || worst_xid || coalesce(' [' || k.worst_bucket || ']', '') ELSE '' END
         || CASE WHEN len(followers) > 0 THEN '; then follow-on Xid ' || array_to_string(list_distinct(flatten([f.xids for f in followers])), '/')
                 || ' on ' || len(followers) || ' other GPU(s) of the node' ELSE '' END AS summary,
       CASE WHEN root_xid = 154 OR worst_xid = 154 THEN 'Xid 154 (GPU_RECOVERY_ACTION_CHANGED): do the recovery action its text names: '
              || coalesce(regexp_extract(root_text, 'to 0x[0-9a-fA-F]+ \(([^)]*)\)', 1), '?') || '. ' ELSE '' END
         || coalesce(k.worst_decoded || '. ', '')
         || CASE WHEN wb.action IS NOT NULL THEN 'Xid ' || worst_xid || ' ' || wc.mnemonic || ' [' || k.worst_bucket || ']: ' || wb.action || '.'
                 ELSE 'Xid ' || worst_xid || ' is not in NVIDIA''s Xid catalogue shipped here: look it up (docs.nvidia.com/deploy/xid-errors).' END
         || CASE WHEN k.worst_investigate IS NOT NULL AND k.worst_investigate NOT LIKE 'N/A%'
                 THEN ' If it recurs: ' || k.worst_investigate || '.' ELSE '' END AS remediation,
       CASE WHEN k.root_decoded IS NULL AND k.worst_decoded IS NULL THEN ev.base
            ELSE json_merge_patch(ev.base, to_json({root_decoded: k.root_decoded, worst_decoded: k.worst_decoded})) END::VARCHAR
         AS evidence
FROM kept k
LEFT JOIN xid_catalog wc ON wc.xid = k.worst_xid
LEFT JOIN xid_buckets wb ON wb.bucket = k.worst_bucket,
LATERAL (SELECT to_json({root_xid: root_xid, root_mnemonic: root_mnemonic, root_bucket: root_bucket, root_investigatory: root_investigate,
                         worst_xid: worst_xid, worst_bucket: k.worst_bucket,
                         root_text: root_text, xids: xids, messages: n, pci_addr: pci_addr, gpu: gpu,
                         follow_on_gpus: followers, first: {file: file, line_no: first_line}}) AS base) ev
ORDER BY start
