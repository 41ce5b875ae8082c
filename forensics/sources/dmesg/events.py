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
nvswitch_sxid                 ``nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM
                              Fault Up`` (``event_detail``: the SXid, Fatal/Non-fatal and the text; the
                              ``Severity ...``/``Data {...}`` lines that follow a SXid are not events)
============================  =====================================================================

``event_device``: the PCI address of the device an AER error was received from (the port that
prints it is ``pci_addr``). Lines without an event keep these columns null; Xid lines keep theirs in
``xid``. Everything is a function of the message alone (worked on once per distinct message).
"""
from __future__ import annotations

import re

import polars as pl

from forensics.sources._bounded import float_or_none, int_or_none, to_float

# one cheap pass (Aho-Corasick over literals): only messages holding one of these are looked at further
_GATE = ["health recovery flow aborted", "Fatal error", "health compromised", "synd 0x", ") timeout.",
         "blocked for more than", "soft lockup", "hard LOCKUP", "detected stall", "NVRM", "AER: ", "SXid"]

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
    ("nvswitch_sxid", r"nvidia-nvswitch[0-9]+: SXid \(PCI:[0-9a-fA-F:.]+\): [0-9]+, (?:Fatal|Non-fatal),"),
)

_AER = ("aer_corrected", "aer_nonfatal", "aer_fatal", "aer_recovery_failed")
# (events, pattern): the first match of the pattern in a message of one of the events gives the
# columns its named groups are called after (null where a group took no part)
_DETAILS = (
    (("mlx5_fw_syndrome",), r": synd (?P<event_detail>0x[0-9a-fA-F]+.*)$"),
    (("mlx5_cmd_timeout",), r": (?P<event_detail>[A-Z][A-Z0-9_]*\(0x[0-9a-fA-F]+\)) timeout\."),
    (("mlx5_fatal_error",), r"(?P<event_detail>Fatal error [0-9]+|health compromised)"),
    (("hung_task",), r"\btask (?P<task>.+):(?P<task_pid>[0-9]+) blocked for more than (?P<duration_s>[0-9]+) seconds"),
    (("soft_lockup",), r"CPU#(?P<cpu>[0-9]+) stuck for (?P<duration_s>[0-9]+)s!(?: \[(?P<task>.+):(?P<task_pid>[0-9]+)\])?"),
    (("hard_lockup",), r"hard LOCKUP on cpu (?P<cpu>[0-9]+)"),
    (("rcu_stall",), r"stall on CPU (?P<cpu>[0-9]+)"),
    (("nvswitch_sxid",), r"SXid \(PCI:[0-9a-fA-F:.]+\): (?P<event_detail>[0-9]+, (?:Fatal|Non-fatal),.*)$"),
    (_AER, r"received(?::| from) (?P<event_device>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"),
)

EVENT_COLUMNS = {"event": pl.String, "event_detail": pl.String, "event_device": pl.String, "task": pl.String,
                 "task_pid": pl.Int64, "cpu": pl.Int32, "duration_s": pl.Float64}

# up to this many rows, add_events works in Python throughout; above it, up to this many messages past
# the gate are worked on with Python's re (patterns compiled once; 46 messages: 0.3 ms against 2.5-4 ms
# for the polars query, whose regexes are compiled on each call); more go through polars (a per-message
# cost a few times lower)
PY_MAX = 1024


def add_events(df: pl.DataFrame) -> pl.DataFrame:
    """`df` (with `message` and `xid`) with EVENT_COLUMNS: worked out on the few messages that pass
    the gate and scattered back (null elsewhere).

    Up to PY_MAX rows (the distinct messages of a big log, a small log) all of it is done in Python:
    the gate, the patterns and the columns (186 distinct messages of a 420 k-row log: best 0.9 against
    1.6 CPU ms with the gate and the scatter in polars, load ~55)."""
    if df.height <= PY_MAX:
        msgs = [m if x is None and m is not None and any(g in m for g in _GATE) else None
                for m, x in zip(df["message"].to_list(), df["xid"].to_list())]
        return df.hstack(events_python(msgs))
    gate = df["message"].str.contains_any(_GATE).fill_null(False) & df["xid"].is_null()
    idx = gate.arg_true()
    if not len(idx):
        return df.with_columns(null_events())
    msgs = df["message"].gather(idx)
    sub = events_python(msgs.to_list()) if len(idx) <= PY_MAX else events_polars(msgs)
    return df.with_columns(pl.repeat(None, df.height, dtype=d, eager=True).alias(c).scatter(idx, sub[c])
                           for c, d in EVENT_COLUMNS.items())


def null_events() -> list[pl.Expr]:
    """EVENT_COLUMNS as typed nulls (for rows no event can be on)."""
    return [pl.lit(None, dtype=d).alias(c) for c, d in EVENT_COLUMNS.items()]


def events_polars(msgs: pl.Series) -> pl.DataFrame:
    """EVENT_COLUMNS of messages (one row each), as polars expressions."""
    g = pl.col("m")
    ev = pl.lit(None, dtype=pl.String)
    for name, rx in reversed(_EVENTS):
        ev = pl.when(g.str.contains(rx).fill_null(False)).then(pl.lit(name)).otherwise(ev)
    e = pl.col("event")
    lf = pl.DataFrame({"m": msgs}, schema={"m": pl.String}).lazy().with_columns(ev.alias("event"))
    lf = lf.with_columns(pl.when(e.is_in(list(evs))).then(g.str.extract_groups(rx)).alias(f"_d{i}")
                         for i, (evs, rx) in enumerate(_DETAILS))
    cols = {c: [pl.col(f"_d{i}").struct.field(c) for i, (_, rx) in enumerate(_DETAILS) if f"(?P<{c}>" in rx]
            for c in EVENT_COLUMNS if c != "event"}
    out = [e] + [pl.coalesce(v).alias(c) for c, v in cols.items()]
    lf = lf.select(out).with_columns(pl.col("event_device").str.to_lowercase())
    return lf.select(to_float(pl.col(c)) if d == pl.Float64 else pl.col(c).cast(d, strict=False)  # (no inf)
                     for c, d in EVENT_COLUMNS.items()).collect()


_EVENTS_RE = [(name, re.compile(rx)) for name, rx in _EVENTS]
_DETAILS_RE = {}
for _evs, _rx in _DETAILS:
    for _ev in _evs:
        _DETAILS_RE.setdefault(_ev, []).append(re.compile(_rx))
_LIMITS = {"task_pid": 1 << 63, "cpu": 1 << 31}  # polars' strict=False cast: null out of range


def events_python(msgs: list[str | None]) -> pl.DataFrame:
    """events_polars(msgs), with Python's re (the same patterns and rules; for a few messages)."""
    cols = {c: [] for c in EVENT_COLUMNS}
    for m in msgs:
        row = dict.fromkeys(EVENT_COLUMNS)
        if m is not None:
            row["event"] = next((name for name, rx in _EVENTS_RE if rx.search(m)), None)
            for rx in _DETAILS_RE.get(row["event"], ()):
                hit = rx.search(m)
                for c, v in (hit.groupdict() if hit else {}).items():
                    if row[c] is None and v is not None:
                        row[c] = v
        for c in EVENT_COLUMNS:
            cols[c].append(row[c])
    cols["event_device"] = [v.lower() if v is not None else None for v in cols["event_device"]]
    for c, lim in _LIMITS.items():  # (out of range: null, as polars' cast)
        cols[c] = [int_or_none(v, -lim, lim - 1, signed=True) for v in cols[c]]
    cols["duration_s"] = [float_or_none(v) for v in cols["duration_s"]]  # (past a double's range: null, not inf)
    return pl.DataFrame(cols, schema=EVENT_COLUMNS)
