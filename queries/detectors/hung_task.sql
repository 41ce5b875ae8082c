-- kind: hung_task
-- severity: warning
-- locality: host
-- layer: host_cpu
-- root_rank: 32
-- caused_by: nic_wedged@host, gpu_unreachable@host, pcie_aer@host, gpu_xid@host, io_starvation@host, memory_pressure@host, cpu_stall@host
-- confirm: dmesg -T | grep -A30 'blocked for more than'; cat /proc/sys/kernel/hung_task_timeout_secs; ps -eo pid,stat,wchan:32,cmd | grep ' D'
-- remediation: A task stayed in uninterruptible sleep (D state) past the kernel's hung-task timeout: read its call trace for the driver or filesystem it waits on (mlx5/nvidia/NFS/block); fix that device first; a node whose tasks stay hung needs a reboot.
-- description: kernel hung-task reports: tasks blocked in D state for more than hung_task_timeout_secs (the task, its pid, how long)
-- source: Linux kernel/hung_task.c and Documentation/admin-guide/sysctl/kernel.rst (hung_task_timeout_secs, default 120 s): the kernel prints 'INFO: task X:pid blocked for more than N seconds' only after N seconds in D state, so every message is a finding (no threshold of ours); warning: the cause is the device or filesystem the task waits on
WITH e AS (
  SELECT host, task, task_pid, duration_s, ts, message, file, line_no
  FROM kernel_log WHERE event = 'hung_task'
)
SELECT host, 'hung tasks' AS subject, min(ts) AS start, coalesce(max(ts), min(ts)) AS "end",
       least(0.9, 0.6 + 0.05 * count(*)) AS score,
       count(*) || ' hung-task report(s) on ' || host || ': '
         || array_to_string(list(DISTINCT task || ':' || task_pid ORDER BY task || ':' || task_pid)[1:5], ', ')
         || CASE WHEN count(DISTINCT task || ':' || task_pid) > 5 THEN ', ...' ELSE '' END
         || ' blocked for more than ' || int_text(max(duration_s)) || ' s' AS summary,
       to_json({reports: count(*), tasks: list_sort(list(DISTINCT {task: task, pid: task_pid})), max_blocked_s: max(duration_s),
                pid: CASE WHEN count(DISTINCT task_pid) = 1 THEN any_value(task_pid) END,
                first_message: arg_min(message, {t: ts, f: file, l: line_no}),
                first: {file: arg_min(file, {t: ts, f: file, l: line_no}), line_no: arg_min(line_no, {t: ts, f: file, l: line_no})}})::VARCHAR AS evidence
FROM e GROUP BY host
ORDER BY start
