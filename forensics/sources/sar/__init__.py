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
- 12-hour (``03:59:48 PM``), 24-hour, zh_CN (``14时28分00秒``; 12-hour ``下午 02时28分00秒``) and ko_KR (``21시 47분 24초``) times; the banner
  ``Linux <release> (<host>) <date> _<arch>_ (<n> CPU)`` gives host (meta["hosts"]) and date in the
  locale's form (04/23/2019, 04/23/19, 2019-04-23, 23/04/19, 23.04.2019, 2017年01月12日).
- ``Average:`` / ``Summary:`` / ``Minimum:`` / ``Maximum:`` / ``Last:`` rows (and localised averages such as ``平均时间:``)
  are recognised and counted as used but not emitted: they summarise rows already present
  (meta["average_lines"]).
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
interval share it across sections. A shell prompt or other text line is unparsed with a reason; the paste
author's own ``# ...`` lines are skipped and counted (meta["skipped"]), and a ``# note`` after a line's
values is cut off before the line is read (meta["comments_cut"]).

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

import re

import numpy as np
import polars as pl

from forensics.sources import _sysstat as S
from forensics.sources._base import ParseContext, ParseResult, Sniff, split_lines
from forensics.sources._shell import OTHER_PROMPT, RE_OTHER_PROMPT, take_shell_lines
from forensics.sources._sysstat.sniff import sniff as sniff_sysstat
from forensics.sources.sar.sections import DESCRIPTION, NAME, TABLES, VERSION, _SNIFF_JSON, _SNIFF_SADF_D, _SNIFF_TEXT
from forensics.sources.sar.text import _parse_text
from forensics.sources.sar.text_fast import _fast_ok, _parse_text_fast
from forensics.sources.sar.sadf_d import _parse_sadf_d
from forensics.sources.sar.sadf_json import _parse_json

__all__ = ["DESCRIPTION", "FAST_MIN_LINES", "NAME", "TABLES", "VERSION", "parse", "sniff"]

FAST_MIN_LINES = 1500  # below this the line loop is quicker (the vectorised reader costs ~8 ms a file)


def sniff(head: bytes) -> Sniff:
    """sar text (a line ``<time> <section header>`` such as ``10:46:38 AM CPU %user ...`` or ``LINUX RESTART``),
    ``sadf -d`` (``# hostname;interval;timestamp;``) or ``sadf -j`` JSON; a sysstat banner alone is not enough
    (iostat prints the same one)."""
    loc = S.dates.locale_times(head)
    head = loc[0] if loc else head
    zone = S.dates.zone_word_times(head)
    head = zone[0] if zone else head
    return sniff_sysstat(head, json_members=_SNIFF_JSON, json_what="file-date/timestamp members (sadf -j)",
                         json_tool="sadf -j", also=((_SNIFF_SADF_D, "sadf -d section header (# hostname;interval;timestamp;...)"),),
                         headers=_SNIFF_TEXT, headers_what="sar section header lines (time followed by a sar column header)",
                         header_what="sar section header line",
                         none_what="sar section header line, sadf -d header or sadf -j JSON,")


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    original, cut = data, 0
    # (b"#" first: one byte is a memchr scan; a two-byte needle ending in a blank crawls through sar's spaces)
    if b"#" in data and (b" #" in data or b"\t#" in data) and not data.lstrip()[:1] == b"{":
        data, cut = _TRAILING_COMMENT.subn(rb"\1", data)  # "10:46:48 AM all ... 99.92   # high": read without it
    joined = 0
    if _may_be_wrapped(data):
        # lines a mail wrapped at its width (the header's last column names, a row's last values on the next
        # line): joined back before the one read; only inputs with such a line after a timed one pay for it
        data, joined = _join_wrapped(data)
    res = _parse_any(data, ctx)
    if joined:
        res.meta = {**res.meta, "wrapped_joined": joined}
    if cut or joined:
        if cut:
            res.meta = {**res.meta, "comments_cut": cut}
        if res.unparsed.height:  # unparsed lines are reported as the file has them
            text = split_lines(original).get_column("text")
            res.unparsed = res.unparsed.with_columns(text.gather(res.unparsed.get_column("line_no") - 1).alias("text"))
    if not res.unparsed.height:
        return res
    # the prompt with the sar command above a paste (``[root@host ~]# sar -W``): a fact in meta["commands"]
    # (forensics.sources._shell), not junk; other prompts and lines stay unparsed
    # (sar's arguments are options or an interval: "sar averages" or "sar is ..." in prose is no command)
    up, facts = take_shell_lines(res.unparsed, r"sar(?=\s+-|\s+[0-9]|\s*$)")
    if facts.get("commands"):
        res.unparsed = up
        res.meta = {**res.meta, "commands": facts["commands"]}
    # the paste's author's own notes ("# iowait goes up here") and the prompt lines of other commands ("$ sudo apt
    # install sysstat", the paste's shell): skipped, counted, not unparsed (the other commands' output stays unparsed)
    for why, rx in ((COMMENT, r"^\s*#"), (OTHER_PROMPT, RE_OTHER_PROMPT)):
        note = res.unparsed.get_column("text").str.contains(rx)
        if note.any():
            res.meta = {**res.meta, "skipped": {**res.meta.get("skipped", {}), why: int(note.sum())}}
            res.unparsed = res.unparsed.filter(~note)
    return _skip_glossary(_skip_headings(res), original)


