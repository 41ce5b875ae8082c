"""``numactl -H`` / ``numactl --hardware`` -> ``numa_nodes`` and ``numa_distances``.

What numactl prints (numactl.c ``hardware()``; old and new versions)::

    available: 2 nodes (0-1)              # newer numactl lists sparse sets: "(0,2-3)"
    node 0 cpus: 0 2 4 6 ...              # empty for CPU-less memory nodes (CXL, HBM, PMem)
    node 0 size: 515020 MB                # "<not available>" -> null
    node 0 free: 509047 MB
    node distances:
    node   0   1                          # header: "% 3d " (old) or "% 4d " (new) columns, trailing space
      0:  10  21
      1:  21  10

also ``node N cpus: 0-13, 56-69 (28)`` (``--cpu-compress``), ``No distance information available.``,
output pasted into mail with quote prefixes (``> ``, ``>> >> ``; read through, reported as written) or
inside a Markdown code fence (the fence lines are structure of the paste), a
line a mail client reflowed (``node 0 size: 63678 MB node 0 free: 59542 MB``: one field each), a cpus list
wrapped onto lines of bare CPU numbers, at a blank by a mail client or inside a number by a terminal's width
(joined only where one reading ascends, as numactl prints CPUs, a break inside a number read only where the
paste's widths allow a cut there; else unparsed: :func:`_join_wrapped`, :func:`_may_cut`), a
``--cpu-compress`` list wrapped the same ways (``node 0 cpus: 0-13,`` / ``56-69 (28)``: joined only into
numactl's exact print whose ``(N)`` count agrees; else unparsed: :func:`_join_compress`),
and ``No NUMA available on this system`` (no rows; ``meta["numa_available"] = False``). One
``numa_nodes`` row per node (``line_no`` = its first line), one ``numa_distances`` row per matrix
cell (``line_no`` = its row). Repeated outputs (a new ``available:`` line or a snapshot marker)
each yield their rows. The command line that produced a paste (``[user@host ~]$ numactl -H``) is a fact in
``meta["commands"]`` (as nvidia-smi's, forensics.sources._shell); other prompts, other commands and anything else
go to ``unparsed``.

>>> from forensics.sources._base import ParseContext
>>> sample = b'''$ numactl -H
... available: 2 nodes (0-1)
... node 0 cpus: 0 2 4 6 8 10 12 14 16 18 20 22 24 26 28 30 32 34 36 38 40 42 44 46 48 50 52 54 56 58 60 62 64 66 68 70 72 74 76 78 80 82 84 86 88 90 92 94
... node 0 size: 515020 MB
... node 0 free: 509047 MB
... node 1 cpus: 1 3 5 7 9 11 13 15 17 19 21 23 25 27 29 31 33 35 37 39 41 43 45 47 49 51 53 55 57 59 61 63 65 67 69 71 73 75 77 79 81 83 85 87 89 91 93 95
... node 1 size: 516037 MB
... node 1 free: 489964 MB
... node distances:
... node   0   1 
...   0:  10  21 
...   1:  21  10 
... '''
>>> res = parse(sample, ParseContext(host="della-j11g1"))
>>> res.tables["numa_nodes"].select("node", "cpu_count", "mem_total_mb", "mem_free_mb").rows()
[(0, 48, 515020, 509047), (1, 48, 516037, 489964)]
>>> res.tables["numa_distances"].select("node", "to_node", "distance").rows()
[(0, 0, 10), (0, 1, 21), (1, 0, 21), (1, 1, 10)]
>>> res.unparsed.height, res.meta["commands"]
(0, [{'line_no': 1, 'command': '$ numactl -H'}])
"""
from __future__ import annotations

import re

import polars as pl

from forensics.layout import MARKER_PREFIX
from forensics.sources._base import ParseContext, ParseResult, Sniff, head_text, result, split_lines, unparsed_rows
from forensics.sources._bounded import bounded_int
from forensics.sources._shell import take_shell_lines

