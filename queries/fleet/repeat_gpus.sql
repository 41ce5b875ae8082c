-- GPUs with Xid errors in several incidents, by board serial (a board moved to another host keeps it; host and PCI address where no serial is known).
-- @param min_incidents BIGINT = 2     at least this many incidents
WITH boards AS (  -- one row per board and incident (the gpus table has one per GPU per source)
    SELECT incident, host, lower(right(pci_bus_id, 12)) AS pci, any_value(serial) FILTER (WHERE serial IS NOT NULL AND serial <> '') AS serial
    FROM gpus WHERE pci_bus_id IS NOT NULL
    GROUP BY ALL
)
SELECT coalesce(b.serial, k.host || ' ' || lower(right(k.pci_addr, 12))) AS gpu,
       count(DISTINCT k.incident) AS incidents, list(DISTINCT k.host ORDER BY k.host) AS hosts,
       list(DISTINCT k.xid ORDER BY k.xid) AS xids, count(*) AS xid_lines,
       min(k.ts) AS first_seen, max(k.ts) AS last_seen
FROM kernel_log k
LEFT JOIN boards b ON b.incident = k.incident AND b.host = k.host AND b.pci = lower(right(k.pci_addr, 12))
WHERE k.xid IS NOT NULL
GROUP BY 1
HAVING count(DISTINCT k.incident) >= $min_incidents
ORDER BY incidents DESC, xid_lines DESC, gpu;