# a timed (or Average:) line, and a line that may be its wrapped tail: column names only, or numbers only, no time
_LEAD_RE = rb"^[ \t]*(?:[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[ \t]*[AP]M)?|Average:)(?=[ \t])"
_NAMES_RE = rb"[ \t]*%?[A-Za-z][\w/%.-]*(?:[ \t]+%?[A-Za-z][\w/%.-]*)*[ \t]*\r?$"
_NUMBERS_RE = rb"[ \t]*-?[0-9][0-9.,]*(?:[ \t]+-?[0-9][0-9.,]*)*[ \t]*\r?$"
_LEAD = re.compile(_LEAD_RE)
_NAMES = re.compile(rb"^" + _NAMES_RE)
_NUMBERS = re.compile(rb"^" + _NUMBERS_RE)
_WRAPPED = re.compile(rb"(?m)" + _LEAD_RE + rb".*\n(?:" + _NAMES_RE + rb"|" + _NUMBERS_RE + rb")")
_NUMBER = re.compile(rb"^-?[0-9][0-9.,]*$")
_FEW_UNTIMED = 64  # above this many lines that start with no time, one regex scan of the input instead


def _may_be_wrapped(data: bytes) -> bool:
    """Whether a line of `data` after a timed (or Average:) line is column names only or numbers only, as a
    wrapped tail is (:func:`_join_wrapped` joins nothing where none is). A tail never starts with a time
    ("10:" ...): the lines that do, nearly all of sar's, are passed over in one vectorised look at the byte
    after each newline and the one two on; so are those whose first byte no tail (_NAMES, _NUMBERS) starts
    with (a blank line, a marker), "Average:" lines (a colon in the first word: no tail either) and those after
    a line whose first byte no timed line (_LEAD) starts with; only the others are matched. (A collected
    series has hundreds of blank and Average: lines: the whole-input pattern cost 0.05 CPU s on a host-hour's
    sar -P ALL, half the parse.)"""
    a = np.frombuffer(data, np.uint8)
    starts = np.flatnonzero(a == 10) + 1
    starts = starts[starts < a.size]
    if not starts.size:
        return False  # (one line: nothing after a timed one)
    first, third = a.take(starts, mode="clip"), a.take(starts + 2, mode="clip")
    prev = a.take(np.concatenate(([0], starts[:-1])), mode="clip")  # the first byte of the line before each
    low = first | 0x20  # (ASCII letters in lower case)
    tail_first = ((first == 32) | (first == 9) | (first == 37) | (first == 45) | (first - 48 < 10)
                  | ((low >= 97) & (low <= 122)))  # [ \t%-0-9A-Za-z]
    lead_first = (prev == 32) | (prev == 9) | (prev - 48 < 10) | (prev == 65)  # [ \t0-9A]
    avg = first == 65
    for k, c in enumerate(b"verage:", start=1):
        avg &= a.take(starts + k, mode="clip") == c
    avg &= starts + 7 < a.size
    keep = tail_first & lead_first & ~avg & ~((third == 58) & (first - 48 < 10) & (starts + 2 < a.size))
    untimed = starts[keep]  # (uint8: "0".."9" only)
    if untimed.size > _FEW_UNTIMED:
        return _WRAPPED.search(data) is not None
    for s in untimed.tolist():
        end = data.find(b"\n", s)
        line = data[s:end if end >= 0 else len(data)]
        if (_NAMES.match(line) or _NUMBERS.match(line)) and _LEAD.match(data[data.rfind(b"\n", 0, s - 1) + 1:s - 1]):
            return True
    return False


