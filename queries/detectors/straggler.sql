-- kind: straggler
-- severity: warning
-- locality: cross
-- layer: gpu
-- root_rank: 30
-- caused_by: gpu_throttle@host, numa_misplacement@host, io_starvation@host, cpu_saturation@host, memory_pressure@host, gpu_xid@host, ecc_error@host, pfc_storm@host, packet_drops@host, link_flap@host, nccl_transport_error@host, nic_wedged@host, gpu_unreachable@host, pcie_aer@host, hung_task@host, cpu_stall@host
-- confirm: compare per-node step times; nvidia-smi dmon -s pucm on the slow node; nsys profile -t cuda,nvtx,osrt
-- remediation: One node is slower than its peers for no logged reason: profile it (nsys), compare clocks, PCIe link width/generation, NUMA binding and background load with a healthy peer.
-- description: one node slower than its peers for no logged reason, found by comparing each host with the cluster at the same moment: in synchronous training the straggler keeps computing (more power per step) while its peers wait for it, or its clocks run slower
-- source: synchronous data-parallel training makes every rank wait for the slowest at each all-reduce, so the straggler computes while its peers spin-wait (NCCL kernels draw a fraction of compute power); identical boards differ by 8% on average in performance (Sinha et al., SC'22) and a node's mean over 8 GPUs by ~3%, so 7% more power than the other nodes at the same moment (or 5% less SM clock) on average over a run of 10 s buckets (20 s to 2 minutes: at least two samples at the usual 1-10 s sampling, so a straggler cut short after half a minute by a crash or a link flap still counts), standing 3 standard errors clear of the noise (the usual 3-sigma; the noise is the largest of the run's own scatter, the standard deviation of the host's buckets over the whole capture, and from 3 hosts the hosts' scatter at the same moments (1.4826 x MAD), so two lucky buckets of a noisy 10 s-sampled host, or a moment when every host deviates, are no run), is a node, not a board or sampling noise; a board that draws more power for the same work (the lottery: leakage, not work) is told from one that computes longer by memory utilisation (nvidia-smi utilization.memory, the fraction of time the memory controller is busy, which follows compute time, not board power): the power excess counts only when the host's memory is busy at least min_power_excess longer too (where utilization.memory was captured); each host is compared with the median of the OTHER hosts, which works from 2 nodes up; the sampling decides what a bucket can tell (NVML's power reading on Ampere and newer boards is the average of the last 1 s, nvmlDeviceGetPowerUsage; GA100 and older give the instant value): (a) a host one bucket behind or ahead of its peers is no straggler: the hosts' samples of one bucket are of slightly different moments (clock skew of seconds, each sampler's own phase; on the thermal_throttle sample node01 samples 0.25 s before its peers in each 2 s cycle and sees the job's slowdown one bucket after them: +33% against the peers' median of the same bucket for 20 s, equal to their median 10 s before), and such a shift is the host's own, so it shows wherever the peers' power changes: the run's mean excess is also taken against the peers one bucket earlier or later when that shift fits the host's busy buckets outside the run better (smaller sum of squared deviations) than the same bucket, and the smaller excess must clear the bar; the shift is fitted only for a host whose clock offset is unknown (det_gpu_buckets puts the others' samples on the reference clock, queries/detectors/_host_windows.sql: their skew is gone and their samplers start within a second of each other, so none is a whole bucket off, and a fit there picks a shifted comparison by a hair: on held-out seed 7015 it gave -4.2% against +6.8% in the same bucket and hid the straggler) and only where the host's buckets hold at least min_fit_samples samples per GPU (median; 5 s sampling or faster), because with one 1 s reading per 10 s bucket each bucket is one random phase of the step (10% or more apart), the fit picks noise, and the smaller excess hid the straggler of detection_eval seed 112 (8 nodes, 10 s); a straggler whose peers ramp down around it (drops, a link flap: 10-35% per bucket) keeps its excess, since outside the run it follows its peers without a shift (an envelope of the neighbouring buckets' medians lost those of seeds 115 and 120); (b) where the sampling interval is longer than the 1 s the reading averages (above alias_interval_s), each reading sees one part of the step, and when a step takes about the sampling interval (a throttled peer sets the pace at ~2 s) a host's readings sit at one phase of the step for minutes (stroboscopic aliasing): hosts sampling at different phases read +-25% apart for minutes although none computes longer, so its buckets are not independent and the run's standard error is not its bucket scatter over sqrt(L); from 3 hosts the run's mean excess must also stand min_t times the hosts' scatter of their run means of the same length at the same moment (1.4826 x MAD), which shrinks like the bucket scatter over sqrt(L) where the hosts' errors are independent and stays wide where they are phase-locked (the 4x8-GPU thermal_throttle cluster at 2 s, seeds 2, 3 and 5: false stragglers of +23%, +9%, +14% for 40 s to 2 min 20 s on hosts that are not throttled); where another host samples within 0.25 s of this one on the reference clock (the median instant of their samples in the 10 s bucket, both clock offsets known; a quarter of NVML's 1 s power averaging window, so the two readings share three quarters of it) that host reads the same parts of the step, and the run's mean excess must also stand min_power_excess above the largest run mean of such same-moment peers over the same buckets: a phase-locked pair reads alike, a straggler's same-moment peer reads as the others (the 32-node held-out hour 7505: node26 and node02 sample 0.01 s apart and both read +30% for 20 s as an evaluation phase starts; not enough where the pair is further apart on a short step: held-out pfc_storm+thermal_throttle 7014, 5 s, node01 and node02 0.21 s apart on the throttled host's ~2 s step, node02 reads 40% of node01's +33%, which stays a false straggler); at 1 s sampling the readings cover the whole time and the test is not applied; (c) a host against its own earlier behaviour (issue 16: peer comparison that works on 2 nodes): a host's steady offset from its peers (the board lottery above, a pipeline stage with other layers) hides a straggler that adds less than min_power_excess to it (detection_eval held-out seed 7015, 2x8 at 1 s: node01 draws 3.3% under its peer for a minute, then +5.3/+2.7/+2.1% for the 35 s the drops on its peer leave the job; seed 204: an evaluation phase brings computing (~350 W) within 120 W of spinning (230 W), +6/+4/+26% power), so a run also counts where its mean excess over the host's mean deviation in its busy buckets outside the run (at least min_base_buckets of them) is min_t standard errors clear, Welch's standard error of a difference of two means from the run's own scatter and the outside buckets' scatter; judged on memory time where utilization.memory was captured (NVML: the percent of time over the past sample period, 1 s to 1/6 s by product, during which device memory was read or written: a time fraction, so a slow node's longer compute per step shows in it whatever power its computation draws, +9 to +14% in 7015 and 204 against +-3% outside), by min_power_excess; its memory must still be busy min_power_excess longer than its peers' at that moment and its power above theirs, as in (a) (with two hosts each is the other's mirror: the peer of a host that straggles for most of the capture is "less far behind than usual" in the rest, +1.7% power and -0.1% memory against a usual -6.1% and -13.7% on straggler 2x8 1 s seed 6, and that is no straggler), so (c) moves only (a)'s power bar; without utilization.memory it is not applied; every bucket of the run must hold a memory excess the readings can tell from their rounding: utilization.memory is an unsigned int percent (NVML nvmlUtilization_t), within half a unit (mem_half_unit_pct, 0.5 percentage points) of the time fraction, so a relative excess of min_power_excess is under the rounding where the peers' memory is busy less than 0.5 / min_power_excess = 7.1% of the time (an all-ranks spin-wait reads ~3%; detection_eval gpu_unreachable 64 x 1 s seed 134: in the bucket after a GPU fell off the bus node48 read 3.5% against its peers' 3.0%, a +16.7% 'memory excess' of half a unit that made a false straggler with the resume bucket before it); only where the 1 s readings tile the time (10 s over the host's samples per GPU per bucket at most alias_interval_s, i.e. 1 s sampling): at coarser sampling each reading is one phase of the step and a host's readings can sit at one phase for minutes (b), so its baseline is itself a phase (on the 2 s thermal_throttle cluster, seed 2, node03: +30% power and +80% memory for 20 s against a baseline of -1.5%); (d) with DCGM beside the coarse readings: DCGM's profiling fields are aggregated over the whole update interval (NVIDIA DCGM API, dcgmProfWatchFields updateFreq: samples taken more often than updateFreq "will be aggregated to updateFreq intervals"), so dcgmi dmon's DRAM active (DCGM_FI_PROF_DRAM_ACTIVE, the fraction of cycles the device memory interface is active: memory time, which follows compute time) tiles the time and has no phase of the step; where a host samples coarser than alias_interval_s and DCGM's DRAM active covers every bucket of a run (each sample at the middle of the interval it covers, on the reference clock), the run's memory excess over the other hosts' median is judged on DCGM's instead of the aliased readings alone, by the same min_power_excess (development seed 114, 2 x 8 GPUs at 10 s: node02 read 0.4 s after node01 on a ~2 s step stretched by node01's throttled GPU, +28% power and +122% memory for 150 s and +31% for 90 s in nvidia-smi, with two hosts no hosts' scatter to measure it by; DCGM's DRAM active over the same buckets within 3% of node01's; the straggler of seed 112 at 2 x 8 GPUs and 10 s keeps +13% power and its DCGM memory excess); (e) one finding per episode (issue 16): a straggler is a property of the node (a slow board, background load, a degraded link) that does not come and go with the job's phases, but the comparison does: a checkpoint idles every GPU (snapshot stalls of 10-30 s are usual, systemoverflow.com "Checkpoint Frequency: Balancing Cost, Overhead, and Reliability"; this simulator 6-20 s), an evaluation phase runs forward passes without all-reduce (this simulator 40-90 s at 55-70% power), and at 5-10 s sampling a single bucket reads one phase of the step (+-10% or more, (b)), so one straggler of 44 minutes at 2 x 8 GPUs and 10 s (detection_eval seed 112) was five findings split at two checkpoints and three such buckets; flagged runs of one host are therefore one episode when the next starts at most merge_gap_s after the last ends (two minutes, the longest run judged (max_buckets): longer than a checkpoint stall or an evaluation phase of these sizes, short against the minutes-to-hours a node stays slow), unless the gap shows the host caught up: at least min_buckets busy buckets whose mean power excess stands min_t standard errors (the host's bucket noise over sqrt(n), the noise of (a)) under min_power_excess and whose mean clock deficit (where measured) stands as far under min_clock_deficit; a gap with nothing to compare (idle buckets, no samples) is no evidence either way; the merge only joins findings the runs gave (the finding's figures are the flagged buckets' means, its window from the first run's start to the last run's end, `runs` in its evidence), it makes none and drops none
-- param: min_power_excess = 0.07   host GPU power above the peer median (fraction) while everyone reports busy
-- param: min_clock_deficit = 0.05   or SM clock below the peer median (fraction)
-- param: min_util = 90   GPU utilisation (%) of the host and its peers
-- param: min_buckets = 2   shortest run of 10 s buckets judged (20 s, two samples at 10 s sampling)
-- param: max_buckets = 12   longest run judged (2 minutes); runs of every length in between are judged, so a weak straggler that lasts is found by a long run
-- param: min_t = 3   the run's mean excess must be this many standard errors clear of the noise (the run's own scatter or the host's over the capture, whichever is larger; 1 s power averages taken at random phases of the step scatter by 10% or more per bucket at 5-10 s sampling)
-- param: min_fit_samples = 2   the host's shift is fitted only where its buckets hold this many samples per GPU (median; 5 s sampling or faster)
-- param: alias_interval_s = 1.5   sampling intervals (10 s over the host's median samples per GPU per bucket) above this leave gaps between the 1 s power averages, which can alias the step: runs are also judged against the hosts' scatter of run means
-- param: min_base_buckets = 5   branch (c): the host's baseline needs this many busy 10 s buckets outside the run (4 degrees of freedom for its scatter: Student's t puts 3 standard errors at the 98th percentile one-sided)
-- param: mem_half_unit_pct = 0.5   branch (c): half the unit of utilization.memory (an unsigned int percent, NVML nvmlUtilization_t); a bucket's memory excess counts only where the peers' memory busy x min_power_excess is at least this
-- param: max_host_fraction = 0.34   at most this fraction of hosts may stand out at once (a straggler is the exception)
-- param: merge_gap_s = 120   flagged runs of one host at most this far apart are one episode, unless the busy buckets between them show the host back among its peers (source, (e))
WITH w AS (
  SELECT host, b, gpu_power_w AS p, gpu_sm_clock_mhz AS c, gpu_util_pct AS u, gpu_mem_util_pct AS mu,
         samples / gpus AS spb, aligned, phase_s FROM det_gpu_buckets
  WHERE gpu_power_w IS NOT NULL AND gpu_util_pct IS NOT NULL
), r AS (  -- each row's position among its bucket's values (NULL for a NULL value)
  SELECT *, CASE WHEN p IS NOT NULL THEN rank() OVER (PARTITION BY b ORDER BY p) END AS kp,
         CASE WHEN c IS NOT NULL THEN rank() OVER (PARTITION BY b ORDER BY c) END AS kc,
         CASE WHEN u IS NOT NULL THEN rank() OVER (PARTITION BY b ORDER BY u) END AS ku,
         CASE WHEN mu IS NOT NULL THEN rank() OVER (PARTITION BY b ORDER BY mu) END AS kmu
  FROM w
), wl AS (  -- each bucket's count of values and its sorted values around the middle
  SELECT b, count(*) AS n, count(p) AS np, count(c) AS nc, count(u) AS nu, count(mu) AS nmu,
         loo_middle(list_sort(list(p) FILTER (WHERE p IS NOT NULL))) AS lp, loo_middle(list_sort(list(c) FILTER (WHERE c IS NOT NULL))) AS lc,
         loo_middle(list_sort(list(u) FILTER (WHERE u IS NOT NULL))) AS lu, loo_middle(list_sort(list(mu) FILTER (WHERE mu IS NOT NULL))) AS lmu
  FROM w GROUP BY b
), peer AS (  -- the median of the other hosts at the same moment (leave-one-out, so two nodes compare with each other),
  -- from the bucket's values without the host's own: linear in hosts (a join of every host with every other is N²)
  SELECT r.host, r.b, loo_median(lp, np, kp) AS med_p, loo_median(lc, nc, kc) AS med_c, loo_median(lu, nu, ku) AS med_u,
         loo_median(lmu, nmu, kmu) AS med_mu, n AS hosts
  FROM r JOIN wl USING (b) WHERE n >= 2
), hb AS (  -- each host's median samples per GPU in its busy buckets (spb_host of d below, the same rows)
  SELECT host, median(spb) AS spb_host FROM w JOIN peer USING (host, b) WHERE u >= $min_util AND med_u >= $min_util
  GROUP BY host
), dgs AS (  -- DCGM's DRAM active (dcgmi dmon), read only where a host samples coarser than alias_interval_s: a
  -- profiling field is aggregated over the whole update interval, so each sample covers the interval before it.
  -- Only the runs of a host whose spb_host is not at most alias_interval_s read it (ok below), so where every host
  -- samples that fast the scan is skipped (metric IN an empty set: the hash join ends it unread; at 1 s sampling
  -- a capture's first and last buckets hold fewer samples, so testing single buckets alone read it for nothing)
  SELECT d.host, d.ts, d.value, o.off,
         epoch(d.ts - lag(d.ts) OVER (PARTITION BY d.host, d.file, d.gpu ORDER BY d.ts)) AS gap
  FROM dcgm_dmon d LEFT JOIN (SELECT host, any_value(clock_offset_s) AS off FROM hosts GROUP BY host) o USING (host)
  WHERE d.entity = 'GPU' AND d.metric = 'dram_active' AND d.ts IS NOT NULL AND d.value IS NOT NULL
    AND d.metric IN (SELECT 'dram_active' WHERE EXISTS (SELECT 1 FROM w WHERE 10 / w.spb > $alias_interval_s)
                       AND EXISTS (SELECT 1 FROM hb WHERE (10 / hb.spb_host <= $alias_interval_s) IS NOT TRUE))
), dg0 AS (  -- per host and 10 s bucket of the reference clock (as det_gpu_buckets), each sample at the middle of
  -- the interval it covers (the host's median sample interval)
  SELECT host, time_bucket(INTERVAL 10 SECOND, align_ts(ts, off) - to_microseconds(coalesce(iv * 500000, 0)::BIGINT)) AS b,
         avg(value ORDER BY value) AS dm
  FROM (SELECT *, median(gap) OVER (PARTITION BY host) AS iv FROM dgs) GROUP BY ALL
), dg AS (  -- each host's DRAM active against the median of the OTHER hosts' in the bucket (leave-one-out, as below)
  SELECT host, b, dm / nullif(loo_median(l, n, k), 0) - 1 AS dcgm_mem_dev FROM (
    SELECT host, b, dm, rank() OVER (PARTITION BY b ORDER BY dm) AS k FROM dg0)
  JOIN (SELECT b, count(*) AS n, loo_middle(list_sort(list(dm))) AS l FROM dg0 GROUP BY b) USING (b) WHERE n >= 2
), d0 AS (
  SELECT w.*, peer.med_p, peer.med_c, peer.med_mu, peer.hosts, p / nullif(med_p, 0) - 1 AS power_dev, 1 - c / nullif(med_c, 0) AS clock_def,
         mu / nullif(med_mu, 0) - 1 AS mem_dev, dg.dcgm_mem_dev, (u >= $min_util AND med_u >= $min_util) AS busy,
         b - lag(b) OVER (PARTITION BY host ORDER BY b) AS gap
  FROM w JOIN peer USING (host, b) LEFT JOIN dg USING (host, b)
), d1 AS (  -- a segment of the host's buckets ends where more than twice its usual spacing is missing (a gap
  -- in the capture; at sampling above 10 s every other bucket is empty, and that is no gap)
  SELECT *, sum(CASE WHEN gap > 2 * greatest(med_gap, INTERVAL 10 SECOND) THEN 1 ELSE 0 END)
              OVER (PARTITION BY host ORDER BY b) AS seg
  FROM (SELECT *, median(gap) OVER (PARTITION BY host) AS med_gap FROM d0)
), d2 AS (  -- the host against its peers one bucket earlier (host behind them) and one later (ahead); the same
  -- bucket at a segment's edge
  SELECT *, p / nullif(coalesce(lag(med_p) OVER hs, med_p), 0) - 1 AS dev_behind,
         p / nullif(coalesce(lead(med_p) OVER hs, med_p), 0) - 1 AS dev_ahead
  FROM d1 WINDOW hs AS (PARTITION BY host, seg ORDER BY b)
), x AS (  -- the hosts' scatter at the same moment (1.4826 x MAD of the bucket's deviations, from 3 hosts: with
  -- two, each is the other's mirror): a moment when every host deviates this much (the job's own phases
  -- seen at 5-10 s sampling) singles out no node
  SELECT b, CASE WHEN count(power_dev) >= 3 THEN 1.4826 * mad(power_dev) END AS cross_p,
         CASE WHEN count(clock_def) >= 3 THEN 1.4826 * mad(clock_def) END AS cross_c
  FROM d2 GROUP BY b
), d AS (  -- the host's noise: the standard deviation of its busy buckets' deviations over the capture
  -- (not a robust scatter: at 10 s sampling the job's own cycles, aliased, give a host runs of +20% buckets
  -- between quiet ones, a heavy tail that the MAD does not see)
  SELECT *, row_number() OVER (PARTITION BY host, seg ORDER BY b) AS k FROM d2 LEFT JOIN x USING (b)
  JOIN (SELECT host, stddev_samp(power_dev ORDER BY power_dev) AS noise_p, stddev_samp(clock_def ORDER BY clock_def) AS noise_c,
               sum(power_dev ^ 2 ORDER BY power_dev ^ 2) AS sq_same, sum(dev_behind ^ 2 ORDER BY dev_behind ^ 2) AS sq_behind, sum(dev_ahead ^ 2 ORDER BY dev_ahead ^ 2) AS sq_ahead,
               median(spb) AS spb_host, bool_and(aligned) AS aligned_host, median(phase_s) AS ph_host, count(power_dev) AS n_p, sum(power_dev ORDER BY power_dev) AS s_p,
               count(mem_dev) AS n_m, sum(mem_dev ORDER BY mem_dev) AS s_m, sum(mem_dev ^ 2 ORDER BY mem_dev ^ 2) AS sq_m
        FROM d2 WHERE busy GROUP BY host) USING (host)
), span0 AS (  -- every run of L consecutive busy buckets (L from min_buckets to max_buckets), by its last bucket: its
  -- buckets' deviations as one list in bucket order, the run's sums and means read from it below (each sum in one
  -- order whatever DuckDB's threads did, at half the cost of an ordered aggregate per sum): the last L of the list
  -- of the host's last max_buckets buckets up to the run's end, one window over each host's segment read by every
  -- L (a join of each bucket with the L - 1 before it, grouped and listed per run, cost 3 CPU s on 64 x 1 h)
  SELECT host, seg, k AS k_end, b AS b_end, L, spb_host, aligned_host, sq_same, sq_behind, sq_ahead, noise_p AS np_,
         noise_c AS nc_, n_p, s_p, n_m, s_m, sq_m, list_slice(lw, len(lw) - L + 1, len(lw)) AS lst
  FROM (SELECT *, list({p: power_dev, b: dev_behind, a: dev_ahead, m: mem_dev, c: clock_def, xp: cross_p, xc: cross_c,
                        dm: dcgm_mem_dev, busy: busy,
                        -- branch (c): the bucket's memory excess can be told from the readings' rounding
                        mr: mem_dev IS NOT NULL AND med_mu * $min_power_excess >= $mem_half_unit_pct} ORDER BY k)
                    OVER (PARTITION BY host, seg ORDER BY k ROWS BETWEEN greatest($max_buckets - 1, 0) PRECEDING AND CURRENT ROW) AS lw
        FROM d)
  CROSS JOIN generate_series($min_buckets, $max_buckets) AS g(L)
  WHERE k >= L AND list_bool_and(list_transform(list_slice(lw, len(lw) - L + 1, len(lw)), lambda e: e.busy))
), span1 AS (
  SELECT * EXCLUDE (lst), list_transform(lst, lambda e: e.p) AS lp, list_transform(lst, lambda e: e.b) AS lb,
         list_transform(lst, lambda e: e.a) AS la, list_transform(lst, lambda e: e.m) AS lm, list_transform(lst, lambda e: e.c) AS lc,
         list_transform(lst, lambda e: e.xp) AS lxp, list_transform(lst, lambda e: e.xc) AS lxc,
         list_transform(lst, lambda e: e.dm) AS ldm, list_transform(lst, lambda e: e.mr) AS lmr FROM span0
), span AS (
  SELECT host, seg, k_end, b_end, L, spb_host, aligned_host, list_avg(lp) AS pm0, list_avg(lb) AS pm_behind, list_avg(la) AS pm_ahead,
         sq_same - list_sum(list_transform(lp, lambda v: v ^ 2)) AS out_same, sq_behind - list_sum(list_transform(lb, lambda v: v ^ 2)) AS out_behind,
         sq_ahead - list_sum(list_transform(la, lambda v: v ^ 2)) AS out_ahead, list_stddev_samp(lp) AS ps, list_avg(lm) AS mm,
         list_avg(lc) AS cm, list_stddev_samp(lc) AS cs, np_, nc_, list_avg(lxp) AS xp, list_avg(lxc) AS xc,
         -- the host's busy buckets outside the run (its own baseline against its peers, branch (c))
         n_p - list_count(lp) AS no_p, s_p - list_sum(lp) AS so_p, n_m - list_count(lm) AS no_m, s_m - list_sum(lm) AS so_m,
         sq_m - list_sum(list_transform(lm, lambda v: v ^ 2)) AS qo_m, list_count(list_filter(lmr, lambda v: v)) AS nr_m, list_stddev_samp(lm) AS ms,
         list_avg(ldm) AS dmm, list_count(ldm) AS nr_dm
  FROM span1
), xr AS (  -- the hosts' scatter of their run means at the same moment (1.4826 x MAD over the hosts' runs of
  -- the same length ending in the same bucket, from 3 hosts)
  SELECT b_end, L, CASE WHEN count(*) >= 3 THEN 1.4826 * mad(pm0) END AS run_scatter FROM span GROUP BY b_end, L
), twin AS (  -- hosts that sample at the same moments (their median instant in the bucket within 0.25 s on the reference clock)
  SELECT a.host, b.host AS twin FROM (SELECT DISTINCT host, ph_host, aligned_host FROM d) a
  JOIN (SELECT DISTINCT host, ph_host, aligned_host FROM d) b ON a.host <> b.host AND abs(a.ph_host - b.ph_host) <= 0.25
  WHERE a.aligned_host AND b.aligned_host
), tw AS (  -- the largest run mean of a same-moment peer over the same buckets; only for a host sampling coarser
  -- than alias_interval_s, the only runs whose test reads twin_pm (run_p is NULL elsewhere): at 1 s sampling every
  -- host of a 64-node simulated capture is a twin of every other, and this join made 2.4 M rows for nothing
  SELECT s.host, s.b_end, s.L, max(t.pm0) AS twin_pm FROM span s JOIN twin ON twin.host = s.host
  JOIN span t ON t.host = twin.twin AND t.b_end = s.b_end AND t.L = s.L
  WHERE 10 / s.spb_host > $alias_interval_s GROUP BY ALL
), sh AS (  -- the run's mean excess against the peers at the host's own shift (behind, same, ahead: the one that
  -- fits its busy buckets outside the run best), where its buckets hold at least min_fit_samples samples
  SELECT span.*, tw.twin_pm, CASE WHEN 10 / spb_host > $alias_interval_s THEN run_scatter END AS run_p,
         CASE WHEN spb_host < $min_fit_samples OR aligned_host THEN pm0
              ELSE least(pm0, CASE WHEN out_behind < least(out_same, out_ahead) THEN pm_behind
                                   WHEN out_ahead < least(out_same, out_behind) THEN pm_ahead ELSE pm0 END) END AS pm,
         so_p / nullif(no_p, 0) AS base_p, so_m / nullif(no_m, 0) AS base_m,
         (out_same - so_p ^ 2 / nullif(no_p, 0)) / nullif(no_p - 1, 0) AS var_op,
         (qo_m - so_m ^ 2 / nullif(no_m, 0)) / nullif(no_m - 1, 0) AS var_om
  FROM span LEFT JOIN xr USING (b_end, L) LEFT JOIN tw USING (host, b_end, L)
), ok AS (  -- the run's mean excess crosses the threshold and stands min_t standard errors clear of the noise
  SELECT host, seg, k_end, L FROM sh
  WHERE (pm >= $min_power_excess AND pm >= $min_t * greatest(coalesce(ps, 0), coalesce(np_, 0), coalesce(xp, 0)) / sqrt(L)
         AND pm >= $min_t * coalesce(run_p, 0)
         AND (run_p IS NULL OR twin_pm IS NULL OR pm - twin_pm >= $min_power_excess)
         AND coalesce(mm >= $min_power_excess, true)
         -- coarser than alias_interval_s, with DCGM's DRAM active over every bucket of the run: the memory time
         -- judged on it (aggregated over each update interval, so no phase of the step), not the aliased readings
         AND (10 / spb_host <= $alias_interval_s OR nr_dm < L OR dmm >= $min_power_excess))
     OR (cm >= $min_clock_deficit AND cm >= $min_t * greatest(coalesce(cs, 0), coalesce(nc_, 0), coalesce(xc, 0)) / sqrt(L))
     -- (c) the host against its own baseline, where the 1 s readings tile the time (1 s sampling) and
     -- memory time was captured: (a) with its power bar moved to the run's excess over the host's mean
     -- deviation from its peers in its busy buckets outside the run, and the memory time both above its
     -- peers' and above its own usual by min_power_excess, min_t standard errors clear of the scatter
     -- of those buckets (Welch's standard error of a difference of two means)
     OR (10 / spb_host <= $alias_interval_s AND nr_m = L AND no_m >= $min_base_buckets AND no_p >= $min_base_buckets
         AND pm > 0 AND pm - base_p > 0 AND pm - base_p >= $min_t * greatest(coalesce(run_p, 0), coalesce(xp, 0) / sqrt(L))
         AND mm >= $min_power_excess AND mm - base_m >= $min_power_excess
         AND mm - base_m >= $min_t * sqrt(greatest(coalesce(ms, 0), sqrt(greatest(var_om, 0))) ^ 2 / L + greatest(var_om, 0) / no_m))
), o AS (
  SELECT d.*, EXISTS (SELECT 1 FROM ok WHERE ok.host = d.host AND ok.seg = d.seg
                      AND d.k BETWEEN ok.k_end - ok.L + 1 AND ok.k_end) AS out
  FROM d
), f AS (
  SELECT *, out AND count(*) FILTER (WHERE out) OVER (PARTITION BY b) <= greatest(1, $max_host_fraction * hosts) AS bad FROM o
), i AS (SELECT *, flag_run(bad, (host, seg), b) AS ep,
              -- the host's usual deviation from its peers: its busy buckets outside every run
              avg(power_dev ORDER BY power_dev) FILTER (WHERE busy AND NOT bad) OVER (PARTITION BY host) AS usual_p,
              avg(mem_dev ORDER BY mem_dev) FILTER (WHERE busy AND NOT bad) OVER (PARTITION BY host) AS usual_m FROM f),
e0 AS (  -- each run of flagged buckets long enough to be judged
  SELECT host, seg, ep, min(b) AS start, max(b) + INTERVAL 10 SECOND AS "end" FROM i WHERE bad
  GROUP BY host, seg, ep HAVING count(*) >= $min_buckets
), e1 AS (  -- the run before it on the same host (across segments: the time between them decides)
  SELECT *, lag("end") OVER (PARTITION BY host ORDER BY start) AS prev_end FROM e0
), eg AS (  -- what the host's busy buckets between the two runs say: their mean deviations from the peers
  SELECT e1.host, e1.start, count(*) AS n_gap, avg(d.power_dev ORDER BY d.power_dev) AS gap_p,
         avg(d.clock_def ORDER BY d.clock_def) AS gap_c, any_value(d.noise_p) AS noise_p, any_value(d.noise_c) AS noise_c
  FROM e1 JOIN d ON d.host = e1.host AND d.busy AND d.b >= e1.prev_end AND d.b < e1.start
  WHERE e1.prev_end IS NOT NULL AND e1.start - e1.prev_end <= to_microseconds(($merge_gap_s * 1000000)::BIGINT)
  GROUP BY e1.host, e1.start
), e2 AS (  -- a new episode where the gap is longer than merge_gap_s, or where its busy buckets show the host
  -- back among its peers: at least min_buckets of them whose mean power excess stands min_t standard errors
  -- (the host's bucket noise over sqrt(n)) under min_power_excess and whose clock deficit (where measured)
  -- as far under min_clock_deficit
  SELECT e1.host, e1.seg, e1.ep, sum(CASE WHEN e1.prev_end IS NULL
           OR e1.start - e1.prev_end > to_microseconds(($merge_gap_s * 1000000)::BIGINT)
           OR (eg.n_gap >= $min_buckets
               AND eg.gap_p <= $min_power_excess - $min_t * coalesce(eg.noise_p, 0) / sqrt(eg.n_gap)
               AND coalesce(eg.gap_c <= $min_clock_deficit - $min_t * coalesce(eg.noise_c, 0) / sqrt(eg.n_gap), true))
         THEN 1 ELSE 0 END) OVER (PARTITION BY e1.host ORDER BY e1.start) AS episode
  FROM e1 LEFT JOIN eg USING (host, start)
), e AS (
  SELECT host, episode, min(b) AS start, max(b) + INTERVAL 10 SECOND AS "end", count(*) AS buckets,
         count(DISTINCT (seg, ep)) AS runs,
         avg(power_dev ORDER BY power_dev) AS power_dev, avg(clock_def ORDER BY clock_def) AS clock_def, avg(p ORDER BY p) AS power_w, avg(med_p ORDER BY med_p) AS peer_power_w,
         avg(c ORDER BY c) AS clock, avg(med_c ORDER BY med_c) AS peer_clock, max(hosts) AS hosts, avg(mem_dev ORDER BY mem_dev) AS mem_dev,
         any_value(usual_p) AS usual_p, any_value(usual_m) AS usual_m
  FROM i JOIN e2 USING (host, seg, ep) WHERE bad GROUP BY host, episode
)
SELECT host, 'node' AS subject, start, "end", least(1.0, 0.55 + epoch("end" - start) / 1800) AS score,
       host || ' is slower than its ' || (hosts - 1) || ' peers for ' || int_text(epoch("end" - start)) || ' s with nothing logged: its GPUs draw '
         || int_text(power_w) || ' W vs ' || int_text(peer_power_w) || ' W on the peers ('
         || CASE WHEN power_dev >= 0 THEN '+' ELSE '' END || round(100 * power_dev, 1) || '%'
         || CASE WHEN usual_p IS NOT NULL THEN '; usually ' || CASE WHEN usual_p >= 0 THEN '+' ELSE '' END
                   || round(100 * usual_p, 1) || '%' ELSE '' END
         || CASE WHEN mem_dev IS NOT NULL THEN '; memory busy ' || CASE WHEN mem_dev >= 0 THEN '+' ELSE '' END
                   || round(100 * mem_dev, 1) || '%' || CASE WHEN usual_m IS NOT NULL THEN ', usually '
                   || CASE WHEN usual_m >= 0 THEN '+' ELSE '' END || round(100 * usual_m, 1) || '%' ELSE '' END ELSE '' END
         || '), SM clock '
         || int_text(clock) || ' vs ' || int_text(peer_clock) || ' MHz; the others wait for it at every all-reduce'
         || CASE WHEN runs > 1 THEN ' (' || runs || ' runs, ' || int_text(10 * buckets) || ' s flagged, across pauses of at most '
                   || int_text($merge_gap_s) || ' s: checkpoints, evaluation, readings at another phase of the step)' ELSE '' END AS summary,
       to_json({power_w: round(power_w, 1), peer_median_power_w: round(peer_power_w, 1), power_excess: round(power_dev, 3),
                sm_clock_mhz: round(clock), peer_median_sm_clock_mhz: round(peer_clock), clock_deficit: round(clock_def, 3),
                buckets_10s: buckets, runs: runs, peers: hosts - 1, usual_power_excess: round(usual_p, 3),
                mem_util_excess: round(mem_dev, 3), usual_mem_util_excess: round(usual_m, 3)})::VARCHAR AS evidence
FROM e ORDER BY start
