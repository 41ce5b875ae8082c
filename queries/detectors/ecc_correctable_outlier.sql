-- kind: ecc_correctable_outlier
-- severity: warning
-- locality: host
-- layer: gpu
-- root_rank: 16
-- caused_by: none
-- confirm: nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i <dev>; dmesg -T | grep -E 'Xid.*(48|63|64|92|94|95)'
-- remediation: A GPU's memory corrects far more errors than its peers': its cells are degrading. Check its remapping state (nvidia-smi -q -d ROW_REMAPPER: rows remapped for correctable errors, pending, failure, bank availability); reset the GPU at a convenient time so pending remaps take effect, run dcgmi diag -r 3 / field diagnostics, and plan an RMA if the count keeps growing or remapping fails.
-- description: a GPU whose correctable ECC count (volatile or aggregate, per memory location) stands far above the other GPUs' of its node, reported with its row-remapping state
-- source: NVIDIA GPU Memory Error Management (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt): correctable (single-bit) errors are corrected in hardware and need no action by themselves, row remapping (Ampere and newer) also remaps rows for repeated correctable errors, and NVIDIA's own Xid 92 (EXCESSIVE_SBE_INTERRUPTS) flags a high single-bit error rate without publishing its threshold; so the test is against the node's peers (same model, same workload, same counters): min_count and peer_factor are this project's choice, not NVIDIA's, and the finding is a warning, never critical (uncorrectable errors and pending/failed remaps are ecc_error's)
-- param: min_count = 10   correctable errors of one scope and location a GPU must have
-- param: peer_factor = 10   ...and at least this many times (the median of its peers + 1)
-- param: min_peers = 2   other GPUs of the node reporting the same counter needed to compare
WITH c AS (  -- each GPU's highest count per scope and memory location (counters only grow within a scope)
  SELECT host, gpu, any_value(pci_bus_id) AS pci, scope, location, max(count) AS n, max(ts) AS ts,
         arg_max(file, count) AS file, arg_max(line_no, count) AS line_no
  FROM gpu_ecc WHERE error = 'correctable' AND count IS NOT NULL
  GROUP BY host, gpu, scope, location
), p AS (
  SELECT a.host, a.gpu, a.pci, a.scope, a.location, a.n, a.ts, a.file, a.line_no,
         count(b.gpu) AS peers, median(b.n) AS peer_median, max(b.n) AS peer_max
  FROM c a JOIN c b ON b.host = a.host AND b.scope = a.scope AND b.location = a.location AND b.gpu <> a.gpu
  GROUP BY ALL
), o AS (
  SELECT * FROM p
  WHERE peers >= $min_peers AND n >= $min_count AND n >= $peer_factor * (peer_median + 1)
), r AS (  -- the GPU's row-remapping state from its last sample that reports one
  SELECT host, gpu,
         arg_max(remapped_correctable, ts) FILTER (WHERE remapped_correctable IS NOT NULL) AS remapped_correctable,
         arg_max(remapped_uncorrectable, ts) FILTER (WHERE remapped_uncorrectable IS NOT NULL) AS remapped_uncorrectable,
         bool_or(remap_pending) AS remap_pending, bool_or(remap_failure) AS remap_failure,
         max(retired_pages_sbe) AS retired_pages_sbe
  FROM gpu_samples GROUP BY host, gpu
), g AS (
  SELECT o.host, o.gpu, any_value(o.pci) AS pci, min(o.ts) AS start, max(o.ts) AS "end",
         list({scope: o.scope, location: o.location, count: o.n, peers: o.peers, peer_median: o.peer_median, peer_max: o.peer_max}
              ORDER BY o.n DESC) AS counters,
         max(o.n) AS top, arg_max(o.file, o.n) AS file, arg_max(o.line_no, o.n) AS line_no
  FROM o GROUP BY o.host, o.gpu
)
SELECT g.host, 'GPU' || g.gpu || coalesce(' (' || g.pci || ')', '') AS subject, g.start, g."end",
       least(0.8, 0.5 + 0.05 * ln(1 + g.top)) AS score,
       'GPU' || g.gpu || ' on ' || g.host || ' has ' || g.counters[1].count || ' ' || g.counters[1].scope || ' correctable '
         || upper(g.counters[1].location) || ' ECC errors, its ' || g.counters[1].peers || ' peers '
         || CASE WHEN g.counters[1].peer_max = 0 THEN '0' ELSE 'median ' || g.counters[1].peer_median || ', max ' || g.counters[1].peer_max END
         || '; row remapping: '
         || CASE WHEN r.remapped_correctable IS NULL AND r.remapped_uncorrectable IS NULL AND r.remap_pending IS NULL
                 THEN 'not captured (nvidia-smi -q -d ROW_REMAPPER)'
                 ELSE coalesce(r.remapped_correctable || ' rows remapped for correctable, ', '')
                      || coalesce(r.remapped_uncorrectable || ' for uncorrectable errors', '')
                      || CASE WHEN r.remap_pending THEN ', remap pending' ELSE '' END
                      || CASE WHEN r.remap_failure THEN ', remapping FAILED' ELSE '' END END AS summary,
       to_json({gpu: g.gpu, pci_addr: g.pci, dev: g.pci, counters: g.counters,
                remapped_correctable: r.remapped_correctable, remapped_uncorrectable: r.remapped_uncorrectable,
                remap_pending: r.remap_pending, remap_failure: r.remap_failure, retired_pages_sbe: r.retired_pages_sbe,
                first: {file: g.file, line_no: g.line_no}})::VARCHAR AS evidence
FROM g LEFT JOIN r ON r.host = g.host AND r.gpu = g.gpu
ORDER BY g.start
