-- Findings per week (of the incident's date) and kind, with how many incidents they came from.
-- @param severity VARCHAR = warning   this severity or worse (info, warning, critical)
SELECT date_trunc('week', date) AS week, kind, count(*) AS findings, count(DISTINCT incident) AS incidents
FROM findings
WHERE CASE $severity WHEN 'info' THEN true WHEN 'warning' THEN severity IN ('warning', 'critical')
                     ELSE severity = 'critical' END
GROUP BY ALL
ORDER BY week, findings DESC, kind;
