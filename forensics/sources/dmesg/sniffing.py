"""Does an input look like a kernel log (dmesg, journalctl, syslog)?"""
from __future__ import annotations

import re

from forensics.layout import MARKER_PREFIX
from forensics.sources._base import Sniff, head_text
from forensics.sources.dmesg.journal_json import join_objects
from forensics.sources.dmesg.prefixes import RE_CAPTION, RE_PROMPT, RE_RAW_CUT, RE_SEVERITY, RE_TAG, RE_TALOS
from forensics.sources.dmesg.untimed import is_untimed, untimed_share
from forensics.sources.dmesg.wrap import wrap_breaks

# sniffing (Python re on a few lines)
_SNIFF = [re.compile(p) for p in (
    r"^(?:<[0-9]{1,3}>)?(?:[a-z0-9]+ *:[a-z]+ *: )?\[ *\+?[0-9]+\.[0-9]{3,9}(?: <[ 0-9.]+>)?\](?:\[ *[TC][0-9]+\])? ",
    r"^(?:[a-z0-9]+ *:[a-z]+ *: )?\[[A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}\] ",
    r"^(?:[a-z0-9]+ *:[a-z]+ *: )?[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{6}[+-][0-9]{2}:[0-9]{2} ",
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2}) [^ \[\]:]+ kernel: ",
    r"^(?:[0-9]{4} )?[^\W\d_]{3,5}\.? +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)? (?:[^ \[\]:]+ )?"
    + "(?:" + RE_SEVERITY + " )?kernel: ",
    r"^kernel: ",  # a journal line pasted without its time and host
    r"^\[ *[0-9]+\.[0-9]+\] [^ \[\]:]+ kernel: ",
    r"^[A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]{1,2} [0-9:]{8} [0-9]{4} kern\.[a-z]+ kernel: ",
    r"^[0-9]{1,3},[0-9]{1,20},[0-9]{1,20},[-c+][^;]*;",  # /dev/kmsg
    r'^\{.*"_TRANSPORT" ?: ?"kernel"',  # journalctl -o json
    r"^ ?kern: +[a-z]+: \[[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9:]{4,5})\]: ",  # talosctl
)]
_QUOTE = re.compile(r"^(?:> ?)+")
_RAW_CUT = re.compile(RE_RAW_CUT)
_JSON_OTHER = re.compile(r'^\{.*"__REALTIME_TIMESTAMP" ?: ?"[0-9]+"')


# any program's syslog/journal line: counts for sniffing once a kernel line was seen (/var/log/messages)
_SNIFF_SYSLOG = re.compile(
    r"^(?:(?:[0-9]{4} )?[^\W\d_]{3,5}\.? +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})"
    r"|[A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]{1,2} [0-9:]{8} [0-9]{4} [a-z0-9]+\.[a-z]+)"
    r" (?:[^ \[\]:]+ )?(?:" + RE_SEVERITY + " )?" + RE_TAG + r"(?:\[[0-9]+\])?: ")

# a talosctl dmesg record of another facility ("user: warning: [2025-...Z]: [talos] ..."): counts once a kernel line was seen
_TALOS = re.compile(RE_TALOS)

# another program's record pasted without time and host, as "kernel: " lines are ("wpa_supplicant[580]: ")
_PROG_ONLY = re.compile(r"^" + RE_TAG + r"\[[0-9]+\]: ")


SYSLOG_ONLY_MIN = 3  # whole syslog/journal records, every considered line one, for a file with no kernel line
SYSLOG_ONLY_CONFIDENCE = 0.6  # accepted (SNIFF_ACCEPT 0.5), below any file a kernel line was seen in


