-- Wide views of the sar reports that have no table of their own (issue 17): one row per sample
-- (and per item: TTY, filesystem, CPU, FC host, interrupt, sensor), one typed column per metric, read
-- from the long rows of raw.sar_generic. Text reports and sadf -d are told by a header of the report,
-- sadf -j by its section; metric names of all three are matched through sar_metric_base(), so the
-- column is the same whatever sysstat printed (`%swpused` and `swpused-percent`, `kbhugfree` and
-- `hugfree`, `retrans/s` and 12.x's `retrseg/s` in -n ETCP). Column names: the header's, `/s` -> `_s`,
-- `%x` -> `x_pct`, lower case; counts (sockets, kernel table entries, kB, inodes) are BIGINT, rates
-- and % DOUBLE. Columns sysstat did not print (older versions, other options) are NULL. The long rows
-- stay in sar_generic; sar_reports says which view each of them belongs to (-m USB and BAT, whose
-- columns are text, have none).
-- Written by queries/views/_gen_sar_reports.py: change that and run it, not this file.
--
-- sar_metric_base(metric): the metric's name without unit spellings ("io-reads.rtps" -> "rtps",
-- "bread/s" -> "bread", "%swpused", "swpused-percent" -> "swpused_pct", "percent-temp" -> "temp_pct",
-- "kbhugfree" -> "hugfree").
CREATE OR REPLACE MACRO sar_metric_base(m) AS
    lower(replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
        split_part(m, '.', -1), '/s$', ''), '^%(.*)$', '\1_pct'), '-percent$', '_pct'), '^percent-(.*)$', '\1_pct'),
        '^kb', ''), '-', '_'));
-- sar_section_is(section, headers, json_section): the sar_generic section is the report whose text
-- (or sadf -d) header holds one of `headers` or whose sadf -j section is `json_section`.
CREATE OR REPLACE MACRO sar_section_is(section, headers, json_section) AS
    section = json_section OR list_has_any(string_split(section, ' '), headers);

-- sar_reports: the long rows of sar_generic with the wide view (`report`) their section belongs to (NULL: none).
CREATE OR REPLACE VIEW sar_reports AS
SELECT *, CASE
        WHEN sar_section_is(section, ['cswch/s'], 'process-and-context-switch') THEN 'sar_cswch'
        WHEN sar_section_is(section, ['pswpin/s'], 'swap-pages') THEN 'sar_swapping'
        WHEN sar_section_is(section, ['pgpgin/s'], 'paging') THEN 'sar_paging'
        WHEN sar_section_is(section, ['bread/s'], 'io') THEN 'sar_io'
        WHEN sar_section_is(section, ['kbswpfree'], 'memory') THEN 'sar_swap_space'
        WHEN sar_section_is(section, ['kbhugfree'], 'hugepages') THEN 'sar_hugepages'
        WHEN sar_section_is(section, ['dentunusd'], 'kernel') THEN 'sar_kernel_tables'
        WHEN sar_section_is(section, ['rcvin/s'], 'serial') THEN 'sar_tty'
        WHEN sar_section_is(section, ['INTR'], 'interrupts') THEN 'sar_intr'
        WHEN sar_section_is(section, ['MBfsfree'], 'filesystems') THEN 'sar_fs'
        WHEN sar_section_is(section, ['MHz', 'wghMHz'], 'power-management.cpu-frequency') THEN 'sar_cpu_freq'
        WHEN sar_section_is(section, ['rpm'], 'power-management.fan-speed') THEN 'sar_fan'
        WHEN sar_section_is(section, ['degC'], 'power-management.temperature') THEN 'sar_temp'
        WHEN sar_section_is(section, ['inV'], 'power-management.voltage-input') THEN 'sar_voltage'
        WHEN (list_has_any(string_split(section, ' '), ['%scpu-10', '%sio-10', '%smem-10']) OR section LIKE 'psi.psi-%') THEN 'sar_psi'
        WHEN sar_section_is(section, ['fch_rxf/s'], 'network.fchosts') THEN 'sar_fchost'
        WHEN sar_section_is(section, ['getatt/s'], 'network.net-nfs') THEN 'sar_nfs'
        WHEN sar_section_is(section, ['scall/s'], 'network.net-nfsd') THEN 'sar_nfsd'
        WHEN sar_section_is(section, ['totsck'], 'network.net-sock') THEN 'sar_net_sock'
        WHEN sar_section_is(section, ['irec/s'], 'network.net-ip') THEN 'sar_net_ip'
        WHEN sar_section_is(section, ['ihdrerr/s'], 'network.net-eip') THEN 'sar_net_eip'
        WHEN sar_section_is(section, ['imsg/s'], 'network.net-icmp') THEN 'sar_net_icmp'
        WHEN sar_section_is(section, ['idstunr/s'], 'network.net-eicmp') THEN 'sar_net_eicmp'
        WHEN sar_section_is(section, ['active/s'], 'network.net-tcp') THEN 'sar_net_tcp'
        WHEN sar_section_is(section, ['atmptf/s'], 'network.net-etcp') THEN 'sar_net_etcp'
        WHEN sar_section_is(section, ['idgm/s'], 'network.net-udp') THEN 'sar_net_udp'
        WHEN sar_section_is(section, ['squeezd/s'], 'network.softnet') THEN 'sar_net_soft'
        WHEN sar_section_is(section, ['tcp6sck'], 'network.net-sock6') THEN 'sar_net_sock6'
        WHEN sar_section_is(section, ['irec6/s'], 'network.net-ip6') THEN 'sar_net_ip6'
        WHEN sar_section_is(section, ['ihdrer6/s'], 'network.net-eip6') THEN 'sar_net_eip6'
        WHEN sar_section_is(section, ['imsg6/s'], 'network.net-icmp6') THEN 'sar_net_icmp6'
        WHEN sar_section_is(section, ['idtunr6/s'], 'network.net-eicmp6') THEN 'sar_net_eicmp6'
        WHEN sar_section_is(section, ['idgm6/s'], 'network.net-udp6') THEN 'sar_net_udp6'
    END AS report
