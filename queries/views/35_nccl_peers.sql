-- nccl_peers: which hosts exchange NCCL traffic, from the logs' connection map: the hosts whose
-- ranks joined one communicator (the commId of their ncclCommInitRank lines; NCCL draws it at
-- random per communicator, so two jobs in one merged bundle do not share it). Both directions
-- are listed (host -> peer and peer -> host). Causality links a fault on one host to a consequence
-- on another only along these pairs.
CREATE OR REPLACE VIEW nccl_peers AS
WITH m AS (
    SELECT DISTINCT host, comm_id FROM nccl_log
    WHERE kind IN ('init_start', 'init_complete') AND comm_id IS NOT NULL AND host IS NOT NULL
)
SELECT DISTINCT a.host, b.host AS peer
FROM m a JOIN m b ON a.comm_id = b.comm_id AND a.host <> b.host;
