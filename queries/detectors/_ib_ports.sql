-- Shared by ib_link_degraded, link_flap and pfc_storm: ib_port_summary (queries/views/46_ib_port_summary.sql,
-- one row per RDMA port, from a window over every ib_counters sample) computed once per analysis
-- into a temporary (in-memory) table, instead of once in each detector.
CREATE OR REPLACE TEMP TABLE det_ib_port_summary AS SELECT * FROM ib_port_summary;
