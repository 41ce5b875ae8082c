-- collective_progress: where each rank's process group stood when the job hung, one row per PyTorch
-- c10d line that carries a collective sequence number (watchdog timeouts, "detected by watchdog at
-- work", "Timeout at NCCL work", "PG status: last enqueued work / last completed work", the
-- flight-recorder dump-signal lines with "Last enqueued NCCL work"). The process group is read from
-- the line's log prefix as ProcessGroupNCCL prints it (logPrefix()):
--   [PG 1 Rank 0]                              (2.2-2.3: local PG id)
--   [PG 0 (default_pg) Rank 3]                 (2.4: id and description)
--   [PG ID 0 PG GUID 0(default_pg) Rank 1]     (2.5+: local id, the group's name shared by its ranks, description)
-- `pg` is the GUID (the group name, the same on every member) where printed, else the id;
-- `group_rank` the rank inside that group (the "Rank N" of the prefix), `rank` the global rank
-- (torchrun's "[rankN]:" prefix where present; `global_rank` the same where it is surely global: from
-- that prefix, the default process group (PG 0) or a Flight Recorder dump). Lines without a PG prefix ("[Rank 7] Watchdog caught
-- ... WorkNCCL(SeqNum=...)") keep pg NULL: the detector ties them to their group through the rank's
-- line of the same sequence number.
-- Flight Recorder dumps add one row per rank and process group of their pg_status (kind
-- 'fr_pg_status': last enqueued / completed collective, ts = the rank's last enqueued op in that
-- group) and one per recorded collective (kind 'fr_entry': seq, op_type, timeout_ms).
CREATE OR REPLACE VIEW collective_progress AS
WITH l AS (
    SELECT host, file, line_no, ts, "rank", kind, prefix, seq, op_type, timeout_ms, ran_ms, last_enqueued, last_completed,
           regexp_extract(message, '\[PG (?:ID )?([0-9]+)(?: PG GUID ([^ (\]]+))? ?(?:\(([^)]*)\))? Rank ([0-9]+)\]',
                          ['pg_id', 'pg_guid', 'pg_desc', 'group_rank']) AS p
    FROM nccl_log
    WHERE seq IS NOT NULL OR last_enqueued IS NOT NULL OR last_completed IS NOT NULL
)
SELECT host, file, line_no, ts, "rank",
       coalesce(nullif(p.pg_guid, ''), nullif(p.pg_id, '')) AS pg,
       nullif(p.pg_desc, '') AS pg_desc,
       TRY_CAST(nullif(p.group_rank, '') AS INTEGER) AS group_rank,
       coalesce(torchrun_rank(prefix, "rank"), CASE WHEN p.pg_id = '0' THEN "rank" END) AS global_rank,
       kind, seq, op_type, timeout_ms, ran_ms, last_enqueued, last_completed, 'nccl_log' AS source
FROM l
UNION ALL BY NAME
SELECT p.host, p.file, NULL::BIGINT AS line_no,
       (SELECT max(e.ts) FROM flight_recorder e WHERE e.host = p.host AND e.file = p.file AND e.pg_id = p.pg_id) AS ts,
       p."rank", p.pg_name AS pg, p.pg_desc, NULL::INTEGER AS group_rank, p."rank" AS global_rank, 'fr_pg_status' AS kind, NULL::BIGINT AS seq,
       NULL::VARCHAR AS op_type, NULL::BIGINT AS timeout_ms, NULL::BIGINT AS ran_ms, p.last_enqueued, p.last_completed,
       'flight_recorder' AS source
FROM flight_recorder_pg p
UNION ALL BY NAME
SELECT host, file, NULL::BIGINT AS line_no, ts, "rank", pg_name AS pg, pg_desc, NULL::INTEGER AS group_rank,
       "rank" AS global_rank, 'fr_entry' AS kind, collective_seq_id AS seq, op_type, timeout_ms, NULL::BIGINT AS ran_ms,
       NULL::BIGINT AS last_enqueued, NULL::BIGINT AS last_completed, 'flight_recorder' AS source
FROM flight_recorder WHERE NOT coalesce(is_p2p, false) AND collective_seq_id > 0;
