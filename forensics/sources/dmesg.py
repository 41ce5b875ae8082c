"""Kernel ring buffer and kernel syslog lines -> ``kernel_log``.

Variants read (line by line; one file may mix them):

- ``dmesg`` raw: ``[  360770.261344] mlx5_core 0000:18:00.0: ...`` (seconds since boot, also with the
  ``-d`` delta ``[ 12.345678 <  0.000012>]``). ``ts = ctx.boot_time + boot_s`` (quality ``boot``);
  without a boot time ``ts`` is null (quality ``none``) and ``boot_s`` is kept.
- ``dmesg -T`` / ``--ctime``: ``[Sun Feb 23 16:24:18 2025] ...``: local time, converted with ``ctx.tz``
  (UTC when unknown), quality ``local``.
- ``dmesg --time-format iso``: ``2025-01-21T04:41:44,283302+00:00 ...`` (comma before the
  microseconds), quality ``exact``.
- ``-x``/``--decode`` prefixes ``kern  :warn  : ...`` and ``-r``/``--raw`` priorities ``<4>[ ...] ...``
  (facility and level columns).
- ``journalctl -k``: ``-o short`` ``Nov 30 10:15:02 host kernel: ...`` and ``short-precise``
  (``.123456``): year from ``ctx.year`` or ``ctx.capture_time`` (a month after the capture month is
  the year before), local; ``short-iso``/``short-iso-precise`` ``2025-01-17T17:10:43+0000 host kernel:``
  exact; ``short-monotonic`` ``[  12.345678] host kernel: ...`` boot. ``-- Boot ... --`` /
  ``-- Logs begin ... --`` lines are structure.
- syslog files (``/var/log/kern.log``, ``messages``) in the same shapes, with the kernel's own
  ``[ 12.345678]`` kept as ``boot_s``; OpenWrt ``logread`` ``Sun Jun 11 23:02:41 2023 kern.info kernel:``.
  Lines of other programs (``netifd``, ``systemd``) go to ``unparsed`` (not kernel messages).
- Continuation lines (starting with whitespace: how dmesg and journalctl print the further lines
  of a multi-line record) are rows of their own with the time, level and subsystem of the message
  they continue; their ``raw_time`` is null because no time was printed on them.

Extracted from the message: ``subsystem`` (the driver of ``mlx5_core 0000:18:00.0: ...``, the word
before the first ``:`` as in ``NVRM:``/``IPv6:``, the module of ``nvidia-peermem fn:127 ...``),
``pci_addr`` normalised to ``dddd:bb:dd.f`` (``PCI:0000:18:00`` -> ``0000:18:00.0``), ``iface``
(``mlx5_core 0000:18:00.0 ens1f0np0: Link down``, ``eth0: renamed``, ``ADDRCONF(...): eth0:``),
and for ``NVRM: Xid (PCI:...): N, ...`` the Xid number and the text after it. The host of
journal/syslog lines is used when ``ctx.host`` is not given (``meta["hosts"]`` lists them).

Lines with no kernel log prefix (shell prompts, garbage, ``dmesg --time-format reltime``) go to
``unparsed`` with a reason. Lines are independent, so big files are parsed in chunks.

>>> from forensics.sources._base import ParseContext
>>> sample = (b"[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, "
...           b"Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).\\n"
...           b"[360772.410308] mlx5_core 0000:18:00.0: Port module event: module 0, Cable plugged\\n")
>>> res = parse(sample, ParseContext(host="node01", tz="America/New_York"))
>>> for r in res.tables["kernel_log"].iter_rows(named=True):
...     print(r["ts"], r["ts_quality"], r["boot_s"], r["subsystem"], r["pci_addr"], r["xid"])
2025-02-23 21:24:18+00:00 local None NVRM 0000:9b:00.0 119
None none 360772.410308 mlx5_core 0000:18:00.0 None
>>> res.tables["kernel_log"]["xid_text"][0][:40]
'pid=2024380, name=nvidia-smi, Timeout af'
>>> res.lines, res.unparsed.height
(2, 0)
"""
from __future__ import annotations

import datetime as dt
import re
from collections import Counter

import polars as pl