NAME = "numactl"
VERSION = 13  # 13: a wrapped cpus list that read two ways is placed where the paste shows the break was at a blank (the line before is shorter than the paste's longest: no terminal cut there; or the cut shows its blank), as a mail client's wrap: "0 1" / "23" is 0 1 23 beside a longer line (before, always unparsed); a cpus line after its node's size and free lines no longer forgets them: when its list went to unparsed, the node with its size and free went with it; 12: a --cpu-compress list is bounded on its total CPUs, not per range, on every path (a reflowed line of 2,000 ranges of 65,536 expanded to 131 M ints: MemoryError from an 18 KB input); 11: a --cpu-compress cpus list ("0-13, 56-69 (28)") wrapped onto the next line(s) is joined only into numactl's exact print (ranges ascending and maximal, ", " between, its "(N)" count last and agreeing), else the cpus line and its tail lines go to unparsed and the node keeps no CPUs (before, "node 0 cpus: 0-13," kept 14 of 28 CPUs and the tail "56-69 (28)" was unparsed: a wrong list); a one-line --cpu-compress list without its "(N)" count (cut short), with ranges not as numactl prints them, or whose ranges do not add up to its count goes to unparsed with that reason; 10: a cpus list wrapped inside a number (a terminal's or window's width: "... 51 1" / "04 105") is joined where exactly one reading of its breaks ascends, as numactl prints CPUs, else it goes to unparsed (the cut number was read as two CPUs: a wrong list); a cpus list whose numbers do not ascend goes to unparsed; 9: a distance matrix header naming a node past Int32 (a run of digits) leaves its rows unparsed (building the table raised: the file was lost); 8: no change of the parser: a numactl -H pasted in a quoted-printable mail whose every line ends "=0A=" (its newline encoded, then a soft break) is decoded line for line by the shared paste layer (_mail_qp VERSION 2; before, the first such line took all the rest: 0 rows), new fixture; 7: a reflowed line one of whose fields does not convert goes to unparsed whole (a row was made from its other field and the line was also unparsed: accounting not exact); 6: a number of more than 20 digits is out of range like any beyond its column (int() refused strings of over 4,300 digits: the file was lost); 5: the command line above a paste (prompt + numactl ...) goes to meta["commands"], not unparsed; 4: every line read without its leading blanks (a paste indented unevenly: command one space in, output two)
# 3: a cpus list wrapped by a mail onto lines of bare CPU numbers is joined back
# 2: a distance matrix pasted alone
TABLES = ("numa_nodes", "numa_distances")
DESCRIPTION = "numactl -H / --hardware: NUMA nodes (CPUs, memory size/free) and the distance matrix"

_AVAILABLE = re.compile(r"^available: ([0-9]+) nodes \(([0-9,\- ]*)\)\s*$")
_NODE = re.compile(r"^node ([0-9]+) (cpus|size|free):(.*)$")
_MEM = re.compile(r"^\s*([0-9]+) MB\s*$")
_CPU_RANGE = re.compile(r"^([0-9]+)(?:-([0-9]+))?$")
_DIST_HEADER = re.compile(r"^node((?:\s+[0-9]+)+)\s*$")
_DIST_ROW = re.compile(r"^\s*([0-9]+):((?:\s+[0-9]+)+)\s*$")
_ANY_DIST_HEADER = re.compile(r"(?m)^[ \t]*node(?:[ \t]+[0-9]+)+[ \t]*$")
_SNIFF = re.compile(r"(?m)^(?:available: [0-9]+ nodes \(|node [0-9]+ cpus:|No NUMA available on this system)")
_SNIFF_LINE = re.compile(r"^(?:available: |node [0-9]+ (?:cpus|size|free):|node distances:|node(?: +[0-9]+)+$"
                         r"|[0-9]+:(?: +[0-9]+)+$|No NUMA available|No distance information)")
