"""sar text reports, ``sadf -d`` and ``sadf -j``: cpu_util, disk_io, sar_net_dev, sar_net_edev,
sar_memory, sar_queue, and every other section as long ``sar_generic`` rows (nothing is dropped).

Reads:

- ``-u`` / ``-u ALL`` / ``-P ALL`` (``cpu`` = "all" or the CPU number), ``-d`` old
  (``tps rd_sec/s wr_sec/s avgrq-sz avgqu-sz await svctm %util``, sectors -> kB) and new
  (``tps rkB/s wkB/s [dkB/s] areq-sz aqu-sz await [svctm] %util``; ``dev8-0`` names or ``-p``
  names), ``-n DEV`` with or without ``%ifutil``, ``-n EDEV``, ``-r`` / ``-r ALL`` (old and new column
  sets, with or without kbavail), ``-q``; ``-A`` with many sections, live (sections repeat per
  interval) or from a daily file (each section covers the whole day). Columns of these sections
  that their table lacks, and all other sections (-b, -B, -W, -v, -n SOCK, -I, -m, -F, PSI...),
  become sar_generic rows (section = its header, item = the upper-case columns such as INTR/TTY/
  FCHOST/FILESYSTEM, one row per metric).
- 12-hour (``03:59:48 PM``), 24-hour and zh_CN (``14时28分00秒``) times; the banner
  ``Linux <release> (<host>) <date> _<arch>_ (<n> CPU)`` gives host (meta["hosts"]) and date in the
  locale's form (04/23/2019, 04/23/19, 2019-04-23, 23/04/19, 23.04.2019, 2017年01月12日).
- ``Average:`` / ``Summary:`` rows (and localised ones such as ``平均时间:``) are recognised and
  counted as used but not emitted: they summarise rows already present (meta["average_lines"]).
- ``LINUX RESTART (n CPU)`` lines: used, listed in meta["restarts"] and emitted as a sar_generic
  row (section "LINUX RESTART", metric "cpu_count") so the timeline shows the reboot.
- midnight roll-over: within one section kind a time more than 3 hours earlier than the previous
  one is the next day (smaller steps back are DST fall-back, same day).
- ``sadf -d`` (``# hostname;interval;timestamp;CPU;%user;...`` sections, UTC timestamps
  ``2019-04-18 13:20:19 UTC`` -> "exact"; CPU -1 = "all"; INTR ``CPU*`` columns named all, CPU0..)
  and ``sadf -j`` JSON (line by line, so a truncated file still yields its complete records).

Text times are local: converted with ctx.tz (ts_quality "local"); without a banner date the local
date of ctx.capture_time is used (meta["date_source"]), else ts is null ("none"). ``sample_no``
numbers the distinct timestamps of the file in time order (0-based), so rows of the same
interval share it across sections. A shell prompt or other text line is unparsed with a reason.

>>> from forensics.sources._base import ParseContext
>>> sample = (b"Linux 3.10.0-693.el7.x86_64 (ldap-server) \\t03/08/2022 \\t_x86_64_\\t(4 CPU)\\n\\n"
...     b"10:46:38 AM     CPU     %user     %nice   %system   %iowait    %steal     %idle\\n"
...     b"10:46:48 AM     all      0.03      0.00      0.05      0.00      0.00     99.92\\n"
...     b"10:46:58 AM     all      0.10      0.00      0.08      0.00      0.00     99.82\\n"
...     b"Average:        all      0.05      0.00      0.05      0.00      0.00     99.90\\n")
>>> res = parse(sample, ParseContext(host="ldap-server", tz="Asia/Shanghai"))
>>> res.tables["cpu_util"].select("cpu", "user_pct", "idle_pct", "sample_no").rows()
[('all', 0.03, 99.92, 0), ('all', 0.1, 99.82, 1)]
>>> [t.isoformat() for t in res.tables["cpu_util"]["ts"]]
['2022-03-08T02:46:48+00:00', '2022-03-08T02:46:58+00:00']
>>> res.lines, res.unparsed.height, res.meta["average_lines"]
(6, 0, 1)
"""
from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

from forensics.layout import MARKER_PREFIX
from forensics.sources import _sysstat as S
from forensics.sources._base import (
    ParseContext, ParseResult, head_text, result, split_lines, unparsed_frame, unparsed_rows,
)

NAME = "sar"
VERSION = 1
TABLES = ("cpu_util", "disk_io", "sar_net_dev", "sar_net_edev", "sar_memory", "sar_queue", "sar_generic")
DESCRIPTION = "sar text reports (-u -P -d -n DEV/EDEV -r -q -A ...), sadf -d and sadf -j: cpu, disk, net, memory, queue, generic"