FROM raw.sar_generic;

-- sar_cswch: sar -w, one row per sample: proc_s, cswch_s
CREATE OR REPLACE VIEW sar_cswch AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'proc') AS proc_s,
       max(value) FILTER (WHERE b = 'cswch') AS cswch_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['cswch/s'], 'process-and-context-switch'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_swapping: sar -W, one row per sample: pswpin_s, pswpout_s
CREATE OR REPLACE VIEW sar_swapping AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'pswpin') AS pswpin_s,
       max(value) FILTER (WHERE b = 'pswpout') AS pswpout_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['pswpin/s'], 'swap-pages'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_paging: sar -B, one row per sample: pgpgin_s, pgpgout_s, fault_s, majflt_s, pgfree_s, pgscank_s, pgscand_s, pgsteal_s, vmeff_pct, pgprom_s, pgdem_s
CREATE OR REPLACE VIEW sar_paging AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'pgpgin') AS pgpgin_s,
       max(value) FILTER (WHERE b = 'pgpgout') AS pgpgout_s,
       max(value) FILTER (WHERE b = 'fault') AS fault_s,
       max(value) FILTER (WHERE b = 'majflt') AS majflt_s,
       max(value) FILTER (WHERE b = 'pgfree') AS pgfree_s,
       max(value) FILTER (WHERE b = 'pgscank') AS pgscank_s,
       max(value) FILTER (WHERE b = 'pgscand') AS pgscand_s,
       max(value) FILTER (WHERE b = 'pgsteal') AS pgsteal_s,
       max(value) FILTER (WHERE b = 'vmeff_pct') AS vmeff_pct,
       max(value) FILTER (WHERE b = 'pgprom') AS pgprom_s,
       max(value) FILTER (WHERE b = 'pgdem') AS pgdem_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['pgpgin/s'], 'paging'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_io: sar -b, one row per sample: tps, rtps, wtps, dtps, bread_s, bwrtn_s, bdscd_s
CREATE OR REPLACE VIEW sar_io AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'tps') AS tps,
       max(value) FILTER (WHERE b = 'rtps') AS rtps,
       max(value) FILTER (WHERE b = 'wtps') AS wtps,
       max(value) FILTER (WHERE b = 'dtps') AS dtps,
       max(value) FILTER (WHERE b = 'bread') AS bread_s,
       max(value) FILTER (WHERE b = 'bwrtn') AS bwrtn_s,
       max(value) FILTER (WHERE b = 'bdscd') AS bdscd_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['bread/s'], 'io'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_swap_space: sar -S, one row per sample: kbswpfree, kbswpused, swpused_pct, kbswpcad, swpcad_pct
