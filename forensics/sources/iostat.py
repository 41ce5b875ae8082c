"""iostat (sysstat 5-12): device reports into ``disk_io``, avg-cpu blocks into ``cpu_util``.

Reads every column set sysstat has printed, text and ``-o JSON``:

- ``-x`` old (sysstat <= 11.4): ``Device: rrqm/s wrqm/s r/s w/s rkB/s wkB/s avgrq-sz avgqu-sz await
  r_await w_await svctm %util`` (sysstat 9: ``rsec/s wsec/s`` and no r_await/w_await);
  sysstat 11.5-11.7: ``r/s w/s rkB/s wkB/s rrqm/s wrqm/s %rrqm %wrqm r_await w_await aqu-sz rareq-sz
  wareq-sz svctm %util``; sysstat 12: ``r/s rkB/s rrqm/s %rrqm r_await rareq-sz w/s ... d/s dkB/s
  drqm/s %drqm d_await dareq-sz f/s f_await aqu-sz %util``. Old and new names land in the same
  columns (avgqu-sz and aqu-sz -> ``aqu_sz``); ``-m`` MB and sector columns are converted to kB.
- basic (no ``-x``): ``tps kB_read/s kB_wrtn/s [kB_dscd/s] kB_read kB_wrtn [kB_dscd]`` and the
  ``MB_``/``Blk_`` variants (cumulative MB/blocks become kB, rounded to whole kB).
- ``-h``/``--human``: sysstat <= 11.4 prints each device's name on a line of its own and its values on the
  next (``printf("%s\\n%13s", devname, "")`` in iostat.c), read as one row; sysstat >= 11.5 puts ``Device``
  last in the header and on each row and prints sizes with a unit (``1.3M``: kB columns converted) and
  percentages with ``%``.
- ``-t`` timestamp lines in the C/en_US/en_GB/de/ISO forms (``11/30/2021 10:15:02 AM``,
  ``11/10/14 17:44:13``, ``2026-11-30T10:15:02+0100``), sysstat 5 ``Time:`` lines, ``-z``, ``-p``
  partitions, ``-N`` names, several runs concatenated (each banner starts a new run).
- the banner ``Linux 5.8.0 (host) <date> _x86_64_ (8 CPU)`` (host -> meta["hosts"], the date for
  ``Time:`` lines); avg-cpu rows get ``cpu`` = "all".

Times: ``-t`` times are local, converted with ctx.tz (ts_quality "local"); ISO times with an offset
are "exact". Reports without a time get ts null ("none"), or, when ctx.hints has "interval_s" and
ctx.capture_time is known, capture_time + report_no * interval ("sampled").
``sample_no`` is the report number (0-based) in the file. ``since_boot`` is true for the first
report of each run: iostat's first report averages since boot -- unless it ran with ``-y``, which
the output does not show (pass ctx.hints["y"] = True to say so).
Columns sysstat added that no disk_io column holds are listed in meta["ignored_columns"].

>>> from forensics.sources._base import ParseContext
>>> sample = (b"Linux 3.10.0-1062.1.2.el7.x86_64 (localhost.localdomain) \\t11/30/2021 \\t_x86_64_\\t(1 CPU)\\n\\n"
...     b"avg-cpu:  %user   %nice %system %iowait  %steal   %idle\\n"
...     b"           0.14    0.00    0.16    0.00    0.00   99.70\\n\\n"
...     b"Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util\\n"
...     b"sda               0.00     0.02    0.13    0.11     5.27     1.10    52.53     0.00    0.88    0.53    1.29   0.52   0.01\\n")
>>> res = parse(sample, ParseContext(host="node01"))
>>> res.tables["disk_io"].select("device", "r_s", "rkb_s", "aqu_sz", "r_await_ms", "util_pct", "since_boot").rows()
[('sda', 0.13, 5.27, 0.0, 0.53, 0.01, True)]
>>> res.tables["cpu_util"].select("cpu", "user_pct", "idle_pct", "ts_quality").rows()
[('all', 0.14, 99.7, 'none')]
>>> res.lines, res.unparsed.height, res.meta["hosts"]
(7, 0, ['localhost.localdomain'])
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

import numpy as np
import polars as pl

from forensics.layout import MARKER_PREFIX
from forensics.sources import _sysstat as S
from forensics.sources._base import RE_MAIL_QUOTE, ParseContext, ParseResult, Sniff, result, split_lines, unparsed_rows
from forensics.sources._bounded import float_or_none
from forensics.sources._shell import take_shell_lines
from forensics.sources._sysstat import reports as R
from forensics.sources._sysstat.sniff import sniff as sniff_sysstat

NAME = "iostat"
VERSION = 10  # 10: a hint interval_s (a bundle's, untrusted) that is no number of seconds in (0, 86400] is no interval: a run of hundreds of digits, inf, 1e300 or a list lost the file (ValueError/OverflowError/TypeError), a negative one put reports before the capture; 9: a Device header of iostat columns only, in any order and any subset of two or more (an author's cut of -x: "Device w/s wkB/s w_await wareq-sz aqu-sz %util") is recognised (refused before; the parser already read it); a new real fixture; 8: the shell around a paste is no longer unparsed: the prompt + iostat command lines go to meta["commands"] (as sar, numactl and nvidia-smi), the author's "# ..." and "#####" lines (also a comment typed at a prompt) and the "^C" that stopped a report are skipped and counted (meta skipped); banner dates of three words (zh_CN spaced out "2019 年 08 月 19 日", ko_KR "2021년 09월 10일") are read (host and date were lost, the banner unparsed); 7: -h/--human of sysstat <= 11.4 (each device's name on its own line, its values on the next) is read as one row; a header with Device last (-h/--pretty of sysstat >= 11.5) is recognised; 6: lines that only mark an elision ("[...]", "<snip>", "...") are skipped and counted by the shared paste layer (sources.parse_pasted), no longer unparsed; 5: a line with a value beyond a 64-bit integer in an Int64 column is unparsed with the reason (shared _sysstat rows; before, the cast in schema.conform lost the file); 4: a banner with no blank before its (N CPU) (shared sysstat banner pattern)
# 3: a paste quoted or indented as a block is read without the prefix; its unparsed lines keep the file's text
# 2: JSON nested past the recursion limit is unparsed lines (was a parse error)
TABLES = ("disk_io", "cpu_util")
DESCRIPTION = "iostat text (-x old/new column sets, basic, -m, -t, -p) and -o JSON: disk_io, cpu_util"

# a Device header whose columns are all iostat's (two at least), whichever comes first: a column subset the
# paste's author kept ("Device  w/s  wkB/s  w_await wareq-sz  aqu-sz  %util", the write side of -x)
_SUBSET = "|".join(re.escape(c) for c in sorted(S.DISK_COLS, key=len, reverse=True))
_SNIFF_TEXT = re.compile(r"(?m)^(?:> ?)*[ \t]*(?:avg-cpu:\s+%user|Device:?\s+(?:tps|r/s|rrqm/s)\s"
                         rf"|Device:?(?:[ \t]+(?:{_SUBSET})){{2,}}[ \t]*\r?$"
                         r"|(?:tps|r/s|rrqm/s)\s[^\n]*\s(?:kB_read/s|MB_read/s|Blk_read/s|rkB/s|rMB/s|rsec/s)\s[^\n]*\sDevice:?[ \t]*$)")
_SNIFF_JSON = re.compile(r'"(?:disk_device|avg-cpu)"\s*:')
_DATEISH = re.compile(r'"(?:date|timestamp)"\s*:\s*"([^"]*)"')


def sniff(head: bytes) -> Sniff:
    """iostat text (an ``avg-cpu:`` or ``Device`` header line) or ``iostat -o JSON``; a sysstat banner alone is
    not enough (sar prints the same one)."""
    return sniff_sysstat(head, json_members=_SNIFF_JSON, json_what="disk_device/avg-cpu members (iostat -o JSON)",
                         json_tool="iostat", headers=_SNIFF_TEXT, headers_what="iostat header lines (avg-cpu: / Device ...)",
                         header_what=_HEADER, none_what=_HEADER)


_HEADER = "iostat header line (avg-cpu: / Device ...)"


class _State:
    """Report bookkeeping shared by the text and JSON readers."""

    def __init__(self, ctx: ParseContext):
        self.ctx = ctx
        self.col = S.Collector()
        self._extra: tuple | None = None
        self._last: S.Batch | None = None
        self.bad: list[tuple[int, str, str]] = []
        self.report = -1
        self.run_start = 0
        self.has_cpu = self.has_dev = False
        self.ts: dt.datetime | None = None
        self.exact = False
        self.host: str | None = None
        self.hosts: list[str] = []
        self.day: dt.date | None = None
        self.variant: str | None = None
        interval = ctx.hints.get("interval_s") if ctx.hints else None
        # (a bundle's hint, untrusted: a number of seconds up to a day, as nvidia_smi takes it; anything else, a
        # run of hundreds of digits, inf, a list, is no interval: float() raised or overflowed the time)
        iv = float_or_none(interval) if isinstance(interval, (int, float, str)) else None
        self.interval = iv if iv is not None and 0 < iv <= 86400 else None
        self.no_since_boot = bool(ctx.hints.get("y")) if ctx.hints else False

    def new_run(self, host: str | None) -> None:
        self.run_start = self.report + 1
        self._extra = None
        if host:
            self.host = host
            if host not in self.hosts:
                self.hosts.append(host)

    def new_report(self, ts: dt.datetime | None = None, exact: bool = False) -> None:
        self.report += 1
        self.has_cpu = self.has_dev = False
        self.ts, self.exact = ts, exact
        self._extra = None

    def extra(self) -> tuple:
        """The per-row extras (host, times, sample, since_boot) of the current report."""
        if self.report < 0:
            self.new_report()
        if self._extra is None:
            lus = xus = q = None
            if self.ts is not None:
                if self.exact:
                    xus, q = S.exact_us(self.ts), "exact"
                else:
                    lus, q = S.local_us(self.ts), "local"
            elif self.interval and self.ctx.capture_time:
                cap = self.ctx.capture_time
                cap = cap if cap.tzinfo else cap.replace(tzinfo=dt.timezone.utc)
                xus, q = S.exact_us(cap + dt.timedelta(seconds=self.interval * self.report)), "sampled"
            host = None if self.ctx.host else self.host
            since_boot = self.report == self.run_start and not self.no_since_boot
            self._extra = (host, lus, xus, q, None, self.report, since_boot)
        return self._extra

    def cpu_row(self, line_no: int, hdr: tuple[str, ...], toks: list[str], cmap: dict) -> None:
        b = self.col.batch(("cpu", hdr, id(cmap)), lambda: S.Batch("cpu_util", hdr, cmap, (), "cpu", "avg-cpu"))
        b.add(line_no, toks, self.extra())
        self.has_cpu = True

    def disk_row(self, line_no: int, hdr: tuple[str, ...], toks: list[str], cmap: dict) -> None:
        """`hdr[0]` / `toks[0]` are the device column."""
        b = self._last
        if b is None or b.hdr is not hdr or b.cmap is not cmap:
            b = self._last = self.col.batch(("dev", hdr, id(cmap)),
                                            lambda: S.Batch("disk_io", hdr, cmap, (hdr[0],), "device", "device"))
        b.add(line_no, toks, self.extra())
        self.has_dev = True

    def finish(self, texts: list[str], **meta: Any) -> ParseResult:
        tables, rejected = self.col.frames(TABLES, self.ctx.tz, rank_samples=False)
        bad = self.bad + [(ln, texts[ln - 1], reason) for ln, reason in rejected]
        up = unparsed_rows(bad, self.ctx, NAME) if bad else None
        return result(NAME, self.ctx, len(texts), tables, up, hosts=self.hosts, variant=self.variant,
                      reports=self.report + 1, ignored_columns=sorted(self.col.unmapped()), **meta)


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    with S.no_gc():
        loc = S.dates.locale_times(data)
        if loc is None:
            dates = S.dates.locale_dates(data)
            loc = (dates, "zh_CN/ko_KR dates") if dates is not None else None
        res = _parse(loc[0] if loc else data, ctx)
        if loc is not None:  # the banner dates (and -t times) read in the ISO/24-hour forms; unparsed lines as the file has them
            res.meta["locale_times"] = loc[1]
            if res.unparsed.height:
                text = split_lines(data).get_column("text")
                res.unparsed = res.unparsed.with_columns(text.gather(res.unparsed.get_column("line_no") - 1).alias("text"))
    return _paste_shell(res)


COMMENT = "comment line (# ...) added to the paste, not iostat output"
INTERRUPT = "^C (the paste's Ctrl-C echo, not iostat output)"


def _paste_shell(res: ParseResult) -> ParseResult:
    """The shell around a paste, out of ``unparsed``: the prompt + iostat command lines (meta commands, as
    sar, numactl and nvidia-smi put them), the author's ``# ...`` and ``#####`` lines and the ``^C`` that
    stopped the report (meta skipped, counted). Other prompts and lines stay unparsed."""
    if not res.unparsed.height:
        return res
    up, facts = take_shell_lines(res.unparsed, r"iostat(?=\s+-|\s+[0-9]|\s*$)")  # (its arguments: options, devices, interval)
    if facts.get("commands"):
        res.unparsed = up
        res.meta = {**res.meta, "commands": facts["commands"]}
    skipped = dict(res.meta.get("skipped", {}))
    # (a comment typed at a prompt, "[root@node3 ~]# # disk stats while ...", is one too)
    for why, rx in ((COMMENT, r"^\s*(?:[^#\n]{0,80}[$#%>]\s+)?#"), (INTERRUPT, r"^\s*\^C\s*$")):
        mask = res.unparsed.get_column("text").str.contains(rx)
        if mask.any():
            skipped[why] = skipped.get(why, 0) + int(mask.sum())
            res.unparsed = res.unparsed.filter(~mask)
    if skipped:
        res.meta = {**res.meta, "skipped": skipped}
    return res


def _parse(data: bytes, ctx: ParseContext) -> ParseResult:
    lines = split_lines(data)
    col = lines["text"]
    first = ""
    for k in range(0, col.len(), 4096):  # the first line that is not blank, read a piece at a time
        first = next((t.strip() for t in col.slice(k, 4096).to_list() if t.strip()), "")
        if first:
            break
    if first.startswith("{"):
        return _parse_json(col.to_list(), ctx)
    if first.startswith(">"):  # pasted in a mail reply: read without the quote prefixes
        quote = re.compile(RE_MAIL_QUOTE)
        return _parse_text([quote.sub("", t) if t.startswith(">") else t for t in col.to_list()], ctx)
    if col.len() >= FAST_MIN_LINES and data.isascii() and not S.has_any(data, S.SPLIT_ONLY_BLANKS):
        return _parse_text_fast(lines, R.Texts(col), ctx, data)
    return _parse_text(col.to_list(), ctx)


def _variant(cols: list[str]) -> str:
    if "tps" in cols:
        return "basic"
    if "f/s" in cols or "d/s" in cols:
        return "x-sysstat12"
    if "rareq-sz" in cols:
        return "x-sysstat11.5"
    return "x-old"


_DEVICE = ["Device:", "Device"]


class _Steer:
    """The lines that steer both text readers: blanks, markers, banners, the avg-cpu and Device headers,
    ``-t`` timestamps and sysstat 5 ``Time:`` lines. `mode` says what the next plain lines are rows of."""

    def __init__(self, st: _State, order: str):
        self.st, self.order = st, order
        self.mode: str | None = None
        self.cpu_cols: list[str] = []
        self.dev_cols: list[str] = []
        self.dev_hdr: tuple[str, ...] = ()
        self.dev_last = False
        self.hdr_open = False  # the line after a Device header may be the rest of it (wrapped by a mail client)
        # avg-cpu and Device header lines read before, by their text: (kind, columns, device last, known);
        # a report repeats both, so each distinct header is split and checked once
        self._seen: dict[str, tuple[str, tuple[str, ...], bool, bool]] = {}

    def line(self, ln: int, text: str) -> list[str] | None:
        """None when line `ln` steered (or is blank, or a marker); else its words, a row for `mode`."""
        st = self.st
        hdr_open, self.hdr_open = self.hdr_open, False
        seen = None if hdr_open else self._seen.get(text)
        if seen is not None:
            return self._header(ln, text, *seen)
        s = text.strip()
        if not s:
            if self.mode == "cpu":
                self.mode = None
            return None
        if s.startswith(MARKER_PREFIX):
            return None
        toks = s.split()
        if hdr_open and not self.dev_last and all(t in S.DISK_COLS for t in toks):
            self.dev_cols += toks  # the header's wrapped tail: "%rrqm  %wrqm r_await ... %util"
            self.dev_hdr = ("Device",) + tuple(self.dev_cols)
            st.variant = _variant(self.dev_cols)
            return None
        b = S.banner(s) if s[0] in "LG" else None  # the banner starts "Linux" or "GNU/Linux"
        if b:
            st.new_run(b["host"])
            st.day = S.parse_date(b["date"], self.order)
            self.mode = None
            return None
        if toks[0] == "avg-cpu:":
            cols = tuple(toks[1:])
            seen = ("cpu", cols, False, bool(cols) and all(c in S.CPU_COLS for c in cols))
        elif toks[0] in _DEVICE or (len(toks) > 1 and toks[-1] in _DEVICE):
            last = toks[0] not in _DEVICE
            cols = tuple(toks[:-1] if last else toks[1:])
            seen = ("dev", cols, last, any(c in S.DISK_COLS for c in cols))
        else:
            seen = None
        if seen is not None:
            if len(self._seen) < 256:
                self._seen[text] = seen
            return self._header(ln, text, *seen)
        if toks[0][:1].isdigit():
            ts, exact = S.parse_timestamp(s, self.order)
            if ts is not None:
                st.new_report(ts, exact)
                self.mode = None
                return None
        if toks[0] == "Time:":  # sysstat 5: "Time: 03:59:48 PM", the date is the banner's
            tod = S.parse_tod(toks[1:])
            if tod and 1 + tod[1] == len(toks):
                ts = dt.datetime.combine(st.day, dt.time()) + dt.timedelta(seconds=tod[0]) if st.day else None
                st.new_report(ts, False)
                self.mode = None
                return None
        return toks

    def _header(self, ln: int, text: str, kind: str, cols: tuple[str, ...], last: bool, known: bool) -> None:
        """An avg-cpu (`kind` "cpu") or Device ("dev") header line with its columns `cols`."""
        st = self.st
        if kind == "cpu":
            self.cpu_cols = list(cols)
            if not known:
                st.bad.append((ln, text, "avg-cpu header with unknown columns"))
                self.mode = None
                return None
            if st.report < 0 or st.has_cpu or st.has_dev:
                st.new_report()
            self.mode = "cpu"
            return None
        self.dev_last = last
        self.dev_cols = list(cols)
        self.dev_hdr = ("Device",) + cols
        if not known:
            st.bad.append((ln, text, "Device header without known iostat columns"))
            self.mode = None
            return None
        if st.report < 0 or st.has_dev:
            st.new_report()
        st.variant = st.variant or _variant(self.dev_cols)
        self.mode = "dev"
        self.hdr_open = True
        return None


def _parse_text(texts: list[str], ctx: ParseContext) -> ParseResult:
    st = _State(ctx)
    dates = [t.split()[0] for t in texts if t[:1].isdigit() and len(t) < 64 and t.split()]
    dates += [b["date"] for b in map(S.banner, texts[:2000]) if b]
    order, assumed = S.date_order(dates, texts[:400])
    r = _Steer(st, order)
    held: tuple[int, str, list[str]] | None = None  # a device row cut short, waiting for its wrapped tail
    for i, text in enumerate(texts):
        ln = i + 1
        toks = r.line(ln, text)
        if held is not None:
            hln, htext, htoks = held
            held = None
            if toks is not None and r.mode == "dev" and all(S.is_number(t) for t in toks) \
                    and len(htoks) + len(toks) == len(r.dev_cols) + 1:
                toks = htoks + toks  # a row a mail client wrapped: the tail line is used with it
                ln, text = hln, htext
            else:
                st.bad.append((hln, htext, f"{len(htoks)} fields for a device and {len(r.dev_cols)} columns"))
        if toks is None:
            continue
        if r.mode == "dev" and not r.dev_last and len(toks) < len(r.dev_cols) + 1 \
                and not S.is_number(toks[0]) and i + 1 < len(texts):  # (-h of sysstat <= 11.4: the name alone)
            held = (ln, text, toks)
            continue
        try:
            if r.mode == "cpu":
                if len(toks) != len(r.cpu_cols):
                    raise S.BadValue(f"{len(toks)} values for {len(r.cpu_cols)} avg-cpu columns")
                st.cpu_row(ln, tuple(r.cpu_cols), toks, S.CPU_COLS)
                r.mode = None
            elif r.mode == "dev":
                if len(toks) != len(r.dev_cols) + 1:
                    raise S.BadValue(f"{len(toks)} fields for a device and {len(r.dev_cols)} columns")
                dev, vals = (toks[-1], toks[:-1]) if r.dev_last else (toks[0], toks[1:])
                if S.is_number(dev):
                    raise S.BadValue(f"device name {dev!r} is a number")
                st.disk_row(ln, r.dev_hdr, [dev] + vals, S.DISK_COLS)
            else:
                st.bad.append((ln, text, "not iostat output (no header before it)"))
        except S.BadValue as e:
            st.bad.append((ln, text, str(e)))
    meta = {"date_order": order, "date_order_assumed": assumed}
    return st.finish(texts, **meta)


# ---------------------------------------------------------------- text, vectorised
# The same reading as _parse_text, with Python only on the lines that steer it (banners, headers,
# timestamps, blanks, avg-cpu values) and the device rows between them taken in bulk: each run of
# device lines after a Device header is checked and split into columns by polars.

FAST_MIN_LINES = 1500  # below this the line loop is quicker
_NUM_RX = r"^[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)$"


def _parse_text_fast(lines: pl.DataFrame, texts: R.Texts, ctx: ParseContext, data: bytes) -> ParseResult:
    st = _State(ctx)
    text = pl.col("text")
    toks = pl.col("_toks")
    t0, tl, nt = toks.list.first(), toks.list.last(), toks.list.len()
    # plain lines: what the line loop would only try as a row (no blank, marker, banner, header,
    # timestamp or Time: line can be one)
    plain = ((nt > 0) & ~text.str.contains(r"^\s*[LG#]") & (t0 != "avg-cpu:") & ~t0.is_in(_DEVICE)
             & ~((nt > 1) & tl.is_in(_DEVICE)) & ~(t0.str.contains(r"^[0-9]") & (nt <= 3)) & (t0 != "Time:"))
    df = (lines.lazy().with_columns(S.words(text, data).alias("_toks"))
          .with_columns(plain.fill_null(False).alias("_plain"), nt.cast(pl.Int32).alias("_n"),
                        t0.str.contains(_NUM_RX).fill_null(False).alias("_num0"),
                        tl.str.contains(_NUM_RX).fill_null(False).alias("_numl"))
          .collect(engine="in-memory"))
    n = df.height
    is_plain = df["_plain"].to_numpy()
    ntok = df["_n"].to_numpy()
    num0, numl = df["_num0"].to_numpy(), df["_numl"].to_numpy()
    if (is_plain & (ntok == 1) & ~num0).any():  # a word alone: -h of sysstat <= 11.4 (the device name on its
        return _parse_text([texts[i] for i in range(n)], ctx)  # own line), a row wrapped: the line reader joins them
    digit = lines.filter(text.str.contains(r"^[0-9]") & (text.str.len_bytes() < 64)).select(
        text.str.extract(r"^(\S+)").unique(maintain_order=True))["text"].to_list()
    dates = [t for t in digit if t]  # distinct, in file order: date_order reads the first that tells
    head = texts.span(0, 2000)
    dates += [b["date"] for b in map(S.banner, head) if b]
    order, assumed = S.date_order(dates, head[:400])
    r = _Steer(st, order)
    stamps = S.stamps(df, order)
    runs: list[tuple[int, int, tuple, bool, tuple]] = []  # (start, end, header, device last, extra) of device rows
    fits: dict[tuple[int, bool], np.ndarray] = {}
    cpu_rows: list[tuple[int, tuple, tuple]] = []  # (line, header, extra) of avg-cpu values
    notiostat = "not iostat output (no header before it)"

    def plain_run(a: int, b: int) -> None:
        """Lines a..b-1 (0-based), all plain, under the current mode."""
        i = a
        while i < b and r.mode == "cpu":  # the avg-cpu values: the first line with as many words
            if ntok[i] != len(r.cpu_cols):
                st.bad.append((i + 1, texts[i], f"{ntok[i]} values for {len(r.cpu_cols)} avg-cpu columns"))
            else:  # as st.cpu_row, its words taken in bulk below
                hdr = tuple(r.cpu_cols)
                st.col.batch(("cpu", hdr, id(S.CPU_COLS)), lambda: S.Batch("cpu_util", hdr, S.CPU_COLS, (), "cpu", "avg-cpu"))
                cpu_rows.append((i, hdr, st.extra()))
                st.has_cpu = True
                r.mode = None
            i += 1
        if i >= b:
            return
        if r.mode == "dev":
            dev_last = r.dev_last
            key = (len(r.dev_cols) + 1, dev_last)
            cs = fits.get(key)
            if cs is None:  # running count of the lines that fit this layout
                ok_ = (ntok == key[0]) & ~(numl if dev_last else num0)
                cs = fits[key] = np.concatenate(([0], np.cumsum(ok_)))
            good = int(cs[b] - cs[i])
            if good:
                runs.append((i, b, r.dev_hdr, dev_last, st.extra()))
                st.has_dev = True
            if good < b - i:
                ok = np.diff(cs[i:b + 1]).astype(bool)
                for k in np.flatnonzero(~ok).tolist():
                    j = i + k
                    toks_ = texts[j].split()
                    why = (f"{len(toks_)} fields for a device and {len(r.dev_cols)} columns"
                           if len(toks_) != len(r.dev_cols) + 1 else
                           f"device name {(toks_[-1] if dev_last else toks_[0])!r} is a number")
                    st.bad.append((j + 1, texts[j], why))
            return
        st.bad.extend((j + 1, t, notiostat) for j, t in enumerate(texts.span(i, b), i))

    steer_at = np.flatnonzero(~is_plain)
    # the texts the loop below reads: steering lines that are neither blank nor a -t time read in bulk
    read = steer_at[ntok[steer_at] > 0]
    texts.prefetch(read[~np.isin(read, np.fromiter(stamps, dtype=np.int64, count=len(stamps)))])
    steer = steer_at.tolist()
    prev = 0

    def step(i: int) -> None:
        """Steering line i (0-based) after the plain lines before it, as the line reader reads them."""
        nonlocal prev
        if i > prev:
            plain_run(prev, i)
        prev = i + 1
        if ntok[i] == 0:  # a blank line: all the line reader does with one
            r.hdr_open = False
            if r.mode == "cpu":
                r.mode = None
            return
        ts = stamps.get(i)
        if ts is not None:  # a -t time read in bulk: all the line reader does with one
            r.hdr_open = False
            st.new_report(ts, False)
            r.mode = None
            return
        if r.line(i + 1, texts[i]) is not None:
            plain_run(i, i + 1)  # not steering after all: a row like the plain ones

    def flush(e: int) -> None:
        """The plain lines from the last steering line to line e (0-based), read now (as step(e) would first)."""
        nonlocal prev
        if e > prev:
            plain_run(prev, e)
            prev = e

    def state() -> tuple:
        """What steers the reading of the next lines (all but the report's number and time)."""
        return (r.mode, tuple(r.cpu_cols), tuple(r.dev_cols), r.dev_hdr, r.dev_last, r.hdr_open, st.run_start,
                st.has_cpu, st.has_dev, st.exact, st.host, len(st.hosts), st.day, st.variant)

    # Reports read once, their layout applied to the reports like it: a report (from one boundary line, a -t
    # time or else its first header, to the next) read by the walk that starts and ends in the same state,
    # adds one report and no unparsed line is a template; each following report whose lines have the same
    # kinds (each steering line's text, each plain line's word count and number flags) is read as it was, its
    # rows at their own lines and with their own report's number and time, without walking its lines.
    bounds = R.report_bounds(texts, steer_at, ntok, stamps, TEMPLATE_MIN_REPORTS)
    code = R.line_codes(texts, steer_at, ntok, stamps, num0, numl) if bounds is not None else None
    si = 0  # next steering line (index into steer)
    k = 0
    nb = 0 if bounds is None else len(bounds) - 1
    while k < nb:
        a, e = int(bounds[k]), int(bounds[k + 1])
        while si < len(steer) and steer[si] < a:
            step(steer[si])
            si += 1
        flush(a)
        before, rep0, nbad, nrun, ncpu = state(), st.report, len(st.bad), len(runs), len(cpu_rows)
        while si < len(steer) and steer[si] < e:
            step(steer[si])
            si += 1
        flush(e)
        k += 1
        rep = st.report
        if (state() != before or rep != rep0 + 1 or len(st.bad) != nbad
                or any(x[4][5] != rep for x in runs[nrun:]) or any(x[2][5] != rep for x in cpu_rows[ncpu:])):
            continue
        rest = bounds[k:nb + 1]
        m = R.alike(code, a, e, rest)  # a template: the reports right after it with its line kinds
        if not m:
            continue
        t_runs = [(x[0] - a, x[1] - a, x[2], x[3]) for x in runs[nrun:]]
        t_cpu = [(x[0] - a, x[1]) for x in cpu_rows[ncpu:]]
        has = (st.has_cpu, st.has_dev)
        for a2 in rest[:m].tolist():
            st.new_report(stamps.get(a2), False)
            ex = st.extra()
            runs.extend((a2 + x0, a2 + x1, h, last, ex) for x0, x1, h, last in t_runs)
            cpu_rows.extend((a2 + x0, h, ex) for x0, h in t_cpu)
        st.has_cpu, st.has_dev = has
        k += m
        end = int(bounds[k])
        si = int(np.searchsorted(steer_at, end))
        prev = end
    for i in steer[si:]:
        step(i)
    flush(n)
    # device rows of all runs, in bulk: one batch per header layout
    if runs:
        run_of = np.full(n, -1, dtype=np.int32)
        for r, (a, b_, _, _, _) in enumerate(runs):
            run_of[a:b_] = r
        layouts: dict[tuple, int] = {}
        lay = [layouts.setdefault((h, last), len(layouts)) for _, _, h, last, _ in runs]
        ex = list(zip(*(e for *_, e in runs)))
        info = pl.DataFrame([pl.Series("_run", range(len(runs)), dtype=pl.Int32),
                             pl.Series("_lay", lay, dtype=pl.Int32),
                             *(pl.Series(name, ex[k], dtype=S._EXTRA_TYPES[name]) for k, name in enumerate(S.EXTRA))])
        rows = (df.lazy().select("line_no", "_toks", "_n", "_num0", "_numl",
                                 pl.Series("_run", run_of)).filter(pl.col("_run") >= 0)
                .join(info.lazy(), on="_run", how="left", maintain_order="left")
                .collect(engine="in-memory"))
        for (hdr, last), k in layouts.items():
            w = len(hdr)
            part = rows.filter((pl.col("_lay") == k) & (pl.col("_n") == w) & ~pl.col("_numl" if last else "_num0"))
            if last:
                cols = [toks.list.last().alias("t0"), *(toks.list.get(j).alias(f"t{j + 1}") for j in range(w - 1))]
            else:
                cols = [toks.list.get(j).alias(f"t{j}") for j in range(w)]
            bt = st.col.batch(("dev", hdr, id(S.DISK_COLS)),
                              lambda: S.Batch("disk_io", hdr, S.DISK_COLS, (hdr[0],), "device", "device"))
            bt.frame = part.select("line_no", *S.EXTRA, *cols)
            bt.clean = True
    if cpu_rows:  # avg-cpu values, in bulk: one batch per header
        info = pl.DataFrame([pl.Series("_i", [i for i, _, _ in cpu_rows], dtype=pl.UInt32),
                             *(pl.Series(name, col, dtype=S._EXTRA_TYPES[name])
                               for name, col in zip(S.EXTRA, zip(*(e for _, _, e in cpu_rows))))])
        vals = df.select("line_no", "_toks")[info["_i"]].hstack(info.drop("_i").get_columns())
        hdrs = [h for _, h, _ in cpu_rows]
        for hdr in dict.fromkeys(hdrs):
            part = vals if len(set(hdrs)) == 1 else vals.filter(pl.Series([h == hdr for h in hdrs]))
            bt = st.col.batches[("cpu", hdr, id(S.CPU_COLS))]
            bt.frame = part.select("line_no", *S.EXTRA, *(toks.list.get(j).alias(f"t{j}") for j in range(len(hdr))))
            bt.clean = True
    meta = {"date_order": order, "date_order_assumed": assumed}
    return st.finish(texts, **meta)


TEMPLATE_MIN_REPORTS = 4  # fewer reports than this: each is walked


def _parse_json(texts: list[str], ctx: ParseContext) -> ParseResult:
    st = _State(ctx)
    st.variant = "json"
    found = [m.group(1).split()[0] for t in texts[:5000] for m in _DATEISH.finditer(t) if m.group(1).split()]
    order, assumed = S.date_order(found)

    def stat(sub: list[str], val: Any, ln: int) -> None:
        if sub == ["timestamp"]:
            ts, exact = S.parse_timestamp(str(val), order)
            if ts is None and st.day is not None:
                tod = S.parse_tod(str(val).split())
                if tod and tod[1] == len(str(val).split()):
                    ts = dt.datetime.combine(st.day, dt.time()) + dt.timedelta(seconds=tod[0])
            if ts is None:
                raise S.JsonError(f"timestamp {str(val)[:40]!r} not understood")
            st.ts, st.exact, st._extra = ts, exact, None
        elif sub == ["avg-cpu"] and isinstance(val, dict):
            st.cpu_row(ln, tuple(val), [S.json_tok(v) for v in val.values()], S.CPU_JSON)
        elif sub == ["disk"]:
            for d in val if isinstance(val, list) else [val]:
                if not isinstance(d, dict) or not isinstance(d.get("disk_device"), str):
                    raise S.JsonError("disk entry without disk_device")
                keys = [k for k in d if k != "disk_device"]
                st.disk_row(ln, ("disk_device", *keys), [d["disk_device"]] + [S.json_tok(d[k]) for k in keys], S.DISK_JSON)
        else:
            raise S.JsonError(f"unexpected statistics member {'.'.join(sub)!r}")

    def member(path: list[str], val: Any, ln: int) -> bool:
        rest = path[2:]
        if len(rest) != 1 or isinstance(val, (dict, list)):
            return False
        if rest[0] == "nodename" and isinstance(val, str):
            st.host, st._extra = val, None
            if val not in st.hosts:
                st.hosts.append(val)
        elif rest[0] == "date":
            st.day = S.parse_date(str(val), order)
        return True

    walker = S.HostsJson(lambda: st.new_run(None), st.new_report, stat, member)
    for i, text in enumerate(texts):
        if not text.strip():
            continue
        mark = st.col.mark()
        try:
            walker.feed(text, i + 1)
        except (S.JsonError, S.BadValue) as e:
            st.col.rollback(mark)
            st.bad.append((i + 1, text, f"iostat JSON: {e}"))
    return st.finish(texts, date_order=order, date_order_assumed=assumed)
