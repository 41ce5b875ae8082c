-- nic_signals: per port and sample, the NIC signals the HTML report and the Perfetto export chart,
-- classified by nic_counter_signal() as detection classifies them (so a chart and a rule cannot
-- disagree on what a pause frame or a drop is). Several counters count the same pause frames
-- (mlx5 rx_prio3_pause and rx_pause_ctrl_phy): the largest rate per direction is the port's pause
-- rate; drops and errors are summed over their counters; bytes are the largest port byte counter
-- per direction. Per-queue counters are left out (the port counters include them).
CREATE OR REPLACE VIEW nic_signals AS
WITH r AS (
    SELECT host, iface, ts, ts_aligned, rate_per_s, nic_counter_signal(counter) AS signal, nic_counter_dir(counter) AS dir
    FROM nic_rates
    WHERE queue IS NULL AND class IN ('pause', 'drop', 'error', 'bytes')
)
SELECT host, iface, ts, ts_aligned,
       max(rate_per_s) FILTER (WHERE signal = 'pause_frames' AND dir = 'rx') AS rx_pause_per_s,
       max(rate_per_s) FILTER (WHERE signal = 'pause_frames' AND dir = 'tx') AS tx_pause_per_s,
       sum(rate_per_s ORDER BY rate_per_s) FILTER (WHERE signal = 'drops') AS drops_per_s,
       sum(rate_per_s ORDER BY rate_per_s) FILTER (WHERE signal = 'errors') AS errors_per_s,
       max(rate_per_s) FILTER (WHERE signal = 'bytes' AND dir = 'rx') AS rx_bytes_per_s,
       max(rate_per_s) FILTER (WHERE signal = 'bytes' AND dir = 'tx') AS tx_bytes_per_s
FROM r WHERE signal IN ('pause_frames', 'drops', 'errors', 'bytes')
GROUP BY host, iface, ts, ts_aligned;