def _join_wrapped(data: bytes) -> tuple[bytes, int]:
    """`data` with the lines a mail or terminal wrapped at its width joined back (the tail appended to the line
    it continues, the tail's own line left empty: line numbers unchanged), and how many were joined. A header's
    tail is a line of column names only after a timed line of column names; a row's tail is a line of numbers
    only after a timed (or Average:) row that had fewer values than its header's columns, exactly as many as
    it lacked. Nothing else is joined."""
    lines = data.split(b"\n")
    cols = None  # the current header's column count (after the time), or None
    joined = 0
    i = 0
    while i < len(lines):
        m = _LEAD.match(lines[i])
        if not m:
            i += 1
            continue
        toks = lines[i][m.end():].split()
        nxt = lines[i + 1] if i + 1 < len(lines) else b""
        header = bool(toks) and not any(_NUMBER.match(t) for t in toks[1:]) and not _NUMBER.match(toks[-1])
        if header:
            cols = len(toks)
            if nxt.strip() and not _LEAD.match(nxt) and _NAMES.match(nxt):
                cols += len(nxt.split())
                lines[i], lines[i + 1] = lines[i].rstrip(b" \t\r") + b" " + nxt.strip(), b""
                joined += 1
                i += 1
        elif cols is not None and len(toks) < cols and nxt.strip() and _NUMBERS.match(nxt) \
                and len(toks) + len(nxt.split()) == cols:
            lines[i], lines[i + 1] = lines[i].rstrip(b" \t\r") + b" " + nxt.strip(), b""
            joined += 1
            i += 1
        i += 1
    return (b"\n".join(lines), joined) if joined else (data, 0)


COMMENT = "comment line (# ...) added to the paste, not sar output"
HEADING = "heading (a title and its ~~~ underline) added to the paste, not sar output"
_UNDERLINE = r"^[ \t]*(?:~{3,}|={3,}|-{3,})[ \t]*$"
_UNDERLINE_SLACK = 3  # an underline drawn by hand is a character or so off its title's width


def _skip_headings(res: ParseResult) -> ParseResult:
    """`res` with the headings a paste's author put above sar's sections (a title line, then a line of ``~``,
    ``=`` or ``-`` about as long: "paging statistics." over "~~~~~~~~~~~~~~~~~~", as 2.4-era mail reports of
    ``sar -A`` averages have them) skipped and counted, not unparsed. Both lines must be unparsed and next
    to each other; an underline with no title above it stays unparsed."""
    up = res.unparsed
    if not up.height or not up.get_column("text").str.contains(_UNDERLINE).any():
        return res
    ln, text = pl.col("line_no"), pl.col("text")
    prev = up.sort("line_no").select(
        ln, (text.str.contains(_UNDERLINE) & (ln.shift(1) == ln - 1)
             & (text.shift(1).str.strip_chars() != "") & ~text.shift(1).str.contains(_UNDERLINE)
             & ((text.str.strip_chars().str.len_chars().cast(pl.Int64)
                 - text.shift(1).str.strip_chars_end().str.len_chars().cast(pl.Int64)).abs() <= _UNDERLINE_SLACK)
             ).fill_null(False).alias("rule"))
    rules = prev.filter(pl.col("rule")).get_column("line_no")
    if not rules.len():
        return res
    used = pl.concat([rules, rules - 1])
    res.meta = {**res.meta, "skipped": {**res.meta.get("skipped", {}), HEADING: used.len()}}
    res.unparsed = up.filter(~ln.is_in(used.implode()))
    return res