_QUOTE = re.compile(r"^(?:> ?)+")
# a Markdown code fence line (CommonMark: three or more backticks or tildes, an optional info string)
_FENCE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})[A-Za-z0-9_+.-]*\s*$")
# a line a mail client reflowed: "node 0 size: 63678 MB node 0 free: 59542 MB"
_NEXT_FIELD = re.compile(r" (?=node [0-9]+ (?:cpus|size|free):|node distances:)")
# the rest of a 'node N cpus:' list that a mail client wrapped onto the next line(s): CPU numbers only
# (numactl -H prints no line of bare integers, so after a cpus line it can only be that list's tail)
_CPUS_TAIL = re.compile(r"^[0-9]+(?: +[0-9]+)*$")
# a piece of a --cpu-compress list ("0-13, 56-69 (28)") as a terminal or mail client wraps it: only the
# characters numactl prints in that form (numactl -H prints no other line of just these)
_COMPRESS_TAIL = re.compile(r"^[0-9,() -]+$")
_COMPRESS_FORM = re.compile(r"[-,()]")  # a cpus value in the --cpu-compress form (the plain form is digits)
_NUM = r"(?:0|[1-9][0-9]{0,9})"  # "%d" of a CPU number: no leading zero, within a C int's digits
_COMPRESS_LIST = re.compile(rf"(?:({_NUM}(?:-{_NUM})?(?:, {_NUM}(?:-{_NUM})?)*) )?\(({_NUM})\)")
# Linux's CONFIG_NR_CPUS is at most 8192 (arch/x86/Kconfig MAXSMP; arm64 4096): a list of more is no node's
_MAX_CPUS = 1 << 16
_NO_NUMA = "No NUMA available on this system"
_NO_DIST = "No distance information available."
_NOT = "not numactl -H output"
_PROMPT = "shell prompt or command line, not numactl output"
_COMMAND = re.compile(r"(?:^|[\s$#>])numactl(?:\s|$)")


def _unquote(text: str) -> str:
    """A line without the mail/markdown quote prefix it was pasted with ("> ", ">> ", "> > ")."""
    return _QUOTE.sub("", text) if text[:1] == ">" else text


def sniff(head: bytes) -> Sniff:
    """numactl -H output: its 'available: N nodes (' line, a 'node N cpus:' line, or the no-NUMA line,
    with 'available:', 'No NUMA' or a ' size: ' line. Accepted from 0.75 on (a short output among
    prompts and other commands' lines is still numactl's), plus a quarter of the share of its lines."""
    # (each line read without its leading blanks: no numactl -H line means anything by its indent, and a
    # paste indents its lines unevenly, e.g. the command one space in and the output two)
    text = "\n".join(_unquote(ln).strip() for ln in head_text(head).splitlines())
    if not (_SNIFF.search(text) and ("available:" in text or "No NUMA" in text or " size: " in text)):
        if _matrix_only(text):
            lines = [s.strip() for s in text.splitlines() if s.strip()]
            ours = sum(1 for s in lines if _SNIFF_LINE.match(s) or _DIST_ROW.match(s))
            return Sniff(round(0.75 + 0.25 * ours / len(lines), 3),
                         f"a numactl -H distance matrix pasted alone (local distance 10 on the diagonal); "
                         f"{ours} of {len(lines)} lines are numactl -H lines")
        return Sniff(0.0, "no 'available: N nodes', 'node N cpus:' or 'No NUMA available' line")
    lines = [s.strip() for s in text.splitlines() if s.strip()]
    ours = sum(1 for s in lines if _SNIFF_LINE.match(s))
    return Sniff(round(0.75 + 0.25 * ours / len(lines), 3), f"{ours} of {len(lines)} lines are numactl -H lines")


_HUGE = 10 ** 20  # an integer of more digits: beyond every column, so the range checks below refuse it


def _int(digits: str) -> int:
    """The number of a run of digits; one of more than 20 digits is :data:`_HUGE` (no node, CPU, distance or
    size has more), as is one that is no number (the patterns give digits only)."""
    b = bounded_int(digits, 0, _HUGE - 1)
    return b.value if b.ok else _HUGE


