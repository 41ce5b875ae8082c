"""What the sysstat parsers (iostat, sar) share: banner, dates and times, numbers, column maps, rows.

sysstat prints local times and dates in the format of the locale it ran under (C: ``11/30/21``,
en_US: ``11/30/2021 10:15:02 AM``, de_DE: ``30.11.2021``, zh_CN: ``2017年01月12日`` and
``14时28分00秒``, ``S_TIME_FORMAT=ISO``: ``2021-11-30`` and ``2021-11-30T10:15:02+0100``).
Day and month order of ``NN/NN/NN`` dates is decided per file: a first field above 12 means
day/month (en_GB), a second one above 12 means month/day; when no date tells, month/day (C and
en_US) is assumed and the result's meta says so.

>>> parse_date("2017年01月12日")
datetime.date(2017, 1, 12)
>>> parse_date("30.10.2020"), parse_date("01/01/70"), parse_date("04/23/2019")
(datetime.date(2020, 10, 30), datetime.date(1970, 1, 1), datetime.date(2019, 4, 23))
>>> parse_tod(["03:59:48", "PM", "eth0"]), parse_tod(["14时28分00秒", "x"])
((57588, 2), (52080, 1))
>>> banner("Linux 3.10.0-957.el7.x86_64 (lqdocker) \\t08/11/2020 \\t_x86_64_\\t(16 CPU)")["host"]
'lqdocker'
"""
from __future__ import annotations

import contextlib
import functools
import datetime as dt
import gc
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import polars as pl

from forensics import schema
from forensics.sources._base import NULL_TOKENS, local_to_utc

# ---------------------------------------------------------------- banner, dates, times

BANNER_RE = re.compile(
    r"^(?P<sys>Linux|GNU/Linux)\s+(?P<release>\S+)\s+\((?P<host>[^()\s]*)\)\s+(?P<date>\S+)"
    r"(?:\s+_(?P<arch>\S+?)_)?(?:\s+\((?P<ncpu>[0-9]+)\s+CPU\))?\s*$"
)
_DATE_ISO = re.compile(r"^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})$")
_DATE_CJK = re.compile(r"^([0-9]{4})年([0-9]{1,2})月([0-9]{1,2})日$")
_DATE_YMD = re.compile(r"^([0-9]{4})[/.]([0-9]{1,2})[/.]([0-9]{1,2})$")
_DATE_NNY = re.compile(r"^([0-9]{1,2})([/.-])([0-9]{1,2})\2([0-9]{2}|[0-9]{4})$")
_TIME_24 = re.compile(r"^([0-9]{1,2}):([0-9]{2}):([0-9]{2})$")
_TIME_CJK = re.compile(r"^([0-9]{1,2})[时時]([0-9]{2})分([0-9]{2})秒$")
_AMPM = {"AM": 0, "PM": 12, "am": 0, "pm": 12}
_TS_ISO = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(Z|[+-][0-9]{2}:?[0-9]{2})?$"
)


def _year(y: str) -> int:
    n = int(y)
    if len(y) == 2:  # POSIX %y: 69-99 -> 19xx, 00-68 -> 20xx
        n += 1900 if n >= 69 else 2000
    return n


def date_order(dates: list[str]) -> tuple[str, bool]:
    """'mdy' or 'dmy' for the NN/NN/NN dates of one file, and whether it was assumed."""
    for s in dates:
        m = _DATE_NNY.match(s)
        if not m:
            continue
        if m.group(2) == ".":
            return "dmy", False
        a, b = int(m.group(1)), int(m.group(3))
        if a > 12 >= b:
            return "dmy", False
        if b > 12 >= a:
            return "mdy", False
    return "mdy", any(_DATE_NNY.match(s) and _DATE_NNY.match(s).group(2) != "." for s in dates)


