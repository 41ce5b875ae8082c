"""One reader per kernel log shape (dmesg raw / -T / iso, journalctl and syslog short forms, OpenWrt
logread): each takes the lines routed to it and returns (parsed rows, lines it does not read)."""
from __future__ import annotations

import datetime as dt

import polars as pl

from forensics.sources._base import ParseContext, local_to_utc, unparsed_frame
from forensics.sources._bounded import to_float
from forensics.sources.dmesg.months import month_number
from forensics.sources.dmesg.prefixes import (
    LEVEL_ALIASES,
    RE_CTIME,
    RE_HOST_IDENT,
    RE_IDENT,
    RE_INNER_BOOT,
    RE_ISO,
    RE_TAG,
    RE_LOGREAD,
    RE_PROMPT,
    RE_RAW,
    RE_SHORT,
    RE_SHORT_YEAR,
    _match,
)

NAME = "dmesg"
_UTC = pl.Datetime("us", "UTC")

def _micros(frac: pl.Expr) -> pl.Expr:
    """Digits after the decimal point -> microseconds (truncated to 6 digits)."""
    return frac.str.slice(0, 6).str.pad_end(6, "0").cast(pl.Int64, strict=False).fill_null(0)


def _boot_seconds(sec: pl.Expr, frac: pl.Expr) -> pl.Expr:
    return to_float(pl.concat_str([sec, pl.lit("."), frac]))  # (past a double's range: null, not inf)


def _boot_ts_from_seconds(seconds: pl.Expr, ctx: ParseContext) -> pl.Expr:
    """boot time + seconds since boot (float seconds as printed: exact to the microsecond up to ~10^9 s)."""
    if ctx.boot_time is None:
        return pl.lit(None, dtype=_UTC)
    bt = ctx.boot_time
    bt = bt.replace(tzinfo=dt.timezone.utc) if bt.tzinfo is None else bt.astimezone(dt.timezone.utc)
    return pl.lit(bt).cast(_UTC) + pl.duration(microseconds=(seconds * 1_000_000).round(0).cast(pl.Int64))


def _naive(year: pl.Expr, mon: pl.Expr, day: pl.Expr, hms: pl.Expr) -> pl.Expr:
    """year, month abbreviation (any locale months.py knows), day, 'HH:MM:SS' -> naive datetime."""
    text = pl.concat_str([year, pl.lit("-"), month_number(mon).cast(pl.String).str.zfill(2), pl.lit("-"),
                          day.str.zfill(2), pl.lit(" "), hms])
    return text.str.strptime(pl.Datetime("us"), "%Y-%m-%d %H:%M:%S", strict=False)


# ts_quality of local times whose year was not printed (syslog, journalctl short): the year is
# ctx.year (--year, or the bundle's capture year) or the capture time's with the month rolled back
YEAR_INFERRED = "local_year_inferred"


def _year_for(mon: pl.Expr, ctx: ParseContext) -> pl.Expr | None:
    """Year for syslog/journal times that print none: ctx.year, else the year of the capture time
    (or of the file's modification time, hint "file_time"), a month after that month belonging to
    the year before."""
    if ctx.year is not None:
        return pl.lit(str(int(ctx.year)))
    cap = ctx.capture_time or ctx.hints.get("file_time")
    if not isinstance(cap, dt.datetime):
        return None
    month = month_number(mon)
    return pl.when(month > cap.month).then(pl.lit(cap.year - 1)).otherwise(pl.lit(cap.year)).cast(pl.String)


_PARSED_SCHEMA = {
    "line_no": pl.Int64, "host_c": pl.String, "ident": pl.String, "raw_time": pl.String,
    "ts": _UTC, "ts_quality": pl.String, "boot_s": pl.Float64, "facility": pl.String,
    "level": pl.String, "message": pl.String, "bad": pl.String,
    "pri": pl.Int32, "dfac": pl.String, "dlvl": pl.String, "pid": pl.Int64, "dev": pl.String,
}


def _empty_parsed() -> pl.DataFrame:
    return pl.DataFrame(schema=_PARSED_SCHEMA)


NO_PREFIX = "no kernel log prefix (dmesg/journalctl/syslog)"
PROMPT = "shell prompt or command line, not kernel log output"


