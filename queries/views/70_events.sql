-- events: the shared timeline of every discrete event of every source, one row per event:
--   ts (host clock, UTC), ts_aligned (reference clock: ts - hosts.clock_offset_s), ts_quality,
--   host, source (parser), kind, severity (info | warning | critical), subject (gpu3, eth2,
--   rank5, nvme0n1, ...), message, origin (table or view the event comes from), file, line_no.
-- Kinds: kernel messages by content (xid, sxid, link_down, link_up, pcie_error, thermal, oom, hung_task,
-- nic_error, other); NCCL lines as nccl_<kind of nccl_log> (nccl_version, nccl_init_complete,
-- nccl_net, nccl_gdr, nccl_env, nccl_ib_completion_error, nccl_socket_error, nccl_connect_error,
-- nccl_remote_closed, nccl_error_chain, nccl_abort, nccl_error; nccl_warn for other WARN lines, nccl_other
-- for the rest);
-- PyTorch lines as watchdog_timeout, watchdog_exception, watchdog_last_enqueued,
-- watchdog_last_completed, pytorch_exception, pytorch_error, process_terminate; gpu_throttle_start, gpu_throttle_end (gpu_episodes);
-- gpu_ecc_dbe, gpu_ecc_sbe, gpu_remap_pending, gpu_remap_failure (gpu_samples increments/flags);
-- nic_link_down_counter, nic_pause_storm (ethtool counter increments); disk_saturated,
-- cpu_iowait (episode starts); command_failed (collector commands that failed or timed out);
-- Fabric Manager records (fabricmanager_log) as fm_nvswitch_error, fm_gpu_nvl_error (critical when the log says
-- fatal), fm_multicast_failure, fm_start_failed (critical), fm_trunk_port_failure, fm_port_down, fm_ready,
-- fm_service (info) and fm_error (its other ERROR/WARNING lines; the inband and multicast team chatter is left out).
-- (raw.events_local is the definition without ts_aligned; forensics.db.derived may cache it.)
CREATE OR REPLACE VIEW raw.events_local AS
WITH kl AS (
    SELECT *,
        CASE
            WHEN xid IS NOT NULL THEN 'xid'
            WHEN event = 'nvswitch_sxid' THEN 'sxid'
            WHEN regexp_matches(message, '(?i)\blink (is )?down\b') THEN 'link_down'
            WHEN regexp_matches(message, '(?i)\blink (is )?up\b') THEN 'link_up'
            WHEN regexp_matches(message, '(?i)(\bAER\b|PCIe Bus Error|surprise down|\bDPC\b.*containment|pcieport.*error)') THEN 'pcie_error'
            WHEN regexp_matches(message, '(?i)(temperature above threshold|clock throttled|thermal (event|throttl|shutdown)|critical temperature)') THEN 'thermal'
            WHEN regexp_matches(message, '(?i)(out of memory|oom-kill|invoked oom-killer|oom_reaper)') THEN 'oom'
            WHEN regexp_matches(message, 'blocked for more than [0-9]+ seconds') THEN 'hung_task'
            WHEN subsystem LIKE 'mlx5%' AND regexp_matches(message, '(?i)(health|syndrome|fatal|cqe error|firmware error|internal error)') THEN 'nic_error'
            ELSE 'other'
        END AS ev_kind
    FROM raw.kernel_log
), gmap AS (
    SELECT host, lower(pci_bus_id) AS pci, min(gpu) AS gpu FROM gpus WHERE pci_bus_id IS NOT NULL AND gpu IS NOT NULL GROUP BY ALL
), ev AS (
    SELECT kl.ts, kl.ts_quality, kl.host, kl.source, kl.ev_kind AS kind,
        CASE kl.ev_kind
            WHEN 'xid' THEN CASE WHEN kl.xid IN (48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 109, 119, 120, 140, 149, 154)
                                 THEN 'critical' ELSE 'warning' END
            WHEN 'oom' THEN 'critical'
            WHEN 'sxid' THEN CASE WHEN regexp_matches(kl.event_detail, '^[0-9]+, Fatal,') THEN 'critical' ELSE 'warning' END
            WHEN 'link_up' THEN 'info'
            WHEN 'pcie_error' THEN CASE WHEN regexp_matches(kl.message, '(?i)(uncorrect|fatal|surprise down|containment)') THEN 'critical' ELSE 'warning' END
            WHEN 'other' THEN CASE WHEN kl.level IN ('emerg', 'alert', 'crit') THEN 'critical'
                                   WHEN kl.level = 'err' THEN 'warning' ELSE 'info' END
            ELSE 'warning'
        END AS severity,
        CASE WHEN kl.ev_kind = 'xid' AND gm.gpu IS NOT NULL THEN 'gpu' || gm.gpu
             ELSE coalesce(kl.iface, kl.pci_addr, kl.subsystem) END AS subject,
        kl.message, 'kernel_log' AS origin, kl.file, kl.line_no
    FROM kl LEFT JOIN gmap gm ON kl.xid IS NOT NULL AND gm.host = kl.host AND gm.pci = lower(kl.pci_addr)

    UNION ALL
    SELECT ts, ts_quality, host, source,
        CASE WHEN kind IS NULL OR kind IN ('other', 'pytorch') THEN
                 CASE WHEN level = 'WARN' THEN 'nccl_warn' WHEN level IN ('ERROR', 'FATAL') THEN 'pytorch_error'
                      WHEN level = 'ABORT' THEN 'nccl_abort' ELSE 'nccl_other' END
             WHEN kind IN ('watchdog_timeout', 'watchdog_exception', 'nccl_error') THEN kind
             WHEN kind IN ('last_enqueued', 'last_completed') THEN 'watchdog_' || kind
             WHEN kind = 'terminate' THEN 'process_terminate'
             WHEN kind = 'exception_raised' THEN 'pytorch_exception'
             ELSE 'nccl_' || kind END AS kind,
        CASE WHEN kind IN ('watchdog_timeout', 'watchdog_exception', 'abort', 'terminate') OR level IN ('ABORT', 'FATAL')
                 THEN 'critical'
             WHEN level IN ('WARN', 'ERROR')
                  OR kind IN ('ib_completion_error', 'socket_error', 'connect_error', 'remote_closed', 'error_chain',
                              'nccl_error', 'exception_raised') THEN 'warning'
             ELSE 'info' END AS severity,
        coalesce('rank' || rank, 'pid' || pid, 'gpu' || cuda_dev) AS subject,
        message, 'nccl_log' AS origin, file, line_no
    FROM nccl_log
    WHERE level IN ('WARN', 'ERROR', 'ABORT', 'FATAL')
       OR kind IN ('version', 'init_complete', 'net', 'gdr', 'env', 'watchdog_timeout', 'watchdog_exception',
                   'last_enqueued', 'last_completed', 'ib_completion_error', 'socket_error', 'connect_error',
                   'remote_closed', 'error_chain', 'abort', 'nccl_error', 'terminate', 'exception_raised')

    UNION ALL
    SELECT b.ts, e.ts_quality, e.host, 'nvidia_smi', b.kind,
        CASE WHEN e.reason LIKE 'hw_%' THEN 'critical' ELSE 'warning' END,
        'gpu' || e.gpu,
        replace(e.reason, '_', ' ')
            || CASE WHEN b.kind = 'gpu_throttle_start'
                    THEN ' active' || CASE WHEN e.ongoing THEN ' (still at the last sample, ' ELSE ' (for ' END
                         || round(e.duration_s, 1) || ' s'
                         || coalesce(', SM clock down to ' || round(e.min_sm_clock_mhz) || ' MHz', '')
                         || coalesce(', max ' || round(e.max_temp_c) || ' C', '') || ')'
                    ELSE ' ended after ' || round(e.duration_s, 1) || ' s' END,
        'gpu_episodes', NULL, NULL
    FROM gpu_episodes e,
         LATERAL (SELECT e.start AS ts, 'gpu_throttle_start' AS kind
                  UNION ALL SELECT e."end", 'gpu_throttle_end' WHERE NOT e.ongoing) b
    WHERE e.throttle

    UNION ALL
    SELECT ts, ts_quality, host, source, kind, severity, 'gpu' || gpu, msg, 'gpu_samples', file, line_no
    FROM (
        SELECT *,
            lag(ecc_dbe_volatile) OVER w AS p_dbe, lag(ecc_sbe_volatile) OVER w AS p_sbe,
            lag(remap_pending) OVER w AS p_pending, lag(remap_failure) OVER w AS p_failure
        FROM raw.gpu_samples
        WHERE ts IS NOT NULL AND gpu IS NOT NULL
          AND (ecc_dbe_volatile IS NOT NULL OR ecc_sbe_volatile IS NOT NULL OR remap_pending IS NOT NULL OR remap_failure IS NOT NULL)
        WINDOW w AS (PARTITION BY host, gpu, source ORDER BY ts)
    ) s,
    LATERAL (
        SELECT 'gpu_ecc_dbe' AS kind, 'critical' AS severity,
               'volatile uncorrectable ECC errors ' || coalesce(s.p_dbe, 0) || ' -> ' || s.ecc_dbe_volatile AS msg
        WHERE s.ecc_dbe_volatile > coalesce(s.p_dbe, 0)
        UNION ALL
        SELECT 'gpu_ecc_sbe', 'warning', 'volatile correctable ECC errors ' || coalesce(s.p_sbe, 0) || ' -> ' || s.ecc_sbe_volatile
        WHERE s.ecc_sbe_volatile > coalesce(s.p_sbe, 0)
        UNION ALL
        SELECT 'gpu_remap_pending', 'critical', 'row remapping pending (GPU reset needed)'
        WHERE s.remap_pending AND NOT coalesce(s.p_pending, false)
        UNION ALL
        SELECT 'gpu_remap_failure', 'critical', 'row remapping failure'
        WHERE s.remap_failure AND NOT coalesce(s.p_failure, false)
    )

    UNION ALL
    SELECT ts, ts_quality, host, 'ethtool',
        CASE WHEN class = 'storm' THEN 'nic_pause_storm' ELSE 'nic_link_down_counter' END,
        CASE WHEN counter LIKE '%storm_error%' THEN 'critical' ELSE 'warning' END,
        iface, raw_name || ' +' || delta || ' (now ' || value || ')',
        'nic_counters', file, line_no
    FROM raw.nic_intervals
    WHERE class IN ('link', 'storm') AND delta > 0
      AND (class = 'storm' OR counter IN ('link_down_events_phy', 'carrier_changes', 'carrier_down_count', 'link_down_events'))

    UNION ALL
    SELECT start, ts_quality, host, source, 'disk_saturated', 'warning', device,
        device || ' at >= 90 % utilisation for ' || round(duration_s, 1) || ' s (max await '
            || coalesce(round(max_await_ms, 1) || ' ms', 'n/a') || ', max queue ' || coalesce(round(max_aqu_sz, 1), 0) || ')',
        'disk_episodes', NULL, NULL
    FROM disk_episodes

    UNION ALL
    SELECT start, ts_quality, host, source, 'cpu_iowait', 'warning', 'cpu',
        'CPU iowait >= 10 % for ' || round(duration_s, 1) || ' s (max ' || round(max_iowait_pct, 1) || ' %)',
        'iowait_episodes', NULL, NULL
    FROM iowait_episodes

    UNION ALL
    SELECT ts, ts_quality, host, source,
        CASE WHEN event IN ('other', 'inband', 'multicast') THEN 'fm_error' WHEN starts_with(event, 'fm_') THEN event
             ELSE 'fm_' || event END,
        CASE WHEN event IN ('nvswitch_error', 'gpu_nvl_error') THEN CASE WHEN fatal THEN 'critical' ELSE 'warning' END
             WHEN event IN ('multicast_failure', 'fm_start_failed') THEN 'critical'
             WHEN event IN ('fm_ready', 'fm_service') THEN 'info'
             ELSE 'warning' END,
        coalesce(switch_pci, gpu_guid, switch_guid, 'fabricmanager'),
        message || coalesce(' (' || array_to_string(list_slice(string_split(detail, chr(10)), 1, 3), '; ') || ')', ''),
        'fabricmanager_log', file, line_no
    FROM raw.fabricmanager_log
    WHERE event NOT IN ('other', 'inband', 'multicast') OR level IN ('ERROR', 'WARNING', 'WARN', 'FATAL', 'CRITICAL')

    UNION ALL
    SELECT start, 'exact', host, 'collector', 'command_failed',
        CASE WHEN timed_out OR exit_code IS NULL THEN 'warning' ELSE 'info' END,
        name,
        array_to_string(argv, ' ') || ': '
            || CASE WHEN timed_out THEN 'timed out' WHEN error IS NOT NULL THEN error ELSE 'exit code ' || exit_code END
            || coalesce(' -- ' || nullif(trim(stderr_tail), ''), ''),
        'commands', raw_file, NULL
    FROM raw.commands
    WHERE (exit_code IS NOT NULL AND exit_code <> 0) OR error IS NOT NULL OR timed_out
)
SELECT ts, ts_quality, host, source, kind, severity, subject, message, origin, file, line_no FROM ev;

CREATE OR REPLACE VIEW events AS
SELECT ev.ts, align_ts(ev.ts, c.clock_offset_s) AS ts_aligned, ev.ts_quality, ev.host, ev.source, ev.kind,
       ev.severity, ev.subject, ev.message, ev.origin, ev.file, ev.line_no
FROM raw.events_local ev LEFT JOIN raw.clock_offsets c ON c.host = ev.host;