CREATE OR REPLACE VIEW sar_swap_space AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       CAST(max(value) FILTER (WHERE b = 'swpfree') AS BIGINT) AS kbswpfree,
       CAST(max(value) FILTER (WHERE b = 'swpused') AS BIGINT) AS kbswpused,
       max(value) FILTER (WHERE b = 'swpused_pct') AS swpused_pct,
       CAST(max(value) FILTER (WHERE b = 'swpcad') AS BIGINT) AS kbswpcad,
       max(value) FILTER (WHERE b = 'swpcad_pct') AS swpcad_pct
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['kbswpfree'], 'memory'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_hugepages: sar -H, one row per sample: kbhugfree, kbhugused, hugused_pct, kbhugrsvd, kbhugsurp
CREATE OR REPLACE VIEW sar_hugepages AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       CAST(max(value) FILTER (WHERE b = 'hugfree') AS BIGINT) AS kbhugfree,
       CAST(max(value) FILTER (WHERE b = 'hugused') AS BIGINT) AS kbhugused,
       max(value) FILTER (WHERE b = 'hugused_pct') AS hugused_pct,
       CAST(max(value) FILTER (WHERE b = 'hugrsvd') AS BIGINT) AS kbhugrsvd,
       CAST(max(value) FILTER (WHERE b = 'hugsurp') AS BIGINT) AS kbhugsurp
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['kbhugfree'], 'hugepages'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_kernel_tables: sar -v, one row per sample: dentunusd, file_nr, inode_nr, pty_nr
CREATE OR REPLACE VIEW sar_kernel_tables AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       CAST(max(value) FILTER (WHERE b = 'dentunusd') AS BIGINT) AS dentunusd,
       CAST(max(value) FILTER (WHERE b = 'file_nr') AS BIGINT) AS file_nr,
       CAST(max(value) FILTER (WHERE b = 'inode_nr') AS BIGINT) AS inode_nr,
       CAST(max(value) FILTER (WHERE b = 'pty_nr') AS BIGINT) AS pty_nr
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['dentunusd'], 'kernel'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_tty: sar -y, one row per sample and tty: rcvin_s, xmtin_s, framerr_s, prtyerr_s, brk_s, ovrun_s
CREATE OR REPLACE VIEW sar_tty AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       item AS tty,
       max(value) FILTER (WHERE b = 'rcvin') AS rcvin_s,
       max(value) FILTER (WHERE b = 'xmtin') AS xmtin_s,
       max(value) FILTER (WHERE b = 'framerr') AS framerr_s,
       max(value) FILTER (WHERE b = 'prtyerr') AS prtyerr_s,
       max(value) FILTER (WHERE b = 'brk') AS brk_s,
       max(value) FILTER (WHERE b = 'ovrun') AS ovrun_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['rcvin/s'], 'serial'))
GROUP BY host, source, file, sample_no, ts, ts_quality, item;

-- sar_intr: sar -I, one row per sample and intr: cpu, intr_s
CREATE OR REPLACE VIEW sar_intr AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       item AS intr,
       CASE WHEN metric IN ('intr/s', 'all', 'intr') THEN 'all' ELSE metric END AS cpu,
       max(value) AS intr_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['INTR'], 'interrupts'))
GROUP BY host, source, file, sample_no, ts, ts_quality, item, metric;

-- sar_fs: sar -F, one row per sample and filesystem: mbfsfree, mbfsused, fsused_pct, ufsused_pct, ifree, iused, iused_pct
CREATE OR REPLACE VIEW sar_fs AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       item AS filesystem,
       max(value) FILTER (WHERE b = 'mbfsfree') AS mbfsfree,
       max(value) FILTER (WHERE b = 'mbfsused') AS mbfsused,
       max(value) FILTER (WHERE b = 'fsused_pct') AS fsused_pct,
       max(value) FILTER (WHERE b = 'ufsused_pct') AS ufsused_pct,
       CAST(max(value) FILTER (WHERE b = 'ifree') AS BIGINT) AS ifree,
       CAST(max(value) FILTER (WHERE b = 'iused') AS BIGINT) AS iused,
       max(value) FILTER (WHERE b = 'iused_pct') AS iused_pct
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['MBfsfree'], 'filesystems'))
GROUP BY host, source, file, sample_no, ts, ts_quality, item;

-- sar_cpu_freq: sar -m CPU / -m FREQ, one row per sample and cpu: mhz, wghmhz
CREATE OR REPLACE VIEW sar_cpu_freq AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       item AS cpu,
       max(value) FILTER (WHERE b IN ('mhz', 'frequency')) AS mhz,
       max(value) FILTER (WHERE b = 'wghmhz') AS wghmhz
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['MHz', 'wghMHz'], 'power-management.cpu-frequency'))
GROUP BY host, source, file, sample_no, ts, ts_quality, item;

-- sar_fan: sar -m FAN, one row per sample and fan device: rpm, drpm
CREATE OR REPLACE VIEW sar_fan AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       split_part(item, ' ', 1) AS fan,
       substr(item, strpos(item, ' ') + 1) AS device,
       max(value) FILTER (WHERE b = 'rpm') AS rpm,
       max(value) FILTER (WHERE b = 'drpm') AS drpm
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['rpm'], 'power-management.fan-speed'))
GROUP BY host, source, file, sample_no, ts, ts_quality, item;

