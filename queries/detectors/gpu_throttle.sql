-- kind: gpu_throttle
-- severity: warning
-- locality: host
-- layer: gpu
-- root_rank: 24
-- caused_by: none
-- confirm: nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER; nvidia-smi --query-gpu=clocks_event_reasons.active,temperature.gpu,clocks.sm --format=csv -l 1
-- remediation: Thermal/power throttling: check airflow, fans and inlet temperature (clean thermal filters), power capping and PSU health; the throttling GPU makes its node a straggler.
-- description: thermal and hardware throttling episodes per GPU (HW/SW thermal slowdown, HW slowdown, power brake), with durations, temperatures and the SM clock lost
-- source: the NVIDIA driver's own clock event reason flags (nvidia-smi -q "Clocks Event Reasons", NVML nvmlClocksEventReasons: HW/SW thermal slowdown, HW slowdown, power brake) are the evidence, no threshold of ours; episodes are built at the GPU's measured sampling interval (a 5.002 s gap at 5 s sampling or 10 s sampling continue one episode); HW thermal slowdown and power brake halve clocks or more, so they are critical (from critical_min_s on); an episode is as short as two throttled samples at the GPU's own interval, the length issue 16 asks of every episode (a fixed 10 s floor hid a 4 s throttle at 1 s sampling)
-- param: min_intervals = 2   shortest episode reported, in the GPU's measured sampling intervals (two throttled samples: one is a flicker of the flags)
-- param: critical_min_s = 10   HW thermal slowdown or power brake shorter than this is a warning: the flags are the driver's, but a few seconds at half clock cost the job seconds (a fault cut short by a crash: detection_eval --full development run thermal_throttle+packet_drops on one host, 2x1s/3min seed 119, 4 s of HW thermal slowdown before the NCCL abort, missed under the old 10 s floor)
-- param: gap_intervals = 2.5   throttled samples further apart than this many of the GPU's measured sampling intervals split an episode
WITH throttled AS (  -- only GPUs with a throttled sample can have episodes: the windows skip the rest
  SELECT DISTINCT host, gpu FROM gpu_samples
  WHERE ts IS NOT NULL AND gpu IS NOT NULL
    AND (reason_hw_thermal_slowdown OR reason_sw_thermal_slowdown OR reason_hw_slowdown OR reason_hw_power_brake)
), s AS (
  SELECT host, gpu, ts, temp_c, sm_clock_mhz, power_w, file, line_no,
         coalesce(reason_hw_thermal_slowdown, false) AS hw_thermal,
         coalesce(reason_sw_thermal_slowdown, false) AS sw_thermal,
         coalesce(reason_hw_slowdown, false) AS hw_slow,
         coalesce(reason_hw_power_brake, false) AS brake
  FROM gpu_samples g SEMI JOIN throttled t ON t.host IS NOT DISTINCT FROM g.host AND t.gpu = g.gpu
  WHERE ts IS NOT NULL AND gpu IS NOT NULL
), f AS (
  SELECT *, (hw_thermal OR sw_thermal OR hw_slow OR brake) AS thr FROM s
), spacing AS (  -- the GPU's sampling interval as measured (median spacing of its samples)
  SELECT host, gpu, median(d) AS interval_s FROM (
    SELECT host, gpu, epoch(ts) - epoch(lag(ts) OVER (PARTITION BY host, gpu ORDER BY ts)) AS d FROM f)
  WHERE d > 0 GROUP BY ALL
), marked AS (  -- episodes over the throttled samples only: a flicker of the reason bits does not split one
  SELECT f.*, coalesce(sp.interval_s, 1) AS interval_s,
         CASE WHEN lag(ts) OVER w IS NULL
                   OR epoch(ts) - epoch(lag(ts) OVER w) > $gap_intervals * coalesce(sp.interval_s, 1) THEN 1 ELSE 0 END AS starts
  FROM f LEFT JOIN spacing sp USING (host, gpu) WHERE thr WINDOW w AS (PARTITION BY host, gpu ORDER BY ts)
), islands AS (
  SELECT *, sum(starts) OVER (PARTITION BY host, gpu ORDER BY ts ROWS UNBOUNDED PRECEDING) AS ep FROM marked
), base AS (
  SELECT host, gpu, median(sm_clock_mhz) AS clk_normal, median(temp_c) AS temp_normal FROM f WHERE NOT thr GROUP BY ALL
), ep AS (
  SELECT host, gpu, ep, min(ts) - to_seconds(any_value(interval_s)) AS start, max(ts) AS "end", count(*) AS samples,
         any_value(interval_s) AS interval_s,
         bool_or(hw_thermal) AS hw_thermal, bool_or(sw_thermal) AS sw_thermal, bool_or(hw_slow) AS hw_slow,
         bool_or(brake) AS brake, max(temp_c) AS temp_max, min(sm_clock_mhz) AS clk_min, avg(sm_clock_mhz ORDER BY sm_clock_mhz) AS clk_avg,
         arg_min(line_no, {t: ts, f: file, l: line_no}) AS first_line, arg_min(file, {t: ts, f: file, l: line_no}) AS file
  FROM islands WHERE thr GROUP BY ALL
)
SELECT e.host, 'GPU' || e.gpu AS subject, e.start, e."end",
       least(1.0, 0.6 + epoch(e."end" - e.start) / 600) AS score,
       CASE WHEN (e.hw_thermal OR e.brake) AND epoch(e."end" - e.start) >= $critical_min_s THEN 'critical' ELSE 'warning' END AS severity,
       'GPU' || e.gpu || ' on ' || e.host || ' throttled ('
         || concat_ws(', ', CASE WHEN e.hw_thermal THEN 'HW Thermal Slowdown' END, CASE WHEN e.sw_thermal THEN 'SW Thermal Slowdown' END,
                      CASE WHEN e.hw_slow THEN 'HW Slowdown' END, CASE WHEN e.brake THEN 'HW Power Brake' END)
         || ') for ' || int_text(epoch(e."end" - e.start)) || ' s, up to ' || coalesce(e.temp_max::VARCHAR, '?') || ' C, SM clock '
         || coalesce(int_text(e.clk_avg), '?') || ' MHz'
         || coalesce(' vs ' || int_text(b.clk_normal) || ' MHz unthrottled', '') AS summary,
       to_json({duration_s: epoch(e."end" - e.start), samples: e.samples, hw_thermal: e.hw_thermal, sw_thermal: e.sw_thermal,
                hw_slowdown: e.hw_slow, power_brake: e.brake, temp_max_c: e.temp_max, temp_normal_c: b.temp_normal,
                sm_clock_min_mhz: e.clk_min, sm_clock_avg_mhz: round(e.clk_avg, 1), sm_clock_normal_mhz: b.clk_normal,
                first: {file: e.file, line_no: e.first_line}})::VARCHAR AS evidence
FROM ep e LEFT JOIN base b USING (host, gpu)
WHERE epoch(e."end" - e.start) >= $min_intervals * e.interval_s
ORDER BY e.start