def _bare_header(s: str) -> list[int] | None:
    """Columns of a distance-matrix header ('node   0   1   2') pasted without its 'node distances:'
    line: node numbers ascending and distinct, else None."""
    m = _DIST_HEADER.match(s)
    if not m:
        return None
    cols = [_int(x) for x in m.group(1).split()]
    return cols if all(a < b for a, b in zip(cols, cols[1:])) else None


def _matrix_only(text: str) -> bool:
    """A numactl -H distance matrix pasted alone ('node 0 1' header, then 'N: d d' rows): the header
    is followed by a row of as many values whose own-node value is 10: the ACPI SLIT (System Locality
    Information Table, ACPI 6.5 section 5.2.17) normalizes the distance of a locality to itself to 10,
    and the kernel reports 10 for it where firmware gives no SLIT (LOCAL_DISTANCE)."""
    if "node" not in text or not _ANY_DIST_HEADER.search(text):  # the usual case: not numactl at all
        return False
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for i, s in enumerate(lines[:-1]):
        cols = _bare_header(s)
        if cols is None:
            continue
        m = _DIST_ROW.match(lines[i + 1])
        if not m:
            continue
        frm, vals = _int(m.group(1)), [_int(x) for x in m.group(2).split()]
        if len(vals) == len(cols) and frm in cols and vals[cols.index(frm)] == 10:
            return True
    return False


def _cpus(text: str) -> list[int] | None:
    """'0 1 2 3' or '0-13, 56-69 (28)' (--cpu-compress) -> CPU list; '' -> []; None if not CPUs."""
    text = text.strip()
    count = None
    m = re.search(r"\(([0-9]+)\)$", text)
    if m:
        count = _int(m.group(1))
        text = text[: m.start()].strip()
    plain = text.replace(" ", "")
    if plain.isascii() and (plain.isdigit() or not plain):  # the usual "0 2 4 ..." form, in C
        out = list(map(_int, text.split()))
        if (count is not None and count != len(out)) or (out and max(out) > 2**31 - 1):
            return None
        return out
    toks = text.replace(",", " ").split()
    out: list[int] = []
    for tok in toks:
        r = _CPU_RANGE.match(tok)
        if not r:
            return None
        lo = _int(r.group(1))
        hi = _int(r.group(2)) if r.group(2) is not None else lo
        # bounded on the list's total, not per range: 2,000 ranges of 65,536 in an 18 KB line were 131 M ints
        if hi < lo or len(out) + (hi - lo + 1) > _MAX_CPUS:
            return None
        out.extend(range(lo, hi + 1))
    if count is not None and count != len(out):
        return None
    if any(c > 2**31 - 1 for c in out):
        return None
    return out


def _mem(text: str) -> tuple[bool, int | None]:
    """' 515020 MB' -> (True, 515020); ' <not available>' -> (True, None); else (False, None)."""
    if text.strip() == "<not available>":
        return True, None
    m = _MEM.match(text)
    if not m or len(m.group(1)) > 18:
        return False, None
    return True, _int(m.group(1))


def _lines(lines: pl.DataFrame):
    """(line_no, text as written, text to read) with quote prefixes, a whole-paste indent and trailing
    space taken off; a line holding several 'node N size/free/cpus:' fields (reflowed by a mail
    client) gives one text to read per field, with the same line number."""
    texts = lines["text"].to_list()
    # a paste indented as a whole or unevenly (a code block of docs or notes, the command one space in and
    # the output two): each line read without its leading blanks (numactl -H lines mean nothing by indent)
    reads = [_unquote(t).strip() for t in texts]
    for line_no, text, s in zip(lines["line_no"].to_list(), texts, reads):
        m = _NEXT_FIELD.search(s)
        head = s[: m.start()].strip() if m else ""
        parts = (_NEXT_FIELD.split(s) if m and (s.startswith("node ") or _CPUS_TAIL.match(head)
                                                   or _COMPRESS_TAIL.match(head)) else [s])
        # a line is read whole or not at all: one field of a reflowed line that does not convert sends the
        # line (all its fields) to unparsed, never a row from one field and the same line in unparsed
        if len(parts) > 1 and all(_field_reads(part) for part in parts):
            for part in parts:
                yield line_no, text, part
        else:
            yield line_no, text, s