from forensics.layout import MARKER_PREFIX
from forensics.sources._base import (
    ParseContext,
    ParseResult,
    head_text,
    local_to_utc,
    result,
    split_lines,
    unparsed_frame,
)

NAME = "dmesg"
VERSION = 1
TABLES = ("kernel_log",)
DESCRIPTION = "kernel log: dmesg (raw, -T, --time-format iso, -x, -r), journalctl -k, kern.log/syslog"
CHUNKABLE = True
# ingest's chunks for this source: small enough that writing one chunk's rows overlaps parsing the next
# ones (100 MB end to end: 1.3 s at 16 MB, 1.6 s at ingest's default 64 MB; a third less memory)
CHUNK_BYTES = 16 << 20
CHUNK_NO_START = (b" ", b"\t", b"\r", b"\n")  # continuation (and blank) lines stay with the message before them

LEVELS = ("emerg", "alert", "crit", "err", "warn", "notice", "info", "debug")
# util-linux dmesg facility names, by code (priority >> 3)
FACILITIES = ("kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron",
              "authpriv", "ftp", "res0", "res1", "res2", "res3", "local0", "local1", "local2",
              "local3", "local4", "local5", "local6", "local7")
# spellings of syslog/logread levels -> the dmesg names above
LEVEL_ALIASES = {"warning": "warn", "error": "err", "panic": "emerg", **{x: x for x in LEVELS}}
MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}

_UTC = pl.Datetime("us", "UTC")

# --- line prefixes (anchored; applied to subsets routed by their first character) -------------
RE_PRI = r"^<([0-9]{1,3})>"
RE_DECODE = r"^(?P<dfac>[a-z0-9]+) *:(?P<dlvl>[a-z]+) *: "
RE_RAW = r"^\[ *[0-9]+\.[0-9]+(?: <[ 0-9.]+>)?\] ?"
RE_CTIME = (r"^(?P<pfx>\[(?P<rt>[A-Z][a-z]{2} (?P<mon>[A-Z][a-z]{2}) +(?P<day>[0-9]{1,2}) "
            r"(?P<hms>[0-9]{2}:[0-9]{2}:[0-9]{2}) (?P<year>[0-9]{4}))\] ?)")
RE_ISO = (r"^(?P<pfx>(?P<rt>(?P<base>[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})"
          r"(?:(?P<sep>[,.])(?P<frac>[0-9]{1,9}))?(?P<tz>Z|[+-][0-9]{2}:?[0-9]{2})) ?)")
# the same, fixed width: "2025-01-21T04:41:44,283302+00:00 " (dmesg's own iso format; sliced, not captured)
RE_ISO_FIXED = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{6}[+-][0-9]{2}:[0-9]{2}(?: |$)"
RE_SHORT = (r"^(?P<pfx>(?P<rt>(?P<mon>[A-Z][a-z]{2}) +(?P<day>[0-9]{1,2}) "
            r"(?P<hms>[0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.(?P<frac>[0-9]{1,9}))?) ?)")
RE_LOGREAD = (r"^(?P<pfx>(?P<rt>[A-Z][a-z]{2} (?P<mon>[A-Z][a-z]{2}) +(?P<day>[0-9]{1,2}) "
              r"(?P<hms>[0-9]{2}:[0-9]{2}:[0-9]{2}) (?P<year>[0-9]{4})) "
              r"(?P<sfac>[a-z0-9]+)\.(?P<slvl>[a-z]+) ?)")
# "host ident[pid]: " after a syslog/journal time
RE_HOST_IDENT = r"^(?P<hpfx>(?P<host>[^ \[\]:]+) (?P<ident>[A-Za-z][A-Za-z0-9_.@/-]*)(?:\[[0-9]+\])?: ?)"
# "ident: " with no host (OpenWrt logread)
RE_IDENT = r"^(?P<hpfx>(?P<ident>[A-Za-z][A-Za-z0-9_.@/-]*)(?:\[[0-9]+\])?: ?)"
# the kernel's own "[ 12.345678] " inside a syslog line
RE_INNER_BOOT = r"^(?P<ipfx>\[ *(?P<isec>[0-9]+)\.(?P<ifrac>[0-9]+)\] ?)"
RE_PROMPT = r"(?:^|[\s$#>])(?:sudo )?(?:dmesg|journalctl)(?:\s|$)"
RE_JOURNAL_HDR = r"^-- (?:Logs begin|Journal begins|Boot |Reboot|No entries|Subject|Defined-By)"

