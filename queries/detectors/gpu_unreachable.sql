-- kind: gpu_unreachable
-- severity: critical
-- locality: host
-- layer: gpu
-- root_rank: 10
-- caused_by: pcie_aer@host
-- confirm: dmesg -T | grep -E 'NVRM' ; nvidia-smi -L; lspci -d 10de: -vv | grep -iE 'LnkSta|Rev ff'
-- remediation: The driver cannot reach the GPU or failed to initialise it: drain the node and power-cycle it (a GPU off the bus does not come back with a driver reload); if it recurs reseat or replace the GPU/riser and check the PCIe slot's AER errors; collect nvidia-bug-report.sh first.
-- description: NVRM messages that are not Xids but mean a GPU is gone: 'fallen off the bus and is not responding to commands', RmInitAdapter failed, the probe routine failed (when no Xid 79 reports the same GPU)
-- source: NVIDIA driver messages (NVRM) and NVIDIA's Xid catalogue: a GPU that fell off the bus is Xid 79's condition (RESTART_BM); RmInitAdapter / probe failure leaves the GPU unusable until the node is reset; one message is a finding; a GPU with an Xid 79 on the same host is left to gpu_xid (the same condition)
WITH e AS (
  SELECT host, coalesce(pci_addr, regexp_extract(message, '([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F])', 1)) AS dev,
         event, ts, message, file, line_no
  FROM kernel_log WHERE event IN ('nvrm_fallen_off_bus', 'nvrm_init_failed')
), g AS (
  SELECT host, coalesce(nullif(dev, ''), '?') AS dev, min(ts) AS start, coalesce(max(ts), min(ts)) AS "end",
         count(*) FILTER (WHERE event = 'nvrm_fallen_off_bus') AS off_bus, count(*) FILTER (WHERE event = 'nvrm_init_failed') AS init_failed,
         arg_min(message, {t: ts, f: file, l: line_no}) AS first_message,
         arg_min(line_no, {t: ts, f: file, l: line_no}) AS first_line, arg_min(file, {t: ts, f: file, l: line_no}) AS file
  FROM e GROUP BY ALL
)
SELECT host, 'GPU ' || dev AS subject, start, "end", 0.95 AS score,
       'GPU ' || dev || ' on ' || host || ': '
         || array_to_string(list_filter([CASE WHEN off_bus > 0 THEN 'fallen off the bus (not responding)' END,
                                         CASE WHEN init_failed > 0 THEN 'driver initialisation failed' END], lambda x: x IS NOT NULL), '; ')
         || ': ' || left(first_message, 120) AS summary,
       to_json({pci_addr: CASE WHEN dev <> '?' THEN dev END, fallen_off_bus: off_bus, init_failed: init_failed,
                first_message: first_message, first: {file: file, line_no: first_line}})::VARCHAR AS evidence
FROM g
WHERE NOT EXISTS (SELECT 1 FROM kernel_log x  -- the Xid 79 that says the same is gpu_xid's finding
                  WHERE x.host = g.host AND x.xid = 79 AND (g.dev = '?' OR lower(x.pci_addr) = lower(g.dev)))
ORDER BY start