def _field_reads(part: str) -> bool:
    """Whether one field of a reflowed line converts ('node N cpus/size/free: ...'; any other part as is)."""
    m = _NODE.match(part)
    if not m:
        return True
    if _int(m.group(1)) > 2**31 - 1:
        return False
    return _cpus(m.group(3)) is not None if m.group(2) == "cpus" else _mem(m.group(3))[0]


_MAX_READINGS = 16  # readings of a wrapped cpus list kept while its pieces are joined: more is no evidence


def _ascending(tokens: list[str]) -> bool:
    """Whether CPU numbers as printed are numactl's: no leading zero, strictly ascending, within a C int."""
    if any(len(t) > 1 and t[0] == "0" for t in tokens) or any(len(t) > 10 for t in tokens):
        return False
    vals = [int(t) for t in tokens]
    return all(a < b for a, b in zip(vals, vals[1:])) and (not vals or vals[-1] <= 2**31 - 1)


def _may_cut(texts: list[str], longest: int) -> list[bool]:
    """For each break between the lines `texts` (as written) of a wrapped cpus list: whether it may fall inside
    a number. A terminal or a fixed-width window cuts every line at one width W, the longest line of the paste
    (none is longer), anywhere; a mail client wraps at a blank, which it drops. So a break may be inside a number
    only after a line as long as the paste's longest, and not where the cut shows its blank (the line before ends
    with one, or the line after starts with one more than the list's first line: the paste's indent aside)."""
    raw = [_unquote(t) for t in texts]
    indent = len(raw[0]) - len(raw[0].lstrip(" \t"))
    out = []
    for a, b in zip(raw, raw[1:]):
        blank = a.endswith((" ", "\t")) or len(b) - len(b.lstrip(" \t")) > indent
        out.append(not blank and len(a.rstrip()) >= longest)
    return out


def _join_wrapped(pieces: list[list[str]], may_cut: list[bool] | None = None) -> list[int] | None:
    """The CPU list a 'node N cpus:' line and its wrapped tail lines (their numbers, `pieces`) were, or None
    where that is not certain.

    numactl prints a node's CPUs in ascending order (numactl.c print_node_cpus: a loop over the bitmask's
    bits, `printf(" %d", i)` for each one set). A mail client wraps such a line at a blank; a terminal, or a
    copy from a fixed-width window, wraps it at its width, which may fall inside a number ("... 51 1" /
    "04 105 ..." is 104). Each break is read both ways (at a blank; inside the number on either side), and
    only the readings whose numbers ascend are kept: where exactly one remains, that is the list; where
    several remain ("0 1" / "23": 0 1 23 or 0 123) or none, the list is not trustworthy and None is given.
    A break that `may_cut` says cannot be inside a number (:func:`_may_cut`) is read at a blank only."""
    readings = [list(pieces[0])]
    for i, piece in enumerate(pieces[1:]):
        nxt = []
        for r in readings:
            nxt.append(r + piece)  # broken at a blank
            if r and piece and (may_cut is None or may_cut[i]):  # broken inside a number
                nxt.append(r[:-1] + [r[-1] + piece[0]] + piece[1:])
        # (a reading's last number may be cut by the next break: it is weighed once the next piece is joined)
        readings = [r for r in nxt if _ascending(r[:-1])]
        if not readings or len(readings) > _MAX_READINGS:
            return None
    readings = [r for r in readings if _ascending(r)]
    if len(readings) != 1:
        return None
    return [int(t) for t in readings[0]]


