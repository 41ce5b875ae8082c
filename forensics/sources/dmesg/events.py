"""Kernel signatures as fields a detector can read (classification only; no detection here).

``event`` names what a message reports, from its text as the kernel and drivers print it:

============================  =====================================================================
mlx5_recovery_aborted         ``mlx5_health_try_recover:...: health recovery flow aborted, PCI reads
                              still not working`` (or ``..., PCI channel offline``)
mlx5_fatal_error              ``poll_health:...: Fatal error 1 detected``, ``device's health
                              compromised - reached miss count``
mlx5_fw_syndrome              ``print_health_info:...: synd 0xff: unrecognized error`` (the firmware
                              syndrome and its text in ``event_detail``)
mlx5_cmd_timeout              ``wait_func:...: ACCESS_REG(0x805) timeout. Will cause a leak of a command
                              resource`` (the command in ``event_detail``)
hung_task                     ``INFO: task kmcheck:72 blocked for more than 122 seconds.`` (``task``,
                              ``task_pid``, ``duration_s``)
soft_lockup                   ``watchdog: BUG: soft lockup - CPU#2 stuck for 23s! [kworker/2:1:25629]``
                              (``cpu``, ``duration_s``, ``task``, ``task_pid``)
hard_lockup                   ``Watchdog detected hard LOCKUP on cpu 12`` (``cpu``)
rcu_stall                     ``rcu: INFO: rcu_sched detected stalls on CPUs/tasks:``, ``INFO: rcu_sched
                              self-detected stall on CPU``, ``... detected stall on CPU 1 (t=15000
                              jiffies)`` (``cpu`` when printed on the line)
nvrm_fallen_off_bus           an NVRM line that is not an Xid: ``NVRM: The NVIDIA GPU 0000:b3:00.0`` ...
                              ``NVRM: fallen off the bus and is not responding to commands.``
nvrm_init_failed              ``NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x...)``,
                              ``NVRM: The NVIDIA probe routine failed for 1 device(s).``
aer_corrected                 ``AER: [Multiple ]Corrected error [message ]received[: from] 0000:01:00.0``
                              (``Correctable`` in newer kernels)
aer_nonfatal                  ``AER: [Multiple ]Uncorrected (Non-Fatal) error received ...``
aer_fatal                     ``AER: [Multiple ]Uncorrected (Fatal) error received ...``
aer_recovery_failed           ``AER: device recovery failed``, ``AER: can't recover (no error_detected
                              callback)``
============================  =====================================================================

``event_device``: the PCI address of the device an AER error was received from (the port that
prints it is ``pci_addr``). Lines without an event keep these columns null; Xid lines keep theirs in
``xid``. Everything is a function of the message alone (worked on once per distinct message).
"""
from __future__ import annotations

import polars as pl

# one cheap pass (Aho-Corasick over literals): only messages holding one of these are looked at further
_GATE = ["health recovery flow aborted", "Fatal error", "health compromised", "synd 0x", ") timeout.",
         "blocked for more than", "soft lockup", "hard LOCKUP", "detected stall", "NVRM", "AER: "]

_EVENTS = (  # (event, pattern); the first that matches names the message
    ("mlx5_recovery_aborted", r"health recovery flow aborted, PCI (?:reads still not working|channel offline)"),
    ("mlx5_fatal_error", r"poll_health.*Fatal error [0-9]+ detected|health compromised - reached miss count"),
    ("mlx5_fw_syndrome", r"print_health_info.*: synd 0x[0-9a-fA-F]+"),
    ("mlx5_cmd_timeout", r"^mlx5_core .*: [A-Z][A-Z0-9_]*\(0x[0-9a-fA-F]+\) timeout\."),
    ("hung_task", r"\btask .+:[0-9]+ blocked for more than [0-9]+ seconds"),
    ("soft_lockup", r"soft lockup - CPU#[0-9]+ stuck for [0-9]+s"),
    ("hard_lockup", r"Watchdog detected hard LOCKUP on cpu [0-9]+"),
    ("rcu_stall", r"\brcu_[a-z_]+ (?:self-)?detected stalls? on CPU"),
    ("nvrm_fallen_off_bus", r"^NVRM: (?:.*fallen off the bus|The NVIDIA GPU [0-9a-fA-F:.]+$)"),
    ("nvrm_init_failed", r"^NVRM: (?:.*RmInitAdapter failed|The NVIDIA probe routine failed)"),
    ("aer_corrected", r"AER: (?:Multiple )?Correct(?:ed|able) error (?:message )?received"),
    ("aer_nonfatal", r"AER: (?:Multiple )?Uncorrect(?:ed|able) \(Non-Fatal\) error (?:message )?received"),
    ("aer_fatal", r"AER: (?:Multiple )?Uncorrect(?:ed|able) \(Fatal\) error (?:message )?received"),
    ("aer_recovery_failed", r"AER: (?:device recovery failed|can't recover)"),
)