@functools.lru_cache(maxsize=4096)
def parse_date(s: str, order: str = "mdy") -> dt.date | None:
    """A date as sysstat prints it under some locale (None when it is not one)."""
    s = s.strip()
    try:
        for rx in (_DATE_ISO, _DATE_CJK, _DATE_YMD):
            m = rx.match(s)
            if m:
                return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        m = _DATE_NNY.match(s)
        if m:
            a, b, y = int(m.group(1)), int(m.group(3)), _year(m.group(4))
            if m.group(2) == "." or m.group(2) == "-" or order == "dmy":
                a, b = b, a
            return dt.date(y, a, b)
    except ValueError:
        return None
    return None


def parse_tod(tokens: list[str]) -> tuple[int, int] | None:
    """(seconds since midnight, tokens consumed) for a leading time of day, 24 h, 12 h or CJK."""
    if not tokens:
        return None
    m = _TIME_24.match(tokens[0]) or _TIME_CJK.match(tokens[0])
    if not m:
        return None
    h, mi, se = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if mi > 59 or se > 60:
        return None
    if len(tokens) > 1 and tokens[1] in _AMPM:
        if not 1 <= h <= 12:
            return None
        return ((h % 12) + _AMPM[tokens[1]]) * 3600 + mi * 60 + min(se, 59), 2
    if h > 23:
        return None
    return h * 3600 + mi * 60 + min(se, 59), 1


def parse_timestamp(s: str, order: str = "mdy") -> tuple[dt.datetime | None, bool]:
    """A full date and time (iostat -t, JSON "timestamp"); (datetime, exact).

    exact is True when the text carries its UTC offset (ISO form); the datetime is then aware.
    """
    s = s.strip()
    m = _TS_ISO.match(s)
    if m:
        try:
            d = dt.datetime(*(int(m.group(i)) for i in range(1, 7)))
        except ValueError:
            return None, False
        z = m.group(7)
        if not z:
            return d, False
        if z == "Z":
            return d.replace(tzinfo=dt.timezone.utc), True
        z = z.replace(":", "")
        off = dt.timedelta(hours=int(z[1:3]), minutes=int(z[3:5]))
        return d.replace(tzinfo=dt.timezone(off if z[0] == "+" else -off)).astimezone(dt.timezone.utc), True
    parts = s.split()
    if len(parts) < 2:
        return None, False
    day = parse_date(parts[0], order)
    tod = parse_tod(parts[1:])
    if day is None or tod is None or 1 + tod[1] != len(parts):
        return None, False
    return dt.datetime.combine(day, dt.time()) + dt.timedelta(seconds=tod[0]), False


def banner(line: str) -> dict[str, str] | None:
    """Fields of the ``Linux <release> (<host>) <date> _<arch>_ (<n> CPU)`` first line, or None."""
    m = BANNER_RE.match(line.strip())
    return m.groupdict() if m else None


# ---------------------------------------------------------------- words of many lines at once (vectorised readers)

# bytes Python's str.split() treats as blanks and polars' patterns do not (\s is Unicode White_Space)
SPLIT_ONLY_BLANKS = (b"\x1c", b"\x1d", b"\x1e", b"\x1f")
_OTHER_BLANKS = (b"\r", b"\x0b", b"\x0c")
_WORD_ASCII = r"[^ \t\r\x0b\x0c]+"  # \S+ for ASCII text without \n and \x1c-\x1f (a third faster)


def has_any(data: bytes, needles: tuple[bytes, ...]) -> bool:
    """Whether any of `needles` occurs in `data` (memchr per needle: far quicker than a regex search)."""
    return any(x in data for x in needles)


def words(text: pl.Expr, data: bytes) -> pl.Expr:
    """Each line's whitespace-separated words as str.split() gives them, for `data` without
    SPLIT_ONLY_BLANKS: split at spaces when tabs are the only other blanks (40% quicker than a pattern)."""
    if not data.isascii():
        return text.str.extract_all(r"\S+")
    if has_any(data, _OTHER_BLANKS):
        return text.str.extract_all(_WORD_ASCII)
    spaced = text.str.replace_all("\t", " ", literal=True) if b"\t" in data else text
    return spaced.str.split(" ").list.eval(pl.element().filter(pl.element() != ""))


# ---------------------------------------------------------------- numbers

_NUM = re.compile(r"^[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)$")
_HUMAN = re.compile(r"^[0-9]+(?:[.,][0-9]+)?[kKMGTPE]B?$")


