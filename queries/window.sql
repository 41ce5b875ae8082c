-- Everything on the shared timeline within a window around one moment (aligned time), all hosts, in order.
-- @param at TIMESTAMPTZ               the moment (ISO-8601, e.g. 2026-11-30T10:15:02Z)
-- @param seconds DOUBLE = 60          half-width of the window
-- @param host VARCHAR = NULL          only this host
-- @param min_severity VARCHAR = info  info, warning or critical
SELECT round(seconds_between($at, ts_aligned), 3) AS rel_s, ts_aligned, host, severity, kind, subject, message,
       origin, ts_quality, file, line_no
FROM events
WHERE within_s(ts_aligned, $at, $seconds)
  AND ($host IS NULL OR host = $host)
  AND severity_rank(severity) >= severity_rank($min_severity)
ORDER BY ts_aligned, host, file, line_no, kind;