-- sar_temp: sar -m TEMP, one row per sample and temp device: degc, temp_pct
CREATE OR REPLACE VIEW sar_temp AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       split_part(item, ' ', 1) AS temp,
       substr(item, strpos(item, ' ') + 1) AS device,
       max(value) FILTER (WHERE b = 'degc') AS degc,
       max(value) FILTER (WHERE b = 'temp_pct') AS temp_pct
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['degC'], 'power-management.temperature'))
GROUP BY host, source, file, sample_no, ts, ts_quality, item;

-- sar_voltage: sar -m IN, one row per sample and voltage device: inv, in_pct
CREATE OR REPLACE VIEW sar_voltage AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       split_part(item, ' ', 1) AS voltage,
       substr(item, strpos(item, ' ') + 1) AS device,
       max(value) FILTER (WHERE b = 'inv') AS inv,
       max(value) FILTER (WHERE b = 'in_pct') AS in_pct
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['inV'], 'power-management.voltage-input'))
GROUP BY host, source, file, sample_no, ts, ts_quality, item;

-- sar_psi: sar -q CPU/IO/MEM (pressure stall), one row per sample: cpu_some_avg10_pct, cpu_some_avg60_pct, cpu_some_avg300_pct, cpu_some_avg_pct, io_some_avg10_pct, io_some_avg60_pct, io_some_avg300_pct, io_some_avg_pct, io_full_avg10_pct, io_full_avg60_pct, io_full_avg300_pct, io_full_avg_pct, mem_some_avg10_pct, mem_some_avg60_pct, mem_some_avg300_pct, mem_some_avg_pct, mem_full_avg10_pct, mem_full_avg60_pct, mem_full_avg300_pct, mem_full_avg_pct
CREATE OR REPLACE VIEW sar_psi AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'scpu_10_pct' OR (section = 'psi.psi-cpu' AND b = 'some_avg10')) AS cpu_some_avg10_pct,
       max(value) FILTER (WHERE b = 'scpu_60_pct' OR (section = 'psi.psi-cpu' AND b = 'some_avg60')) AS cpu_some_avg60_pct,
       max(value) FILTER (WHERE b = 'scpu_300_pct' OR (section = 'psi.psi-cpu' AND b = 'some_avg300')) AS cpu_some_avg300_pct,
       max(value) FILTER (WHERE b = 'scpu_pct' OR (section = 'psi.psi-cpu' AND b = 'some_avg')) AS cpu_some_avg_pct,
       max(value) FILTER (WHERE b = 'sio_10_pct' OR (section = 'psi.psi-io' AND b = 'some_avg10')) AS io_some_avg10_pct,
       max(value) FILTER (WHERE b = 'sio_60_pct' OR (section = 'psi.psi-io' AND b = 'some_avg60')) AS io_some_avg60_pct,
       max(value) FILTER (WHERE b = 'sio_300_pct' OR (section = 'psi.psi-io' AND b = 'some_avg300')) AS io_some_avg300_pct,
       max(value) FILTER (WHERE b = 'sio_pct' OR (section = 'psi.psi-io' AND b = 'some_avg')) AS io_some_avg_pct,
       max(value) FILTER (WHERE b = 'fio_10_pct' OR (section = 'psi.psi-io' AND b = 'full_avg10')) AS io_full_avg10_pct,
       max(value) FILTER (WHERE b = 'fio_60_pct' OR (section = 'psi.psi-io' AND b = 'full_avg60')) AS io_full_avg60_pct,
       max(value) FILTER (WHERE b = 'fio_300_pct' OR (section = 'psi.psi-io' AND b = 'full_avg300')) AS io_full_avg300_pct,
       max(value) FILTER (WHERE b = 'fio_pct' OR (section = 'psi.psi-io' AND b = 'full_avg')) AS io_full_avg_pct,
       max(value) FILTER (WHERE b = 'smem_10_pct' OR (section = 'psi.psi-mem' AND b = 'some_avg10')) AS mem_some_avg10_pct,
       max(value) FILTER (WHERE b = 'smem_60_pct' OR (section = 'psi.psi-mem' AND b = 'some_avg60')) AS mem_some_avg60_pct,
       max(value) FILTER (WHERE b = 'smem_300_pct' OR (section = 'psi.psi-mem' AND b = 'some_avg300')) AS mem_some_avg300_pct,
       max(value) FILTER (WHERE b = 'smem_pct' OR (section = 'psi.psi-mem' AND b = 'some_avg')) AS mem_some_avg_pct,
       max(value) FILTER (WHERE b = 'fmem_10_pct' OR (section = 'psi.psi-mem' AND b = 'full_avg10')) AS mem_full_avg10_pct,
       max(value) FILTER (WHERE b = 'fmem_60_pct' OR (section = 'psi.psi-mem' AND b = 'full_avg60')) AS mem_full_avg60_pct,
       max(value) FILTER (WHERE b = 'fmem_300_pct' OR (section = 'psi.psi-mem' AND b = 'full_avg300')) AS mem_full_avg300_pct,
       max(value) FILTER (WHERE b = 'fmem_pct' OR (section = 'psi.psi-mem' AND b = 'full_avg')) AS mem_full_avg_pct
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE (list_has_any(string_split(section, ' '), ['%scpu-10', '%sio-10', '%smem-10']) OR section LIKE 'psi.psi-%'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_fchost: sar -n FC, one row per sample and fchost: fch_rxf_s, fch_txf_s, fch_rxw_s, fch_txw_s
CREATE OR REPLACE VIEW sar_fchost AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       item AS fchost,
       max(value) FILTER (WHERE b = 'fch_rxf') AS fch_rxf_s,
       max(value) FILTER (WHERE b = 'fch_txf') AS fch_txf_s,
       max(value) FILTER (WHERE b = 'fch_rxw') AS fch_rxw_s,
       max(value) FILTER (WHERE b = 'fch_txw') AS fch_txw_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['fch_rxf/s'], 'network.fchosts'))
