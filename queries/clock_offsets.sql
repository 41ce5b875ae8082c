-- Per-host clock offsets on the shared timeline (ts_aligned = ts - clock_offset_s), with confidence and method.
SELECT host, clock_offset_s, round(clock_offset_s * 1000, 1) AS clock_offset_ms, clock_offset_confidence,
       clock_anchors, clock_offset_method, ntp_offset_s, timezone, utc_offset_s, boot_time
FROM hosts
ORDER BY abs(coalesce(clock_offset_s, 0)) DESC, host;
