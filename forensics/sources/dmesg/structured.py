"""Readers of the structured kernel log shapes: raw ``/dev/kmsg`` records and ``journalctl -o json``.

``/dev/kmsg`` (Documentation/ABI/testing/dev-kmsg): ``prio,seq,usec,flags[,...];message``, the
priority holding facility (``prio >> 3``) and level (``prio & 7``), ``usec`` the monotonic time in
microseconds (``boot_s``), flags ``-`` (a record), ``c`` (a fragment continuing the record before,
older kernels) or ``+``. The record's dictionary follows it on lines starting with a space
(`` SUBSYSTEM=pci``, `` DEVICE=+pci:0000:0a:00.0``): they are structure, not messages, and a
``+pci:`` device fills ``pci_addr`` where the message names none (parser.py attaches them).

``journalctl -o json``: one object per line (``MESSAGE``, ``__REALTIME_TIMESTAMP`` in microseconds
since the epoch, exact; ``_SOURCE_MONOTONIC_TIMESTAMP`` (the kernel's own time, else
``__MONOTONIC_TIMESTAMP``) as ``boot_s``, ``_HOSTNAME``, ``PRIORITY``, ``SYSLOG_FACILITY``,
``SYSLOG_IDENTIFIER``, ``_PID``, ``_TRANSPORT``, ``_KERNEL_DEVICE``). Kernel entries
(``_TRANSPORT=kernel``) go to ``kernel_log``, the others to ``syslog``.
"""
from __future__ import annotations

import polars as pl

from forensics.sources._base import ParseContext
from forensics.sources.dmesg.prefixes import FACILITIES, LEVELS, RE_IDENT, RE_KMSG, _match
from forensics.sources.dmesg.readers import _after, _boot_ts_from_seconds, _finish

_FAC = dict(enumerate(FACILITIES))
_LVL = dict(enumerate(LEVELS))
_REST = ("line_no", "text", "rest", "pri", "dfac", "dlvl")


def _seconds(usec: pl.Expr) -> pl.Expr:
    """Microseconds -> seconds as the decimal text reads (a float division would round 206764314 to
    206.76431399999998)."""
    return pl.concat_str([(usec // 1_000_000).cast(pl.String), pl.lit("."),
                          (usec % 1_000_000).cast(pl.String).str.zfill(6)]).cast(pl.Float64)


def _facility(pri: pl.Expr) -> pl.Expr:
    return pri.floordiv(8).replace_strict(_FAC, default=None, return_dtype=pl.String)


def _level(pri: pl.Expr) -> pl.Expr:
    return pri.mod(8).replace_strict(_LVL, default=None, return_dtype=pl.String)


def _parse_kmsg(df: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    df = df.with_columns(_match(pl.col("rest"), RE_KMSG).alias("pfx"))
    ok = df.filter(pl.col("pfx").is_not_null())
    head = pl.col("pfx").str.strip_suffix(";").str.split(",")
    ok = ok.with_columns(head.list.get(0).cast(pl.Int32, strict=False).alias("_pri"),
                         _seconds(head.list.get(2).cast(pl.Int64, strict=False)).alias("_bs"))
    ok = ok.with_columns(pl.when(pl.col("_pri") <= 191).then(pl.col("_pri")).alias("_pri"),
                         _after("rest", "pfx").alias("_msg"))
    # records userspace wrote to /dev/kmsg (facility other than kern: systemd-journald[301]: ...) are
    # that program's, not the kernel's
    user = (pl.col("_pri") >= 8).fill_null(False)
    ok = ok.with_columns(pl.when(user).then(pl.col("_msg").str.extract_groups(RE_IDENT)).alias("_u")).unnest("_u")
    is_user = user & pl.col("hpfx").is_not_null()
    out = _finish(ok, raw_time=pl.col("pfx").str.strip_suffix(";"),
                  message=pl.when(is_user).then(pl.col("_msg").str.slice(pl.col("hpfx").str.len_chars()))
                  .otherwise(pl.col("_msg")),
                  ident=pl.when(is_user).then(pl.col("ident")), pid=pl.when(is_user).then(pl.col("pid").cast(pl.Int64, strict=False)),
                  ts=_boot_ts_from_seconds(pl.col("_bs"), ctx), ts_quality=pl.lit("boot" if ctx.boot_time else "none"),
                  boot_s=pl.col("_bs"), facility=_facility(pl.col("_pri")), level=_level(pl.col("_pri")),
                  bad=pl.when(pl.col("_pri").is_null()).then(pl.lit("kmsg priority out of range")))
    return out, df.filter(pl.col("pfx").is_null()).select(*_REST)


def _jget(key: str) -> pl.Expr:
    return pl.col("rest").str.json_path_match(f"$.{key}")


def _parse_journal_json(df: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    df = df.with_columns(_jget("__REALTIME_TIMESTAMP").alias("_rt"), _jget("MESSAGE").alias("_msg"))
    ok = df.filter(pl.col("_rt").is_not_null() & pl.col("_msg").is_not_null())
    ok = ok.with_columns(
        _jget("_TRANSPORT").alias("_tr"), _jget("SYSLOG_IDENTIFIER").alias("_id"),
        _jget("PRIORITY").cast(pl.Int32, strict=False).alias("_lvl"),
        _jget("SYSLOG_FACILITY").cast(pl.Int32, strict=False).alias("_fac"),
        _jget("_HOSTNAME").alias("_host"), _jget("_PID").cast(pl.Int64, strict=False).alias("_pid"),
        # the kernel's own printk time (dmesg's seconds since boot) where journald recorded it
        pl.coalesce(_jget("_SOURCE_MONOTONIC_TIMESTAMP"), _jget("__MONOTONIC_TIMESTAMP"))
        .cast(pl.Int64, strict=False).alias("_mono"),
        _jget("_KERNEL_DEVICE").alias("_dev"),
        pl.col("_rt").cast(pl.Int64, strict=False).alias("_us"),
    )
    kernel = (pl.col("_tr") == "kernel").fill_null(False)
    ts = pl.from_epoch(pl.col("_us"), time_unit="us").dt.replace_time_zone("UTC")
    # a MESSAGE that is not valid UTF-8 is printed as an array of byte values
    binary = pl.col("_msg").str.starts_with("[")
    out = _finish(
        ok, host_c=pl.col("_host"), raw_time=pl.col("_rt"), ts=ts, ts_quality=pl.lit("exact"),
        boot_s=pl.when(kernel).then(_seconds(pl.col("_mono"))),
        facility=pl.col("_fac").replace_strict(_FAC, default=None, return_dtype=pl.String),
        level=pl.col("_lvl").replace_strict(_LVL, default=None, return_dtype=pl.String),
        ident=pl.when(kernel).then(pl.lit("kernel")).otherwise(pl.coalesce(pl.col("_id"), pl.col("_tr"))),
        pid=pl.col("_pid"), dev=pl.col("_dev"), message=pl.col("_msg"),
        bad=pl.when(pl.col("_us").is_null()).then(pl.lit("journal __REALTIME_TIMESTAMP is not a number"))
        .when(binary).then(pl.lit("journal MESSAGE is binary (an array of bytes)")),
    )
    return out, df.filter(pl.col("_rt").is_null() | pl.col("_msg").is_null()).select(*_REST)