GROUP BY host, source, file, sample_no, ts, ts_quality, item;

-- sar_nfs: sar -n NFS, one row per sample: call_s, retrans_s, read_s, write_s, access_s, getatt_s
CREATE OR REPLACE VIEW sar_nfs AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'call') AS call_s,
       max(value) FILTER (WHERE b = 'retrans') AS retrans_s,
       max(value) FILTER (WHERE b = 'read') AS read_s,
       max(value) FILTER (WHERE b = 'write') AS write_s,
       max(value) FILTER (WHERE b = 'access') AS access_s,
       max(value) FILTER (WHERE b = 'getatt') AS getatt_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['getatt/s'], 'network.net-nfs'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_nfsd: sar -n NFSD, one row per sample: scall_s, badcall_s, packet_s, udp_s, tcp_s, hit_s, miss_s, sread_s, swrite_s, saccess_s, sgetatt_s
CREATE OR REPLACE VIEW sar_nfsd AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'scall') AS scall_s,
       max(value) FILTER (WHERE b = 'badcall') AS badcall_s,
       max(value) FILTER (WHERE b = 'packet') AS packet_s,
       max(value) FILTER (WHERE b = 'udp') AS udp_s,
       max(value) FILTER (WHERE b = 'tcp') AS tcp_s,
       max(value) FILTER (WHERE b = 'hit') AS hit_s,
       max(value) FILTER (WHERE b = 'miss') AS miss_s,
       max(value) FILTER (WHERE b = 'sread') AS sread_s,
       max(value) FILTER (WHERE b = 'swrite') AS swrite_s,
       max(value) FILTER (WHERE b = 'saccess') AS saccess_s,
       max(value) FILTER (WHERE b = 'sgetatt') AS sgetatt_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['scall/s'], 'network.net-nfsd'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_sock: sar -n SOCK, one row per sample: totsck, tcpsck, udpsck, rawsck, ip_frag, tcp_tw
CREATE OR REPLACE VIEW sar_net_sock AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       CAST(max(value) FILTER (WHERE b = 'totsck') AS BIGINT) AS totsck,
       CAST(max(value) FILTER (WHERE b = 'tcpsck') AS BIGINT) AS tcpsck,
       CAST(max(value) FILTER (WHERE b = 'udpsck') AS BIGINT) AS udpsck,
       CAST(max(value) FILTER (WHERE b = 'rawsck') AS BIGINT) AS rawsck,
       CAST(max(value) FILTER (WHERE b = 'ip_frag') AS BIGINT) AS ip_frag,
       CAST(max(value) FILTER (WHERE b = 'tcp_tw') AS BIGINT) AS tcp_tw
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['totsck'], 'network.net-sock'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_ip: sar -n IP, one row per sample: irec_s, fwddgm_s, idel_s, orq_s, asmrq_s, asmok_s, fragok_s, fragcrt_s
CREATE OR REPLACE VIEW sar_net_ip AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'irec') AS irec_s,
       max(value) FILTER (WHERE b = 'fwddgm') AS fwddgm_s,
       max(value) FILTER (WHERE b = 'idel') AS idel_s,
       max(value) FILTER (WHERE b = 'orq') AS orq_s,
       max(value) FILTER (WHERE b = 'asmrq') AS asmrq_s,
       max(value) FILTER (WHERE b = 'asmok') AS asmok_s,
       max(value) FILTER (WHERE b = 'fragok') AS fragok_s,
       max(value) FILTER (WHERE b = 'fragcrt') AS fragcrt_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['irec/s'], 'network.net-ip'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_eip: sar -n EIP, one row per sample: ihdrerr_s, iadrerr_s, iukwnpr_s, idisc_s, odisc_s, onort_s, asmf_s, fragf_s