GLOSSARY = "glossary line (a column of a header above, then what it means) added to the paste, not sar output"
# "totsck: Total number of sockets ...", "%user：显示在用户级别...", "- `tcp-tw` - Number of ...": a name, a colon (or a
# dash after a name in backticks), then words
_GLOSSARY = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?`?(%?[A-Za-z][\w/%.-]{0,31})`?[ \t]*(?:[:：]|`?[ \t]+[-–—])[ \t]*\S")
_GLOSSARY_MIN = 2  # one such line may be anything; a run of them explaining the columns is a glossary


def _skip_glossary(res: ParseResult, data: bytes) -> ParseResult:
    """`res` with the lines that explain a column of a header read above (``totsck: Total number of sockets used by
    the system.``: the man page's words pasted under the report) skipped and counted, not unparsed: a name that is
    a column of a header line the parser used, then a colon and words, two such lines at least."""
    up = res.unparsed
    if up.height < _GLOSSARY_MIN:
        return res
    names = up.get_column("text").str.extract(_GLOSSARY.pattern, 1)
    if names.null_count() > up.height - _GLOSSARY_MIN:
        return res
    unparsed = set(up.get_column("line_no").to_list())
    lines = data.decode("utf-8", errors="replace").split("\n")
    columns = {w for i, t in enumerate(lines[:100_000], start=1) if i not in unparsed and len(t) <= 4096
               for w in t.split() if not w[:1].isdigit()}
    gloss = names.is_in(list(columns)).fill_null(False)
    if int(gloss.sum()) < _GLOSSARY_MIN:
        return res
    res.meta = {**res.meta, "skipped": {**res.meta.get("skipped", {}), GLOSSARY: int(gloss.sum())}}
    res.unparsed = up.filter(~gloss)
    return res


# a comment after the values of a line (not a line that is a comment: sadf -d's "# hostname;..." header)
_TRAILING_COMMENT = re.compile(rb"(?m)^(?![ \t]*#)([^\n#]*?\S)[ \t]+#[^\n]*$")


def _parse_any(data: bytes, ctx: ParseContext) -> ParseResult:
    with S.no_gc():
        loc = S.dates.locale_times(data)
        read = loc[0] if loc else data
        zone = S.dates.zone_word_times(read)  # "02:00:44  IST   runq-sz": the zone word after each time
        if zone:
            read = zone[0]
        if read is data:
            return _parse(data, ctx)
        res = _parse(read, ctx)  # ko_KR / zh 12-hour times read as 24/12-hour ones; unparsed lines keep the file's text
        if res.unparsed.height:
            text = split_lines(data).get_column("text")
            res.unparsed = res.unparsed.with_columns(text.gather(res.unparsed.get_column("line_no") - 1).alias("text"))
        if loc:
            res.meta["locale_times"] = loc[1]
        if zone:
            res.meta["time_zone_word"] = zone[1]
            res.meta["time_zone_word_note"] = (
                f"the zone word {zone[1]!r} printed after each time was set aside: it is not mapped to a zone "
                "(an abbreviation names several), the times are read as printed, in the zone the run was given")
        return res


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
        # (no row from a timed line, but Average: lines: a paste of summaries only, which the line loop reads)
        if res is not None and not (res.meta.get("average_lines") and not any(t.height for t in res.tables.values())):
            return res
    return _parse_text(lines["text"].to_list(), ctx)