# --- message fields -------------------------------------------------------------------------------
# interface names as drivers print them (a digit or dash after the stem keeps module names out)
_IF = r"(?:eth|en[a-zA-Z]|ib|bond|wl|cali|veth|docker|br|virbr|swp|team|vxlan|vlan|tap|tun|lan|wan|em|" \
      r"p[0-9]|macvtap|ovs|flannel|cni|tailscale|wg|rmnet|hsn)[A-Za-z_.@]*[0-9-][A-Za-z0-9_.@-]*"
# dev_printk / netdev_printk: "driver busid[ ifname]: " (no spaces inside the three parts)
RE_DEV = r"^[A-Za-z][A-Za-z0-9_.-]* [^ ]*[0-9][^ ]*?(?: [A-Za-z][A-Za-z0-9_.@-]*)?: "
# "Word: " / "systemd[1]: " / "x86/fpu: "
RE_WORD = r"^[A-Za-z_][A-Za-z0-9_./-]*(?:\[[0-9]+\])?: "
# "nvidia-peermem nv_get_p2p_free_callback:127 ERROR ..."
RE_MODFN = r"^[a-z][a-z0-9_-]* [A-Za-z0-9_]+:[0-9]+[: ]"
# "[PF_RING] Module unloaded"
RE_BRACKET = r"^\[[A-Za-z][A-Za-z0-9_ -]*\] "
# where an interface name stands: after "driver busid: ", "word: " (and "ADDRCONF(...): "), or first
RE_IFACE = (r"^(?:[A-Za-z][A-Za-z0-9_.-]* [^ ]*[0-9][^ ]*?: |[A-Za-z][A-Za-z0-9_./-]*: "
            r"(?:ADDRCONF\([A-Z_]+\): )?)?" + _IF + r"[: ]")
RE_PCI_ANY = (r"(?:^|[^0-9A-Za-z:.]|PCI:)(?:[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?"
              r"|[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])(?:[^0-9A-Za-z]|$)")
RE_PCI_CORE = r"(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}(?:\.[0-7])?"
RE_PCI_FULL = r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$"
RE_XID_AT = r"^NVRM: Xid \((?:PCI:)?[0-9a-fA-F:.]+\): [0-9]{1,9}"

# sniffing (Python re on a few lines)
_SNIFF = [re.compile(p) for p in (
    r"^(?:<[0-9]{1,3}>)?(?:[a-z0-9]+ *:[a-z]+ *: )?\[ *[0-9]+\.[0-9]{3,9}(?: <[ 0-9.]+>)?\] ",
    r"^(?:[a-z0-9]+ *:[a-z]+ *: )?\[[A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}\] ",
    r"^(?:[a-z0-9]+ *:[a-z]+ *: )?[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{6}[+-][0-9]{2}:[0-9]{2} ",
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2}) [^ \[\]:]+ kernel: ",
    r"^[A-Z][a-z]{2} +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)? [^ \[\]:]+ kernel: ",
    r"^\[ *[0-9]+\.[0-9]+\] [^ \[\]:]+ kernel: ",
    r"^[A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]{1,2} [0-9:]{8} [0-9]{4} kern\.[a-z]+ kernel: ",
)]


# any program's syslog/journal line: counts for sniffing once a kernel line was seen (/var/log/messages)
_SNIFF_SYSLOG = re.compile(
    r"^(?:[A-Z][a-z]{2} +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})"
    r"|[A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]{1,2} [0-9:]{8} [0-9]{4} [a-z0-9]+\.[a-z]+)"
    r" (?:[^ \[\]:]+ )?[A-Za-z][A-Za-z0-9_.@/-]*(?:\[[0-9]+\])?: ")


