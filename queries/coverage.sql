-- Parsing coverage per host and source: raw files, lines, lines left unparsed, lines skipped on purpose
-- (another tool's lines without data, the paste's comments and elision marks) and files that failed.
-- @param host VARCHAR = NULL          only this host
SELECT host, source, count(*) AS files, CAST(sum(lines) AS BIGINT) AS lines, CAST(sum(unparsed) AS BIGINT) AS unparsed,
       CAST(coalesce(sum(skipped_lines), 0) AS BIGINT) AS skipped,
       round(100.0 * (sum(lines) - sum(unparsed) - coalesce(sum(skipped_lines), 0)) / nullif(sum(lines), 0), 2) AS parsed_pct,
       count(*) FILTER (WHERE error IS NOT NULL) AS failed_files,
       string_agg(file || ': ' || error, '; ' ORDER BY file, error) FILTER (WHERE error IS NOT NULL) AS errors
FROM coverage
WHERE $host IS NULL OR host = $host
GROUP BY host, source
ORDER BY host, source;
