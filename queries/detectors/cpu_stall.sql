-- kind: cpu_stall
-- severity: warning
-- locality: host
-- layer: host_cpu
-- root_rank: 26
-- caused_by: nic_wedged@host, gpu_unreachable@host, pcie_aer@host
-- confirm: dmesg -T | grep -iE 'soft lockup|hard LOCKUP|rcu.*stall' -A20; cat /proc/sys/kernel/watchdog_thresh
-- remediation: A CPU stopped scheduling (soft lockup), stopped taking interrupts (hard lockup) or held up RCU: read the stack that follows for the driver looping in kernel mode; a hard lockup means the node must be rebooted; update or report the driver named in the trace.
-- description: kernel watchdog reports: soft lockups, hard lockups and RCU stalls (which CPU, for how long, the task)
-- source: Linux Documentation/admin-guide/lockup-watchdogs.rst (soft lockup: a CPU in kernel mode for more than 2 x watchdog_thresh, default 20 s; hard lockup: no interrupts for more than watchdog_thresh, 10 s) and Documentation/RCU/stallwarn.rst (rcu_cpu_stall_timeout, default 21 s): the kernel prints only past these limits, so each report is a finding; hard lockup critical (the CPU took no interrupts), the others warning
WITH e AS (
  SELECT host, event, cpu, task, task_pid, duration_s, ts, message, file, line_no
  FROM kernel_log WHERE event IN ('soft_lockup', 'hard_lockup', 'rcu_stall')
)
SELECT host, 'CPU stalls' AS subject, min(ts) AS start, coalesce(max(ts), min(ts)) AS "end",
       CASE WHEN count(*) FILTER (WHERE event = 'hard_lockup') > 0 THEN 0.9 ELSE 0.7 END AS score,
       CASE WHEN count(*) FILTER (WHERE event = 'hard_lockup') > 0 THEN 'critical' ELSE 'warning' END AS severity,
       array_to_string(list_filter([
           CASE WHEN count(*) FILTER (WHERE event = 'soft_lockup') > 0 THEN count(*) FILTER (WHERE event = 'soft_lockup') || ' soft lockup(s)'
                || coalesce(' up to ' || int_text(max(duration_s) FILTER (WHERE event = 'soft_lockup')) || ' s', '') END,
           CASE WHEN count(*) FILTER (WHERE event = 'hard_lockup') > 0 THEN count(*) FILTER (WHERE event = 'hard_lockup') || ' hard lockup(s)' END,
           CASE WHEN count(*) FILTER (WHERE event = 'rcu_stall') > 0 THEN count(*) FILTER (WHERE event = 'rcu_stall') || ' RCU stall report(s)' END],
         lambda x: x IS NOT NULL), ', ')
         || ' on ' || host
         || coalesce(' (CPU ' || array_to_string(list(DISTINCT cpu ORDER BY cpu) FILTER (WHERE cpu IS NOT NULL), ', ') || ')', '')
         || coalesce('; task ' || array_to_string(list(DISTINCT task ORDER BY task) FILTER (WHERE task IS NOT NULL)[1:3], ', '), '') AS summary,
       to_json({soft_lockups: count(*) FILTER (WHERE event = 'soft_lockup'), hard_lockups: count(*) FILTER (WHERE event = 'hard_lockup'),
                rcu_stalls: count(*) FILTER (WHERE event = 'rcu_stall'), cpus: list(DISTINCT cpu ORDER BY cpu) FILTER (WHERE cpu IS NOT NULL),
                tasks: list(DISTINCT task ORDER BY task) FILTER (WHERE task IS NOT NULL), max_stuck_s: max(duration_s),
                first_message: arg_min(message, {t: ts, f: file, l: line_no}),
                first: {file: arg_min(file, {t: ts, f: file, l: line_no}), line_no: arg_min(line_no, {t: ts, f: file, l: line_no})}})::VARCHAR AS evidence
FROM e GROUP BY host
ORDER BY start