CREATE OR REPLACE VIEW sar_net_eip AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'ihdrerr') AS ihdrerr_s,
       max(value) FILTER (WHERE b = 'iadrerr') AS iadrerr_s,
       max(value) FILTER (WHERE b = 'iukwnpr') AS iukwnpr_s,
       max(value) FILTER (WHERE b = 'idisc') AS idisc_s,
       max(value) FILTER (WHERE b = 'odisc') AS odisc_s,
       max(value) FILTER (WHERE b = 'onort') AS onort_s,
       max(value) FILTER (WHERE b = 'asmf') AS asmf_s,
       max(value) FILTER (WHERE b = 'fragf') AS fragf_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['ihdrerr/s'], 'network.net-eip'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_icmp: sar -n ICMP, one row per sample: imsg_s, omsg_s, iech_s, iechr_s, oech_s, oechr_s, itm_s, itmr_s, otm_s, otmr_s, iadrmk_s, iadrmkr_s, oadrmk_s, oadrmkr_s
CREATE OR REPLACE VIEW sar_net_icmp AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'imsg') AS imsg_s,
       max(value) FILTER (WHERE b = 'omsg') AS omsg_s,
       max(value) FILTER (WHERE b = 'iech') AS iech_s,
       max(value) FILTER (WHERE b = 'iechr') AS iechr_s,
       max(value) FILTER (WHERE b = 'oech') AS oech_s,
       max(value) FILTER (WHERE b = 'oechr') AS oechr_s,
       max(value) FILTER (WHERE b = 'itm') AS itm_s,
       max(value) FILTER (WHERE b = 'itmr') AS itmr_s,
       max(value) FILTER (WHERE b = 'otm') AS otm_s,
       max(value) FILTER (WHERE b = 'otmr') AS otmr_s,
       max(value) FILTER (WHERE b = 'iadrmk') AS iadrmk_s,
       max(value) FILTER (WHERE b = 'iadrmkr') AS iadrmkr_s,
       max(value) FILTER (WHERE b = 'oadrmk') AS oadrmk_s,
       max(value) FILTER (WHERE b = 'oadrmkr') AS oadrmkr_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['imsg/s'], 'network.net-icmp'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_eicmp: sar -n EICMP, one row per sample: ierr_s, oerr_s, idstunr_s, odstunr_s, itmex_s, otmex_s, iparmpb_s, oparmpb_s, isrcq_s, osrcq_s, iredir_s, oredir_s
CREATE OR REPLACE VIEW sar_net_eicmp AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'ierr') AS ierr_s,
       max(value) FILTER (WHERE b = 'oerr') AS oerr_s,
       max(value) FILTER (WHERE b = 'idstunr') AS idstunr_s,
       max(value) FILTER (WHERE b = 'odstunr') AS odstunr_s,
       max(value) FILTER (WHERE b = 'itmex') AS itmex_s,
       max(value) FILTER (WHERE b = 'otmex') AS otmex_s,
       max(value) FILTER (WHERE b = 'iparmpb') AS iparmpb_s,
       max(value) FILTER (WHERE b = 'oparmpb') AS oparmpb_s,
       max(value) FILTER (WHERE b = 'isrcq') AS isrcq_s,
       max(value) FILTER (WHERE b = 'osrcq') AS osrcq_s,
       max(value) FILTER (WHERE b = 'iredir') AS iredir_s,
       max(value) FILTER (WHERE b = 'oredir') AS oredir_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['idstunr/s'], 'network.net-eicmp'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_tcp: sar -n TCP, one row per sample: active_s, passive_s, iseg_s, oseg_s
CREATE OR REPLACE VIEW sar_net_tcp AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'active') AS active_s,
       max(value) FILTER (WHERE b = 'passive') AS passive_s,
       max(value) FILTER (WHERE b = 'iseg') AS iseg_s,
       max(value) FILTER (WHERE b = 'oseg') AS oseg_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['active/s'], 'network.net-tcp'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_etcp: sar -n ETCP, one row per sample: atmptf_s, estres_s, retrans_s, isegerr_s, orsts_s