_TIME = r"(?:[0-9]{2}:[0-9]{2}:[0-9]{2}(?: [AP]M)?|[0-9]{2}[时時][0-9]{2}分[0-9]{2}秒)"
_SNIFF_TEXT = re.compile(
    r"(?m)^" + _TIME + r"\s+(?:LINUX RESTART|(?:CPU|IFACE|DEV|INTR|TTY)\s+\S*[%/a-z]|"
    r"(?:kbmemfree|runq-sz|proc/s|cswch/s|pswpin/s|pgpgin/s|tps|kbswpfree|kbhugfree|dentunusd|totsck|"
    r"call/s|scall/s|frmpg/s|%scpu-10)\s)"
)
_SNIFF_SADF_D = re.compile(r"(?m)^# hostname;interval;timestamp;")
_AVERAGE = re.compile(r"^(?:Average|Summary|Moyenne|Durchschn\.|Media|Média|Promedio|Gemiddeld|Medel|"
                      r"Среднее|Średnia|Průměr|Átlag|Keskiarvo|平均时间|平均時間|平均值|平均)\s*:")
_NCPU = re.compile(r"\(([0-9]+) CPU\)")
_ROLLOVER_S = 3 * 3600
_AMPM_TOKENS = {"AM", "PM", "am", "pm"}


def sniff(head: bytes) -> bool:
    text = head_text(head)
    if text.lstrip().startswith("{"):
        return '"sysstat"' in text[:400] and ('"file-date"' in text or '"timestamp": {' in text)
    return bool(_SNIFF_SADF_D.search(text) or _SNIFF_TEXT.search(text))


# ---------------------------------------------------------------- sections

_TYPED = (  # (test on the header set, table, column map, item header, item column)
    (lambda h: "DEV" in h and "tps" in h, "disk_io", S.DISK_COLS, "DEV", "device"),
    (lambda h: "IFACE" in h and ("rxpck/s" in h or "rxbyt/s" in h), "sar_net_dev", S.NET_DEV_COLS, "IFACE", "iface"),
    (lambda h: "IFACE" in h and "rxerr/s" in h, "sar_net_edev", S.NET_EDEV_COLS, "IFACE", "iface"),
    (lambda h: "kbmemfree" in h, "sar_memory", S.MEM_COLS, None, None),
    (lambda h: "runq-sz" in h, "sar_queue", S.QUEUE_COLS, None, None),
    (lambda h: "CPU" in h and ("%user" in h or "%usr" in h), "cpu_util", S.CPU_COLS, "CPU", "cpu"),
)


def _text_batch(hdr: tuple[str, ...]) -> S.Batch:
    """The batch layout of a text / sadf -d section header."""
    h = set(hdr)
    name = " ".join(hdr)
    for test, table, cmap, item, col in _TYPED:
        if test(h):
            return S.Batch(table, hdr, cmap, (item,) if item else (), col, name)
    return S.Batch("sar_generic", hdr, None, tuple(x for x in hdr if S.is_item_header(x)), None, name)


class _State:
    def __init__(self, ctx: ParseContext):
        self.ctx = ctx
        self.col = S.Collector()
        self.bad: list[tuple[int, str, str]] = []
        self.hosts: list[str] = []
        self.host: str | None = None  # host named by the content, stamped when ctx.host is unset
        self.restarts: list[str] = []
        self.comments: list[str] = []
        self.average_lines = 0

    def see_host(self, host: str | None) -> None:
        if host:
            self.host = host
            if host not in self.hosts:
                self.hosts.append(host)

    def row_host(self, host: str | None = None) -> str | None:
        return None if self.ctx.host else (host or self.host)

    def restart(self, ln: int, extra: tuple, ncpu: int | None, label: str) -> None:
        self.restarts.append(label)
        row = dict(zip(S.EXTRA, extra))
        row.update(line_no=ln, section="LINUX RESTART", item=None, metric="cpu_count",
                   value=None if ncpu is None else float(ncpu))
        del row["since_boot"]
        self.col.add_fixed("sar_generic", row)

    def finish(self, texts: list[str], **meta: Any) -> ParseResult:
        tables, rejected = self.col.frames(TABLES, self.ctx.tz, rank_samples=True)
        bad = self.bad + [(ln, texts[ln - 1], reason) for ln, reason in rejected]
        up = unparsed_rows(bad, self.ctx, NAME) if bad else None
        return result(NAME, self.ctx, len(texts), tables, up, hosts=self.hosts, restarts=self.restarts,
                      comments=self.comments, average_lines=self.average_lines, **meta)


def _fit(b: S.Batch, vals: list[str]) -> list[str]:
    """Values aligned with the header; surplus words join a trailing free-text column (USB names)."""
    n = len(b.hdr)
    if len(vals) == n:
        return vals
    if len(vals) > n and n and b.hdr[-1] in S.TEXT_COLS:
        return vals[: n - 1] + [" ".join(vals[n - 1:])]
    raise S.BadValue(f"{len(vals)} values for {n} columns of section {b.section[:60]!r}")


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    with S.no_gc():
        return _parse(data, ctx)


