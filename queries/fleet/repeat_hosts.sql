-- Hosts named by root-cause findings (warning or worse) in several incidents: the machines that keep coming back.
-- @param min_incidents BIGINT = 2     at least this many incidents
SELECT host, count(DISTINCT incident) AS incidents, list(DISTINCT kind ORDER BY kind) AS kinds,
       count(*) AS findings, min(date) AS first_date, max(date) AS last_date,
       list(DISTINCT incident ORDER BY incident) AS incident_ids
FROM (SELECT unnest(hosts) AS host, incident, date, kind
      FROM findings
      WHERE caused_by IS NULL AND severity IN ('warning', 'critical'))
GROUP BY host
HAVING count(DISTINCT incident) >= $min_incidents
ORDER BY incidents DESC, findings DESC, host;