def _no_prefix(lines: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    reason = pl.when(pl.col("text").str.contains(RE_PROMPT)).then(pl.lit(PROMPT)).otherwise(pl.lit(NO_PREFIX))
    return unparsed_frame(lines.select("line_no", "text"), reason, ctx, NAME)


def _finish(df: pl.DataFrame, **exprs: pl.Expr) -> pl.DataFrame:
    """Select the common columns of a parsed subset (missing ones null)."""
    names = df.collect_schema().names() if isinstance(df, pl.LazyFrame) else df.columns
    cols = []
    for name, dtype in _PARSED_SCHEMA.items():
        strict = name != "pid"  # a pid's digits beyond Int64: null, as events' task_pid (no pid is; PID_MAX_LIMIT 2^22)
        if name in exprs:
            cols.append(exprs[name].cast(dtype, strict=strict).alias(name))
        elif name in names:
            cols.append(pl.col(name).cast(dtype, strict=strict))
        else:
            cols.append(pl.lit(None, dtype=dtype).alias(name))
    return df.select(cols)


def _after(col: str, pfx: str) -> pl.Expr:
    return pl.col(col).str.slice(pl.col(pfx).str.len_chars())


def _syslog_tail(df: pl.DataFrame, with_host: bool) -> pl.DataFrame:
    """Split 'host ident[pid]: ' (or 'ident: ') and the kernel's inner '[ 12.3] ' off `msg0`."""
    rx = RE_HOST_IDENT if with_host else RE_IDENT
    df = df.with_columns(pl.col("msg0").str.extract_groups(rx).alias("_h")).unnest("_h")
    if not with_host:
        df = df.with_columns(pl.lit(None, dtype=pl.String).alias("host"))
    elif df["sev"].null_count() < df.height:  # SONiC's "host NOTICE program:": the record's level
        df = df.with_columns(pl.col("sev").replace_strict(LEVEL_ALIASES, default=None, return_dtype=pl.String)
                             .alias("level"))
    else:  # a journal line whose host was cut out of the paste: "Feb 12 00:48:02 kernel: ..."
        nohost = pl.col("hpfx").is_null() & pl.col("msg0").str.starts_with("kernel: ")
        df = df.with_columns(pl.when(nohost).then(pl.lit("kernel: ")).otherwise(pl.col("hpfx")).alias("hpfx"),
                             pl.when(nohost).then(pl.lit("kernel")).otherwise(pl.col("ident")).alias("ident"))
    df = df.with_columns(
        pl.when(pl.col("hpfx").is_not_null()).then(_after("msg0", "hpfx")).otherwise(pl.col("msg0")).alias("msg1"))
    df = df.with_columns(pl.col("msg1").str.extract_groups(RE_INNER_BOOT).alias("_b")).unnest("_b")
    kernel = pl.col("ident") == "kernel"
    return df.with_columns(
        pl.when(kernel & pl.col("ipfx").is_not_null()).then(_after("msg1", "ipfx")).otherwise(pl.col("msg1"))
        .alias("message"),
        pl.when(kernel).then(_boot_seconds(pl.col("isec"), pl.col("ifrac"))).alias("boot_s"),
        pl.when(pl.col("hpfx").is_null()).then(pl.lit("no host/program after the time")).alias("bad"),
    )


# --- the variants -------------------------------------------------------------------------------------

def _parse_raw(df: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    df = df.with_columns(_match(pl.col("rest"), RE_RAW).alias("pfx"))
    ok = df.filter(pl.col("pfx").is_not_null())
    ok = ok.with_columns(_after("rest", "pfx").alias("msg0"), _match(pl.col("pfx"), r"\+?[0-9]+\.[0-9]+").alias("rt"))
    # a "-H"/"--reltime" delta since the message before is no time since boot
    ok = ok.with_columns(pl.when(~pl.col("rt").str.starts_with("+")).then(to_float(pl.col("rt")))
                         .alias("_bs"))
    ts = _boot_ts_from_seconds(pl.col("_bs"), ctx)
    quality = pl.when(pl.col("_bs").is_not_null()).then(pl.lit("boot" if ctx.boot_time else "none")).otherwise(
        pl.lit("none"))
    # journalctl -o short-monotonic: "[  12.345678] host kernel: msg"
    mono = ok["msg0"].str.contains(r"^[^ \[\]:]+ kernel: ").fill_null(False)
    parts = []
    if mono.any():
        # other programs' lines count as journal lines only for a host its kernel lines name
        # (a raw dmesg "e1000e eth0: renamed" has the same shape)
        hosts = ok.filter(mono)["msg0"].str.extract(r"^([^ \[\]:]+) ", 1).unique().to_list()
        mono = mono | (ok["msg0"].str.extract(r"^([^ \[\]:]+) [A-Za-z][A-Za-z0-9_.@/-]*(?:\[[0-9]+\])?: ", 1)
                       .is_in(hosts).fill_null(False))
        j = _syslog_tail(ok.filter(mono), with_host=True)
        parts.append(_finish(j, host_c=pl.col("host"), raw_time=pl.col("rt"), ts=ts, ts_quality=quality,
                             boot_s=pl.col("_bs")))
        ok = ok.filter(~mono)
    parts.append(_finish(ok, raw_time=pl.col("rt"), message=pl.col("msg0"), ts=ts, ts_quality=quality,
                         boot_s=pl.col("_bs")))
    return pl.concat(parts), df.filter(pl.col("pfx").is_null()).select("line_no", "text", "rest", "pri", "dfac", "dlvl")


def _parse_ctime(df: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    df = df.with_columns(pl.col("rest").str.extract_groups(RE_CTIME).alias("_g")).unnest("_g")
    ok = df.filter(pl.col("pfx").is_not_null())
    naive = _naive(pl.col("year"), pl.col("mon"), pl.col("day"), pl.col("hms"))
    ok = ok.with_columns(naive.alias("_naive"))
    ok = ok.with_columns(local_to_utc(pl.col("_naive"), ctx.tz).alias("_ts"))
    out = _finish(ok, raw_time=pl.col("rt"), message=_after("rest", "pfx"), ts=pl.col("_ts"),
                  ts_quality=pl.when(pl.col("_ts").is_null()).then(pl.lit("none")).otherwise(pl.lit("local")),
                  bad=pl.when(pl.col("_naive").is_null()).then(pl.lit("dmesg -T time does not convert")))
    return out, df.filter(pl.col("pfx").is_null()).select("line_no", "text", "rest", "pri", "dfac", "dlvl")


def _iso_ts(base: pl.Expr, frac: pl.Expr, tz: pl.Expr) -> pl.Expr:
    naive = base.str.strptime(pl.Datetime("us"), "%Y-%m-%dT%H:%M:%S", strict=False)
    tzc = tz.str.replace(":", "", literal=True)
    sign = pl.when(tzc.str.starts_with("-")).then(-1).otherwise(1)
    off_min = pl.when(tzc == "Z").then(0).otherwise(
        sign * (tzc.str.slice(1, 2).cast(pl.Int64, strict=False) * 60 + tzc.str.slice(3, 2).cast(pl.Int64, strict=False)))
    utc = naive + pl.duration(microseconds=_micros(frac)) - pl.duration(minutes=off_min)
    return utc.dt.replace_time_zone("UTC")


def _iso_fixed_ts(rest: pl.Expr, off_min: pl.Expr | int | None = None) -> pl.Expr:
    """_iso_ts of a line starting with RE_ISO_FIXED, from fixed positions (`off_min`: the zone offset
    of every line in minutes when known, else read from each line)."""
    naive = rest.str.head(19).str.strptime(pl.Datetime("us"), "%Y-%m-%dT%H:%M:%S", strict=False)
    if off_min is None:
        sign = pl.when(rest.str.slice(26, 1) == "-").then(-1).otherwise(1)
        off_min = sign * (rest.str.slice(27, 2).cast(pl.Int64, strict=False) * 60
                          + rest.str.slice(30, 2).cast(pl.Int64, strict=False))
    micros = rest.str.slice(20, 6).cast(pl.Int64, strict=False).fill_null(0)
    utc = naive + pl.duration(microseconds=micros)
    if not isinstance(off_min, int) or off_min:
        utc = utc - pl.duration(minutes=off_min)
    return utc.dt.replace_time_zone("UTC")


def _parse_iso_fixed(df: pl.DataFrame) -> pl.DataFrame:
    """Lines whose `rest` matches RE_ISO_FIXED (what `dmesg --time-format iso` prints): the prefix is
    sliced, not captured; the rows are those _parse_iso makes of them."""
    r = pl.col("rest")
    # one capture, one zone: the offset of the first line, when every line has it
    tz0 = df["rest"][0][26:32]
    off_min = None
    if df.select((r.str.slice(26, 6) == tz0).all()).item():
        off_min = (-1 if tz0[0] == "-" else 1) * (int(tz0[1:3]) * 60 + int(tz0[4:6]))
    return _finish(df.lazy().with_columns(_iso_fixed_ts(r, off_min).alias("_ts")), raw_time=r.str.head(32),
                   message=r.str.slice(33), ts=pl.col("_ts"), ts_quality=pl.lit("exact"),
                   bad=pl.when(pl.col("_ts").is_null()).then(pl.lit("ISO time does not convert"))).collect()


def _parse_iso(df: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    df = df.with_columns(pl.col("rest").str.extract_groups(RE_ISO).alias("_g")).unnest("_g")
    ok = df.filter(pl.col("pfx").is_not_null()).with_columns(
        _iso_ts(pl.col("base"), pl.col("frac"), pl.col("tz")).alias("_ts"),
        _after("rest", "pfx").alias("msg0"))
    bad_ts = pl.when(pl.col("_ts").is_null()).then(pl.lit("ISO time does not convert"))
    # dmesg --time-format iso always prints ",micros"; journal/syslog forms carry "host kernel: "
    is_dmesg = (pl.col("sep") == ",").fill_null(False)
    parts = [_finish(ok.filter(is_dmesg), raw_time=pl.col("rt"), message=pl.col("msg0"), ts=pl.col("_ts"),
                     ts_quality=pl.lit("exact"), bad=bad_ts)]
    j = ok.filter(~is_dmesg)
    if j.height:
        j = _syslog_tail(j, with_host=True)
        parts.append(_finish(j, host_c=pl.col("host"), raw_time=pl.col("rt"), ts=pl.col("_ts"),
                             ts_quality=pl.lit("exact"), bad=pl.coalesce(bad_ts, pl.col("bad"))))
    return pl.concat(parts), df.filter(pl.col("pfx").is_null()).select("line_no", "text", "rest", "pri", "dfac", "dlvl")


def _parse_short(df: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    return _short(df, ctx, RE_SHORT)


def _parse_short_year(df: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """SONiC's year-first syslog time "2024 Feb 15 02:24:26.091224 host LEVEL prog: " (local time)."""
    may = df["rest"].str.contains(r"^[0-9]{4} [^\W\d_]").fill_null(False)  # (a cheap test before the captures)
    if not may.any():
        return _empty_parsed(), df
    if may.all():
        return _short(df, ctx, RE_SHORT_YEAR)
    out, rest = _short(df.filter(may), ctx, RE_SHORT_YEAR)
    return out, pl.concat([rest, df.filter(~may).select(rest.columns)])


def _short(df: pl.DataFrame, ctx: ParseContext, rx: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    df = df.with_columns(pl.col("rest").str.extract_groups(rx).alias("_g")).unnest("_g")
    ok = df.filter(pl.col("pfx").is_not_null()).with_columns(_after("rest", "pfx").alias("msg0"))
    ok = _syslog_tail(ok, with_host=True)
    printed = "year" in ok.columns
    year = pl.col("year") if printed else _year_for(pl.col("mon"), ctx)
    if year is None:
        ok = ok.with_columns(pl.lit(None, dtype=pl.Datetime("us")).alias("_naive"),
                             pl.lit(None, dtype=_UTC).alias("_ts"))
        bad_ts = pl.lit(None, dtype=pl.String)
    else:
        naive = _naive(year, pl.col("mon"), pl.col("day"), pl.col("hms"))
        naive = naive + pl.duration(microseconds=_micros(pl.col("frac")))
        ok = ok.with_columns(naive.alias("_naive"))
        ok = ok.with_columns(local_to_utc(pl.col("_naive"), ctx.tz).alias("_ts"))
        bad_ts = pl.when(pl.col("_naive").is_null()).then(pl.lit("syslog time does not convert"))
    out = _finish(ok, host_c=pl.col("host"), raw_time=pl.col("rt"), ts=pl.col("_ts"),
                  ts_quality=pl.when(pl.col("_ts").is_null()).then(pl.lit("none"))
                  .otherwise(pl.lit("local" if printed else YEAR_INFERRED)),
                  bad=pl.coalesce(pl.col("bad"), bad_ts))
    return out, df.filter(pl.col("pfx").is_null()).select("line_no", "text", "rest", "pri", "dfac", "dlvl")


def _parse_logread(df: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    df = df.with_columns(pl.col("rest").str.extract_groups(RE_LOGREAD).alias("_g")).unnest("_g")
    ok = df.filter(pl.col("pfx").is_not_null()).with_columns(_after("rest", "pfx").alias("msg0"))
    ok = _syslog_tail(ok, with_host=False)
    ok = ok.with_columns(_naive(pl.col("year"), pl.col("mon"), pl.col("day"), pl.col("hms")).alias("_naive"))
    ok = ok.with_columns(local_to_utc(pl.col("_naive"), ctx.tz).alias("_ts"))
    lvl = pl.col("slvl").replace_strict(LEVEL_ALIASES, default=None, return_dtype=pl.String)
    out = _finish(ok, raw_time=pl.col("rt"), ts=pl.col("_ts"), facility=pl.col("sfac"), level=lvl,
                  ts_quality=pl.when(pl.col("_ts").is_null()).then(pl.lit("none")).otherwise(pl.lit("local")),
                  bad=pl.coalesce(pl.col("bad"),
                                  pl.when(pl.col("_naive").is_null()).then(pl.lit("logread time does not convert"))))
    return out, df.filter(pl.col("pfx").is_null()).select("line_no", "text", "rest", "pri", "dfac", "dlvl")


# another program's journal/syslog record cut the same way: "wpa_supplicant[580]: rfkill: WLAN soft blocked"
# (the pid asked for: a line of prose or a "Note: " is not taken for a record)
RE_PROG_ONLY = r"^(?P<ppfx>(?P<pident>" + RE_TAG + r")\[(?P<ppid>[0-9]+)\]: ?)"


def _parse_kernel_only(df: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """'kernel: NVRM: Xid ...': a journal/syslog kernel line pasted without its time and host; beside
    such lines, other programs' records cut the same way ('ident[pid]: message', into syslog)."""
    df = df.with_columns(pl.col("rest").str.starts_with("kernel: ").alias("_k"))
    if df["_k"].any():
        df = df.with_columns(pl.col("rest").str.extract_groups(RE_PROG_ONLY).alias("_p")).unnest("_p")
        df = df.with_columns((pl.col("_k") | pl.col("ppfx").is_not_null()).alias("_k"))
    else:
        df = df.with_columns(pl.lit(None, dtype=pl.String).alias(c) for c in ("ppfx", "pident", "ppid"))
    prog = pl.col("ppfx").is_not_null() & ~pl.col("rest").str.starts_with("kernel: ")
    ok = df.filter(pl.col("_k")).with_columns(
        pl.when(prog).then(_after("rest", "ppfx")).otherwise(pl.col("rest").str.slice(8)).alias("msg1"))
    # the kernel's own "[   10.881037] " after "kernel: " (a kern.log line cut before its host): its boot time
    ok = ok.with_columns(pl.when(~prog).then(pl.col("msg1").str.extract_groups(RE_INNER_BOOT)).alias("_b")).unnest("_b")
    out = _finish(ok, message=pl.when(pl.col("ipfx").is_not_null()).then(_after("msg1", "ipfx")).otherwise(pl.col("msg1")),
                  boot_s=_boot_seconds(pl.col("isec"), pl.col("ifrac")),
                  ident=pl.when(prog).then(pl.col("pident")), pid=pl.when(prog).then(pl.col("ppid")),
                  ts_quality=pl.lit("none"))
    return out, df.filter(~pl.col("_k")).select("line_no", "text", "rest", "pri", "dfac", "dlvl")