def sniff(head: bytes) -> Sniff:
    """The share of the first lines (blank, continuation and marker lines aside) that carry a
    dmesg/journalctl/syslog/kmsg kernel prefix (in a syslog file such as /var/log/messages other
    programs' lines count too, once a kernel line was seen; so do lines a mail client wrapped after a
    soft break, and the tails of a paste hard-wrapped at a width: wrap.wrap_breaks); none without a
    kernel line. Mail quote prefixes are looked through, journal JSON objects over several lines read as one
    (journal_json.join_objects); a paste indented
    as a whole, or under captions ("Output:", :func:`indented_under_captions`), is read without its indent."""
    lines = [_QUOTE.sub("", ln) if ln[:1] == ">" else ln for ln in head_text(head).splitlines()[:200]]
    lines = ["[" + ln if _RAW_CUT.match(ln) else ln for ln in lines]  # `cut -d '[' -f 2-` of raw dmesg lines
    if lines and len(head) >= 65536:
        lines = lines[:-1]  # may be cut mid-line
    if any('"__REALTIME_TIMESTAMP"' in ln for ln in lines):  # json-pretty objects, wrapped -o json lines
        joined = join_objects(lines)[0]
        # an object keeps the indent of its opening brace (json-pretty indents its fields relative to
        # that brace): a json-pretty paste indented as a whole is then indented on every line, as a
        # paste of any other output is, and read without that indent below
        lines = [ln[:len(ln) - len(ln.lstrip(" \t"))] + j if j != ln and j else j for ln, j in zip(lines, joined)]
    cut = indented_under_captions(lines)
    if cut:  # the common indent only: deeper lines stay continuations; a caption above the lines is not weighed
        lines = [ln[cut:] if len(ln) - len(ln.lstrip(" \t")) >= cut else "" for ln in lines]
    hits = other = considered = records = 0
    soft = False  # the line before was a kernel line (or its wrapped tail) ending with a space
    prev = None  # the line before, when it was a record's line or a candidate tail of one
    breaks: list[tuple[int, int]] = []  # lines that may continue a record hard-wrapped by the paste
    for ln in lines:
        if not ln.strip() or ln.startswith(("-- ", MARKER_PREFIX)) or ln[:1] in " \t":
            soft, prev = False, None
            continue
        considered += 1
        if looks_like_kernel_line(ln):
            hits += 1
        elif _SNIFF_SYSLOG.match(ln) or _JSON_OTHER.match(ln) or _PROG_ONLY.match(ln) or _TALOS.match(ln) or soft:
            other += 1
            records += not soft and not _PROG_ONLY.match(ln)  # a whole record: its date, host and program
        else:
            if prev is not None:  # (weighed below, all together: wrap.wrap_breaks)
                breaks.append((len(prev.rstrip()), len(ln.strip().split(" ", 1)[0])))
            soft, prev = False, (ln if prev is not None else None)
            continue
        soft, prev = ln.endswith(" "), ln
    if breaks and hits:  # a paste hard-wrapped at a width, no soft-break space kept: its tails count
        longest = max(len(ln.rstrip()) for ln in lines)
        other += sum(sep is not None for sep in wrap_breaks(breaks, longest))
    if not hits:
        strong, shaped, n = untimed_share(lines)
        if is_untimed(strong, shaped, n):  # dmesg -t, or a paste with the times cut off: less sure
            return Sniff(round(0.9 * shaped / n, 3), f"{shaped} of {n} lines are kernel messages printed without "
                         f"a time ({strong} of a shape only the kernel prints)")
        if records >= SYSLOG_ONLY_MIN and records == considered:
            # a syslog / journal file whose head holds other programs' records only (systemd starting
            # nvidia-persistenced, teamd): still a syslog file, read into the syslog table; less sure than
            # a kernel line makes it (a bare "prog[pid]: " line is no whole record and does not count)
            return Sniff(SYSLOG_ONLY_CONFIDENCE, f"all {considered} lines are syslog/journal records of programs "
                         "other than the kernel (date, host, program; no kernel line)")
        return Sniff(0.0, f"none of {considered} lines carries a kernel log prefix (dmesg, journalctl, syslog, kmsg)")
    what = "carry a kernel log prefix" + (f" ({other} of them other programs' records or wrapped lines)"
                                          if other else "")
    return Sniff.ratio(hits + other, considered, what)


_CAPTION = re.compile(RE_CAPTION)
_PROMPT_RE = re.compile(RE_PROMPT)


def indented_under_captions(lines: list[str]) -> int | None:
    """The indent a paste put before its non-blank lines (a code block, the lines of a quoted output), where it put
    one before all of them but captions, or None: a caption is a short line less indented than the others that
    ends with a colon (" -> Kernel log:", "Output:") or holds the prompt with the dmesg/journalctl command; the other
    lines are at least twice as many as the captions."""
    body, caps = [], []
    for ln in lines:
        if ln.strip():
            (caps if _CAPTION.match(ln) or _PROMPT_RE.search(ln) else body).append(ln)
    if not body:
        return None
    indent = min(len(ln) - len(ln.lstrip(" \t")) for ln in body)
    n_caps = sum(1 for ln in caps if len(ln) - len(ln.lstrip(" \t")) < indent)  # (as indented: a line of the log)
    return indent if indent and len(body) + len(caps) >= 3 * n_caps else None


def looks_like_kernel_line(line: str) -> bool:
    """Whether one line carries a dmesg/journalctl/syslog/kmsg kernel log prefix."""
    return any(p.match(line) for p in _SNIFF)
