-- nccl_peers: which hosts exchange NCCL traffic, from the logs' connection map: the hosts whose
-- ranks joined one communicator (`nccl_comm_hosts`). Both directions are listed (host -> peer and
-- peer -> host). Causality links a fault on one host to a consequence on another only along these
-- pairs (it reads them as communicator membership, `nccl_comm_hosts`, which stays linear in hosts).
CREATE OR REPLACE VIEW nccl_peers AS
SELECT DISTINCT a.host, b.host AS peer
FROM nccl_comm_hosts a JOIN nccl_comm_hosts b ON a.comm_id = b.comm_id AND a.host <> b.host;
