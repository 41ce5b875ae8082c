-- NVIDIA Xid errors in time order per host and GPU (kernel log), with the GPU resolved from its PCI address.
-- @param host VARCHAR = NULL          only this host
-- @param xid BIGINT = NULL            only this Xid number
SELECT k.ts, align_ts(k.ts, h.clock_offset_s) AS ts_aligned, k.host, g.gpu, k.pci_addr, g.uuid, k.xid, k.xid_text,
       count(*) OVER (PARTITION BY k.host, k.pci_addr, k.xid) AS times_on_this_gpu,
       row_number() OVER (PARTITION BY k.host ORDER BY k.ts NULLS LAST, k.line_no) = 1 AS first_on_host,
       k.message, k.file, k.line_no
FROM kernel_log k
LEFT JOIN gpus g ON g.host = k.host AND lower(g.pci_bus_id) = lower(k.pci_addr)
LEFT JOIN hosts h ON h.host = k.host
WHERE k.xid IS NOT NULL AND ($host IS NULL OR k.host = $host) AND ($xid IS NULL OR k.xid = $xid)
ORDER BY ts_aligned NULLS LAST, k.host, k.line_no;
