-- kind: pcie_aer
-- severity: warning
-- locality: host
-- layer: host_cpu
-- root_rank: 8
-- caused_by: none
-- confirm: dmesg -T | grep -iE 'AER|PCIe Bus Error' -A3; lspci -s <dev> -vvv | grep -iE 'LnkSta|CESta|UESta'; ras-mc-ctl --errors
-- remediation: Uncorrectable (fatal) PCIe errors or a failed recovery: drain the node, reseat or replace the device, riser or slot named (check its link width/speed with lspci); corrected errors alone are handled by hardware: watch their rate and the same device's other errors.
-- description: PCIe Advanced Error Reporting per device: corrected, uncorrected non-fatal and fatal errors and failed recoveries
-- source: PCI Express Base Specification (error classes: correctable errors are recovered by hardware without loss; uncorrectable non-fatal lose a transaction but leave the link reliable; fatal make the link unreliable and need a reset) and Linux Documentation/PCI/pcieaer-howto.rst: fatal or a failed recovery critical, non-fatal warning, corrected info; corrected errors while the links train at boot (first boot_window_s of uptime, as link_flap) are the boot, not a finding
-- param: boot_window_s = 300   seconds of uptime in which corrected errors are the boot's link training
WITH e AS (
  SELECT k.host, coalesce(k.event_device, k.pci_addr, '?') AS dev, k.pci_addr AS port, k.event, k.ts, k.message, k.file, k.line_no
  FROM kernel_log k LEFT JOIN (SELECT host, max(boot_time) AS boot_time FROM hosts GROUP BY host) h USING (host)
  WHERE k.event IN ('aer_nonfatal', 'aer_fatal', 'aer_recovery_failed')
     OR (k.event = 'aer_corrected' AND NOT coalesce(coalesce(k.boot_s, epoch(k.ts) - epoch(h.boot_time)) < $boot_window_s, false))
), g AS (
  SELECT host, dev, min(ts) AS start, coalesce(max(ts), min(ts)) AS "end",
         count(*) FILTER (WHERE event = 'aer_corrected') AS corrected,
         count(*) FILTER (WHERE event = 'aer_nonfatal') AS nonfatal,
         count(*) FILTER (WHERE event = 'aer_fatal') AS fatal,
         count(*) FILTER (WHERE event = 'aer_recovery_failed') AS failed,
         list(DISTINCT port ORDER BY port) FILTER (WHERE port IS NOT NULL) AS ports,
         arg_min(message, {t: ts, f: file, l: line_no}) AS first_message,
         arg_min(line_no, {t: ts, f: file, l: line_no}) AS first_line, arg_min(file, {t: ts, f: file, l: line_no}) AS file
  FROM e GROUP BY ALL
)
SELECT host, 'PCIe ' || dev AS subject, start, "end",
       CASE WHEN fatal + failed > 0 THEN 0.95 WHEN nonfatal > 0 THEN 0.7 ELSE 0.3 END AS score,
       CASE WHEN fatal + failed > 0 THEN 'critical' WHEN nonfatal > 0 THEN 'warning' ELSE 'info' END AS severity,
       'PCIe AER on ' || host || ' device ' || dev || ': '
         || array_to_string(list_filter([
              CASE WHEN fatal > 0 THEN fatal || ' uncorrected fatal' END,
              CASE WHEN failed > 0 THEN failed || ' failed recovery' END,
              CASE WHEN nonfatal > 0 THEN nonfatal || ' uncorrected non-fatal' END,
              CASE WHEN corrected > 0 THEN corrected || ' corrected' END], lambda x: x IS NOT NULL), ', ') AS summary,
       to_json({dev: CASE WHEN dev <> '?' THEN dev END, corrected: corrected, nonfatal: nonfatal, fatal: fatal, recovery_failed: failed,
                reporting_ports: ports, first_message: first_message, first: {file: file, line_no: first_line}})::VARCHAR AS evidence
FROM g
ORDER BY start