def _parse(data: bytes, ctx: ParseContext) -> ParseResult:
    lines = split_lines(data)
    head = lines["text"].head(50).to_list()
    first = next((t.strip() for t in head if t.strip()), None)
    if first is None:
        first = next(iter(lines.filter(pl.col("text").str.strip_chars() != "")["text"].head(1).to_list()), "").strip()
    if first.startswith("{"):
        return _parse_json(lines["text"].to_list(), ctx)
    if any(t.startswith("# hostname;interval;timestamp;") for t in head):
        return _parse_sadf_d(lines["text"].to_list(), ctx)
    if lines.height >= FAST_MIN_LINES and _fast_ok(data):
        res = _parse_text_fast(lines, ctx, data)
        if res is not None:
            return res
    return _parse_text(lines["text"].to_list(), ctx)


# ---------------------------------------------------------------- text reports

def _capture_day(ctx: ParseContext) -> dt.date | None:
    cap = ctx.capture_time
    if cap is None:
        return None
    cap = cap if cap.tzinfo else cap.replace(tzinfo=dt.timezone.utc)
    try:
        return cap.astimezone(ZoneInfo(ctx.tz)).date() if ctx.tz else cap.astimezone(dt.timezone.utc).date()
    except Exception:
        return cap.date()


def _parse_text(texts: list[str], ctx: ParseContext) -> ParseResult:
    st = _State(ctx)
    banners = [b for b in (S.banner(t) for t in texts if t.startswith(("Linux", "GNU/Linux"))) if b]
    order, assumed = S.date_order([b["date"] for b in banners])
    day = _capture_day(ctx)
    date_source = "capture_time" if day else None
    day_us = S.local_us(dt.datetime.combine(day, dt.time())) if day else None
    track: dict[tuple, list[int]] = {}  # section header -> [last seconds, day offset]
    batches: dict[tuple, S.Batch] = {}
    tod_cache: dict[tuple[str, str], tuple[int, int] | None] = {}
    b: S.Batch | None = None
    host = st.row_host()
    is_num = S.is_number
    for i, text in enumerate(texts):
        ln = i + 1
        s = text.strip()
        if not s or s.startswith(MARKER_PREFIX):
            continue
        if s[0] in "LG":
            bn = S.banner(s)
            if bn:
                st.see_host(bn["host"])
                host = st.row_host()
                d = S.parse_date(bn["date"], order)
                if d is not None:
                    day, date_source = d, "banner"
                    day_us = S.local_us(dt.datetime.combine(day, dt.time()))
                track.clear()
                b = None
                continue
        toks = s.split()
        ck = (toks[0], toks[1] if len(toks) > 1 and toks[1] in _AMPM_TOKENS else "")
        tod = tod_cache.get(ck, 0)
        if tod == 0:
            tod = tod_cache[ck] = S.parse_tod(toks[:2])
        if tod is None:
            if _AVERAGE.match(s):
                st.average_lines += 1
            else:
                st.bad.append((ln, text, "not a sar line (no leading time)"))
            continue
        secs, n = tod
        rest = toks[n:]
        if not rest:
            st.bad.append((ln, text, "time without values"))
            continue
        header = False
        if rest[0] == "LINUX" and len(rest) > 1 and rest[1] == "RESTART":
            key = ("LINUX RESTART",)
        elif rest[0] == "COM":
            st.comments.append(" ".join(rest[1:]))
            continue
        elif not (is_num(rest[-1]) or is_num(rest[0])) and not any(is_num(t) for t in rest):
            key = tuple(rest)  # a section header
            header = True
            b = batches.get(key)
            if b is None:
                b = batches[key] = st.col.batch(key, lambda: _text_batch(key))
        elif b is None:
            st.bad.append((ln, text, "sar data row before any column header"))
            continue
        else:
            key = b.hdr
        t = track.get(key)
        if t is None:
            t = track[key] = [secs, 0]
        elif secs < t[0] - _ROLLOVER_S:
            t[1] += 1  # midnight passed
        t[0] = secs
        off = t[1] * 86400 + secs
        lus = None if day_us is None else day_us + off * 1_000_000
        extra = (host, lus, None, "local" if lus is not None else None, lus if lus is not None else off * 1_000_000,
                 None, False)
        if key == ("LINUX RESTART",):
            m = _NCPU.search(s)
            label = (dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=lus)).isoformat() if lus is not None else \
                f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
            st.restart(ln, extra, int(m.group(1)) if m else None, label)
            continue
        if header:
            continue  # header line: used, its time only advances the section clock
        try:
            b.add(ln, _fit(b, rest), extra)
        except S.BadValue as e:
            st.bad.append((ln, text, str(e)))
    return st.finish(texts, variant="text", date_order=order, date_order_assumed=assumed, date_source=date_source)