class BadValue(ValueError):
    """A value that is neither a number nor one of the 'not available' tokens."""


def value(tok: str) -> float | None:
    """A sysstat number (decimal comma of de_DE and friends accepted); N/A tokens -> None.

    >>> value("12,50"), value("N/A"), value("-3.85")
    (12.5, None, -3.85)
    """
    t = tok.strip()
    if t in NULL_TOKENS:
        return None
    if _NUM.match(t):
        return float(t.replace(",", "."))
    if _HUMAN.match(t):
        raise BadValue(f"human-readable value {t!r} (--human/-h output is not converted)")
    raise BadValue(f"not a number: {t[:40]!r}")


def is_number(tok: str) -> bool:
    return bool(_NUM.match(tok.strip()))


# ---------------------------------------------------------------- column maps
# header name (text and sadf -d) or JSON key -> (table column, factor); int columns are marked.

DISK_COLS: dict[str, tuple[str, float]] = {
    "rrqm/s": ("rrqm_s", 1), "wrqm/s": ("wrqm_s", 1), "drqm/s": ("drqm_s", 1),
    "r/s": ("r_s", 1), "w/s": ("w_s", 1), "d/s": ("d_s", 1), "f/s": ("f_s", 1),
    "rkB/s": ("rkb_s", 1), "wkB/s": ("wkb_s", 1), "dkB/s": ("dkb_s", 1),
    "rMB/s": ("rkb_s", 1024), "wMB/s": ("wkb_s", 1024), "dMB/s": ("dkb_s", 1024),
    "rsec/s": ("rkb_s", 0.5), "wsec/s": ("wkb_s", 0.5), "dsec/s": ("dkb_s", 0.5),
    "rd_sec/s": ("rkb_s", 0.5), "wr_sec/s": ("wkb_s", 0.5), "dc_sec/s": ("dkb_s", 0.5),
    "%rrqm": ("rrqm_pct", 1), "%wrqm": ("wrqm_pct", 1), "%drqm": ("drqm_pct", 1),
    "r_await": ("r_await_ms", 1), "w_await": ("w_await_ms", 1), "d_await": ("d_await_ms", 1),
    "f_await": ("f_await_ms", 1), "await": ("await_ms", 1),
    "rareq-sz": ("rareq_sz_kb", 1), "wareq-sz": ("wareq_sz_kb", 1), "dareq-sz": ("dareq_sz_kb", 1),
    "areq-sz": ("areq_sz_kb", 1), "avgrq-sz": ("avgrq_sz_sectors", 1),
    "aqu-sz": ("aqu_sz", 1), "avgqu-sz": ("aqu_sz", 1), "svctm": ("svctm_ms", 1),
    "%util": ("util_pct", 1), "tps": ("tps", 1),
    "kB_read/s": ("kb_read_s", 1), "kB_wrtn/s": ("kb_wrtn_s", 1), "kB_dscd/s": ("kb_dscd_s", 1),
    "MB_read/s": ("kb_read_s", 1024), "MB_wrtn/s": ("kb_wrtn_s", 1024), "MB_dscd/s": ("kb_dscd_s", 1024),
    "Blk_read/s": ("kb_read_s", 0.5), "Blk_wrtn/s": ("kb_wrtn_s", 0.5), "Blk_dscd/s": ("kb_dscd_s", 0.5),
    "kB_read": ("kb_read", 1), "kB_wrtn": ("kb_wrtn", 1), "kB_dscd": ("kb_dscd", 1),
    "MB_read": ("kb_read", 1024), "MB_wrtn": ("kb_wrtn", 1024), "MB_dscd": ("kb_dscd", 1024),
    "Blk_read": ("kb_read", 0.5), "Blk_wrtn": ("kb_wrtn", 0.5), "Blk_dscd": ("kb_dscd", 0.5),
}
DISK_JSON = {  # iostat -o JSON and sadf -j keys that differ from the text headers
    **DISK_COLS, "rrqm": ("rrqm_pct", 1), "wrqm": ("wrqm_pct", 1), "drqm": ("drqm_pct", 1),
    "util": ("util_pct", 1), "util-percent": ("util_pct", 1),
    "rkB": ("rkb_s", 1), "wkB": ("wkb_s", 1), "dkB": ("dkb_s", 1),
    "rd_sec": ("rkb_s", 0.5), "wr_sec": ("wkb_s", 0.5), "dc_sec": ("dkb_s", 0.5),
}
CPU_COLS = {
    **{k: (v, 1) for k, v in {
        "%user": "user_pct", "%usr": "user_pct", "%nice": "nice_pct", "%system": "system_pct",
        "%sys": "system_pct", "%iowait": "iowait_pct", "%steal": "steal_pct", "%irq": "irq_pct",
        "%soft": "soft_pct", "%guest": "guest_pct", "%gnice": "gnice_pct", "%idle": "idle_pct"}.items()},
}
CPU_JSON = {k.lstrip("%"): v for k, v in CPU_COLS.items()}
NET_DEV_COLS = {
    "rxpck/s": ("rxpck_s", 1), "txpck/s": ("txpck_s", 1), "rxkB/s": ("rxkb_s", 1), "txkB/s": ("txkb_s", 1),
    "rxbyt/s": ("rxkb_s", 1 / 1024), "txbyt/s": ("txkb_s", 1 / 1024),
    "rxcmp/s": ("rxcmp_s", 1), "txcmp/s": ("txcmp_s", 1), "rxmcst/s": ("rxmcst_s", 1),
    "%ifutil": ("ifutil_pct", 1),
}
NET_DEV_JSON = {"rxpck": ("rxpck_s", 1), "txpck": ("txpck_s", 1), "rxkB": ("rxkb_s", 1), "txkB": ("txkb_s", 1),
                "rxcmp": ("rxcmp_s", 1), "txcmp": ("txcmp_s", 1), "rxmcst": ("rxmcst_s", 1),
                "ifutil-percent": ("ifutil_pct", 1)}
