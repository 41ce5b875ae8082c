-- kind: nvswitch_sxid
-- severity: critical
-- locality: host
-- layer: gpu
-- root_rank: 12
-- caused_by: none
-- confirm: dmesg -T | grep -E 'SXid|Xid'; journalctl -u nvidia-fabricmanager (and /var/log/fabricmanager.log); nvidia-smi -q | grep -A3 Fabric; nvidia-smi nvlink -s
-- remediation: A fatal SXid: the NVSwitch and the GPUs whose NVLinks run through it are out of the fabric: drain the node, stop the jobs on those GPUs, reset the GPUs and NVSwitches (or reboot) and restart the fabric manager; if it repeats on the same link, have the baseboard serviced. Non-fatal SXids alone: no action beyond watching their rate, unless they come with Xids or NVLink errors on the same GPUs.
-- description: NVSwitch errors the nvidia-nvswitch driver logs as SXid (the switch's Xid), and those Fabric Manager logs as 'detected NVSwitch [non-]fatal error <SXid>' (fabricmanager_log): per host, each SXid code with its class (Fatal or Non-fatal), the switches (PCI addresses) and NVLink ports it names, which logs said it, and when
-- source: NVIDIA Fabric Manager user guide (docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide, "Runtime NVSwitch and GPU errors" / "NVSwitch SXid errors"): the driver prints each NVSwitch error as 'SXid (PCI:<switch>): <code>, Fatal|Non-fatal, Link <n> <text>'; a fatal SXid leaves the switch (and the GPUs connected through the failing links) needing a reset before CUDA jobs can use the fabric again, a non-fatal one is corrected or isolated by the hardware. The class is the driver's own word on the line: Fatal is critical, Non-fatal a warning, no threshold of ours; the 'Severity ...' and 'Data {...}' lines that follow a SXid are its details, not further errors. Fabric Manager writes the same error to /var/log/fabricmanager.log ('detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33', wording of the real lines quoted by leptonai/gpud): its class is that line's word, its switch the bus id (the domain cut to 4 digits, as the kernel prints it)
WITH e AS (
  SELECT host, pci_addr AS switch, ts, file, line_no, message, 'kernel' AS log,
         regexp_extract(event_detail, '^([0-9]+),', 1) AS sxid,
         regexp_extract(event_detail, '^[0-9]+, (Fatal|Non-fatal),', 1) AS class,
         TRY_CAST(regexp_extract(event_detail, ', Link ([0-9]+)', 1) AS INTEGER) AS link,
         regexp_extract(event_detail, '^[0-9]+, (?:Fatal|Non-fatal), (.*)$', 1) AS text
  FROM kernel_log WHERE event = 'nvswitch_sxid'
  UNION ALL
  SELECT host, lower(regexp_replace(switch_pci, '^0{4}([0-9A-Fa-f]{4}:)', '\1')), ts, file, line_no, message, 'fabricmanager',
         CAST(error_code AS VARCHAR), CASE WHEN fatal THEN 'Fatal' ELSE 'Non-fatal' END, port,
         'reported by Fabric Manager'
  FROM fabricmanager_log WHERE event = 'nvswitch_error' AND error_code IS NOT NULL
), g AS (
  SELECT host, sxid, class, min(ts) AS start, coalesce(max(ts), min(ts)) AS "end", count(*) AS lines,
         list(DISTINCT switch ORDER BY switch) FILTER (WHERE switch IS NOT NULL) AS switches,
         list(DISTINCT link ORDER BY link) FILTER (WHERE link IS NOT NULL) AS links,
         arg_min(text, {f: file, l: line_no}) AS first_text, arg_min(message, {f: file, l: line_no}) AS first_message,
         arg_min(file, {f: file, l: line_no}) AS file, arg_min(line_no, {f: file, l: line_no}) AS first_line,
         list(DISTINCT log ORDER BY log) AS logs
  FROM e GROUP BY ALL
)
SELECT host, 'SXid ' || sxid || coalesce(' ' || lower(class), '') AS subject, start, "end",
       CASE WHEN class = 'Fatal' THEN 0.95 ELSE 0.6 END AS score,
       CASE WHEN class = 'Fatal' THEN 'critical' ELSE 'warning' END AS severity,
       class || ' NVSwitch SXid ' || sxid || ' on ' || host || ' (' || first_text || '): ' || lines || ' line(s), '
         || len(switches) || ' switch(es) ' || array_to_string(switches, ', ')
         || coalesce(', NVLink port(s) ' || nullif(array_to_string(links, ', '), ''), '') AS summary,
       to_json({sxid: TRY_CAST(sxid AS INTEGER), class: class, lines: lines, switches: switches, links: links, logs: logs,
                first_message: first_message, first: {file: file, line_no: first_line}})::VARCHAR AS evidence
FROM g
ORDER BY start
