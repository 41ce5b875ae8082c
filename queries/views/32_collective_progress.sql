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
-- (torchrun's "[rankN]:" prefix where present). Lines without a PG prefix ("[Rank 7] Watchdog caught
-- ... WorkNCCL(SeqNum=...)") keep pg NULL: the detector ties them to their group through the rank's
-- line of the same sequence number.
CREATE OR REPLACE VIEW collective_progress AS
WITH l AS (
    SELECT host, file, line_no, ts, "rank", kind, seq, op_type, timeout_ms, ran_ms, last_enqueued, last_completed,
           regexp_extract(message, '\[PG (?:ID )?([0-9]+)(?: PG GUID ([^ (\]]+))? ?(?:\(([^)]*)\))? Rank ([0-9]+)\]',
                          ['pg_id', 'pg_guid', 'pg_desc', 'group_rank']) AS p
    FROM nccl_log
    WHERE seq IS NOT NULL OR last_enqueued IS NOT NULL OR last_completed IS NOT NULL
)
SELECT host, file, line_no, ts, "rank",
       coalesce(nullif(p.pg_guid, ''), nullif(p.pg_id, '')) AS pg,
       nullif(p.pg_desc, '') AS pg_desc,
       TRY_CAST(nullif(p.group_rank, '') AS INTEGER) AS group_rank,
       kind, seq, op_type, timeout_ms, ran_ms, last_enqueued, last_completed, 'nccl_log' AS source
FROM l;
