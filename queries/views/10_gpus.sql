-- gpus: one row per (host, gpu), merged from the inventory rows of every source (nvidia-smi -q
-- text/XML, --query-gpu CSV, topo -m affinity): each column takes the value of the most complete
-- row that has it. Rows without an index are matched to one by UUID or PCI address. `files` lists
-- the raw files that described the GPU.
CREATE OR REPLACE VIEW gpus AS
WITH by_uuid AS (
    SELECT host, uuid, min(gpu) AS gpu FROM raw.gpus WHERE gpu IS NOT NULL AND uuid IS NOT NULL GROUP BY ALL
), by_pci AS (
    SELECT host, lower(pci_bus_id) AS pci, min(gpu) AS gpu FROM raw.gpus
    WHERE gpu IS NOT NULL AND pci_bus_id IS NOT NULL GROUP BY ALL
), r AS (
    SELECT g.*,
           coalesce(g.gpu, u.gpu, p.gpu) AS gpu_key,
           (g.uuid IS NOT NULL)::INT + (g.pci_bus_id IS NOT NULL)::INT + (g.name IS NOT NULL)::INT
           + (g.serial IS NOT NULL)::INT + (g.vbios IS NOT NULL)::INT + (g.driver_version IS NOT NULL)::INT
           + (g.cuda_version IS NOT NULL)::INT + (g.architecture IS NOT NULL)::INT + (g.numa_node IS NOT NULL)::INT
           + (g.cpu_affinity IS NOT NULL)::INT + (g.mig_mode IS NOT NULL)::INT + (g.persistence_mode IS NOT NULL)::INT
           + (g.power_limit_w IS NOT NULL)::INT + (g.max_sm_clock_mhz IS NOT NULL)::INT
           + (g.pcie_gen_max IS NOT NULL)::INT + (g.pcie_width_max IS NOT NULL)::INT AS richness
    FROM raw.gpus g
    LEFT JOIN by_uuid u ON g.gpu IS NULL AND u.host = g.host AND u.uuid = g.uuid
    LEFT JOIN by_pci p ON g.gpu IS NULL AND u.gpu IS NULL AND p.host = g.host AND p.pci = lower(g.pci_bus_id)
)
SELECT host, gpu_key AS gpu,
       first(uuid ORDER BY richness DESC, file, line_no) FILTER (WHERE uuid IS NOT NULL) AS uuid,
       first(pci_bus_id ORDER BY richness DESC, file, line_no) FILTER (WHERE pci_bus_id IS NOT NULL) AS pci_bus_id,
       first(name ORDER BY richness DESC, file, line_no) FILTER (WHERE name IS NOT NULL) AS name,
       first(serial ORDER BY richness DESC, file, line_no) FILTER (WHERE serial IS NOT NULL) AS serial,
       first(vbios ORDER BY richness DESC, file, line_no) FILTER (WHERE vbios IS NOT NULL) AS vbios,
       first(driver_version ORDER BY richness DESC, file, line_no) FILTER (WHERE driver_version IS NOT NULL) AS driver_version,
       first(cuda_version ORDER BY richness DESC, file, line_no) FILTER (WHERE cuda_version IS NOT NULL) AS cuda_version,
       first(architecture ORDER BY richness DESC, file, line_no) FILTER (WHERE architecture IS NOT NULL) AS architecture,
       first(numa_node ORDER BY richness DESC, file, line_no) FILTER (WHERE numa_node IS NOT NULL) AS numa_node,
       first(cpu_affinity ORDER BY richness DESC, file, line_no) FILTER (WHERE cpu_affinity IS NOT NULL) AS cpu_affinity,
       first(mig_mode ORDER BY richness DESC, file, line_no) FILTER (WHERE mig_mode IS NOT NULL) AS mig_mode,
       first(persistence_mode ORDER BY richness DESC, file, line_no) FILTER (WHERE persistence_mode IS NOT NULL) AS persistence_mode,
       first(power_limit_w ORDER BY richness DESC, file, line_no) FILTER (WHERE power_limit_w IS NOT NULL) AS power_limit_w,
       first(max_sm_clock_mhz ORDER BY richness DESC, file, line_no) FILTER (WHERE max_sm_clock_mhz IS NOT NULL) AS max_sm_clock_mhz,
       first(pcie_gen_max ORDER BY richness DESC, file, line_no) FILTER (WHERE pcie_gen_max IS NOT NULL) AS pcie_gen_max,
       first(pcie_width_max ORDER BY richness DESC, file, line_no) FILTER (WHERE pcie_width_max IS NOT NULL) AS pcie_width_max,
       list(DISTINCT file ORDER BY file) AS files,
       count(*) AS source_rows
FROM r
GROUP BY host, gpu_key, CASE WHEN gpu_key IS NULL THEN coalesce(uuid, lower(pci_bus_id), file || ':' || line_no) END;
