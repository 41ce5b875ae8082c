"""sar's name and tables, the patterns of its lines, and what a section becomes: its table (typed or
sar_generic), the state of a text report read line by line, values aligned with a header."""
from __future__ import annotations

import re
from typing import Any

from forensics.sources import _sysstat as S
from forensics.sources._base import NULL_TOKENS, ParseContext, ParseResult, result, unparsed_rows


NAME = "sar"
VERSION = 19  # 19: the prompt lines of other commands ("$ sudo apt install sysstat", "$ taskset ...": _shell.RE_OTHER_PROMPT) are skipped and counted (meta skipped), no longer unparsed; their output stays unparsed; a new real fixture; 18: a zone word printed after every time (locales whose t_fmt ends in %Z: "02:00:44  IST   runq-sz ...") is set aside and named in meta time_zone_word (not mapped to a zone; the times read as printed), and a banner date spelt out ("Thursday 04 September 2014") is read (both files were not recognised); two new real fixtures; 17: lines under a report that explain its columns (a glossary: "tps：每秒钟...", "totsck: Total number of sockets ...", a column of a header read above, a colon, words; two at least) are skipped and counted (meta skipped), no longer unparsed; two new real fixtures; 16: a column no sar table maps whose every value in a section is a word ("zone" with "rack-a", a label a paste put beside the usual columns) is read as text: the rows are read (they were all unparsed: "not a number") and the words kept as sar_generic rows (metric the header, item the row's item and the word, value null), shared sysstat reader (_sysstat.rows), new fixture; 15: no change of the parser: a paste behind a list mark (" * ", "- ", "| ") is read without it and the lines that only open or close a code fence or comment ("```", "/*", "*/") are skipped and counted, by the shared paste layer (_quote VERSION 5), new fixture; 14: a header or row a mail wrapped at its width (its last column names, or its last values, alone on the next line, no time) is joined back and read whole (meta wrapped_joined; the tail's line counts as read), only where the tail holds exactly the values the row lacks; a new real fixture; 13: headings a paste's author put above the sections (a title line over a ~~~, === or --- underline about as long, 2.4-era mail reports of sar -A averages) are skipped and counted (meta skipped), no longer unparsed; a new real fixture; 12: a timed line without numbers is a section header only where it names sar columns (a "%" or "/" word, a hyphenated name, an upper-case item, a typed-table column) and has no N/A value; else it is a row of the section in force (N/A: nulls; "nan": unparsed with the value named) where it read silently as a new section and the rows after it as rows of that bogus section; 11: a report whose sections are timed headers with Average: lines under them and no interval row anywhere (sysstat 4, 2.4-era whole-run reports mailed as summaries) is read from its Average: lines (variant text-averages-only, meta averages_only, no time; was 0 rows, the lines skipped); a file with interval rows keeps its Average: lines as summaries (the contract marks averages per file); 10: zh_CN 24-hour times and banner dates with a blank around each unit ("15 时 05 分 29 秒", "2017 年 03 月 08 日", as CJK auto-spacing leaves a paste) are read as "15:05:29" and "2017-03-08" (meta locale_times zh_CN; before, such a file was not recognised and its timed lines unparsed); 9: zh 12-hour times ("下午 03时21分10秒", glibc zh_CN t_fmt_ampm) are read as "03:21:10 PM" (meta locale_times zh_CN; before, such a file was not recognised and every line unparsed); 8: the paste author's "# ..." lines are skipped and counted (meta skipped), a "# note" after a line's values is cut before reading it (meta comments_cut); 7: a line with a value beyond a 64-bit integer in an Int64 column is unparsed with the reason (shared _sysstat rows; before, the cast in schema.conform lost the file); 6: the command line above a paste (prompt + sar ...) goes to meta["commands"], not unparsed; 5: a paste of one report that names no header of the older list (-n TCP, ETCP, IP, ICMP, UDP, their v6 forms, -F, -m FAN/TEMP/IN/BAT/USB, Summary: blocks) is recognised (refused before); 4: ko_KR times and banner dates (21시 47분 24초, 2021년 09월 10일), the 평균값: label, a banner with no blank before (N CPU); 3: a paste of Average: lines only is read as rows; 2: JSON nested past the recursion limit is unparsed
TABLES = ("cpu_util", "disk_io", "sar_net_dev", "sar_net_edev", "sar_memory", "sar_queue", "sar_generic")
DESCRIPTION = "sar text reports (-u -P -d -n DEV/EDEV -r -q -A ...), sadf -d and sadf -j: cpu, disk, net, memory, queue, generic"

_TIME = r"(?:[0-9]{2}:[0-9]{2}:[0-9]{2}(?: [AP]M)?|[0-9]{2}[时時][0-9]{2}分[0-9]{2}秒)"
# the first column of each other report of sysstat 10-12 (sar/pr_stats.c, sar/rndr_stats.c): -n TCP, ETCP, IP,
# EIP, ICMP, EICMP, UDP and their IPv6 forms, SOCK6, FC; -F; -m FAN, TEMP, IN, BAT, USB: a paste of one of them
# alone (`sar -n TCP,ETCP 1`) has no other header to be known by
_N_FIRST = (r"active/s|atmptf/s|irec6?/s|ihdrerr/s|ihdrer6/s|imsg6?/s|ierr6?/s|idgm6?/s|tcp6sck|fch_rxf/s|"
            r"MBfsfree|(?:FAN|TEMP|IN|BAT|BUS)\s+\S*[%/a-z]")
