-- Every Xid across the fleet's incidents in time order, with the GPU's serial and UUID where the incident recorded them.
-- @param serial VARCHAR = NULL        only this board serial
-- @param host VARCHAR = NULL          only this host
WITH boards AS (  -- one row per board and incident (the gpus table has one per GPU per source)
    SELECT incident, host, lower(right(pci_bus_id, 12)) AS pci, any_value(serial) FILTER (WHERE serial IS NOT NULL AND serial <> '') AS serial, any_value(uuid) FILTER (WHERE uuid IS NOT NULL AND uuid <> '') AS uuid
    FROM gpus WHERE pci_bus_id IS NOT NULL
    GROUP BY ALL
)
SELECT k.ts, k.date, k.incident, k.host, k.pci_addr, b.serial, b.uuid, k.xid, k.xid_text, k.message
FROM kernel_log k
LEFT JOIN boards b ON b.incident = k.incident AND b.host = k.host AND b.pci = lower(right(k.pci_addr, 12))
WHERE k.xid IS NOT NULL AND ($serial IS NULL OR b.serial = $serial) AND ($host IS NULL OR k.host = $host)
ORDER BY k.ts NULLS LAST, k.incident, k.host, k.line_no;
