-- Shared by detectors and the anomaly model: per host x 30 s window features, computed once per
-- analysis into temporary (in-memory) tables.
-- The windows are of the reference clock (align_ts, each host's clock offset from forensics.timeline, the
-- offset of the `hosts` view; NULL: the host's own clock): the anomaly model compares the hosts within one
-- window, and bucketed by their own clocks, hosts 2 s apart put a change shared by every host (a checkpoint's
-- stall, an evaluation phase's start) in different windows whenever it falls within 2 s of an edge: one host
-- off its peers for a window. An NTP step within the capture is not taken out here (det_gpu_buckets does,
-- for the 10 s buckets): a step of a few seconds moves a 30 s window's content by that much at most.
CREATE OR REPLACE TEMP TABLE det_host_offset AS
SELECT host, any_value(clock_offset_s) AS off FROM hosts WHERE host IS NOT NULL GROUP BY host;

CREATE OR REPLACE TEMP TABLE det_gpu_windows AS
SELECT host, gpu, ref_bucket(ts, off, 30) AS w,
       fixed_avg(util_pct) AS util, fixed_avg(power_w) AS power, fixed_avg(sm_clock_mhz) AS clk, max(temp_c) AS temp, fixed_avg(mem_util_pct) AS mem_util,
       count(*) AS samples,
       count(*) FILTER (WHERE util_pct >= 90) AS n_high, count(*) FILTER (WHERE util_pct <= 10) AS n_low,
       max(power_limit_w) AS power_limit
FROM gpu_samples LEFT JOIN det_host_offset USING (host) WHERE ts IS NOT NULL AND gpu IS NOT NULL AND util_pct IS NOT NULL
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE det_host_windows AS
WITH gh AS (
  SELECT host, w, fixed_avg(util) AS gpu_util_pct, min(util) AS gpu_util_min_pct, fixed_avg(power) AS gpu_power_w,
         fixed_avg(mem_util) AS gpu_mem_util_pct,
         fixed_avg(clk) AS gpu_sm_clock_mhz, max(temp) AS gpu_temp_max_c, count(DISTINCT gpu) AS gpus
  FROM det_gpu_windows GROUP BY ALL
), c AS (
  SELECT host, ref_bucket(ts, off, 30) AS w,
         fixed_avg(100 - idle_pct) AS cpu_busy_pct, fixed_avg(iowait_pct) AS cpu_iowait_pct
  FROM det_cpu_all LEFT JOIN det_host_offset USING (host) GROUP BY ALL  -- (queries/detectors/_host_cpu.sql)
), d AS (
  SELECT host, w, max(u) AS disk_util_max_pct, max(a) AS disk_await_max_ms, fixed_sum(rkb) AS disk_read_kb_s,
         arg_max(device, u) AS busiest_device FROM (
    SELECT host, ref_bucket(ts, off, 30) AS w, device, fixed_avg(util_pct) AS u,
           fixed_avg(greatest(coalesce(r_await_ms, await_ms, 0), coalesce(w_await_ms, await_ms, 0))) AS a,
           fixed_avg(coalesce(rkb_s, kb_read_s, 0)) AS rkb
    FROM disk_io LEFT JOIN det_host_offset USING (host) WHERE ts IS NOT NULL AND NOT coalesce(since_boot, false) GROUP BY ALL) GROUP BY ALL
), q AS (
  SELECT host, ref_bucket(ts, off, 30) AS w, avg(runq_sz) AS runq, avg(blocked) AS blocked
  FROM sar_queue LEFT JOIN det_host_offset USING (host) WHERE ts IS NOT NULL GROUP BY ALL
), keys AS (
  SELECT host, w FROM gh UNION SELECT host, w FROM c UNION SELECT host, w FROM d
)
SELECT k.host, k.w, gh.* EXCLUDE (host, w), c.* EXCLUDE (host, w), d.* EXCLUDE (host, w), q.* EXCLUDE (host, w)
FROM keys k LEFT JOIN gh USING (host, w) LEFT JOIN c USING (host, w) LEFT JOIN d USING (host, w)
LEFT JOIN q USING (host, w);

-- Clock steps in each host's GPU sample stamps, for the alignment of det_gpu_buckets below. A sampler
-- (nvidia-smi --query-gpu -l, nvidia-smi -q in a loop) runs on elapsed time, so its stamps advance by its
-- cadence; where NTP steps the host clock (chronyd/ntpd step a clock that is off by more than their step
-- threshold, 1 s and 128 ms by default, instead of slewing it), every series the host stamps jumps by the
-- step at the same moment. A jump is the interval between two consecutive samples of the host's densest
-- series (its first GPU) minus that series' median interval, counted when it exceeds 0.25 s (a fortieth of
-- a 10 s bucket; the loops' own jitter is tens of ms) and is at most 5 s (a free-running quartz clock is
-- 20-100 ppm off, 2-9 s a day: larger jumps are gaps in the collection, not steps). A stall of one sampler
-- also delays its stamps: a jump is not a step where another of the host's GPU series spans it without
-- the same jump (within 0.25 s, or 1.25 s where that series is stamped in whole seconds). A pause of the
-- whole host (every sampler) reads as a step; its earlier samples are then placed up to the jump early,
-- as every host's were by its whole offset before the buckets were aligned.
CREATE OR REPLACE TEMP TABLE det_clock_steps AS
WITH ser AS (  -- each GPU series (file) of a host, read on its first GPU
  SELECT host, file, min(gpu) AS gpu, count(*) AS n,
         CASE WHEN bool_and(microsecond(ts) % 1000000 = 0) THEN 1.25 ELSE 0.25 END AS tol
  FROM gpu_samples WHERE ts IS NOT NULL AND gpu IS NOT NULL GROUP BY host, file
), pairs AS (
  SELECT s.host, s.file, lag(s.ts) OVER (PARTITION BY s.host, s.file ORDER BY s.line_no) AS t0, s.ts AS t1
  FROM gpu_samples s JOIN ser ON s.host = ser.host AND s.file = ser.file AND s.gpu = ser.gpu WHERE s.ts IS NOT NULL
), x AS (
  SELECT p.*, ser.tol, epoch(t1 - t0) - median(epoch(t1 - t0)) OVER (PARTITION BY p.host, p.file) AS extra,
         ser.n = max(ser.n) OVER (PARTITION BY p.host) AND ser.file = min(ser.file) FILTER (WHERE ser.n = max_n) OVER (PARTITION BY p.host) AS densest
  FROM pairs p JOIN (SELECT *, max(n) OVER (PARTITION BY host) AS max_n FROM ser) ser ON p.host = ser.host AND p.file = ser.file
  WHERE t0 IS NOT NULL
)
SELECT c.host, c.t1 AS ts, c.extra AS jump FROM x c
WHERE c.densest AND abs(c.extra) > 0.25 AND abs(c.extra) <= 5
  AND NOT EXISTS (SELECT 1 FROM x o WHERE o.host = c.host AND o.file <> c.file AND o.t0 <= c.t0 AND o.t1 >= c.t1
                  AND abs(o.extra - c.extra) > o.tol);

-- Per host x 10 s bucket GPU features, for the peer comparison of straggler.sql: a straggler cut short
-- after 20-60 s is two to six of these and drowns in a 30 s window's average. 10 s is several training
-- steps (a 1 s bucket would judge one step's phase) and holds at least one sample at the usual 1-10 s
-- sampling. The buckets are of the reference clock (align_ts, the host's clock offset from
-- forensics.timeline): bucketed by its own clock, a host 2 s off reads a change shared by every host (an
-- evaluation phase's start, a link flap's stall) one bucket before or after its peers whenever the change
-- falls within 2 s of a bucket's edge (held-out link_flap 2x1 s seed 11: +10% for 20 s, a false straggler).
-- An offset taken from the host's NTP offset (chrony's, read at the end of the collection) is its clock
-- after any step: before a step of det_clock_steps the host's clock read that much less (a forward
-- step), so its earlier samples take the offset less every later step. An offset from anchors (NCCL
-- init at the job's start) is left as it is (the anchors' moments are not kept). A host without an
-- offset keeps its own clock (`aligned` false: straggler.sql then allows it to be a bucket off).
-- Host-local (a split engine's map computes it for its hosts and carries it to the reduce).
CREATE OR REPLACE TEMP TABLE det_gpu_buckets AS
WITH later AS (  -- at each step of a host: the sum of its steps from there on, what a sample before it takes
  SELECT DISTINCT k.host, k.ts, (SELECT sum(j.jump ORDER BY j.jump) FROM det_clock_steps j WHERE j.host = k.host AND j.ts >= k.ts) AS jumps
  FROM det_clock_steps k
), hx AS (
  SELECT h.host, h.clock_offset_s, h.clock_offset_s = h.ntp_offset_s AND h.host IN (SELECT host FROM later) AS stepped FROM hosts h
), o AS (  -- a sample takes the steps after it: those from its host's first step later than the sample, an ASOF
  -- join over the samples of the hosts with a step (a correlated sum over the steps for every sample cost 0.3
  -- CPU s on 64 x 10 min with one step in all; an ASOF join over every sample, 0.2)
  SELECT s.host, s.ts, s.gpu, s.util_pct, s.power_w, s.sm_clock_mhz, s.mem_util_pct, h.clock_offset_s AS off
  FROM gpu_samples s LEFT JOIN hx h ON h.host = s.host
  WHERE s.ts IS NOT NULL AND s.gpu IS NOT NULL AND s.util_pct IS NOT NULL AND NOT coalesce(h.stepped, false)
  UNION ALL
  SELECT s.host, s.ts, s.gpu, s.util_pct, s.power_w, s.sm_clock_mhz, s.mem_util_pct, h.clock_offset_s - coalesce(l.jumps, 0)
  FROM gpu_samples s JOIN hx h ON h.host = s.host AND h.stepped ASOF LEFT JOIN later l ON l.host = s.host AND s.ts < l.ts
  WHERE s.ts IS NOT NULL AND s.gpu IS NOT NULL AND s.util_pct IS NOT NULL
)
SELECT host, ref_bucket(ts, off, 10) AS b, off IS NOT NULL AS aligned,
       fixed_avg(util_pct) AS gpu_util_pct, fixed_avg(power_w) AS gpu_power_w,
       fixed_avg(sm_clock_mhz) AS gpu_sm_clock_mhz, fixed_avg(mem_util_pct) AS gpu_mem_util_pct, count(*) AS samples,
       count(DISTINCT gpu) AS gpus,
       median(epoch(align_ts(ts, off)) - epoch(ref_bucket(ts, off, 10))) AS phase_s
FROM o GROUP BY ALL;

-- NIC counter classes (driver-independent): pause frames, pause time, storm events, drops, link downs
-- (nic_counter_signal() and its direction/priority macros in queries/views/00_macros.sql). Classified once per distinct counter name (det_counter_names, made by prepare() in
-- forensics/detect/rules.py: from the cached nic_counter_summary when there is one, else nic_counters),
-- then only those counters' rates are computed.
CREATE OR REPLACE TEMP TABLE det_counter_class AS
SELECT counter, nic_counter_signal(counter) AS class, nic_counter_dir(counter) AS dir, nic_counter_prio(counter) AS prio
FROM det_counter_names;
DELETE FROM det_counter_class WHERE class IS NULL;

-- The rates of just those counters: nic_rates filtered on its coarse class (which reads only those
-- counters' cached intervals on a big bundle), refined by the class above. Rates (bytes, pause
-- frames, pause time) keep every interval, the event classes (drops, errors, link downs, storm
-- events) only the intervals in which the counter increased, all their rules look at (delta > 0).
-- Only the columns the rules read (no ts_aligned: that would join the clock offsets to every row).
CREATE OR REPLACE TEMP TABLE det_nic_class AS
SELECT r.host, r.iface, r.counter, c.class, c.dir, c.prio, r.ts_start, r.ts, r.delta, r.rate_per_s, r.reset
FROM nic_rates r JOIN det_counter_class c USING (counter)
WHERE r.class IN ('pause', 'storm', 'drop', 'error', 'link', 'bytes') AND (c.class <> 'bytes' OR r.queue IS NULL)
  AND (c.class IN ('bytes', 'pause_frames', 'pause_time_us') OR r.delta > 0)
  -- implied by the line above (those three classes' counters are of nic_rates class pause or bytes,
  -- or link/storm where those match first), stated on nic_rates' own columns, so DuckDB drops the
  -- unchanged intervals of the other counters before computing rates and joining the classes
  AND (r.delta > 0 OR r.class IN ('pause', 'bytes', 'link', 'storm'));

-- The capture window of each host: the span of its sampled series (GPU, CPU, disk, NIC counters), on the
-- host's own clock (the windows moved back by its offset), as the kernel messages it is compared with.
-- Kernel messages before it (boot, earlier incidents) are history, not this incident (link_flap).
CREATE OR REPLACE TEMP TABLE det_capture AS
SELECT host, min(t0) AS cap_start, max(t1) AS cap_end FROM (
  SELECT host, min(ts) AS t0, max(ts) AS t1 FROM gpu_samples WHERE ts IS NOT NULL GROUP BY host
  UNION ALL SELECT host, align_ts(min(w), -any_value(off)), align_ts(max(w), -any_value(off)) + INTERVAL 30 SECOND
  FROM det_host_windows LEFT JOIN det_host_offset USING (host) GROUP BY host
  UNION ALL SELECT host, min(ts_start), max(ts) FROM det_nic_class GROUP BY host
) GROUP BY host;

CREATE OR REPLACE TEMP TABLE det_nic_windows AS
WITH b AS (
  SELECT host, iface, ts, counter, class, rate_per_s,
         bool_or(counter = 'tx_bytes_phy') OVER (PARTITION BY host, iface) AS has_phy
  FROM det_nic_class WHERE class IN ('bytes', 'pause_frames')
)
SELECT host, ref_bucket(ts, off, 30) AS w,
       fixed_sum(CASE WHEN counter = CASE WHEN has_phy THEN 'tx_bytes_phy' ELSE 'tx_bytes' END THEN rate_per_s END)
         / count(DISTINCT ts) / 1e6 AS nic_tx_mb_s,
       fixed_sum(CASE WHEN class = 'pause_frames' THEN rate_per_s END) / count(DISTINCT ts) AS nic_pause_per_s
FROM b LEFT JOIN det_host_offset USING (host) GROUP BY ALL;

-- NIC counters the rate rules cannot see: a single sample, or several without times (pasted
-- ethtool -S excerpts): the last value of each counter, per port: the interface the content names,
-- else 'unnamed port in <file>' (a file name is not an interface name; each such file is its own
-- port). Read by packet_drops_snapshot and pause_frames_since_reset. A collected series (more than
-- 2 M counter rows) has rates instead: the scalar test below skips the scan then.
CREATE OR REPLACE TEMP TABLE det_nic_snapshot AS
SELECT host, coalesce(iface, 'unnamed port in ' || regexp_replace(file, '^.*/', '')) AS port, counter, queue,
       arg_max(value, {s: sample_no, l: line_no}) AS value, max(ts) AS ts,
       arg_max(file, {s: sample_no, l: line_no}) AS file, arg_max(line_no, {s: sample_no, l: line_no}) AS line_no
FROM raw.nic_counters
WHERE (SELECT count(*) FROM raw.nic_counters) <= 2000000 AND value IS NOT NULL
GROUP BY host, coalesce(iface, 'unnamed port in ' || regexp_replace(file, '^.*/', '')), counter, queue, raw_name
HAVING count(*) = 1 OR count(ts) = 0;
-- Which counters are snapshots is decided on the whole bundle above (a series cut to one sample by
-- --since/--until is still a series, judged by its rates); the window (forensics/db/window.py shadows
-- nic_counters by its rows in [since, until)) then keeps an untimed snapshot and drops one taken
-- outside it. Without a window nic_counters is raw.nic_counters and nothing is deleted. The lines
-- looked up are first narrowed to the snapshot's own (a semi join): as a plain correlated NOT EXISTS,
-- DuckDB read every nic_counters row even with no snapshot at all (2.0-2.4 CPU s on the 14 M rows of
-- a 64 x 10 min bundle; 0.01 so).
DELETE FROM det_nic_snapshot s
WHERE s.ts IS NOT NULL AND NOT EXISTS (
  SELECT 1 FROM (SELECT n.host, n.file, n.line_no FROM nic_counters n SEMI JOIN det_nic_snapshot k
                 ON n.host = k.host AND n.file = k.file AND n.line_no = k.line_no) n
  WHERE n.host = s.host AND n.file = s.file AND n.line_no = s.line_no);
