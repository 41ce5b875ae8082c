-- nccl_comm_hosts: which NCCL communicators each host's ranks joined, one row per host and
-- communicator (the commId of their ncclCommInitRank lines; NCCL draws it at random per
-- communicator, so two jobs in one merged bundle do not share it). Two hosts exchange NCCL traffic
-- when they share a communicator: this membership is linear in hosts, where the pairs of
-- `nccl_peers` are N² for a data-parallel job whose communicator spans every host. Causality reads
-- this one.
CREATE OR REPLACE VIEW nccl_comm_hosts AS
SELECT DISTINCT host, comm_id FROM nccl_log
WHERE kind IN ('init_start', 'init_complete') AND comm_id IS NOT NULL AND host IS NOT NULL;
