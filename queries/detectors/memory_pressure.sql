-- kind: memory_pressure
-- severity: warning
-- locality: host
-- layer: host_cpu
-- root_rank: 22
-- caused_by: none
-- confirm: sar -W 1; sar -B 1; sar -r 1; free -m; dmesg -T | grep -iE 'oom|killed process'; ps -eo pid,rss,comm --sort=-rss | head
-- remediation: Host memory is exhausted (swapping, paging from disk, OOM kills): lower DataLoader num_workers and prefetch_factor (each worker holds a copy of the dataset objects; prefer shared memory / mmap'd arrays), bound pin_memory buffers, avoid caching whole datasets in every rank, check for a growing RSS (leak) across steps, leave page cache room or add RAM; set vm.swappiness low so training pages are not swapped out, and give containers a memory limit that fits.
-- description: host memory exhausted: sustained swapping (sar -W), or major page faults (sar -B) while memory is nearly full (sar -r); critical with kernel OOM-killer kills (dmesg)
-- source: set by hand against the simulator; issue 16 item 2 grounds these thresholds in physics and vendor figures
-- param: min_swap_pages_s = 25   swap-in + swap-out pages/s (sar -W; a page is 4 KiB, so 100 KiB/s) averaged over a sample that counts as swapping
-- param: min_majflt_s = 100   major faults/s (sar -B) that count as paging from disk, only while memory is nearly full
-- param: max_avail_pct = 10   memory nearly full: available (kbavail, else kbmemfree + kbbuffers + kbcached) at most this % of RAM
-- param: min_bad_s = 60   sustained: the bad samples' intervals (a sar value averages the interval before it) span this many seconds
-- param: max_gap_s = 30   bad intervals this close together are one episode
-- param: oom_window_s = 600   OOM kills this close to a swapping episode (or to each other) belong to the same finding
WITH g AS (
  -- sar -W / -B rows (text "pswpin/s", sadf -j "pswpin"): one row per sample of each file; the swap sum adds the
  -- values in value order (the same bits whatever DuckDB's threads do) from one sorted list, as sum(value ORDER BY
  -- value) did at twice the cost (an ordered aggregate per sample: 230 k of them on 64 hosts x 1 h)
  SELECT host, file, ts,
         list_sum(list_sort(list(value) FILTER (WHERE m IN ('pswpin', 'pswpout')))) AS swap_pages_s,
         max(value) FILTER (WHERE m = 'pswpin') AS swapin_s,
         max(value) FILTER (WHERE m = 'pswpout') AS swapout_s,
         max(value) FILTER (WHERE m = 'majflt') AS majflt_s
  FROM (SELECT host, file, ts, value, regexp_replace(metric, '/s$', '') AS m FROM sar_generic
        WHERE ts IS NOT NULL AND item IS NULL
          AND metric IN ('pswpin/s', 'pswpout/s', 'majflt/s', 'pswpin', 'pswpout', 'majflt'))
  GROUP BY ALL
), s AS (
  -- only samples that can count as bad (b's test implies one of these two) go on to the memory join; the window
  -- (each sample's interval) runs over the files that hold such a sample only (none on a healthy capture)
  SELECT * FROM (
    SELECT *, coalesce(epoch(ts) - epoch(lag(ts) OVER o), epoch(lead(ts) OVER o) - epoch(ts)) AS dur_s
    FROM g SEMI JOIN (SELECT DISTINCT host, file FROM g WHERE swap_pages_s >= $min_swap_pages_s OR majflt_s >= $min_majflt_s) c
      ON c.host IS NOT DISTINCT FROM g.host AND c.file IS NOT DISTINCT FROM g.file
    WINDOW o AS (PARTITION BY host, file ORDER BY ts))
  WHERE swap_pages_s >= $min_swap_pages_s OR majflt_s >= $min_majflt_s
), mem AS (
  -- total RAM = kbmemused / %memused (old and new sysstat alike)
  SELECT host, ts AS mem_ts, memused_pct, commit_pct,
         100.0 * coalesce(kbavail, kbmemfree + coalesce(kbbuffers, 0) + coalesce(kbcached, 0))
           / nullif(kbmemused * 100.0 / memused_pct, 0) AS avail_pct
  FROM sar_memory WHERE ts IS NOT NULL AND kbmemused IS NOT NULL AND memused_pct > 0
), sm AS (
  -- the host's memory at that moment (sar -r is another stream: at most one interval older)
  SELECT s.*, m.mem_ts, m.avail_pct, m.memused_pct, m.commit_pct
  FROM s ASOF LEFT JOIN mem m ON m.host = s.host AND m.mem_ts <= s.ts + INTERVAL 5 SECOND
), b AS (
  SELECT host, ts AS t1, to_timestamp(epoch(ts) - coalesce(dur_s, 0)) AS t0, swap_pages_s, swapin_s, swapout_s, majflt_s,
         CASE WHEN fresh THEN avail_pct END AS avail_pct, CASE WHEN fresh THEN memused_pct END AS memused_pct,
         CASE WHEN fresh THEN commit_pct END AS commit_pct
  FROM (SELECT *, coalesce(epoch(ts) - epoch(mem_ts) <= greatest(coalesce(dur_s, 0), 60), false) AS fresh FROM sm)
  WHERE swap_pages_s >= $min_swap_pages_s
     OR (majflt_s >= $min_majflt_s AND fresh AND avail_pct <= $max_avail_pct)
), bi AS (
  SELECT *, CASE WHEN prev_end IS NULL OR epoch(t0) > epoch(prev_end) + $max_gap_s THEN 1 ELSE 0 END AS new_ep
  FROM (SELECT *, max(t1) OVER (PARTITION BY host ORDER BY t0, t1 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end FROM b)
), ep AS (
  SELECT host, ep, min(t0) AS start, max(t1) AS "end", count(*) AS samples,
         max(swap_pages_s) AS peak_swap, max(swapin_s) AS peak_in, max(swapout_s) AS peak_out, max(majflt_s) AS peak_majflt,
         min(avail_pct) AS min_avail, max(memused_pct) AS max_memused, max(commit_pct) AS max_commit
  FROM (SELECT *, sum(new_ep) OVER (PARTITION BY host ORDER BY t0, t1 ROWS UNBOUNDED PRECEDING) AS ep FROM bi)
  GROUP BY host, ep
  HAVING epoch(max(t1)) - epoch(min(t0)) >= $min_bad_s
), k AS (
  -- "Out of memory: Killed process N (name) ... anon-rss:NkB", "Memory cgroup out of memory: Killed process ..."
  SELECT host, ts, file, line_no,
         regexp_extract(message, 'Killed process ([0-9]+) \(([^)]*)\)', 2) AS proc,
         TRY_CAST(regexp_extract(message, 'Killed process ([0-9]+)', 1) AS BIGINT) AS pid,
         TRY_CAST(nullif(regexp_extract(message, 'anon-rss:([0-9]+)kB', 1), '') AS BIGINT) AS anon_rss_kb,
         regexp_matches(message, '(?i)memory cgroup out of memory') AS cgroup
  FROM kernel_log WHERE regexp_matches(message, 'Killed process [0-9]+ \(')
), ka AS (
  SELECT k.*, (SELECT e.ep FROM ep e WHERE e.host = k.host AND k.ts IS NOT NULL
                 AND k.ts BETWEEN e.start - to_seconds($oom_window_s) AND e."end" + to_seconds($oom_window_s)
               ORDER BY e.start LIMIT 1) AS ep
  FROM k
), kg AS (
  -- kills outside every episode: grouped while less than oom_window_s apart (untimed kills: one group per host)
  SELECT *, sum(new_grp) OVER (PARTITION BY host, ts IS NULL ORDER BY ts, file, line_no ROWS UNBOUNDED PRECEDING) AS grp
  FROM (SELECT *, CASE WHEN ts IS NULL THEN 0
                       WHEN lag(ts) OVER w IS NULL OR epoch(ts) - epoch(lag(ts) OVER w) > $oom_window_s THEN 1 ELSE 0 END AS new_grp
        FROM ka WHERE ep IS NULL WINDOW w AS (PARTITION BY host, ts IS NULL ORDER BY ts, file, line_no))
), kills AS (
  SELECT host, ep, NULL::BIGINT AS grp, NULL::BOOLEAN AS untimed, min(ts) AS start, max(ts) AS "end", count(*) AS n,
         bool_and(cgroup) AS all_cgroup, list(DISTINCT proc ORDER BY proc) AS procs,
         list({process: proc, pid: pid, anon_rss_mb: round(anon_rss_kb / 1024), memory_cgroup: cgroup, ts: ts,
               file: file, line_no: line_no} ORDER BY ts, file, line_no) AS detail
  FROM ka WHERE ep IS NOT NULL GROUP BY host, ep
  UNION ALL
  SELECT host, NULL, grp, ts IS NULL, min(ts), max(ts), count(*), bool_and(cgroup), list(DISTINCT proc ORDER BY proc),
         list({process: proc, pid: pid, anon_rss_mb: round(anon_rss_kb / 1024), memory_cgroup: cgroup, ts: ts,
               file: file, line_no: line_no} ORDER BY ts, file, line_no)
  FROM kg GROUP BY host, grp, ts IS NULL
)
SELECT e.host, 'memory' AS subject, least(e.start, kl.start) AS start, greatest(e."end", kl."end") AS "end",
       least(1.0, 0.6 + (epoch(e."end") - epoch(e.start)) / 1800 + CASE WHEN kl.n > 0 THEN 0.2 ELSE 0 END) AS score,
       CASE WHEN kl.n > 0 THEN 'critical' ELSE 'warning' END AS severity,
       'Host ' || e.host || ' '
         || CASE WHEN e.peak_swap >= $min_swap_pages_s
                 THEN 'swapped up to ' || round(e.peak_swap, 1) || ' pages/s (in ' || coalesce(round(e.peak_in, 1)::VARCHAR, '?')
                      || ', out ' || coalesce(round(e.peak_out, 1)::VARCHAR, '?') || ')'
                 ELSE 'took up to ' || int_text(e.peak_majflt) || ' major page faults/s' END
         || coalesce(' with ' || round(e.min_avail, 1) || '% of RAM available', '')
         || coalesce(' (' || round(e.max_memused, 1) || '% used)', '')
         || ' for ' || int_text(epoch(e."end") - epoch(e.start)) || ' s'
         || coalesce('; the OOM killer killed ' || kl.n || ' process(es): ' || array_to_string(kl.procs, ', '), '')
         || ': the host is short of memory and pages to disk, which stalls the training processes' AS summary,
       to_json({peak_swap_pages_s: round(e.peak_swap, 2), peak_swapin_pages_s: e.peak_in, peak_swapout_pages_s: e.peak_out,
                peak_majflt_s: e.peak_majflt, min_avail_pct: round(e.min_avail, 1), max_memused_pct: e.max_memused,
                max_commit_pct: e.max_commit, bad_samples: e.samples,
                duration_s: round(epoch(e."end") - epoch(e.start)), oom_kills: coalesce(kl.n, 0),
                killed: kl.detail})::VARCHAR AS evidence
FROM ep e LEFT JOIN kills kl ON kl.host = e.host AND kl.ep = e.ep
UNION ALL
SELECT host, 'memory', start, "end", CASE WHEN all_cgroup THEN 0.8 ELSE 0.9 END, 'critical',
       'The OOM killer killed ' || n || ' process(es) on ' || host || ': ' || array_to_string(procs, ', ')
         || CASE WHEN all_cgroup THEN ' (a memory cgroup/container reached its limit)' ELSE ' (the host ran out of memory)' END,
       to_json({oom_kills: n, memory_cgroup: all_cgroup, killed: detail})::VARCHAR
FROM kills WHERE ep IS NULL
ORDER BY start NULLS FIRST
