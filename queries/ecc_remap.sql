-- ECC error counts, retired pages and row-remapping state per GPU (latest nvidia-smi sample), worst first.
-- @param host VARCHAR = NULL          only this host
SELECT * FROM (
    SELECT s.host, s.gpu, any_value(g.uuid) AS uuid, any_value(g.pci_bus_id) AS pci_bus_id,
           arg_max(s.ecc_sbe_volatile, s.ts) AS sbe_volatile, arg_max(s.ecc_dbe_volatile, s.ts) AS dbe_volatile,
           arg_max(s.ecc_sbe_aggregate, s.ts) AS sbe_aggregate, arg_max(s.ecc_dbe_aggregate, s.ts) AS dbe_aggregate,
           arg_max(s.retired_pages_sbe, s.ts) AS retired_sbe, arg_max(s.retired_pages_dbe, s.ts) AS retired_dbe,
           arg_max(s.retired_pages_pending, s.ts) AS retire_pending,
           arg_max(s.remapped_correctable, s.ts) AS remapped_correctable,
           arg_max(s.remapped_uncorrectable, s.ts) AS remapped_uncorrectable,
           arg_max(s.remap_pending, s.ts) AS remap_pending, arg_max(s.remap_failure, s.ts) AS remap_failure,
           max(s.ts) AS last_sample
    FROM gpu_samples s LEFT JOIN gpus g ON g.host = s.host AND g.gpu = s.gpu
    WHERE ($host IS NULL OR s.host = $host)
      AND (s.ecc_sbe_volatile IS NOT NULL OR s.ecc_dbe_volatile IS NOT NULL OR s.ecc_dbe_aggregate IS NOT NULL
           OR s.remapped_uncorrectable IS NOT NULL OR s.remap_pending IS NOT NULL OR s.retired_pages_dbe IS NOT NULL)
    GROUP BY s.host, s.gpu
)
ORDER BY coalesce(dbe_volatile, 0) + coalesce(dbe_aggregate, 0) + coalesce(remapped_uncorrectable, 0) DESC,
         coalesce(remap_pending, false) DESC, host, gpu;