EVENT_COLUMNS = {"event": pl.String, "event_detail": pl.String, "event_device": pl.String, "task": pl.String,
                 "task_pid": pl.Int64, "cpu": pl.Int32, "duration_s": pl.Float64}


def add_events(df: pl.DataFrame) -> pl.DataFrame:
    """`df` (with `message` and `xid`) with EVENT_COLUMNS: worked out on the few messages that pass
    the gate and scattered back (null elsewhere)."""
    gate = df["message"].str.contains_any(_GATE).fill_null(False) & df["xid"].is_null()
    idx = gate.arg_true()
    if not len(idx):
        return df.with_columns(null_events())
    lf = df.select("message")[idx].lazy()
    for step in _event_steps(pl.col("message")):
        lf = lf.with_columns(step)
    sub = lf.select(list(EVENT_COLUMNS)).collect()
    return df.with_columns(pl.repeat(None, df.height, dtype=d, eager=True).alias(c).scatter(idx, sub[c])
                           for c, d in EVENT_COLUMNS.items())


def null_events() -> list[pl.Expr]:
    """EVENT_COLUMNS as typed nulls (for rows no event can be on)."""
    return [pl.lit(None, dtype=d).alias(c) for c, d in EVENT_COLUMNS.items()]


def _event_steps(m: pl.Expr) -> list[list[pl.Expr]]:
    """with_columns steps adding EVENT_COLUMNS from the message `m` (of messages past the gate)."""
    steps = [[m.alias("_evm")]]
    g = pl.col("_evm")
    ev = pl.lit(None, dtype=pl.String)
    for name, rx in reversed(_EVENTS):
        ev = pl.when(g.str.contains(rx).fill_null(False)).then(pl.lit(name)).otherwise(ev)
    steps.append([ev.alias("event")])
    e = pl.col("event")
    hung = pl.when(e == "hung_task").then(g.str.extract_groups(
        r"\btask (?P<t>.+):(?P<p>[0-9]+) blocked for more than (?P<s>[0-9]+) seconds"))
    soft = pl.when(e == "soft_lockup").then(g.str.extract_groups(
        r"CPU#(?P<c>[0-9]+) stuck for (?P<s>[0-9]+)s!(?: \[(?P<t>.+):(?P<p>[0-9]+)\])?"))
    steps.append([hung.alias("_hung"), soft.alias("_soft")])
    h, s = pl.col("_hung").struct, pl.col("_soft").struct
    cpu = (pl.when(e == "soft_lockup").then(s.field("c"))
           .when(e == "hard_lockup").then(g.str.extract(r"hard LOCKUP on cpu ([0-9]+)", 1))
           .when(e == "rcu_stall").then(g.str.extract(r"stall on CPU ([0-9]+)", 1)))
    detail = (pl.when(e == "mlx5_fw_syndrome").then(g.str.extract(r": synd (0x[0-9a-fA-F]+.*)$", 1))
              .when(e == "mlx5_cmd_timeout").then(g.str.extract(r": ([A-Z][A-Z0-9_]*\(0x[0-9a-fA-F]+\)) timeout\.", 1))
              .when(e == "mlx5_fatal_error").then(g.str.extract(r"(Fatal error [0-9]+|health compromised)", 1)))
    device = pl.when(e.str.starts_with("aer_")).then(
        g.str.extract(r"received(?::| from) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])", 1).str.to_lowercase())
    steps.append([
        detail.alias("event_detail"), device.alias("event_device"),
        pl.coalesce(h.field("t"), s.field("t")).alias("task"),
        pl.coalesce(h.field("p"), s.field("p")).cast(pl.Int64, strict=False).alias("task_pid"),
        cpu.cast(pl.Int32, strict=False).alias("cpu"),
        pl.coalesce(h.field("s"), s.field("s")).cast(pl.Float64, strict=False).alias("duration_s"),
    ])
    return steps