# ---------------------------------------------------------------- text reports, vectorised
# The same reading as _parse_text, in polars: line kinds, times, the section each row belongs to and
# the midnight roll-over per section are column expressions; Python sees only banners, headers,
# LINUX RESTART and COM lines. Inputs it does not cover (zh_CN times, the separator bytes that
# Python's str.split() treats as blanks and polars does not, free-text columns of sar -m) take
# the line loop above.

FAST_MIN_LINES = 1500  # below this the line loop is quicker (the vectorised reader costs ~8 ms a file)
_K_SKIP, _K_BANNER, _K_AVG, _K_NOTIME, _K_NOVALS, _K_RESTART, _K_COM, _K_HEADER, _K_DATA = range(9)
_NUM_TOKEN = r"(?:^|\s)[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)(?:\s|$)"
_MARKER_RX = r"^\s*" + MARKER_PREFIX  # holds no pattern characters
_AVERAGE_RX = r"^\s*" + _AVERAGE.pattern[1:]
_SLOW_BYTES = (*S.SPLIT_ONLY_BLANKS, "时".encode(), "時".encode())  # and zh_CN times


def _fast_ok(data: bytes) -> bool:
    return not S.has_any(data, _SLOW_BYTES)


def _parse_text_fast(lines: pl.DataFrame, ctx: ParseContext, data: bytes) -> ParseResult | None:
    st = _State(ctx)
    toks = pl.col("_toks")
    t0, t1 = toks.list.first(), toks.list.get(1, null_on_oob=True)
    h = t0.str.head(-6).cast(pl.Int32, strict=False)
    mi = t0.str.slice(-5, 2).cast(pl.Int32, strict=False)
    se = t0.str.tail(2).cast(pl.Int32, strict=False)
    ap = t1.is_in(["AM", "PM", "am", "pm"]).fill_null(False)
    ok = (t0.str.contains(r"^[0-9]{1,2}:[0-9]{2}:[0-9]{2}$") & (mi <= 59) & (se <= 60)
          & pl.when(ap).then((h >= 1) & (h <= 12)).otherwise(h <= 23)).fill_null(False)
    secs = (pl.when(ap).then((h % 12 + pl.when(t1.is_in(["PM", "pm"])).then(12).otherwise(0)) * 3600)
            .otherwise(h * 3600) + mi * 60 + pl.min_horizontal(se, pl.lit(59, pl.Int32))).cast(pl.Int64)
    nt = pl.col("_nt")
    r0, r1 = toks.list.get(nt, null_on_oob=True), toks.list.get(nt + 1, null_on_oob=True)
    text = pl.col("text")
    # kinds before banners are known (a banner starts with L or G, which no other kind below does but
    # 'not a time' lines: those are told apart in Python). Anchored patterns on the unstripped text
    # allow the leading blanks the line loop strips.
    kind = (pl.when((toks.list.len() == 0) | text.str.contains(_MARKER_RX)).then(_K_SKIP)
            .when(~pl.col("_ok")).then(_K_NOTIME)  # or Average: told apart below, on these lines only
            .when(pl.col("_nrest") <= 0).then(_K_NOVALS)
            .when((r0 == "LINUX") & (r1 == "RESTART")).then(_K_RESTART)
            .when(r0 == "COM").then(_K_COM)
            .when(~text.str.contains(_NUM_TOKEN)).then(_K_HEADER)
            .otherwise(_K_DATA)).cast(pl.Int8)
    df = (lines.lazy()
          .with_columns(S.words(text, data).alias("_toks"))
          .with_columns(ok.alias("_ok"), secs.alias("_secs"), (1 + ap.cast(pl.Int32)).alias("_nt"))
          .with_columns((toks.list.len().cast(pl.Int32) - nt).alias("_nrest"))
          .with_columns(kind.alias("kind"))
          .drop("_ok")
          .collect(engine="in-memory"))
    notime = df.filter(pl.col("kind") == _K_NOTIME).select("line_no", pl.col("text").str.contains(_AVERAGE_RX))
    if notime.height and notime["text"].any():
        avg = notime.filter("text")["line_no"].implode()
        df = df.with_columns(pl.when(pl.col("line_no").is_in(avg)).then(pl.lit(_K_AVG, pl.Int8))
                             .otherwise(pl.col("kind")).alias("kind"))
    # banners: lines starting with L or G that match (checked in Python: few)
    lg = df.filter((pl.col("kind") == _K_NOTIME) & text.str.contains(r"^\s*[LG]"))
    banners = [(ln, b, t.startswith(("Linux", "GNU/Linux")))
               for ln, t in zip(lg["line_no"].to_list(), lg["text"].to_list()) for b in (S.banner(t.strip()),) if b]
    order, assumed = S.date_order([b["date"] for _, b, unindented in banners if unindented])
    day = _capture_day(ctx)
    date_source = "capture_time" if day else None
    seg_day = [S.local_us(dt.datetime.combine(day, dt.time())) if day else None]
    seg_host = [st.row_host()]
    for _, bn, _ in banners:
        st.see_host(bn["host"])
        d = S.parse_date(bn["date"], order)
        if d is not None:
            day, date_source = d, "banner"
        seg_day.append(S.local_us(dt.datetime.combine(day, dt.time())) if day else None)
        seg_host.append(st.row_host())
    if banners:
        df = df.with_columns(pl.when(pl.col("line_no").is_in(pl.Series([ln for ln, _, _ in banners], dtype=pl.Int64)
                                                             .implode())).then(pl.lit(_K_BANNER, pl.Int8))
                             .otherwise(pl.col("kind")).alias("kind"))
    count = np.bincount(df["kind"].to_numpy(), minlength=_K_DATA + 1)
    st.average_lines = int(count[_K_AVG])
    # section headers: one key per distinct column list (as the line loop's batches)
    hdr_rows = df.filter(pl.col("kind") == _K_HEADER).select(
        "line_no", pl.col("_toks").list.slice(pl.col("_nt")).alias("hdr"))
    key_of: dict[tuple[str, ...], int] = {}
    hk = [key_of.setdefault(tuple(hdr), len(key_of)) for hdr in hdr_rows["hdr"].to_list()]
    hdrs = list(key_of)
    if any(h and h[-1] in S.TEXT_COLS for h in hdrs):
        return None  # free-text last column (sar -m USB): surplus words are joined by the line loop
    width = max((len(h) for h in hdrs), default=0)
    kind = pl.col("kind")
    # the header in force on every line (reset by a banner), the section clock each header, data and
    # restart line advances (midnight roll-over), times, and the values as columns: one lazy pass
    marks = np.full(df.height, -2, dtype=np.int32)  # line i+1: header key, -1 banner, -2 neither
    marks[hdr_rows["line_no"].to_numpy() - 1] = hk
    if banners:
        marks[np.array([ln for ln, _, _ in banners]) - 1] = -1
    cur = pl.Series("_cur", marks).replace(-2, None).forward_fill()
    tk = pl.when(kind == _K_RESTART).then(-2).otherwise(pl.col("_cur"))
    grp = [pl.col("seg"), pl.col("_tk")]
    # a time more than 3 hours before the latest one so far: only then can a section clock roll over
    timed_kinds = kind.is_in([_K_HEADER, _K_DATA, _K_RESTART])
    secs_t = pl.col("_secs").filter(timed_kinds)
    may_roll = bool(df.select((secs_t.cum_max() - secs_t).max() > _ROLLOVER_S).item())
    if may_roll:
        roll = (pl.col("_secs") < pl.col("_secs").shift(1).over(grp) - _ROLLOVER_S).fill_null(False).cast(pl.Int64)
        off = pl.col("_roll").cum_sum().over(grp) * 86400 + pl.col("_secs")
    else:
        roll, off = pl.lit(0, dtype=pl.Int64), pl.col("_secs")
    j0 = nt if (df["_nt"] > 1).any() else 1  # a constant index when no line has AM/PM
    if len(seg_day) == 1:
        day_us, host = pl.lit(seg_day[0], dtype=pl.Int64), pl.lit(seg_host[0], dtype=pl.String)
    else:
        segs = list(range(len(seg_day)))
        day_us = pl.col("seg").replace_strict(segs, seg_day, default=None, return_dtype=pl.Int64)
        host = pl.col("seg").replace_strict(segs, seg_host, default=None, return_dtype=pl.String)
    hn = (pl.col("_cur").replace_strict(list(range(len(hdrs))), [len(h) for h in hdrs], default=None,
                                        return_dtype=pl.Int32) if hdrs else pl.lit(None, dtype=pl.Int32))
    timed = (df.lazy()
             .with_columns(pl.when(pl.lit(cur) >= 0).then(pl.lit(cur)).alias("_cur"),
                           (kind == _K_BANNER).cum_sum().cast(pl.Int32).alias("seg"))
             .filter(timed_kinds)
             .select("line_no", "text", "_nt", "_secs", "_nrest", "kind", "_cur", "seg",
                     *(toks.list.get(j0 + j, null_on_oob=True).alias(f"t{j}") for j in range(width)))
             .with_columns(tk.alias("_tk"))
             .with_columns(roll.alias("_roll"))
             .with_columns(off.alias("_off"))
             .with_columns(host.alias("host"), (day_us + pl.col("_off") * 1_000_000).alias("_lus"))
             .with_columns(pl.lit(None, dtype=pl.Int64).alias("_xus"),
                           pl.when(pl.col("_lus").is_not_null()).then(pl.lit("local")).alias("_q"),
                           pl.coalesce("_lus", pl.col("_off") * 1_000_000).alias("_key"),
                           pl.lit(None, dtype=pl.Int64).alias("sample_no"),
                           pl.lit(False).alias("since_boot"),
                           (pl.col("_nrest") == hn).alias("_fit"))
             .collect(engine="in-memory"))
    # LINUX RESTART and COM lines: few, in Python
    if count[_K_RESTART]:
        for ln, line, secs_, off, lus_, host_ in timed.filter(kind == _K_RESTART).select(
                "line_no", "text", "_secs", "_off", "_lus", "host").iter_rows():
            m = _NCPU.search(line.strip())
            label = (dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=lus_)).isoformat() if lus_ is not None else \
                f"{secs_ // 3600:02d}:{secs_ // 60 % 60:02d}:{secs_ % 60:02d}"
            extra = (host_, lus_, None, "local" if lus_ is not None else None,
                     lus_ if lus_ is not None else off * 1_000_000, None, False)
            st.restart(ln, extra, int(m.group(1)) if m else None, label)
    if count[_K_COM]:
        for line, n in df.filter(kind == _K_COM).select("text", "_nt").iter_rows():
            st.comments.append(" ".join(line.split()[n + 1:]))
    # data rows: as many values as their header has columns, else unparsed
    bad: list[pl.DataFrame] = []
    data = timed.filter((kind == _K_DATA) & pl.col("_cur").is_not_null())
    attached = data.height
    if data.height and not data["_fit"].all():
        misfit = data.filter(~pl.col("_fit"))
        why = {(nv, k): f"{nv} values for {len(hdrs[k])} columns of section {' '.join(hdrs[k])[:60]!r}"
               for nv, k in set(misfit.select("_nrest", "_cur").iter_rows())}
        reasons = [why[r] for r in misfit.select("_nrest", "_cur").iter_rows()]
        bad.append(misfit.select("line_no", "text").with_columns(pl.Series("reason", reasons, dtype=pl.String)))
        data = data.filter(pl.col("_fit"))
    extra_cols = ["line_no", *S.EXTRA]
    parts = {0: data} if len(hdrs) == 1 else (
        {k[0]: f for k, f in data.partition_by("_cur", as_dict=True, maintain_order=True).items()} if data.height else {})
    for k, hdr in enumerate(hdrs):
        b = st.col.batch(hdr, lambda: _text_batch(hdr))
        rows = parts.get(k)
        if rows is not None and rows.height:
            b.frame = rows.select(*extra_cols, *(f"t{j}" for j in range(len(hdr))))
            b.clean = True
    for kd, reason in ((_K_NOTIME, "not a sar line (no leading time)"), (_K_NOVALS, "time without values")):
        if count[kd]:
            bad.append(df.filter(kind == kd).select("line_no", "text", pl.lit(reason).alias("reason")))
    if count[_K_DATA] > attached:
        orphans = timed.filter((kind == _K_DATA) & pl.col("_cur").is_null())
        bad.append(orphans.select("line_no", "text", pl.lit("sar data row before any column header").alias("reason")))
    tables, rejected = st.col.frames(TABLES, ctx.tz, rank_samples=True)
    if rejected:
        rej = pl.DataFrame({"line_no": [ln for ln, _ in rejected], "reason": [r for _, r in rejected]},
                           schema={"line_no": pl.Int64, "reason": pl.String})
        bad.append(rej.join(lines, on="line_no", how="left").select("line_no", "text", "reason"))
    up = [unparsed_frame(f, pl.col("reason"), ctx, NAME) for f in bad if f.height] or None
    return result(NAME, ctx, lines.height, tables, up, hosts=st.hosts, restarts=st.restarts,
                  comments=st.comments, average_lines=st.average_lines, variant="text", date_order=order,
                  date_order_assumed=assumed, date_source=date_source)


