-- kind: nic_wedged
-- severity: critical
-- locality: host
-- layer: nic_fabric
-- root_rank: 9
-- caused_by: pcie_aer@host
-- confirm: dmesg -T | grep -E 'mlx5_core.*(health|synd|Fatal error|timeout)'; devlink health show; mlxfwmanager --query; lspci -s <dev> -vv | grep -iE 'LnkSta|UESta'
-- remediation: The NIC's firmware stopped answering: drain the node, collect devlink health dump / mstdump (mlxdump), then reset the device (devlink dev reload or reboot); if recovery was aborted (PCI reads not working) power-cycle the node and check the PCIe slot, riser and card; replace the adapter if it recurs.
-- description: mlx5 NIC dead or wedged: firmware health poll reports a fatal error or a syndrome, health recovery aborted (PCI reads not working / channel offline), or firmware commands time out
-- source: Linux mlx5 driver (drivers/net/ethernet/mellanox/mlx5/core/health.c: poll_health 'Fatal error N detected' / 'health compromised - reached miss count' when the firmware health counter stops, print_health_info 'synd 0x..', mlx5_health_try_recover 'health recovery flow aborted'; cmd.c 'CMD(0x..) timeout' after the command timeout): each is the firmware not running or the device unreachable, so one message is a finding (no threshold); command timeouts alone are a warning (a single slow command can time out and the device recover), the others critical
-- param: min_cmd_timeouts = 1   firmware command timeouts on one device for a finding (alone: warning)
WITH e AS (
  SELECT host, coalesce(pci_addr, regexp_extract(message, '^mlx5_core ([0-9a-fA-F:.]+)', 1)) AS dev,
         event, event_detail, ts, message, file, line_no
  FROM kernel_log
  WHERE event IN ('mlx5_recovery_aborted', 'mlx5_fatal_error', 'mlx5_fw_syndrome', 'mlx5_cmd_timeout')
), g AS (
  SELECT host, coalesce(nullif(dev, ''), '?') AS dev, min(ts) AS start, max(ts) AS "end", count(*) AS n,
         count(*) FILTER (WHERE event = 'mlx5_recovery_aborted') AS aborted,
         count(*) FILTER (WHERE event = 'mlx5_fatal_error') AS fatal,
         count(*) FILTER (WHERE event = 'mlx5_fw_syndrome') AS syndromes,
         count(*) FILTER (WHERE event = 'mlx5_cmd_timeout') AS cmd_timeouts,
         list(DISTINCT event_detail ORDER BY event_detail) FILTER (WHERE event = 'mlx5_fw_syndrome') AS synd,
         list(DISTINCT event_detail ORDER BY event_detail) FILTER (WHERE event = 'mlx5_cmd_timeout') AS cmds,
         arg_min(message, {t: ts, f: file, l: line_no}) AS first_message,
         arg_min(line_no, {t: ts, f: file, l: line_no}) AS first_line, arg_min(file, {t: ts, f: file, l: line_no}) AS file
  FROM e GROUP BY ALL
)
SELECT host, 'NIC ' || dev AS subject, start, coalesce("end", start) AS "end",
       CASE WHEN aborted > 0 THEN 0.98 WHEN fatal > 0 OR syndromes > 0 THEN 0.9 ELSE 0.6 END AS score,
       CASE WHEN aborted + fatal + syndromes > 0 THEN 'critical' ELSE 'warning' END AS severity,
       'mlx5 NIC ' || dev || ' on ' || host || ': '
         || array_to_string(list_filter([
              CASE WHEN aborted > 0 THEN 'health recovery aborted (device unreachable)' END,
              CASE WHEN fatal > 0 THEN 'firmware fatal error (' || fatal || 'x)' END,
              CASE WHEN syndromes > 0 THEN 'firmware syndrome ' || array_to_string(synd, '; ') END,
              CASE WHEN cmd_timeouts > 0 THEN cmd_timeouts || ' firmware command timeout(s) ' || array_to_string(cmds, ', ') END],
            lambda x: x IS NOT NULL), '; ') AS summary,
       to_json({dev: dev, messages: n, recovery_aborted: aborted, fatal_errors: fatal, syndromes: synd, cmd_timeouts: cmd_timeouts,
                commands: cmds, first_message: first_message, first: {file: file, line_no: first_line}})::VARCHAR AS evidence
FROM g
WHERE aborted + fatal + syndromes > 0 OR cmd_timeouts >= $min_cmd_timeouts
ORDER BY start
