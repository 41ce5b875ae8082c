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

import re

from forensics.sources import _sysstat as S
from forensics.sources._base import RE_MAIL_QUOTE, ParseContext, ParseResult, Sniff, split_lines
from forensics.sources._shell import OTHER_PROMPT, RE_OTHER_PROMPT, take_shell_lines
from forensics.sources._sysstat import reports as R
from forensics.sources._sysstat.sniff import sniff as sniff_sysstat
from forensics.sources.iostat.json_reports import _parse_json
from forensics.sources.iostat.state import NAME, TABLES
from forensics.sources.iostat.text import _parse_text
from forensics.sources.iostat.text_fast import _parse_text_fast

__all__ = ["DESCRIPTION", "FAST_MIN_LINES", "NAME", "TABLES", "VERSION", "parse", "sniff"]

VERSION = 17  # 17: the prompt lines of other commands ("user@host:~$ sudo apt install sysstat": _shell.RE_OTHER_PROMPT) are skipped and counted (meta skipped), no longer unparsed; their output stays unparsed; a new real fixture; 16: a banner date spelt out in English ("Thursday 04 September 2014", shared sysstat banner reader) is read (its host and date were lost); 15: an avg-cpu header capitalised by a paste ("%User %Nice ...") is read as sysstat's lower-case one (its header and values were unparsed); 14: a column no table maps whose every value is a word is read as text (sar_generic rows: metric the header, item the word, value null) by the sysstat reader iostat shares with sar; the rows under such a header were unparsed ("not a number"); no fixture changes; 13: a line under a Device header whose values are mostly words (a label or prose line a paste put between the rows or reports) is unparsed as such ("text among the device rows"; was "N fields for a device and M columns"), and the vectorised reader hands a file with a line of numbers right under a device row (a row a narrow terminal or page wrapped) to the line reader, which joins it (it read the row short and the tail as two bad lines: the readers differed); 12: no change of the parser: lines that only open or close a code fence or comment ("```", "/*", "*/") are skipped and counted, and a paste behind a list mark (" * ", "- ", "| ") is read without it, by the shared paste layer (_quote VERSION 5); 11: the line reader names, for a device row cut short that no wrapped tail completes, the columns of the header it stood under (it named those of the header after it, where one followed; the vectorised reader already did): the reason text of that unparsed line only; 10: a hint interval_s (a bundle's, untrusted) that is no number of seconds in (0, 86400] is no interval: a run of hundreds of digits, inf, 1e300 or a list lost the file (ValueError/OverflowError/TypeError), a negative one put reports before the capture; 9: a Device header of iostat columns only, in any order and any subset of two or more (an author's cut of -x: "Device w/s wkB/s w_await wareq-sz aqu-sz %util") is recognised (refused before; the parser already read it); a new real fixture; 8: the shell around a paste is no longer unparsed: the prompt + iostat command lines go to meta["commands"] (as sar, numactl and nvidia-smi), the author's "# ..." and "#####" lines (also a comment typed at a prompt) and the "^C" that stopped a report are skipped and counted (meta skipped); banner dates of three words (zh_CN spaced out "2019 年 08 月 19 日", ko_KR "2021년 09월 10일") are read (host and date were lost, the banner unparsed); 7: -h/--human of sysstat <= 11.4 (each device's name on its own line, its values on the next) is read as one row; a header with Device last (-h/--pretty of sysstat >= 11.5) is recognised; 6: lines that only mark an elision ("[...]", "<snip>", "...") are skipped and counted by the shared paste layer (sources.parse_pasted), no longer unparsed; 5: a line with a value beyond a 64-bit integer in an Int64 column is unparsed with the reason (shared _sysstat rows; before, the cast in schema.conform lost the file); 4: a banner with no blank before its (N CPU) (shared sysstat banner pattern)
# 3: a paste quoted or indented as a block is read without the prefix; its unparsed lines keep the file's text
# 2: JSON nested past the recursion limit is unparsed lines (was a parse error)
DESCRIPTION = "iostat text (-x old/new column sets, basic, -m, -t, -p) and -o JSON: disk_io, cpu_util"

# a Device header whose columns are all iostat's (two at least), whichever comes first: a column subset the
# paste's author kept ("Device  w/s  wkB/s  w_await wareq-sz  aqu-sz  %util", the write side of -x)
_SUBSET = "|".join(re.escape(c) for c in sorted(S.DISK_COLS, key=len, reverse=True))
_SNIFF_TEXT = re.compile(r"(?m)^(?:> ?)*[ \t]*(?:avg-cpu:\s+%[Uu]ser|Device:?\s+(?:tps|r/s|rrqm/s)\s"
                         rf"|Device:?(?:[ \t]+(?:{_SUBSET})){{2,}}[ \t]*\r?$"
                         r"|(?:tps|r/s|rrqm/s)\s[^\n]*\s(?:kB_read/s|MB_read/s|Blk_read/s|rkB/s|rMB/s|rsec/s)\s[^\n]*\sDevice:?[ \t]*$)")
_SNIFF_JSON = re.compile(r'"(?:disk_device|avg-cpu)"\s*:')


def sniff(head: bytes) -> Sniff:
    """iostat text (an ``avg-cpu:`` or ``Device`` header line) or ``iostat -o JSON``; a sysstat banner alone is
    not enough (sar prints the same one)."""
    return sniff_sysstat(head, json_members=_SNIFF_JSON, json_what="disk_device/avg-cpu members (iostat -o JSON)",
                         json_tool="iostat", headers=_SNIFF_TEXT, headers_what="iostat header lines (avg-cpu: / Device ...)",
                         header_what=_HEADER, none_what=_HEADER)


_HEADER = "iostat header line (avg-cpu: / Device ...)"


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
    stopped the report, and the prompt lines of other commands ("$ sudo apt install sysstat": the paste's shell)
    (meta skipped, counted). The other commands' output stays unparsed."""
    if not res.unparsed.height:
        return res
    up, facts = take_shell_lines(res.unparsed, r"iostat(?=\s+-|\s+[0-9]|\s*$)")  # (its arguments: options, devices, interval)
    if facts.get("commands"):
        res.unparsed = up
        res.meta = {**res.meta, "commands": facts["commands"]}
    skipped = dict(res.meta.get("skipped", {}))
    # (a comment typed at a prompt, "[root@node3 ~]# # disk stats while ...", is one too)
    for why, rx in ((COMMENT, r"^\s*(?:[^#\n]{0,80}[$#%>]\s+)?#"), (INTERRUPT, r"^\s*\^C\s*$"),
                    (OTHER_PROMPT, RE_OTHER_PROMPT)):
        mask = res.unparsed.get_column("text").str.contains(rx)
        if mask.any():
            skipped[why] = skipped.get(why, 0) + int(mask.sum())
            res.unparsed = res.unparsed.filter(~mask)
    if skipped:
        res.meta = {**res.meta, "skipped": skipped}
    return res


FAST_MIN_LINES = 1500  # below this the line loop is quicker than the vectorised reader (text_fast)


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