# ---------------------------------------------------------------- sadf -d

def _sadf_time(s: str) -> tuple[dt.datetime | None, bool]:
    s = s.strip()
    if s.isdigit():  # sadf -d -U: seconds since the epoch
        return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=int(s)), True
    utc = s.endswith(" UTC")
    ts, exact = S.parse_timestamp(s[:-4] if utc else s, "mdy")
    if ts is None:
        parts = s.rsplit(" ", 1)  # a zone abbreviation other than UTC: local time
        if len(parts) == 2 and parts[1].isalpha():
            ts, exact = S.parse_timestamp(parts[0], "mdy")
    if ts is not None and utc and not exact:
        return ts.replace(tzinfo=dt.timezone.utc), True
    return ts, exact


def _parse_sadf_d(texts: list[str], ctx: ParseContext) -> ParseResult:
    st = _State(ctx)
    b: S.Batch | None = None
    intervals: Counter = Counter()
    ts_cache: dict[str, tuple[int | None, int | None]] = {}
    for i, text in enumerate(texts):
        ln = i + 1
        s = text.strip()
        if not s or s.startswith(MARKER_PREFIX):
            continue
        if s[0] == "#":
            fields = s[1:].strip().split(";")
            if len(fields) >= 4 and fields[0] == "hostname" and fields[2] == "timestamp":
                hdr = tuple(fields[3:])
                b = st.col.batch(hdr, lambda: _text_batch(hdr))
            else:
                st.bad.append((ln, text, "comment line that is not a sadf -d header"))
            continue
        fields = s.split(";")
        if len(fields) < 4:
            st.bad.append((ln, text, "not a sadf -d record"))
            continue
        host, interval, tss, vals = fields[0], fields[1], fields[2], fields[3:]
        us = ts_cache.get(tss)
        if us is None:
            ts, exact = _sadf_time(tss)
            us = ts_cache[tss] = (None, None) if ts is None else \
                ((None, S.exact_us(ts)) if exact else (S.local_us(ts), None))
        lus, xus = us
        if lus is None and xus is None:
            st.bad.append((ln, text, f"timestamp {tss[:40]!r} not understood"))
            continue
        if host and host != st.host:
            st.see_host(host)
        extra = (st.row_host(host), lus, xus, "local" if lus is not None else "exact", xus if xus is not None else lus,
                 None, False)
        if vals[0].startswith("LINUX-RESTART"):
            m = _NCPU.search(s)
            st.restart(ln, extra, int(m.group(1)) if m else None, tss)
            continue
        if b is None:
            st.bad.append((ln, text, "sadf -d record before any header"))
            continue
        intervals[interval] += 1
        try:
            use = b
            if "CPU*" in b.hdr:  # INTR;CPU*: the total then one value per CPU
                k = b.hdr.index("CPU*")
                extra_n = len(vals) - k
                if extra_n < 1:
                    raise S.BadValue("no per-CPU values")
                hdr = b.hdr[:k] + ("all",) + tuple(f"CPU{j}" for j in range(extra_n - 1))
                use = st.col.batch(hdr + ("<sadf CPU*>",), lambda: S.Batch(
                    "sar_generic", hdr, None, tuple(x for x in hdr if S.is_item_header(x)), None, b.section))
            use.add(ln, _fit(use, vals), extra)
        except S.BadValue as e:
            st.bad.append((ln, text, str(e)))
    iv = intervals.most_common(1)[0][0] if intervals else None
    return st.finish(texts, variant="sadf-d", interval_s=int(iv) if iv and iv.isdigit() else None)