_EDEV = ("rxerr", "txerr", "coll", "rxdrop", "txdrop", "txcarr", "rxfram", "rxfifo", "txfifo")
NET_EDEV_COLS = {f"{k}/s": (f"{k}_s", 1) for k in _EDEV}
NET_EDEV_JSON = {k: (f"{k}_s", 1) for k in _EDEV}
MEM_COLS = {
    "kbmemfree": ("kbmemfree", 1), "kbavail": ("kbavail", 1), "kbmemused": ("kbmemused", 1),
    "%memused": ("memused_pct", 1), "kbbuffers": ("kbbuffers", 1), "kbcached": ("kbcached", 1),
    "kbcommit": ("kbcommit", 1), "%commit": ("commit_pct", 1), "kbactive": ("kbactive", 1),
    "kbinact": ("kbinact", 1), "kbdirty": ("kbdirty", 1), "kbshmem": ("kbshmem", 1),
    "kbanonpg": ("kbanonpg", 1), "kbslab": ("kbslab", 1), "kbkstack": ("kbkstack", 1),
    "kbpgtbl": ("kbpgtbl", 1), "kbvmused": ("kbvmused", 1),
}
MEM_JSON = {"memfree": ("kbmemfree", 1), "avail": ("kbavail", 1), "memused": ("kbmemused", 1),
            "memused-percent": ("memused_pct", 1), "buffers": ("kbbuffers", 1), "cached": ("kbcached", 1),
            "commit": ("kbcommit", 1), "commit-percent": ("commit_pct", 1), "active": ("kbactive", 1),
            "inactive": ("kbinact", 1), "dirty": ("kbdirty", 1), "shared": ("kbshmem", 1),
            "anonpg": ("kbanonpg", 1), "slab": ("kbslab", 1), "kstack": ("kbkstack", 1),
            "pgtbl": ("kbpgtbl", 1), "vmused": ("kbvmused", 1)}
QUEUE_COLS = {"runq-sz": ("runq_sz", 1), "plist-sz": ("plist_sz", 1), "ldavg-1": ("ldavg_1", 1),
              "ldavg-5": ("ldavg_5", 1), "ldavg-15": ("ldavg_15", 1), "blocked": ("blocked", 1)}

