-- hosts: one row per host of the bundle (every host the tables' rows name, plus host.json rows):
-- host.json facts; driver, CUDA and NCCL versions, GPU and NUMA node counts as ingest gathered them from
-- the parsed tables (forensics.ingest.hostfacts, the one place they are computed: `forensics info`
-- reads the same hosts table); and the clock offset estimated by forensics.timeline
-- (ts_aligned = ts - clock_offset_s).
CREATE OR REPLACE VIEW hosts AS
WITH h AS (
    SELECT host,
           any_value(hostname) AS hostname, any_value(kernel) AS kernel, any_value(boot_time) AS boot_time,
           any_value(timezone) AS timezone, any_value(utc_offset_s) AS utc_offset_s,
           any_value(clock_wall) AS clock_wall, any_value(clock_monotonic_s) AS clock_monotonic_s,
           any_value(ntp_offset_s) AS ntp_offset_s, any_value(driver_version) AS driver_version,
           any_value(cuda_version) AS cuda_version, any_value(nccl_version) AS nccl_version,
           any_value(gpu_count) AS gpu_count, any_value(numa_nodes) AS numa_nodes,
           any_value(clock_offset_s) AS clock_offset_s, any_value(clock_offset_confidence) AS clock_offset_confidence,
           any_value(clock_offset_method) AS clock_offset_method
    FROM raw.hosts WHERE host IS NOT NULL GROUP BY host
), every AS (
    SELECT host FROM raw.bundle_hosts UNION SELECT host FROM h
)
SELECT e.host,
       h.hostname, h.kernel, h.boot_time, h.timezone, h.utc_offset_s, h.clock_wall, h.clock_monotonic_s,
       h.ntp_offset_s, h.driver_version, h.cuda_version, h.nccl_version, h.gpu_count, h.numa_nodes,
       coalesce(c.clock_offset_s, h.clock_offset_s) AS clock_offset_s,
       coalesce(CASE WHEN c.clock_offset_s IS NOT NULL THEN c.clock_offset_confidence END,
                h.clock_offset_confidence, c.clock_offset_confidence, 'unknown') AS clock_offset_confidence,
       coalesce(CASE WHEN c.clock_offset_s IS NOT NULL THEN c.clock_offset_method END,
                h.clock_offset_method, c.clock_offset_method) AS clock_offset_method,
       coalesce(c.clock_anchors, 0) AS clock_anchors
FROM every e
LEFT JOIN h USING (host)
LEFT JOIN raw.clock_offsets c USING (host);