# ---------------------------------------------------------------- sadf -j

_JSON_ITEM_KEYS = {"line", "number", "bus", "idvendor", "idprod"}
_JSON_TYPED = {  # statistics member path -> (table, key map, item key, item column)
    ("cpu-load",): ("cpu_util", S.CPU_JSON, "cpu", "cpu"),
    ("cpu-load-all",): ("cpu_util", S.CPU_JSON, "cpu", "cpu"),
    ("disk",): ("disk_io", S.DISK_JSON, "disk-device", "device"),
    ("network", "net-dev"): ("sar_net_dev", S.NET_DEV_JSON, "iface", "iface"),
    ("network", "net-edev"): ("sar_net_edev", S.NET_EDEV_JSON, "iface", "iface"),
    ("memory",): ("sar_memory", S.MEM_JSON, None, None),
    ("queue",): ("sar_queue", S.QUEUE_COLS, None, None),
}


def _flatten(prefix: str, d: dict, out: list[tuple[str, Any]]) -> None:
    for k, v in d.items():
        if isinstance(v, dict):
            _flatten(f"{prefix}{k}.", v, out)
        else:
            out.append((f"{prefix}{k}", v))


def _tok(v: Any) -> str:
    t = type(v)
    if t is float or t is int:
        return str(v)
    if v is None:
        return "N/A"
    raise S.BadValue(f"unexpected JSON value {str(v)[:40]!r}")


