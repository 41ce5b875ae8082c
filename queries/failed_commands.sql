-- Collector commands that failed, timed out or were truncated, per host (what evidence may be missing).
-- @param host VARCHAR = NULL          only this host
SELECT host, name, array_to_string(argv, ' ') AS command, start, seconds_between(start, "end") AS seconds,
       exit_code, timed_out, truncated, error, stderr_tail, raw_file
FROM commands
WHERE ((exit_code IS NOT NULL AND exit_code <> 0) OR error IS NOT NULL OR timed_out OR truncated)
  AND ($host IS NULL OR host = $host)
ORDER BY host, start, name;