_SNIFF_TEXT = re.compile(  # (an Average: label in place of the time: a paste of the summary lines only)
    r"(?m)^[ \t]*(?:" + _TIME + r"|Average:|Summary:|Moyenne:|Durchschn\.:|Media:|Promedio:|平均时间:|평균값:)\s+(?:LINUX RESTART|(?:CPU|IFACE|DEV|INTR|TTY)\s+\S*[%/a-z]|"
    r"(?:kbmemfree|runq-sz|proc/s|cswch/s|pswpin/s|pgpgin/s|tps|kbswpfree|kbhugfree|dentunusd|totsck|"
    r"call/s|scall/s|frmpg/s|%s(?:cpu|io|mem)-10|COM|" + _N_FIRST + r")\s)"
)
_SNIFF_SADF_D = re.compile(r"(?m)^# hostname;interval;timestamp;")
_SNIFF_JSON = re.compile(r'"file-date"|"timestamp": \{')  # sadf -j members
# summary rows: Average (localised), Summary, and the Minimum/Maximum/Last rows of newer sysstat (12.7.x)
_AVERAGE = re.compile(r"^(?:Average|Summary|Minimum|Maximum|Last|Moyenne|Durchschn\.|Media|Média|Promedio|Gemiddeld|Medel|"
                      r"Среднее|Średnia|Průměr|Átlag|Keskiarvo|平均时间|平均時間|平均值|平均|평균값)\s*:")
_NCPU = re.compile(r"\(([0-9]+) CPU\)")
_ROLLOVER_S = 3 * 3600
_AMPM_TOKENS = {"AM", "PM", "am", "pm"}

# ---------------------------------------------------------------- sections

_TYPED = (  # (test on the header set, table, column map, item header, item column)
    (lambda h: "DEV" in h and "tps" in h, "disk_io", S.DISK_COLS, "DEV", "device"),
    (lambda h: "IFACE" in h and ("rxpck/s" in h or "rxbyt/s" in h), "sar_net_dev", S.NET_DEV_COLS, "IFACE", "iface"),
    (lambda h: "IFACE" in h and "rxerr/s" in h, "sar_net_edev", S.NET_EDEV_COLS, "IFACE", "iface"),
    (lambda h: "kbmemfree" in h, "sar_memory", S.MEM_COLS, None, None),
    (lambda h: "runq-sz" in h, "sar_queue", S.QUEUE_COLS, None, None),
    (lambda h: "CPU" in h and ("%user" in h or "%usr" in h), "cpu_util", S.CPU_COLS, "CPU", "cpu"),
)


# a word of a section header: a column name of some sar report. Every header of sysstat 4-12 has one that shows it:
# a "%" or "/" (%user, rxpck/s), a hyphenated name (runq-sz, file-nr, ip-frag), an upper-case item name (CPU,
# IFACE, DEV, FILESYSTEM, LINUX RESTART), or a name of the typed tables (tps, kbmemfree, dentunusd)
_HEADER_WORD = re.compile(r"^(?=.*[A-Za-z])(?:.*[%/].*|[A-Za-z][A-Za-z0-9]*-[A-Za-z0-9-]+)$")
_KNOWN_COLUMNS = frozenset(S.DISK_COLS) | frozenset(S.CPU_COLS) | frozenset(S.NET_DEV_COLS) | \
    frozenset(S.NET_EDEV_COLS) | frozenset(S.MEM_COLS) | frozenset(S.QUEUE_COLS) | frozenset(S.TEXT_COLS) | \
    frozenset(("dentunusd", "totsck", "tcpsck", "udpsck", "rawsck", "kbhugfree", "kbhugused", "wghMHz"))


def is_section_header(words: list[str] | tuple[str, ...]) -> bool:
    """Whether a timed line without numbers is a section header: none of its words a 'not available' token
    (a row of such values is data: ``eth0 N/A N/A``) and one of them a column name (:data:`_HEADER_WORD`,
    an item name, a column of the typed tables). Else it is a row of the section in force (N/A values: nulls;
    others: unparsed with the value named), never a new section.

    >>> is_section_header(["IFACE", "rxpck/s"]), is_section_header(["dentunusd", "file-nr"])
    (True, True)
    >>> is_section_header(["all", "nan", "nan"]), is_section_header(["eth0", "N/A", "N/A"])
    (False, False)
    """
    if any(w in NULL_TOKENS for w in words):
        return False
    return any(_HEADER_WORD.match(w) or S.is_item_header(w) or w in _KNOWN_COLUMNS for w in words)


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
        self.averages_only = False

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
                      comments=self.comments, average_lines=self.average_lines,
                      **({"averages_only": True} if self.averages_only else {}), **meta)


def _fit(b: S.Batch, vals: list[str]) -> list[str]:
    """Values aligned with the header; surplus words join a trailing free-text column (USB names), and
    trailing free-text columns left blank are empty."""
    n = len(b.hdr)
    if len(vals) == n:
        return vals
    if len(vals) > n and n and b.hdr[-1] in S.TEXT_COLS:
        return vals[: n - 1] + [" ".join(vals[n - 1:])]
    if len(vals) < n and all(h in S.TEXT_COLS for h in b.hdr[len(vals):]):
        return vals + [""] * (n - len(vals))  # a USB device that reports no manufacturer/product strings
    raise S.BadValue(f"{len(vals)} values for {n} columns of section {b.section[:60]!r}")
