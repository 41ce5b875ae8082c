-- kind: fabric_manager_failure
-- severity: critical
-- locality: host
-- layer: gpu
-- root_rank: 14
-- caused_by: nvswitch_sxid@host, gpu_xid@host
-- confirm: systemctl status nvidia-fabricmanager; journalctl -u nvidia-fabricmanager -b; grep -E 'ERROR|WARNING' /var/log/fabricmanager.log | tail; nvidia-smi -q | grep -A3 Fabric; nvidia-smi nvlink -s
-- remediation: Each finding says the action for what Fabric Manager reported: a start that failed (fix the cause it names: no NVSwitch found, FM and driver versions differ; until FM runs, CUDA on the node fails with cudaErrorSystemNotReady), NVLink SHARP (multicast) teams it could not set up or release (NCCL jobs using NVLS fail at init: drain the node, reset its GPUs or reboot; NCCL_NVLS_ENABLE=0 works around it), a GPU NVL fatal error (drain, reset the GPU; service the tray if it repeats), a trunk port failure (the switch tray's link: degraded bandwidth until it is serviced).
-- description: what Fabric Manager itself reports as failed (fabricmanager_log: its log file and the service's journal): per host, a start that failed, NVLink SHARP multicast teams it could not set up or release for a job, GPU NVL fatal/non-fatal errors (the GB200 NMX-C fabric manager's GPU port blocks), trunk port failures; NVSwitch errors it logs are nvswitch_sxid's
-- source: NVIDIA Fabric Manager user guide (docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide): CUDA initialisation fails with cudaErrorSystemNotReady when FM has not initialised the system, a GPU that fails to register loses NVLink peer-to-peer, FM must not be restarted without resetting the GPUs (section 2.2, cited by NVIDIA in NVIDIA/nccl#1488); NVIDIA/nccl#976 (sjeaugey): NVLS 'invalid argument' at init 'is usually due to nv-fabricmanager having been manually restarted while processes were still holding resources on the GPU. Rebooting the node is usually the easiest solution'; NCCL 2.29's own error text (quoted in pytorch/pytorch#177472): 'Failed to bind NVLink SHARP (NVLS) Multicast memory ... usually caused by a system or configuration error in the Fabric Manager or NVSwitches. Disable NVLS (NCCL_NVLS_ENABLE=0)'. Every such record is a finding (no threshold of ours): start failures and multicast team failures stop jobs (critical); GPU NVL errors follow the log's Fatal/Non Fatal word; a trunk port failure is a warning (the fabric runs with less bandwidth)
WITH e AS (
  SELECT host, ts, file, line_no, message, detail, gpu_guid, module_id, partition_id, port, switch_guid,
         CASE WHEN event = 'fm_start_failed' THEN 'start'
              WHEN event = 'multicast_failure' THEN 'multicast'
              WHEN event = 'gpu_nvl_error' AND fatal THEN 'gpu_nvl_fatal'
              WHEN event = 'gpu_nvl_error' THEN 'gpu_nvl'
              WHEN event = 'trunk_port_failure' THEN 'trunk' END AS what
  FROM fabricmanager_log
  WHERE event IN ('fm_start_failed', 'multicast_failure', 'gpu_nvl_error', 'trunk_port_failure')
), g AS (
  SELECT host, what, min(ts) AS start, coalesce(max(ts), min(ts)) AS "end", count(*) AS records,
         arg_min(message, {t: ts, f: file, l: line_no}) AS first_message,
         arg_min(file, {t: ts, f: file, l: line_no}) AS file, arg_min(line_no, {t: ts, f: file, l: line_no}) AS first_line,
         list(DISTINCT gpu_guid ORDER BY gpu_guid) FILTER (WHERE gpu_guid IS NOT NULL) AS gpu_guids,
         list(DISTINCT switch_guid || ':' || port ORDER BY switch_guid || ':' || port)
           FILTER (WHERE switch_guid IS NOT NULL AND port IS NOT NULL) AS switch_ports
  FROM e GROUP BY ALL
)
SELECT host,
       CASE what WHEN 'start' THEN 'Fabric Manager start' WHEN 'multicast' THEN 'NVLink SHARP (multicast) teams'
                 WHEN 'gpu_nvl_fatal' THEN 'GPU NVL fatal error' WHEN 'gpu_nvl' THEN 'GPU NVL non-fatal error'
                 ELSE 'NVSwitch trunk port failure' END AS subject,
       start, "end",
       CASE WHEN what IN ('start', 'multicast', 'gpu_nvl_fatal') THEN 0.9 ELSE 0.6 END AS score,
       CASE WHEN what IN ('start', 'multicast', 'gpu_nvl_fatal') THEN 'critical' ELSE 'warning' END AS severity,
       CASE what WHEN 'start' THEN 'Fabric Manager failed to start on ' || host
                 WHEN 'multicast' THEN 'Fabric Manager could not set up or release NVLink SHARP (multicast) teams on ' || host
                   || ': NCCL jobs that use NVLS fail at init there'
                 WHEN 'gpu_nvl_fatal' THEN 'Fabric Manager reports GPU NVL fatal errors'
                 WHEN 'gpu_nvl' THEN 'Fabric Manager reports GPU NVL non-fatal errors'
                 ELSE 'Fabric Manager reports NVSwitch trunk port failures' END
         || ' (' || records || ' record(s)'
         || CASE WHEN len(gpu_guids) > 0 THEN ', GPU GUID(s) ' || array_to_string(gpu_guids[1:4], ', ') ELSE '' END
         || CASE WHEN len(switch_ports) > 0 THEN ', switch:port ' || array_to_string(switch_ports[1:4], ', ') ELSE '' END
         || '): ' || left(first_message, 160) AS summary,
       CASE what
         WHEN 'start' THEN 'Fix what the start failure names, then start nvidia-fabricmanager: '
           || CASE WHEN first_message ILIKE '%NV_WARN_NOTHING_TO_DO%' OR first_message ILIKE '%query NVSwitch device information%'
                   THEN 'FM found no NVSwitch to manage: on a system without NVSwitches (PCIe GPUs, NVLink bridges) disable the service; on an HGX/DGX board check that the nvidia-nvswitch driver is loaded and the NVSwitches are on the PCI bus. '
                   ELSE 'check that the Fabric Manager package version equals the driver version and read the log''s ERROR lines. ' END
           || 'Until FM runs, CUDA on this node fails with cudaErrorSystemNotReady: drain it.'
         WHEN 'multicast' THEN 'Drain the node and reset its GPUs (nvidia-smi -r with no process on them) or reboot it; if Fabric Manager was restarted while jobs held the GPUs, that is the cause (stop jobs, stop FM, reset GPUs, start FM). Meanwhile NCCL_NVLS_ENABLE=0 lets jobs run without NVLink SHARP.'
         WHEN 'gpu_nvl_fatal' THEN 'Drain the GPUs named (their fabric GUIDs) and reset them before new work; if the same GPU or port repeats, have the compute tray or NVSwitch tray serviced.'
         WHEN 'gpu_nvl' THEN 'No action beyond watching their rate, unless they repeat on the same GPU port or come with Xids.'
         ELSE 'The NVSwitch-to-NVSwitch link (switch GUID and port named) is down: the fabric runs with less bandwidth; have the switch tray or cable cartridge serviced.' END AS remediation,
       to_json({what: what, records: records, gpu_guids: gpu_guids, switch_ports: switch_ports, first_message: first_message,
                first: {file: file, line_no: first_line}})::VARCHAR AS evidence
FROM g
ORDER BY start
