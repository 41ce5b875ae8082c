-- NCCL WARN/ERROR lines, transport errors and PyTorch watchdog lines of every host, in aligned time order.
-- @param host VARCHAR = NULL          only this host
-- @param since TIMESTAMPTZ = NULL     only from this time (aligned)
-- @param until TIMESTAMPTZ = NULL     only before this time (aligned)
SELECT e.ts_aligned, e.host, e.severity, e.kind, e.subject, n.rank, n.cuda_dev, n.src_file, n.src_line,
       n.peer_addr, n.ib_status, n.vendor_err, n.seq, n.op_type, n.retcode, e.message, e.ts_quality, e.file, e.line_no
FROM events e
JOIN nccl_log n ON n.host = e.host AND n.file = e.file AND n.line_no = e.line_no
WHERE e.origin = 'nccl_log' AND e.severity IN ('warning', 'critical')
  AND ($host IS NULL OR e.host = $host)
  AND ($since IS NULL OR e.ts_aligned >= $since) AND ($until IS NULL OR e.ts_aligned < $until)
ORDER BY e.ts_aligned NULLS LAST, e.host, e.file, e.line_no, e.kind;