# columns whose values are text, not numbers (sar -m USB, sar -m BAT)
TEXT_COLS = {"idvendor", "idprod", "manufact", "product", "status"}
_ITEM_HDR = re.compile(r"^[A-Z][A-Z0-9_]*$")


_PER_CPU_HDR = re.compile(r"^CPU[0-9]+$")


def is_item_header(h: str) -> bool:
    """Upper-case header names (CPU, IFACE, DEV, INTR, TTY, FCHOST, FILESYSTEM, ...) name the row's item.

    Per-CPU value columns (CPU0, CPU1, ... of sar -I) are values, not items.
    """
    return bool(_ITEM_HDR.match(h)) and not _PER_CPU_HDR.match(h)


# ---------------------------------------------------------------- row collection (vectorised conversion)
# Python only sorts lines into batches (one per section layout: same header, same target table);
# numbers are converted, checked and unpivoted per batch with polars.

EXTRA = ("host", "_lus", "_xus", "_q", "_key", "sample_no", "since_boot")
_EXTRA_TYPES = {"host": pl.String, "_lus": pl.Int64, "_xus": pl.Int64, "_q": pl.String, "_key": pl.Int64,
                "sample_no": pl.Int64, "since_boot": pl.Boolean}
_NUM_RX = r"^[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)$"
_HUMAN_RX = r"^[0-9]+(?:[.,][0-9]+)?[kKMGTPE]B?$"
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


