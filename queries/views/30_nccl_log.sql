-- nccl_log: the parsed NCCL/PyTorch lines, with lines that carry no timestamp placed between their
-- stamped neighbours of the same host and file (linearly by line number) and marked
-- ts_quality = 'interpolated'. Lines with a stamped neighbour on one side only keep no time.
-- (raw.nccl_log_placed is the definition; forensics.db.derived may cache it as Parquet.)
CREATE OR REPLACE VIEW raw.nccl_log_placed AS
WITH w AS (
    SELECT *,
           last_value(CASE WHEN ts IS NOT NULL THEN line_no END IGNORE NULLS) OVER before AS p_line,
           last_value(ts IGNORE NULLS) OVER before AS p_ts,
           first_value(CASE WHEN ts IS NOT NULL THEN line_no END IGNORE NULLS) OVER after AS n_line,
           first_value(ts IGNORE NULLS) OVER after AS n_ts
    FROM raw.nccl_log
    WINDOW before AS (PARTITION BY host, file ORDER BY line_no ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
           after AS (PARTITION BY host, file ORDER BY line_no ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)
)
SELECT * EXCLUDE (p_line, p_ts, n_line, n_ts) REPLACE (
    CASE WHEN ts IS NOT NULL THEN ts
         WHEN p_ts IS NOT NULL AND n_ts IS NOT NULL THEN
             p_ts + to_microseconds(CAST((epoch_us(n_ts) - epoch_us(p_ts)) * (line_no - p_line)
                                         / (n_line - p_line) AS BIGINT))
    END AS ts,
    CASE WHEN ts IS NULL AND p_ts IS NOT NULL AND n_ts IS NOT NULL THEN 'interpolated' ELSE ts_quality END AS ts_quality
)
FROM w;

CREATE OR REPLACE VIEW nccl_log AS SELECT * FROM raw.nccl_log_placed;
