-- Ports (host and interface) with pause storms, link flaps, drops or a wedged NIC in several incidents.
-- @param min_incidents BIGINT = 2     at least this many incidents
SELECT host, subject AS port, count(DISTINCT incident) AS incidents, list(DISTINCT kind ORDER BY kind) AS kinds,
       count(*) AS findings, min(start) AS first_seen, max("end") AS last_seen
FROM (SELECT unnest(hosts) AS host, subject, incident, kind, start, "end"
      FROM findings
      WHERE kind IN ('pfc_storm', 'link_flap', 'packet_drops', 'nic_wedged') AND subject IS NOT NULL)
GROUP BY host, subject
HAVING count(DISTINCT incident) >= $min_incidents
ORDER BY incidents DESC, findings DESC, host, port;