CREATE OR REPLACE VIEW sar_net_etcp AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'atmptf') AS atmptf_s,
       max(value) FILTER (WHERE b = 'estres') AS estres_s,
       max(value) FILTER (WHERE b IN ('retrans', 'retrseg')) AS retrans_s,
       max(value) FILTER (WHERE b = 'isegerr') AS isegerr_s,
       max(value) FILTER (WHERE b = 'orsts') AS orsts_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['atmptf/s'], 'network.net-etcp'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_udp: sar -n UDP, one row per sample: idgm_s, odgm_s, noport_s, idgmerr_s
CREATE OR REPLACE VIEW sar_net_udp AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'idgm') AS idgm_s,
       max(value) FILTER (WHERE b = 'odgm') AS odgm_s,
       max(value) FILTER (WHERE b = 'noport') AS noport_s,
       max(value) FILTER (WHERE b = 'idgmerr') AS idgmerr_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['idgm/s'], 'network.net-udp'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_soft: sar -n SOFT, one row per sample and cpu: total_s, dropd_s, squeezd_s, rx_rps_s, flw_lim_s, blg_len
CREATE OR REPLACE VIEW sar_net_soft AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       item AS cpu,
       max(value) FILTER (WHERE b = 'total') AS total_s,
       max(value) FILTER (WHERE b = 'dropd') AS dropd_s,
       max(value) FILTER (WHERE b = 'squeezd') AS squeezd_s,
       max(value) FILTER (WHERE b = 'rx_rps') AS rx_rps_s,
       max(value) FILTER (WHERE b = 'flw_lim') AS flw_lim_s,
       CAST(max(value) FILTER (WHERE b = 'blg_len') AS BIGINT) AS blg_len
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['squeezd/s'], 'network.softnet'))
GROUP BY host, source, file, sample_no, ts, ts_quality, item;

-- sar_net_sock6: sar -n SOCK6, one row per sample: tcp6sck, udp6sck, raw6sck, ip6_frag
CREATE OR REPLACE VIEW sar_net_sock6 AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       CAST(max(value) FILTER (WHERE b = 'tcp6sck') AS BIGINT) AS tcp6sck,
       CAST(max(value) FILTER (WHERE b = 'udp6sck') AS BIGINT) AS udp6sck,
       CAST(max(value) FILTER (WHERE b = 'raw6sck') AS BIGINT) AS raw6sck,
       CAST(max(value) FILTER (WHERE b = 'ip6_frag') AS BIGINT) AS ip6_frag
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['tcp6sck'], 'network.net-sock6'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_ip6: sar -n IP6, one row per sample: irec6_s, fwddgm6_s, idel6_s, orq6_s, asmrq6_s, asmok6_s, imcpck6_s, omcpck6_s, fragok6_s, fragcr6_s
CREATE OR REPLACE VIEW sar_net_ip6 AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'irec6') AS irec6_s,
       max(value) FILTER (WHERE b = 'fwddgm6') AS fwddgm6_s,
       max(value) FILTER (WHERE b = 'idel6') AS idel6_s,
       max(value) FILTER (WHERE b = 'orq6') AS orq6_s,
       max(value) FILTER (WHERE b = 'asmrq6') AS asmrq6_s,
       max(value) FILTER (WHERE b = 'asmok6') AS asmok6_s,
       max(value) FILTER (WHERE b = 'imcpck6') AS imcpck6_s,
       max(value) FILTER (WHERE b = 'omcpck6') AS omcpck6_s,
       max(value) FILTER (WHERE b = 'fragok6') AS fragok6_s,
       max(value) FILTER (WHERE b = 'fragcr6') AS fragcr6_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['irec6/s'], 'network.net-ip6'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_eip6: sar -n EIP6, one row per sample: ihdrer6_s, iadrer6_s, iukwnp6_s, i2big6_s, idisc6_s, odisc6_s, inort6_s, onort6_s, asmf6_s, fragf6_s, itrpck6_s
