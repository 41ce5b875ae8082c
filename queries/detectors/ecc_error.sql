-- kind: ecc_error
-- severity: critical
-- locality: host
-- layer: gpu
-- root_rank: 11
-- caused_by: none
-- confirm: nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT
-- remediation: Uncorrectable ECC / pending row remap: drain the node and reset the GPU (nvidia-smi -r) so the remap takes effect; a remapping failure or repeated DBEs means an RMA.
-- description: uncorrectable ECC errors, pending or failed row remapping, retired pages pending (per GPU), and the ECC Xids 48/63/64/94/95
-- source: NVIDIA Xid catalogue and GPU memory error management (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt): Xids 48/63/64/92/94/95/140 report ECC and row remapping
-- param: ecc_xids = '48,63,64,92,94,95,140'   Xids that report memory ECC / remapping events
WITH flagged AS (  -- GPUs with at least one bad sample: only their samples are aggregated
  SELECT DISTINCT host, gpu FROM gpu_samples
  WHERE coalesce(ecc_dbe_volatile, 0) > 0 OR remap_pending OR remap_failure OR retired_pages_pending
), s AS (
  SELECT host, gpu, pci_bus_id, ts, ecc_dbe_volatile, ecc_dbe_aggregate, remapped_uncorrectable, remap_pending,
         remap_failure, retired_pages_dbe, retired_pages_pending, file, line_no
  FROM gpu_samples g SEMI JOIN flagged f ON f.host IS NOT DISTINCT FROM g.host AND f.gpu IS NOT DISTINCT FROM g.gpu
), bad AS (
  SELECT host, gpu, any_value(pci_bus_id) AS pci, min(ts) FILTER (WHERE coalesce(ecc_dbe_volatile, 0) > 0 OR remap_pending
           OR remap_failure OR retired_pages_pending) AS start,
         max(ts) AS "end",
         max(ecc_dbe_volatile) AS dbe_volatile, max(ecc_dbe_aggregate) AS dbe_aggregate,
         max(remapped_uncorrectable) AS remapped_uncorrectable,
         bool_or(remap_pending) AS remap_pending, bool_or(remap_failure) AS remap_failure,
         bool_or(retired_pages_pending) AS retired_pending, max(retired_pages_dbe) AS retired_dbe,
         arg_min(line_no, {t: ts, f: file, l: line_no}) FILTER (WHERE coalesce(ecc_dbe_volatile, 0) > 0 OR remap_pending OR remap_failure) AS first_line,
         arg_min(file, {t: ts, f: file, l: line_no}) FILTER (WHERE coalesce(ecc_dbe_volatile, 0) > 0 OR remap_pending OR remap_failure) AS file
  FROM s GROUP BY host, gpu
  HAVING coalesce(max(ecc_dbe_volatile), 0) > 0 OR bool_or(remap_pending) OR bool_or(remap_failure)
      OR bool_or(retired_pages_pending)
), kx AS (
  SELECT k.host, k.pci_addr, min(k.ts) AS t0, max(k.ts) AS t1, list(DISTINCT k.xid ORDER BY k.xid) AS xids
  FROM kernel_log k WHERE list_contains(string_split($ecc_xids, ',')::INTEGER[], k.xid) GROUP BY ALL
), gp AS (SELECT DISTINCT host, gpu, lower(pci_bus_id) AS pci FROM gpus WHERE pci_bus_id IS NOT NULL),
xonly AS (
  SELECT kx.host, gp.gpu, kx.pci_addr AS pci, kx.t0, kx.t1, kx.xids FROM kx
  LEFT JOIN gp ON gp.host = kx.host AND gp.pci = lower(kx.pci_addr)
)
SELECT coalesce(b.host, x.host) AS host,
       'GPU' || coalesce(b.gpu::VARCHAR, x.gpu::VARCHAR, '?') || ' (' || coalesce(b.pci, x.pci, '?') || ')' AS subject,
       least(coalesce(b.start, x.t0), coalesce(x.t0, b.start)) AS start,
       greatest(coalesce(b."end", x.t1), coalesce(x.t1, b."end")) AS "end",
       0.95 AS score,
       CASE WHEN coalesce(b.remap_failure, false) THEN 'row remapping FAILED'
            WHEN coalesce(b.remap_pending, false) THEN 'row remap pending (GPU reset needed)'
            WHEN coalesce(b.dbe_volatile, 0) > 0 THEN b.dbe_volatile || ' uncorrectable ECC errors'
            WHEN coalesce(b.retired_pending, false) THEN 'page retirement pending'
            ELSE 'ECC Xid ' || array_to_string(x.xids, '/') END
         || ' on ' || coalesce(b.host, x.host) || ' GPU' || coalesce(b.gpu::VARCHAR, x.gpu::VARCHAR, '?')
         || CASE WHEN x.xids IS NOT NULL THEN ' (Xid ' || array_to_string(x.xids, '/') || ')' ELSE '' END AS summary,
       to_json({dbe_volatile: b.dbe_volatile, dbe_aggregate: b.dbe_aggregate, remapped_uncorrectable: b.remapped_uncorrectable,
                remap_pending: b.remap_pending, remap_failure: b.remap_failure, retired_pages_pending: b.retired_pending,
                xids: x.xids, first: {file: b.file, line_no: b.first_line}})::VARCHAR AS evidence
FROM bad b FULL OUTER JOIN xonly x ON x.host = b.host AND (x.gpu = b.gpu OR lower(x.pci) = lower(b.pci))
