-- Parsing coverage per host and source: raw files, lines, lines left unparsed and files that failed.
-- @param host VARCHAR = NULL          only this host
SELECT host, source, count(*) AS files, CAST(sum(lines) AS BIGINT) AS lines, CAST(sum(unparsed) AS BIGINT) AS unparsed,
       round(100.0 * (sum(lines) - sum(unparsed)) / nullif(sum(lines), 0), 2) AS parsed_pct,
       count(*) FILTER (WHERE error IS NOT NULL) AS failed_files,
       string_agg(file || ': ' || error, '; ' ORDER BY file, error) FILTER (WHERE error IS NOT NULL) AS errors
FROM coverage
WHERE $host IS NULL OR host = $host
GROUP BY host, source
ORDER BY host, source;
