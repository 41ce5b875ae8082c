-- kind: nccl_transport_error
-- severity: critical
-- locality: host
-- layer: nccl
-- root_rank: 40
-- caused_by: pfc_storm@path, packet_drops@path, link_flap@path, ib_link_degraded@path, gpu_xid@path, ecc_error@path, nic_wedged@path, gpu_unreachable@path, pcie_aer@path
-- confirm: grep -E 'NCCL WARN' <logs>; ibv_devinfo; ethtool -S <iface> | grep -iE 'err|drop|pause'
-- remediation: Transport errors are usually a consequence: look at the fabric findings around the same moment (drops, PFC storms, link flaps) on both ends of the failing peer.
-- description: NCCL transport errors per host: IB completion errors (status, vendor error), socket failures, remote hang-ups, refused connections
-- source: NCCL WARN lines and IB verbs completion statuses (ibv_wc_status); one error line is an error (no threshold)
-- param: min_lines = 1   error lines needed on a host
WITH e AS (
  SELECT host, kind, ts, ib_status, vendor_err, peer_addr, message, file, line_no, cuda_dev, rank,
         -- the peer's RDMA address as NCCL prints it ("remoteGids::ffff:10.0.106.6"): causality finds its
         -- host in ib_gids (the peer address before it is the socket's, often on another network)
         nullif(regexp_extract(message, 'remoteGids\s*([0-9A-Fa-f:.]*[0-9A-Fa-f])', 1), '') AS remote_gid
  FROM nccl_log
  WHERE kind IN ('ib_completion_error', 'socket_error', 'connect_error', 'remote_closed')
), g AS (
  SELECT host, min(ts) AS start, max(ts) AS "end", count(*) AS n,
         list(DISTINCT kind ORDER BY kind) AS kinds,
         list(DISTINCT ib_status ORDER BY ib_status) FILTER (WHERE ib_status IS NOT NULL) AS statuses,
         list(DISTINCT vendor_err ORDER BY vendor_err) FILTER (WHERE vendor_err IS NOT NULL) AS vendor_errs,
         list(DISTINCT peer_addr ORDER BY peer_addr) FILTER (WHERE peer_addr IS NOT NULL) AS peers,
         list(DISTINCT remote_gid ORDER BY remote_gid) FILTER (WHERE remote_gid IS NOT NULL) AS remote_gids,
         arg_min(message, coalesce(epoch(ts), line_no)) AS first_message,
         arg_min(line_no, {t: ts, f: file, l: line_no}) AS first_line, arg_min(file, {t: ts, f: file, l: line_no}) AS file
  FROM e GROUP BY host
)
SELECT host, array_to_string(kinds, ',') AS subject, start, "end",
       least(1.0, 0.6 + 0.05 * n) AS score,
       n || ' NCCL transport error lines on ' || host
         || CASE WHEN len(statuses) > 0 THEN ' (IB completion status ' || array_to_string(statuses, '/')
                 || coalesce(', vendor err ' || array_to_string(vendor_errs, '/'), '') || ')' ELSE '' END
         || CASE WHEN len(peers) > 0 THEN ' with peers ' || array_to_string(peers[1:4], ', ') ELSE '' END AS summary,
       to_json({lines: n, kinds: kinds, ib_status: statuses, vendor_err: vendor_errs, peers: peers,
                remote_gids: remote_gids, first_message: left(first_message, 300), first: {file: file, line_no: first_line}})::VARCHAR AS evidence
FROM g WHERE n >= $min_lines
ORDER BY start NULLS LAST