def _join_compress(pieces: list[str]) -> tuple[list[int] | None, str]:
    """The CPU list a ``--cpu-compress`` 'node N cpus:' value and its wrapped tail lines (`pieces`, stripped)
    were, or None and why not.

    numactl.c print_node_cpus (v2.0.17 on, with --cpu-compress) prints each maximal run of set CPUs ascending,
    `printf(",")` before every run but the first, `printf(" %d", start)` or `printf(" %d-%d", start, end)`,
    then `printf(" (%d)\\n", count)`: "0-13, 56-69 (28)". Its only blanks follow a comma or precede the
    "(", so a break between two pieces was a blank exactly where the left piece ends with "," and the right
    starts with a digit, or the left ends with a digit and the right starts with "(" (a mail client's wrap,
    or a terminal's at that column); any other break was inside a token (a terminal's width: "0-1" / "3, ...").
    So there is one joining; it is taken only where it is numactl's print exactly (runs ascending, not
    touching, no leading zero) and the runs add up to its "(N)" count, which is printed last: a list cut short
    (no count), garbled, or whose count disagrees is not trustworthy."""
    parts = [pieces[0]]
    left = pieces[0][-1:]
    for p in pieces[1:]:
        if not p:
            continue
        if (left == "," and p[0].isdigit()) or (left.isdigit() and p[0] == "("):
            parts.append(" ")
        parts.append(p)
        left = p[-1]
    text = "".join(parts)
    wrapped = len(pieces) > 1
    form = ("CPU list (--cpu-compress) " + ("wrapped over lines does not join into" if wrapped else "is not")
            + " numactl's print (ranges ascending, ', ' between, its '(N)' count last): cut short or garbled")
    m = _COMPRESS_LIST.fullmatch(text)
    if not m:
        return None, form
    runs = []
    for seg in (m.group(1).split(", ") if m.group(1) else []):
        lo, _, hi = seg.partition("-")
        runs.append((int(lo), int(hi) if hi else int(lo), bool(hi)))
    prev = -2
    for lo, hi, ranged in runs:  # maximal runs, ascending: a range's end past its start, a gap before the next
        if (ranged and hi <= lo) or lo <= prev + 1 or hi > 2**31 - 1:
            return None, form
        prev = hi
    total, count = sum(hi - lo + 1 for lo, hi, _ in runs), int(m.group(2))
    if total != count:
        return None, f"CPU ranges add up to {total}, not the ({count}) count numactl --cpu-compress prints after them"
    if total > _MAX_CPUS:
        return None, f"CPU list of {total} CPUs: more than any Linux node has (CONFIG_NR_CPUS)"
    return [c for lo, hi, _ in runs for c in range(lo, hi + 1)], ""


def _settle_cpus(nodes: dict[tuple[int, int], dict], bad: list[tuple[int, str, str]], longest: int) -> int:
    """Join each node's wrapped cpus list (:func:`_join_wrapped`); one that is not certain, or a list on one
    line whose numbers do not ascend (cut short, or garbled), goes to unparsed with its lines, and the node
    keeps no CPUs (a line is read whole or not at all: another field on one of those lines, as a mail
    client runs "node 1 size:" onto a tail, goes with it). `longest`: the paste's longest line (:func:`_may_cut`).
    Returns the number of tail lines joined."""
    joined = 0
    dropped: dict[int, tuple[str, str]] = {}
    for row in nodes.values():
        pieces = row.pop("_pieces", None)
        if not pieces:
            continue
        if row.pop("_compress", False):
            cpus, why = _join_compress([p[2] for p in pieces])
        else:
            cpus = _join_wrapped([p[2].split() for p in pieces], _may_cut([p[1] for p in pieces], longest))
            why = ("CPU list wrapped over lines where a number may have been cut: not one reading ascends as "
                   "numactl prints it" if len(pieces) > 1 else
                   "CPU list not in ascending order as numactl prints it (cut short or garbled)")
        if cpus is not None:
            row["cpus"], row["cpu_count"] = cpus, len(cpus)
            joined += len(pieces) - 1
            continue
        for line_no, text, _ in pieces:
            dropped[line_no] = (text, why)
        row["cpus"], row["cpu_count"] = None, None
    for key, row in list(nodes.items()):
        lines = row.pop("_lines", {})
        if not dropped:
            continue
        for field, line_no in lines.items():
            if field != "cpus" and line_no in dropped:
                row[field] = None
        kept = [ln for ln in lines.values() if ln not in dropped]
        if not kept:
            del nodes[key]
        else:
            row["line_no"] = min(kept)
    bad.extend((ln, text, why) for ln, (text, why) in dropped.items())
    bad.sort(key=lambda b: b[0])
    return joined


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    res = _parse(data, ctx)
    if not res.unparsed.height:
        return res
    # the prompt with the numactl command above a paste: a fact, not junk (other prompts stay unparsed)
    up, facts = take_shell_lines(res.unparsed, r"numactl(?=\s+-|\s*$)")  # (its arguments are options)
    if facts.get("commands"):
        res.unparsed = up
        res.meta = {**res.meta, "commands": facts["commands"]}
    return res