def sniff(head: bytes) -> bool:
    """True when most of the first lines carry a dmesg/journalctl/syslog kernel prefix (in a syslog
    file such as /var/log/messages other programs' lines count too, once a kernel line was seen)."""
    lines = [ln for ln in head_text(head).splitlines()[:200]]
    if lines and len(head) >= 65536:
        lines = lines[:-1]  # may be cut mid-line
    hits = other = considered = 0
    for ln in lines:
        if not ln.strip() or ln.startswith(("-- ", MARKER_PREFIX)) or ln[:1] in " \t":
            continue
        considered += 1
        if any(p.match(ln) for p in _SNIFF):
            hits += 1
        elif _SNIFF_SYSLOG.match(ln):
            other += 1
    return hits >= 1 and (hits + other) * 2 >= considered


# --- helpers --------------------------------------------------------------------------------------

def _micros(frac: pl.Expr) -> pl.Expr:
    """Digits after the decimal point -> microseconds (truncated to 6 digits)."""
    return frac.str.slice(0, 6).str.pad_end(6, "0").cast(pl.Int64, strict=False).fill_null(0)


def _boot_seconds(sec: pl.Expr, frac: pl.Expr) -> pl.Expr:
    return pl.concat_str([sec, pl.lit("."), frac]).cast(pl.Float64, strict=False)


def _boot_ts_from_seconds(seconds: pl.Expr, ctx: ParseContext) -> pl.Expr:
    """boot time + seconds since boot (float seconds as printed: exact to the microsecond up to ~10^9 s)."""
    if ctx.boot_time is None:
        return pl.lit(None, dtype=_UTC)
    bt = ctx.boot_time
    bt = bt.replace(tzinfo=dt.timezone.utc) if bt.tzinfo is None else bt.astimezone(dt.timezone.utc)
    return pl.lit(bt).cast(_UTC) + pl.duration(microseconds=(seconds * 1_000_000).round(0).cast(pl.Int64))


def _naive(year: pl.Expr, mon: pl.Expr, day: pl.Expr, hms: pl.Expr) -> pl.Expr:
    text = pl.concat_str([year, pl.lit("-"), mon, pl.lit("-"), day.str.zfill(2), pl.lit(" "), hms])
    return text.str.strptime(pl.Datetime("us"), "%Y-%b-%d %H:%M:%S", strict=False)


def _year_for(mon: pl.Expr, ctx: ParseContext) -> pl.Expr | None:
    """Year for syslog/journal times that print none: ctx.year, else the capture year (a month
    after the capture month belongs to the year before)."""
    if ctx.year is not None:
        return pl.lit(str(int(ctx.year)))
    if ctx.capture_time is None:
        return None
    cap = ctx.capture_time
    month = mon.replace_strict(MONTHS, default=None, return_dtype=pl.Int32)
    return pl.when(month > cap.month).then(pl.lit(cap.year - 1)).otherwise(pl.lit(cap.year)).cast(pl.String)


_PARSED_SCHEMA = {
    "line_no": pl.Int64, "host_c": pl.String, "ident": pl.String, "raw_time": pl.String,
    "ts": _UTC, "ts_quality": pl.String, "boot_s": pl.Float64, "facility": pl.String,
    "level": pl.String, "message": pl.String, "bad": pl.String,
    "pri": pl.Int32, "dfac": pl.String, "dlvl": pl.String,
}


def _empty_parsed() -> pl.DataFrame:
    return pl.DataFrame(schema=_PARSED_SCHEMA)


_MAIN, _BLANK, _MARKER, _CONT, _DASH = 0, 1, 2, 3, 4  # line kinds

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
        if name in exprs:
            cols.append(exprs[name].cast(dtype).alias(name))
        elif name in names:
            cols.append(pl.col(name).cast(dtype))
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
    df = df.with_columns(
        pl.when(pl.col("hpfx").is_not_null()).then(_after("msg0", "hpfx")).otherwise(pl.col("msg0")).alias("msg1"))
    df = df.with_columns(pl.col("msg1").str.extract_groups(RE_INNER_BOOT).alias("_b")).unnest("_b")
    kernel = pl.col("ident") == "kernel"
    return df.with_columns(
        pl.when(kernel & pl.col("ipfx").is_not_null()).then(_after("msg1", "ipfx")).otherwise(pl.col("msg1"))
        .alias("message"),
        pl.when(kernel).then(_boot_seconds(pl.col("isec"), pl.col("ifrac"))).alias("boot_s"),
        pl.when(pl.col("hpfx").is_null()).then(pl.lit("no host/program after the time"))
        .when(~kernel).then(pl.concat_str([pl.lit("syslog line from '"), pl.col("ident"),
                                           pl.lit("', not the kernel")]))
        .alias("bad"),
    )