@contextlib.contextmanager
def no_gc():
    """Pause the cyclic garbage collector while a parser builds its many small lists and tuples.

    They hold no cycles; without this, repeated full collections over the growing batches cost
    more than the parsing itself (3x on a 60k-line iostat file).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def local_us(d: dt.datetime) -> int:
    """Microseconds since the epoch of a naive local datetime (read as if it were UTC)."""
    return (d - _EPOCH) // dt.timedelta(microseconds=1)


def exact_us(d: dt.datetime) -> int:
    return (d - _EPOCH_UTC) // dt.timedelta(microseconds=1)


@dataclass
class Batch:
    """Data lines of one layout: `hdr` names each token; `table` is the target ("sar_generic" for none).

    item_hdrs: headers whose text names the row (CPU/DEV/IFACE..., JSON string keys); for a typed
    table the first of them fills `item_col`. cmap maps the other headers to table columns.
    """

    table: str
    hdr: tuple[str, ...]
    cmap: dict | None
    item_hdrs: tuple[str, ...]
    item_col: str | None
    section: str
    line_no: list[int] = field(default_factory=list)
    toks: list[list[str]] = field(default_factory=list)
    extra: list[tuple] = field(default_factory=list)
    # rows given whole by a vectorised reader: line_no, EXTRA and one String column t<j> per header
    frame: pl.DataFrame | None = None
    clean: bool = False  # the tokens are whitespace-split words: none blank, none to strip

    def add(self, line_no: int, toks: list[str], extra: tuple) -> None:
        self.line_no.append(line_no)
        self.toks.append(toks)
        self.extra.append(extra)

    def rows(self) -> int:
        return self.frame.height if self.frame is not None else len(self.line_no)

    def to_frame(self) -> pl.DataFrame:
        """The rows added one by one, in the layout of `frame`."""
        cols = list(zip(*self.toks))
        ex = list(zip(*self.extra))
        data = [pl.Series("line_no", self.line_no, dtype=pl.Int64)]
        data += [pl.Series(name, ex[k], dtype=_EXTRA_TYPES[name]) for k, name in enumerate(EXTRA)]
        data += [pl.Series(f"t{j}", cols[j], dtype=pl.String) for j in range(len(self.hdr))]
        return pl.DataFrame(data)


class Collector:
    def __init__(self) -> None:
        self.batches: dict[tuple, Batch] = {}
        self.fixed: dict[str, list[dict[str, Any]]] = {}  # rows built whole (restart markers)

    def batch(self, key: tuple, make: Callable[[], Batch]) -> Batch:
        b = self.batches.get(key)
        if b is None:
            b = self.batches[key] = make()
        return b

    def add_fixed(self, table: str, row: dict[str, Any]) -> None:
        self.fixed.setdefault(table, []).append(row)

    def mark(self) -> tuple:
        return ({k: len(b.line_no) for k, b in self.batches.items()}, {t: len(r) for t, r in self.fixed.items()})

    def rollback(self, mark: tuple) -> None:
        """Drop what was added since `mark` (a line failing half-way must not be both used and unparsed)."""
        nb, nf = mark
        for k, b in self.batches.items():
            n = nb.get(k, 0)
            del b.line_no[n:], b.toks[n:], b.extra[n:]
        for t, rows in self.fixed.items():
            del rows[nf.get(t, 0):]

    def unmapped(self) -> set[str]:
        """Headers of typed batches that no table column holds (they go to sar_generic when there is one)."""
        return {h for b in self.batches.values() if b.cmap is not None and b.rows()
                for h in b.hdr if h not in b.cmap and h not in b.item_hdrs}

    def frames(self, tables: tuple[str, ...], tz: str | None, rank_samples: bool
               ) -> tuple[dict[str, pl.DataFrame], list[tuple[int, str]]]:
        """Tables (conformable to their schemas) and (line_no, reason) of rows whose values do not convert."""
        parts: dict[str, list[pl.DataFrame]] = {t: [] for t in tables}
        bad: list[tuple[int, str]] = []
        for b in self.batches.values():
            if not b.rows():
                continue
            typed, generic, rejected = _convert(b)
            bad.extend(rejected)
            if typed is not None and typed.height:
                parts[b.table].append(typed)
            if generic is not None and generic.height and "sar_generic" in parts:
                parts["sar_generic"].append(generic)
        for t, rows in self.fixed.items():
            if rows and t in parts:
                types = {**schema.polars_schema(t), **_EXTRA_TYPES}
                parts[t].append(pl.DataFrame(rows, schema={c: types[c] for c in rows[0]}))
        frames = {t: pl.concat(p, how="diagonal_relaxed") if p else None for t, p in parts.items()}
        if bad:  # a line with one bad value is unparsed as a whole: none of its rows stay
            lines = pl.Series([ln for ln, _ in bad], dtype=pl.Int64)
            frames = {t: None if f is None else f.filter(~pl.col("line_no").is_in(lines.implode())) for t, f in frames.items()}
        if rank_samples:
            keys = [f["_key"] for f in frames.values() if f is not None and "_key" in f.columns]
            if keys:
                uniq = pl.concat(keys).drop_nulls().unique().sort()
                rank = pl.DataFrame({"_key": uniq, "sample_no": pl.int_range(0, uniq.len(), eager=True, dtype=pl.Int64)})
                for t, f in frames.items():
                    if f is not None:
                        frames[t] = f.drop("sample_no", strict=False).join(rank, on="_key", how="left")
        out = {}
        for t in tables:
            f = frames[t]
            out[t] = empty(t) if f is None else _finish_frame(t, f, tz)
        return out, bad


_EMPTY: dict[str, pl.DataFrame] = {}


def empty(table: str) -> pl.DataFrame:
    """schema.empty(table), built once (a fresh frame costs a Series per column on every file)."""
    df = _EMPTY.get(table)
    if df is None:
        df = _EMPTY[table] = schema.empty(table)
    return df.clone()


def _finish_frame(table: str, df: pl.DataFrame, tz: str | None) -> pl.DataFrame:
    sch = schema.polars_schema(table)
    for c in ("_lus", "_xus", "_q"):
        if c not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=_EXTRA_TYPES[c]).alias(c))
    exact = pl.from_epoch(pl.col("_xus"), time_unit="us").dt.replace_time_zone("UTC")
    local = local_to_utc(pl.from_epoch(pl.col("_lus"), time_unit="us"), tz)
    df = df.with_columns(pl.coalesce(exact, local).alias("ts")).with_columns(
        pl.when(pl.col("ts").is_null()).then(pl.lit("none")).otherwise(pl.col("_q")).alias("ts_quality"))
    ints = [c for c, t in sch.items() if t == pl.Int64 and c in df.columns and df.schema[c] == pl.Float64]
    if ints:
        df = df.with_columns(pl.col(c).round(0) for c in ints)
    keep = [c for c in df.columns if c in sch]
    return df.select(keep).sort("line_no", maintain_order=True)


def _reason(hdr: tuple[str, ...], toks: list[str], idx: list[int]) -> str:
    """Why a row was rejected (computed in Python for the few bad rows only)."""
    for j in idx:
        try:
            v = value(toks[j])
            if v is not None and (v != v or v in (float("inf"), float("-inf"))):
                raise BadValue(f"not a number: {toks[j][:40]!r}")
        except BadValue as e:
            return f"{e} in column {hdr[j]}"
    return "value out of range"


def _convert(b: Batch) -> tuple[pl.DataFrame | None, pl.DataFrame | None, list[tuple[int, str]]]:
    """Typed rows, generic long rows and rejected (line_no, reason) of one batch.

    All value tokens of the batch are converted in one pass (column-major, so the generic long form
    is the converted series itself): a handful of polars operations per batch, whatever its width.
    """
    f = b.frame if b.frame is not None else b.to_frame()
    n = f.height
    item_idx = [j for j, h in enumerate(b.hdr) if h in b.item_hdrs]
    text_idx = [j for j, h in enumerate(b.hdr) if h in TEXT_COLS and j not in item_idx]
    val_idx = [j for j in range(len(b.hdr)) if j not in item_idx and j not in text_idx]
    tok = [f.get_column(f"t{j}") for j in range(len(b.hdr))]
    flat = (pl.concat([tok[j] for j in val_idx], rechunk=True) if val_idx else pl.Series([], dtype=pl.String)
            ).rename("v")
    if not b.clean:  # whitespace-split words need no stripping
        flat = flat.str.strip_chars()
    if not b.clean or flat.str.contains(",", literal=True).any():
        num = flat.str.replace(",", ".", literal=True).cast(pl.Float64, strict=False)
    else:
        num = flat.cast(pl.Float64, strict=False)
    bad_rows = np.zeros(n, dtype=bool)
    notnum = ~num.is_finite().fill_null(False)  # null, NaN or infinite: bad unless a N/A token
    if len(val_idx) and notnum.any():
        badv = (notnum & ~flat.is_in(list(NULL_TOKENS))).fill_null(True)
        if badv.any():
            bad_rows |= badv.to_numpy().reshape(len(val_idx), n).any(axis=0)
    item_s = tok[item_idx[0]] if item_idx else None
    if b.item_col and item_s is not None and not b.clean:
        bad_rows |= np.array([not str(v).strip() for v in item_s.to_list()], dtype=bool)
    bad = []
    for k in np.flatnonzero(bad_rows).tolist():
        ln = f["line_no"][k]
        toks = [t[k] for t in tok]
        bad.append((ln, _reason(b.hdr, toks, val_idx) if val_idx else f"no {b.hdr[item_idx[0]]} value"))
    keep = pl.Series(~bad_rows) if bad else None
    base = f.select("line_no", *EXTRA)
    col_of = {j: num.slice(k * n, n) for k, j in enumerate(val_idx)}
    typed = None
    rest_idx = val_idx
    if b.cmap is not None:
        targets: dict[str, pl.Series] = {}
        rest_idx = []
        for j in val_idx:
            m = b.cmap.get(b.hdr[j])
            if m is None:
                rest_idx.append(j)
                continue
            v = col_of[j] if m[1] == 1 else col_of[j] * m[1]
            targets[m[0]] = v if m[0] not in targets else targets[m[0]].fill_null(v)
        data = [*base.get_columns(), *(v.alias(c) for c, v in targets.items())]
        if b.item_col:
            if item_s is None:
                item = pl.Series(b.item_col, ["all"], dtype=pl.String).new_from_index(0, n)
            elif b.table == "cpu_util":
                item = item_s.replace("-1", "all")
            else:
                item = item_s
            data.append(item.alias(b.item_col))
        typed = pl.DataFrame(data)
        if keep is not None:
            typed = typed.filter(keep)
    generic = None
    if rest_idx:
        k = len(rest_idx)
        parts = [pl.lit(tok[j]) for j in item_idx] + [pl.lit(f"{b.hdr[j]}=") + pl.lit(tok[j]) for j in text_idx]
        if parts:
            items = pl.select(pl.concat_str(parts, separator=" ")).to_series()
        else:
            items = pl.Series([None], dtype=pl.String).new_from_index(0, n)
        values = pl.concat([col_of[j] for j in rest_idx]) if rest_idx != val_idx else num
        rep = pl.concat([base] * k) if k > 1 else base
        metric = pl.Series("metric", [b.hdr[j] for j in rest_idx], dtype=pl.String).gather(np.repeat(np.arange(k), n))
        generic = rep.with_columns(
            (pl.concat([items] * k) if k > 1 else items).alias("item").cast(pl.String),
            metric, values.alias("value"),
            pl.lit(b.section, dtype=pl.String).alias("section"))
        if keep is not None:
            generic = generic.filter(pl.Series(np.tile(~bad_rows, k)))
    return typed, generic, bad


# ---------------------------------------------------------------- sysstat JSON (iostat -o JSON, sadf -j)


class JsonError(ValueError):
    pass


_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*')
_DEC = json.JSONDecoder()
_OPENERS = re.compile(r'(?:\s*"(?:[^"\\]|\\.)*"\s*:\s*[\[{])*\s*$')


class JsonLines:
    """Feed sysstat's JSON line by line: ``on_open(path)`` / ``on_value(path, value)`` callbacks.

    sysstat writes one object member or one array element per line, so walking the lines keeps the
    line number of every record and survives a truncated document. `path` lists the member names
    from the root (array levels add nothing); ``on_open`` fires when an object opens as an array
    element (a new statistics record, for instance).
    """

    def __init__(self, on_open: Callable[[list[str], int], None], on_value: Callable[[list[str], Any, int], None]):
        self.stack: list[tuple[str | None, str]] = []
        self.on_open, self.on_value = on_open, on_value

    def path(self) -> list[str]:
        return [k for k, _ in self.stack if k is not None]

    def feed(self, line: str, line_no: int) -> None:
        """Process one line; on JsonError nothing of the line has been applied."""
        s = line.strip()
        stack = list(self.stack)
        events: list[tuple[str, list[str], Any]] = []
        i, n = 0, len(s)
        while i < n:
            c = s[i]
            if c in " \t\r,":
                i += 1
            elif c in "}]":
                if not stack or stack[-1][1] != ("{" if c == "}" else "["):
                    raise JsonError(f"unbalanced {c!r}")
                stack.pop()
                i += 1
            else:
                key = None
                m = _KEY.match(s, i)
                if m and (not stack or stack[-1][1] == "{"):
                    try:
                        key = json.loads('"' + m.group(1) + '"')
                    except ValueError:
                        raise JsonError("bad member name") from None
                    i = m.end()
                    if i >= n:
                        raise JsonError("member without value")
                elif stack and stack[-1][1] == "{":
                    raise JsonError("expected a member name")
                try:
                    val, end = _DEC.raw_decode(s, i)
                except ValueError:
                    # an object or array left open: sysstat opens them only at the end of a line
                    if s[i] in "{[" and _OPENERS.match(s, i + 1):
                        stack.append((key, s[i]))
                        if s[i] == "{" and key is None and len(stack) > 1 and stack[-2][1] == "[":
                            events.append(("open", [k for k, _ in stack if k is not None], None))
                        i += 1
                        continue
                    raise JsonError(f"bad or truncated JSON at column {i + 1}") from None
                events.append(("value", [k for k, _ in stack if k is not None] + ([key] if key is not None else []), val))
                i = end
        self.stack = stack
        for kind, path, val in events:
            if kind == "open":
                self.on_open(path, line_no)
            else:
                self.on_value(path, val, line_no)


def json_tok(v: Any) -> str:
    """A JSON number back to text for the shared converters (None -> N/A)."""
    if v is None:
        return "N/A"
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise BadValue(f"unexpected JSON value {str(v)[:40]!r}")
    return str(v)