CREATE OR REPLACE VIEW sar_net_eip6 AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'ihdrer6') AS ihdrer6_s,
       max(value) FILTER (WHERE b = 'iadrer6') AS iadrer6_s,
       max(value) FILTER (WHERE b = 'iukwnp6') AS iukwnp6_s,
       max(value) FILTER (WHERE b = 'i2big6') AS i2big6_s,
       max(value) FILTER (WHERE b = 'idisc6') AS idisc6_s,
       max(value) FILTER (WHERE b = 'odisc6') AS odisc6_s,
       max(value) FILTER (WHERE b = 'inort6') AS inort6_s,
       max(value) FILTER (WHERE b = 'onort6') AS onort6_s,
       max(value) FILTER (WHERE b = 'asmf6') AS asmf6_s,
       max(value) FILTER (WHERE b = 'fragf6') AS fragf6_s,
       max(value) FILTER (WHERE b = 'itrpck6') AS itrpck6_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['ihdrer6/s'], 'network.net-eip6'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_icmp6: sar -n ICMP6, one row per sample: imsg6_s, omsg6_s, iech6_s, iechr6_s, oechr6_s, igmbq6_s, igmbr6_s, ogmbr6_s, igmbrd6_s, ogmbrd6_s, irtsol6_s, ortsol6_s, irtad6_s, inbsol6_s, onbsol6_s, inbad6_s, onbad6_s
CREATE OR REPLACE VIEW sar_net_icmp6 AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'imsg6') AS imsg6_s,
       max(value) FILTER (WHERE b = 'omsg6') AS omsg6_s,
       max(value) FILTER (WHERE b = 'iech6') AS iech6_s,
       max(value) FILTER (WHERE b = 'iechr6') AS iechr6_s,
       max(value) FILTER (WHERE b = 'oechr6') AS oechr6_s,
       max(value) FILTER (WHERE b = 'igmbq6') AS igmbq6_s,
       max(value) FILTER (WHERE b = 'igmbr6') AS igmbr6_s,
       max(value) FILTER (WHERE b = 'ogmbr6') AS ogmbr6_s,
       max(value) FILTER (WHERE b = 'igmbrd6') AS igmbrd6_s,
       max(value) FILTER (WHERE b = 'ogmbrd6') AS ogmbrd6_s,
       max(value) FILTER (WHERE b = 'irtsol6') AS irtsol6_s,
       max(value) FILTER (WHERE b = 'ortsol6') AS ortsol6_s,
       max(value) FILTER (WHERE b = 'irtad6') AS irtad6_s,
       max(value) FILTER (WHERE b = 'inbsol6') AS inbsol6_s,
       max(value) FILTER (WHERE b = 'onbsol6') AS onbsol6_s,
       max(value) FILTER (WHERE b = 'inbad6') AS inbad6_s,
       max(value) FILTER (WHERE b = 'onbad6') AS onbad6_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['imsg6/s'], 'network.net-icmp6'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_eicmp6: sar -n EICMP6, one row per sample: ierr6_s, idtunr6_s, odtunr6_s, itmex6_s, otmex6_s, iprmpb6_s, oprmpb6_s, iredir6_s, oredir6_s, ipck2b6_s, opck2b6_s
CREATE OR REPLACE VIEW sar_net_eicmp6 AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'ierr6') AS ierr6_s,
       max(value) FILTER (WHERE b = 'idtunr6') AS idtunr6_s,
       max(value) FILTER (WHERE b = 'odtunr6') AS odtunr6_s,
       max(value) FILTER (WHERE b = 'itmex6') AS itmex6_s,
       max(value) FILTER (WHERE b = 'otmex6') AS otmex6_s,
       max(value) FILTER (WHERE b = 'iprmpb6') AS iprmpb6_s,
       max(value) FILTER (WHERE b = 'oprmpb6') AS oprmpb6_s,
       max(value) FILTER (WHERE b = 'iredir6') AS iredir6_s,
       max(value) FILTER (WHERE b = 'oredir6') AS oredir6_s,
       max(value) FILTER (WHERE b = 'ipck2b6') AS ipck2b6_s,
       max(value) FILTER (WHERE b = 'opck2b6') AS opck2b6_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['idtunr6/s'], 'network.net-eicmp6'))
GROUP BY host, source, file, sample_no, ts, ts_quality;

-- sar_net_udp6: sar -n UDP6, one row per sample: idgm6_s, odgm6_s, noport6_s, idgmer6_s
CREATE OR REPLACE VIEW sar_net_udp6 AS
SELECT host,
       source,
       file,
       min(line_no) AS line_no,
       sample_no,
       ts,
       ts_quality,
       max(value) FILTER (WHERE b = 'idgm6') AS idgm6_s,
       max(value) FILTER (WHERE b = 'odgm6') AS odgm6_s,
       max(value) FILTER (WHERE b = 'noport6') AS noport6_s,
       max(value) FILTER (WHERE b = 'idgmer6') AS idgmer6_s
FROM (SELECT *, sar_metric_base(metric) AS b FROM raw.sar_generic WHERE sar_section_is(section, ['idgm6/s'], 'network.net-udp6'))
GROUP BY host, source, file, sample_no, ts, ts_quality;