# --- the variants -------------------------------------------------------------------------------------

def _parse_raw(df: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    df = df.with_columns(_match(pl.col("rest"), RE_RAW).alias("pfx"))
    ok = df.filter(pl.col("pfx").is_not_null())
    ok = ok.with_columns(_after("rest", "pfx").alias("msg0"), _match(pl.col("pfx"), r"[0-9]+\.[0-9]+").alias("rt"))
    ok = ok.with_columns(pl.col("rt").cast(pl.Float64, strict=False).alias("_bs"))
    ts = _boot_ts_from_seconds(pl.col("_bs"), ctx)
    quality = pl.lit("boot" if ctx.boot_time else "none")
    # journalctl -o short-monotonic: "[  12.345678] host kernel: msg"
    mono = ok["msg0"].str.contains(r"^[^ \[\]:]+ kernel: ").fill_null(False)
    parts = []
    if mono.any():
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
    df = df.with_columns(pl.col("rest").str.extract_groups(RE_SHORT).alias("_g")).unnest("_g")
    ok = df.filter(pl.col("pfx").is_not_null()).with_columns(_after("rest", "pfx").alias("msg0"))
    ok = _syslog_tail(ok, with_host=True)
    year = _year_for(pl.col("mon"), ctx)
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
                  ts_quality=pl.when(pl.col("_ts").is_null()).then(pl.lit("none")).otherwise(pl.lit("local")),
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


# routing by the first character of the line (after -r/-x prefixes)
_ROUTES = (
    ("[", (_parse_raw, _parse_ctime)),
    ("digit", (_parse_iso,)),
    ("upper", (_parse_short, _parse_logread)),
)


def _masked(expr: pl.Expr, rx: str, literal: bool = False) -> pl.Expr:
    """`expr` where it matches `rx`, else null (work on the result then skips the other rows)."""
    return pl.when(expr.str.contains(rx, literal=literal).fill_null(False)).then(expr)


def _match(expr: pl.Expr, rx: str) -> pl.Expr:
    """The text `rx` matches in `expr` (group 0: a DFA search, much cheaper than capture groups)."""
    return expr.str.extract(rx, 0)


DEDUP_MIN_ROWS = 4096  # from this many rows, a log whose messages repeat gets its fields once per distinct message
DEDUP_SAMPLE = 16384


def _fields(df: pl.DataFrame) -> pl.DataFrame:
    """subsystem, pci_addr, iface, xid, xid_text from `message` (a function of the message alone).

    Big logs are mostly floods of the same messages (link flaps, DMAR faults, repeated Xids): when
    at most half of the first DEDUP_SAMPLE messages are distinct, the fields are extracted once per
    distinct message and joined back (the same values, a fraction of the regex work)."""
    if df.height >= DEDUP_MIN_ROWS:
        sample = df["message"].head(DEDUP_SAMPLE)
        if sample.n_unique() * 2 <= sample.len():
            # distinct messages by their 64-bit hash (an integer join), checked against the text
            h = df.select(pl.col("message").hash().alias("_h"), pl.col("message"))
            fields = _message_fields(h.unique(subset="_h", keep="any"))
            out = h.select("_h").join(fields.rename({"message": "_m"}), on="_h", how="left", maintain_order="left")
            if out["_m"].equals(df["message"], null_equal=True):
                return pl.concat([df, out.drop("_h", "_m")], how="horizontal")
            return df.join(_message_fields(df.select("message").unique()), on="message", how="left",
                           maintain_order="left")
    return _message_fields(df)


def _message_fields(df: pl.DataFrame) -> pl.DataFrame:
    """subsystem, pci_addr, iface, xid, xid_text from `message` (one lazy query, built once)."""
    lf = df.lazy()
    for step in _FIELD_STEPS:
        lf = lf.with_columns(step)
    return lf.drop(_FIELD_TEMPS).collect()


def _field_steps() -> list[list[pl.Expr]]:
    """The with_columns steps of _message_fields.

    The shapes are found with capture-free matches and split with plain string operations."""
    m = pl.col("message")
    d = pl.col("_dev")
    steps = [
        [_match(m, RE_DEV).str.strip_suffix(": ").str.split(" ").alias("_dev")],
        [d.list.get(0, null_on_oob=True).alias("drv"), d.list.get(1, null_on_oob=True).alias("bus"),
         d.list.get(2, null_on_oob=True).alias("dif")],
        [_match(pl.when(pl.col("drv").is_null()).then(m), RE_WORD).str.strip_suffix(": ").alias("word")],
    ]
    w = pl.col("word")
    steps.append([pl.when(w.str.ends_with("]")).then(w.str.replace(r"\[[0-9]+\]$", "")).otherwise(w).alias("word")])
    steps.append([pl.when(pl.col("word").is_null() & pl.col("drv").is_null()).then(m).alias("_nw")])
    noword = pl.col("_nw")
    steps.append([
        _match(_masked(noword, RE_MODFN), r"^[^ ]+").alias("mod"),
        _match(pl.when(noword.str.starts_with("[")).then(noword), RE_BRACKET).str.slice(1).str.strip_suffix("] ")
        .alias("brk"),
        # interface: "driver busid ifname:" already split; otherwise where RE_IFACE puts it
        # (the match ends with the ":" or " " after the name, which has neither; before it a space or nothing)
        _match(pl.when(pl.col("dif").is_null()).then(m), RE_IFACE).str.head(-1).str.split(" ").list.last()
        .alias("_if"),
    ])
    bus_pci = pl.col("bus").str.contains(RE_PCI_FULL).fill_null(False)
    other = _masked(pl.when(~bus_pci).then(m), r"[0-9a-fA-F]{2}:[0-9a-fA-F]{2}")
    steps.append([pl.when(bus_pci).then(pl.col("bus").str.to_lowercase())
                  .otherwise(_match(_match(other, RE_PCI_ANY).str.to_lowercase(), RE_PCI_CORE)).alias("_pci")])
    n = pl.col("_pci").str.len_chars()
    steps.append([pl.when(n == 7).then(pl.concat_str([pl.lit("0000:"), pl.col("_pci")]))
                  .when(n == 10).then(pl.concat_str([pl.col("_pci"), pl.lit(".0")]))
                  .otherwise(pl.col("_pci")).alias("pci_addr")])
    word_is_if = pl.col("word").str.contains("^" + _IF + "$").fill_null(False)
    steps.append([
        pl.coalesce(pl.col("drv"), pl.when(~word_is_if).then(pl.col("word")), pl.col("mod"), pl.col("brk"))
        .alias("subsystem"),
        pl.coalesce(pl.col("dif"), pl.col("_if")).alias("iface"),
    ])
    # "NVRM: Xid (PCI:0000:18:00): 79, pid=..., GPU has fallen off the bus." (all null without one)
    has = m.str.contains("NVRM: Xid (", literal=True).fill_null(False)
    # the text from "NVRM: Xid (" on (usually the whole message)
    steps.append([pl.when(has).then(
        pl.concat_str([pl.lit("NVRM: Xid ("), m.str.splitn("NVRM: Xid (", 2).struct.field("field_1")]))
        .alias("_xafter")])
    steps.append([_match(pl.col("_xafter"), RE_XID_AT).alias("_xhead")])
    head = pl.col("_xhead")
    steps.append([
        head.str.extract(r"[0-9]+$", 0).cast(pl.Int32, strict=False).alias("xid"),
        pl.when(head.is_not_null()).then(
            pl.col("_xafter").str.slice(head.str.len_chars()).str.strip_prefix(",").str.strip_prefix(" "))
        .cast(pl.String).alias("xid_text"),
    ])
    return steps


_FIELD_STEPS = _field_steps()
_FIELD_TEMPS = ["_dev", "drv", "bus", "dif", "word", "_nw", "mod", "brk", "_if", "_pci", "_xafter", "_xhead"]


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    lines = split_lines(data)
    n = lines.height
    if n == 0:
        return result(NAME, ctx, 0, {"kernel_log": pl.DataFrame({"line_no": pl.Series([], dtype=pl.Int64)})})
    t = pl.col("text")
    # `dmesg --time-format iso` lines (most big captures: main lines, no -r/-x prefix, iso route) are
    # sliced, not captured; only the other lines are classified and routed
    lines = lines.with_columns(t.str.contains(RE_ISO_FIXED).alias("_fixed"))
    n_fixed = int(lines["_fixed"].sum())
    fixed_out = None
    if n_fixed:
        fixed = lines if n_fixed == n else lines.filter(pl.col("_fixed"))
        fixed_out = _parse_iso_fixed(fixed.select("line_no", t.alias("rest")))
    olines = (lines.filter(~pl.col("_fixed")) if n_fixed else lines).drop("_fixed")
    lines = lines.drop("_fixed")
    kind = (pl.when(t.str.strip_chars() == "").then(pl.lit(_BLANK))
            .when(t.str.starts_with(MARKER_PREFIX)).then(pl.lit(_MARKER))
            .when(t.str.starts_with(" ") | t.str.starts_with("\t")).then(pl.lit(_CONT))
            .when(t.str.starts_with("-- ")).then(pl.lit(_DASH))
            .otherwise(pl.lit(_MAIN)).cast(pl.UInt8))
    olines = olines.with_columns(kind.alias("kind"))
    k = pl.col("kind")
    # what the other lines hold, in one pass: the steps for what they do not hold are skipped
    # (-r "<N>" and -x " :" are looked for in every main line: running their steps on lines without
    # them changes nothing, so the text of a main line is as good as its rest here)
    flags = olines.select(
        (k != _MAIN).any().alias("other"), (k == _DASH).any().alias("dash"), (k == _CONT).any().alias("cont"),
        (t.str.starts_with("<") & (k == _MAIN)).any().alias("pri"),
        (t.str.contains(" :", literal=True) & (k == _MAIN)).any().alias("decode"),
    ).row(0, named=True)
    unparsed = []
    if flags["dash"]:
        dash = olines.filter(k == _DASH)
        hdr = dash["text"].str.contains(RE_JOURNAL_HDR)
        unparsed.append(_no_prefix(dash.filter(~hdr), ctx))
    main = (olines.filter(k == _MAIN) if flags["other"] else olines).select("line_no", "text")

    # -r: "<N>" raw priority; -x: "kern  :warn  : " decoded facility/level
    main = main.with_columns(pl.col("text").alias("rest"), pl.lit(None, dtype=pl.Int32).alias("pri"))
    if flags["pri"]:
        pri = pl.col("text").str.extract(RE_PRI, 1).cast(pl.Int32, strict=False)
        main = main.with_columns(pl.when(pri <= 191).then(pri).alias("pri"))
        main = main.with_columns(pl.when(pl.col("pri").is_not_null())
                                 .then(pl.col("text").str.replace(RE_PRI, "")).otherwise(pl.col("text")).alias("rest"))
    if flags["decode"]:
        main = main.with_columns(pl.col("rest").str.extract_groups(RE_DECODE).alias("_d")).unnest("_d")
        valid = (pl.col("dfac").is_in(list(FACILITIES)) & pl.col("dlvl").is_in(list(LEVELS))).fill_null(False)
        main = main.with_columns(pl.when(valid).then(pl.col("dfac")).alias("dfac"),
                                 pl.when(valid).then(pl.col("dlvl")).alias("dlvl"))
        main = main.with_columns(pl.when(pl.col("dfac").is_not_null())
                                 .then(pl.col("rest").str.replace(RE_DECODE, "")).otherwise(pl.col("rest")).alias("rest"))
    else:
        main = main.with_columns(pl.lit(None, dtype=pl.String).alias("dfac"), pl.lit(None, dtype=pl.String).alias("dlvl"))

    # the other lines are routed by their first character
    first = pl.col("rest").str.slice(0, 1)
    route = (pl.when(first == "[").then(pl.lit("["))
             .when(first.str.contains("^[0-9]")).then(pl.lit("digit"))
             .when(first.str.contains("^[A-Z]")).then(pl.lit("upper"))
             .otherwise(pl.lit("none")))
    main = main.with_columns(route.alias("route"))
    parsed = []
    variants: Counter = Counter()
    for key, parsers in _ROUTES:
        sub = main.filter(pl.col("route") == key).drop("route") if main.height else main.drop("route")
        for fn in parsers:
            got = 0
            if fn is _parse_iso and fixed_out is not None:
                parsed.append(fixed_out)
                got += fixed_out.height
            if sub.height:
                out, sub = fn(sub, ctx)
                if out.height:
                    parsed.append(out)
                    got += out.height
            if got:
                variants[fn.__name__[7:]] += got
        if sub.height:
            unparsed.append(_no_prefix(sub, ctx))
    rest = main.filter(pl.col("route") == "none")
    unparsed.append(_no_prefix(rest, ctx))

    if parsed:
        rows = pl.concat(parsed, how="vertical").sort("line_no")
        if flags["pri"] or flags["decode"]:
            pri = pl.col("pri")
            rows = rows.with_columns(
                pl.coalesce(pl.col("dfac"), pri.floordiv(8).replace_strict(dict(enumerate(FACILITIES)), default=None,
                                                                            return_dtype=pl.String),
                            pl.col("facility")).alias("facility"),
                pl.coalesce(pl.col("dlvl"), pri.mod(8).replace_strict(dict(enumerate(LEVELS)), default=None,
                                                                       return_dtype=pl.String),
                            pl.col("level")).alias("level"),
            )
        rows = rows.drop("pri", "dfac", "dlvl")  # (all null without -r/-x prefixes)
        if rows["bad"].null_count() < rows.height:
            bad = rows.filter(pl.col("bad").is_not_null())
            txt = lines.select("line_no", "text")
            unparsed.append(unparsed_frame(bad.join(txt, on="line_no", how="left").select("line_no", "text", "bad"),
                                           pl.col("bad"), ctx, NAME))
            rows = rows.filter(pl.col("bad").is_null())
        rows = rows.drop("bad")
    else:
        rows = _empty_parsed().drop("bad", "pri", "dfac", "dlvl")
    rows = _fields(rows)

    # continuation lines: rows of the message they follow
    cont = olines.filter(k == _CONT).select("line_no", "text") if flags["cont"] else None
    if cont is not None and cont.height:
        keep = ["ts", "ts_quality", "boot_s", "facility", "level", "subsystem", "pci_addr", "iface", "host_c"]
        heads = rows.select("line_no", *keep).with_columns(pl.col("line_no").alias("_head"))
        c = cont.sort("line_no").join_asof(heads.sort("line_no"), on="line_no", strategy="backward")
        orphan = c.filter(pl.col("_head").is_null())
        unparsed.append(unparsed_frame(orphan.select("line_no", "text"),
                                       "continuation line without a preceding message", ctx, NAME))
        c = c.filter(pl.col("_head").is_not_null()).with_columns(
            pl.col("text").str.strip_chars_start().alias("message"),
            pl.lit(None, dtype=pl.String).alias("raw_time"),
            pl.lit(None, dtype=pl.String).alias("ident"),
            pl.lit(None, dtype=pl.Int32).alias("xid"),
            pl.lit(None, dtype=pl.String).alias("xid_text"),
        ).select(rows.columns)
        rows = pl.concat([rows, c]).sort("line_no")
        variants["continuation"] += c.height

    hosts = sorted(h for h in rows["host_c"].unique().to_list() if h)
    host_expr = pl.lit(ctx.host, dtype=pl.String) if ctx.host else pl.col("host_c")
    table = rows.select(
        host_expr.alias("host"), "line_no", "ts", "ts_quality", "boot_s", "raw_time", "facility", "level",
        "subsystem", "pci_addr", "iface", "xid", "xid_text", "message",
    )
    meta = {"hosts": hosts}
    main_variants = {k: v for k, v in variants.items() if k != "continuation"}
    if main_variants:
        meta["variant"] = max(main_variants, key=main_variants.get)
    return result(NAME, ctx, n, {"kernel_log": table}, [u for u in unparsed if u.height], **meta)