def _parse(data: bytes, ctx: ParseContext) -> ParseResult:
    lines = split_lines(data)
    n = lines.height
    nodes: dict[tuple[int, int], dict] = {}  # (snapshot, node) -> row
    dists: list[dict] = []
    bad: list[tuple[int, str, str]] = []
    snap = 0
    header: list[int] | None = None  # distance matrix columns, once "node distances:" and its header are seen
    in_matrix = False
    numa_available = None
    cpus_of: tuple[int, int] | None = None  # the node whose cpus list the last line read belongs to
    for line_no, text, s in _lines(lines):
        if not s.strip():
            cpus_of = None
            continue
        if cpus_of is not None and _COMPRESS_TAIL.match(s.strip()):  # a wrapped cpus list goes on
            row = nodes[cpus_of]
            tail = s.strip()
            row["_pieces"].append((line_no, text, tail))  # (joined once the list is whole)
            if not _CPUS_TAIL.match(tail):  # a --cpu-compress list ("node 0 cpus: 0" / "-13, 56-69 (28)")
                row["_compress"] = True
            if row.get("_compress") and tail.endswith(")"):  # its "(N)" count ends it (numactl's only ")")
                cpus_of = None
            continue
        cpus_of = None
        if _FENCE.match(s):  # the Markdown code fence around a paste: structure of the paste
            continue
        if s.startswith(MARKER_PREFIX):
            snap += 1
            header, in_matrix = None, False
            continue
        m = _AVAILABLE.match(s)
        if m:
            if any(k[0] == snap for k in nodes) or in_matrix:
                snap += 1  # a second output without a marker
            header, in_matrix = None, False
            numa_available = True
            continue
        if s.strip() == _NO_NUMA:
            numa_available = False
            continue
        if s.strip() == _NO_DIST:
            in_matrix = False
            continue
        m = _NODE.match(s)
        if m:
            in_matrix = False
            node, what, value = _int(m.group(1)), m.group(2), m.group(3)
            if node > 2**31 - 1:
                bad.append((line_no, text, "node number out of range"))
                continue
            if what == "cpus" and _COMPRESS_FORM.search(value):  # --cpu-compress: settled with its tail lines
                row = nodes.setdefault((snap, node), {"line_no": line_no, "node": node})
                if "cpus" in row:
                    bad.append((line_no, text, f"node {node} cpus listed twice"))
                    continue
                row["cpus"], row["cpu_count"], row["_compress"] = None, None, True
                row.setdefault("_lines", {})["cpus"] = line_no
                row["_pieces"] = [(line_no, text, value.strip())]
                cpus_of = None if value.strip().endswith(")") else (snap, node)  # (its "(N)" count ends it)
                continue
            if what == "cpus":
                cpus = _cpus(value)
                if cpus is None:
                    bad.append((line_no, text, "CPU list does not convert"))
                    continue
                row = nodes.setdefault((snap, node), {"line_no": line_no, "node": node})
                if "cpus" in row:
                    bad.append((line_no, text, f"node {node} cpus listed twice"))
                    continue
                row["cpus"] = cpus
                row["cpu_count"] = len(cpus)
                row.setdefault("_lines", {})["cpus"] = line_no  # (size/free may have come first)
                plain = value.split()
                if all(x.isdigit() for x in plain):  # (empty too: a list wrapped whole onto the next line)
                    row["_pieces"] = [(line_no, text, value.strip())]
                    cpus_of = (snap, node)
            else:
                ok, mb = _mem(value)
                if not ok:
                    bad.append((line_no, text, f"node {what} does not convert (expected 'N MB')"))
                    continue
                row = nodes.setdefault((snap, node), {"line_no": line_no, "node": node})
                key = "mem_total_mb" if what == "size" else "mem_free_mb"
                if key in row:
                    bad.append((line_no, text, f"node {node} {what} listed twice"))
                    continue
                row[key] = mb
                row.setdefault("_lines", {})[key] = line_no
            continue
        if s.strip() == "node distances:":
            in_matrix, header = True, None
            continue
        if not in_matrix:  # a distance matrix pasted without its "node distances:" line
            cols = _bare_header(s)
            if cols is not None:
                in_matrix, header = True, cols
                continue
        if in_matrix and header is None:
            m = _DIST_HEADER.match(s)
            if m:
                header = [_int(x) for x in m.group(1).split()]
                continue
        if in_matrix and header is not None:
            m = _DIST_ROW.match(s)
            if m:
                frm = _int(m.group(1))
                vals = [_int(x) for x in m.group(2).split()]
                if len(vals) != len(header):
                    bad.append((line_no, text, f"distance row has {len(vals)} values for {len(header)} nodes"))
                    continue
                if any(v > 2**31 - 1 for v in vals) or frm > 2**31 - 1:
                    bad.append((line_no, text, "distance out of range"))
                    continue
                if any(to > 2**31 - 1 for to in header):  # (the header's node numbers: building the table raised)
                    bad.append((line_no, text, "node number of the header out of range"))
                    continue
                dists.extend({"line_no": line_no, "node": frm, "to_node": to, "distance": v}
                             for to, v in zip(header, vals))
                continue
        bad.append((line_no, text, _PROMPT if _COMMAND.search(s) else _NOT))

    wrapped = _settle_cpus(nodes, bad, max((len(_unquote(t).rstrip()) for t in lines["text"].to_list()), default=0))
    node_rows = sorted(nodes.values(), key=lambda r: r["line_no"])
    nodes_df = pl.DataFrame(
        {
            "line_no": pl.Series([r["line_no"] for r in node_rows], dtype=pl.Int64),
            "node": pl.Series([r["node"] for r in node_rows], dtype=pl.Int32),
            "cpus": pl.Series([r.get("cpus") for r in node_rows], dtype=pl.List(pl.Int32)),
            "cpu_count": pl.Series([r.get("cpu_count") for r in node_rows], dtype=pl.Int32),
            "mem_total_mb": pl.Series([r.get("mem_total_mb") for r in node_rows], dtype=pl.Int64),
            "mem_free_mb": pl.Series([r.get("mem_free_mb") for r in node_rows], dtype=pl.Int64),
        }
    )
    dist_df = pl.DataFrame(
        {
            "line_no": pl.Series([d["line_no"] for d in dists], dtype=pl.Int64),
            "node": pl.Series([d["node"] for d in dists], dtype=pl.Int32),
            "to_node": pl.Series([d["to_node"] for d in dists], dtype=pl.Int32),
            "distance": pl.Series([d["distance"] for d in dists], dtype=pl.Int32),
        }
    )
    meta: dict = {"hosts": []}
    if wrapped:
        meta["cpus_wrapped_lines"] = wrapped
    if numa_available is not None:
        meta["numa_available"] = numa_available
        meta["variant"] = "numactl-H" if numa_available else "no-numa"
    if bad:  # one reason per line (a reflowed line is read as several fields)
        bad = list({b[0]: b for b in reversed(bad)}.values())[::-1]
    unparsed = unparsed_rows(bad, ctx, NAME) if bad else None
    return result(NAME, ctx, n, {"numa_nodes": nodes_df, "numa_distances": dist_df}, unparsed, **meta)