def _parse_json(texts: list[str], ctx: ParseContext) -> ParseResult:
    st = _State(ctx)
    cur: dict[str, Any] = {"extra": None, "day": None}

    def extra() -> tuple:
        return cur["extra"] or (st.row_host(), None, None, None, None, None, False)

    def time_of(val: Any) -> tuple[dt.datetime | None, bool]:
        if isinstance(val, dict):
            d = S.parse_date(str(val.get("date", "")), "mdy")
            tod = S.parse_tod(str(val.get("time", "")).split())
            if d is None or tod is None:
                return None, False
            exact = val.get("utc") == 1 or str(val.get("tz", "")).upper() in ("UTC", "GMT")
            return dt.datetime.combine(d, dt.time()) + dt.timedelta(seconds=tod[0]), exact
        ts, exact = S.parse_timestamp(str(val), "mdy")
        if ts is None and cur["day"] is not None:
            tod = S.parse_tod(str(val).split())
            ts = dt.datetime.combine(cur["day"], dt.time()) + dt.timedelta(seconds=tod[0]) if tod else None
        return ts, exact

    def extra_for(ts: dt.datetime, exact: bool) -> tuple:
        if exact:
            us = S.exact_us(ts if ts.tzinfo else ts.replace(tzinfo=dt.timezone.utc))
            return (st.row_host(), None, us, "exact", us, None, False)
        us = S.local_us(ts)
        return (st.row_host(), us, None, "local", us, None, False)

    batches: dict[tuple, S.Batch] = {}

    def add(section: str, path: tuple, d: Any, ln: int) -> None:
        if type(d) is not dict:
            if d is None or type(d) in (int, float):
                d = {path[-1]: d}
            else:
                raise S.BadValue(f"unexpected JSON value in {section!r}")
        if any(type(v) is dict for v in d.values()):
            pairs: list[tuple[str, Any]] = []
            _flatten("", d, pairs)
            hdr, vals = tuple(k for k, _ in pairs), [v for _, v in pairs]
        else:
            hdr, vals = tuple(d), list(d.values())
        toks = [v if type(v) is str else _tok(v) for v in vals]
        key = (path, hdr, tuple(type(v) is str for v in vals))
        b = batches.get(key)
        if b is None:
            spec = _JSON_TYPED.get(path)
            if spec:
                table, cmap, item_key, item_col = spec
                if item_key and not isinstance(d.get(item_key), str):
                    raise S.JsonError(f"{section} entry without {item_key}")
                b = S.Batch(table, hdr, cmap, (item_key,) if item_key else (), item_col, section)
            else:
                items = tuple(k for k, v in zip(hdr, vals) if type(v) is str or k in _JSON_ITEM_KEYS)
                b = S.Batch("sar_generic", hdr, None, items, None, section)
            b = batches[key] = st.col.batch(("json",) + key, lambda: b)
        b.add(ln, toks, extra())

    def each(val: Any) -> list:
        return val if isinstance(val, list) else [val]

    def stat(sub: list[str], val: Any, ln: int) -> None:
        if sub == ["timestamp"]:
            ts, exact = time_of(val)
            if ts is None:
                raise S.JsonError(f"timestamp {str(val)[:60]!r} not understood")
            cur["extra"] = extra_for(ts, exact)
            return
        path = tuple(sub)
        if path in _JSON_TYPED or not isinstance(val, dict) or not val or \
                not all(isinstance(v, (dict, list)) for v in val.values()):
            for d in each(val):
                add(".".join(sub), path, d, ln)
            return
        for kk, vv in val.items():  # network, power-management, psi: groups of sub-sections
            stat(sub + [kk], vv, ln)

    def on_open(path: list[str], ln: int) -> None:
        if path == ["sysstat", "hosts", "statistics"]:
            cur["extra"] = None

    def walk(path: list[str], val: dict, ln: int) -> None:
        for k, v in val.items():
            on_value(path + [k], v, ln)

    def on_value(path: list[str], val: Any, ln: int) -> None:
        if path in ([], ["sysstat"]) and isinstance(val, dict):
            return walk(path, val, ln)
        if path[:2] != ["sysstat", "hosts"]:
            raise S.JsonError(f"unexpected JSON member {'.'.join(path)!r}")
        rest = path[2:]
        if not rest:
            for h in each(val):
                if not isinstance(h, dict):
                    raise S.JsonError("host entry is not an object")
                walk(path, h, ln)
            return
        if rest[0] == "statistics":
            if len(rest) == 1:
                for e in each(val):
                    if not isinstance(e, dict):
                        raise S.JsonError("statistics entry is not an object")
                    cur["extra"] = None
                    walk(path, e, ln)
            else:
                stat(rest[1:], val, ln)
            return
        if rest[0] in ("restarts", "comments") and len(rest) == 1:
            for e in each(val):
                if isinstance(e, dict):
                    walk(path, e, ln)
            return
        if rest[1:] == ["boot"] and rest[0] == "restarts" and isinstance(val, dict):
            ts, exact = time_of(val)
            ex = extra_for(ts, exact) if ts else (st.row_host(), None, None, None, None, None, False)
            ncpu = val.get("cpu_count")
            st.restart(ln, ex, ncpu if isinstance(ncpu, int) and not isinstance(ncpu, bool) else None,
                       ts.isoformat() if ts else "?")
            return
        if rest[1:] == ["comment"] and rest[0] == "comments" and isinstance(val, dict):
            st.comments.append(str(val.get("com", "")))
            return
        if len(rest) == 1 and not isinstance(val, (dict, list)):
            if rest[0] == "nodename" and isinstance(val, str):
                st.see_host(val)
            elif rest[0] in ("file-date", "date"):
                cur["day"] = S.parse_date(str(val), "mdy")
            return
        raise S.JsonError(f"unexpected JSON member {'.'.join(path)!r}")

    walker = S.JsonLines(on_open, on_value)
    for i, text in enumerate(texts):
        if not text.strip():
            continue
        mark = st.col.mark()
        n_restarts, n_comments = len(st.restarts), len(st.comments)
        try:
            walker.feed(text, i + 1)
        except (S.JsonError, S.BadValue) as e:
            st.col.rollback(mark)
            del st.restarts[n_restarts:], st.comments[n_comments:]
            st.bad.append((i + 1, text, f"sadf -j JSON: {e}"))
    return st.finish(texts, variant="sadf-j")
