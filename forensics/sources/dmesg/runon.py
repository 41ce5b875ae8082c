"""Kernel log records that ran into each other: a paste whose line breaks were lost (a mail client that
reflowed the text, a web page that dropped them, ``/proc/kmsg`` read into a forum post) holds several
records on a line: ``May 3 10:13:05 host kernel: [ 6387.27] usb 4-2: ... May 3 10:13:05 host kernel:
[ 6387.28] ...``, and where the reflowed text was wrapped again, a record's head may be broken over two
lines. Read line by line, the first record's message swallows the others (one row for many records, the
fields of the others taken for the first's), and a broken head makes a record of its second half.

A line that holds a record head after a blank is read with the lines wrapped around it (a group: the lines
up to the one that starts with a head, and the lines after it that start with none, as long as each break
between them is a wrap: the line before ended with a blank, or wrap.wrap_breaks takes it for a cut or a word
wrap), joined as the wrap broke them, and cut before each record head of the group's own shape that starts
after a blank; only where the head says it is the same log's next record:

- a syslog/journal head (``Mon DD HH:MM:SS host `` or an RFC 3339 time and ``host ``): the same host
  as the group's first head;
- a kernel head (``[ 12.345678]``, behind a ``<N>`` priority where the first is): a time since boot no
  earlier than the record's before it (the ring buffer is in time order).

Each record is a line of its own for the readers, numbered as the line its head starts on (several records
of one line share its number); a line of the group that holds no head's start is a wrapped part of the
record before it.

Bounded: the heads are looked for in one pass of polars' linear-time regex engine over the lines; the few
groups that hold one are cut in Python with patterns without nested repetition (each line is at most
``forensics.limits.MAX_LINE_BYTES`` long when it gets here).
"""
from __future__ import annotations

import re

import polars as pl

from forensics.sources.dmesg.wrap import wrap_breaks

_MON = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_HMS = "[0-9]{2}:[0-9]{2}:[0-9]{2}"
_SYSLOG = _MON + " +[0-9]{1,2} " + _HMS + "(?:[.,][0-9]{1,9})? (?P<host>[^ \\[\\]:]+) "
_ISO = ("[0-9]{4}-[0-9]{2}-[0-9]{2}T" + _HMS + "(?:[.,][0-9]{1,9})?(?:Z|[+-][0-9]{2}:?[0-9]{2})? "
        "(?P<host>[^ \\[\\]:]+) ")
_RAW = "(?P<pri><[0-9]{1,3}>)?\\[ *(?P<sec>[0-9]{1,10}\\.[0-9]{6,9})\\]"
# a head after a blank, looked for where the file has lines that start with a head of that shape: a syslog
# or journal time (at a line's start it has no blank before it), a kernel time in a line that starts with no
# syslog or journal head (on a syslog line the kernel's own "kernel: [ 12.3]" has a blank before it); the
# kernel time only in the lines that hold one of the literals it needs (a cheaper pass than its pattern)
_SEEN = (("ADFJMNOS", " " + _MON + " +[0-9]{1,2} " + _HMS + "[ .,]", (), None),
         ("0123456789", " [0-9]{4}-[0-9]{2}-[0-9]{2}T" + _HMS, (), None),
         ("<[", " (?:<[0-9]{1,3}>)?\\[ *[0-9]+\\.[0-9]{6,9}\\]", (" [", ">["), "^[^A-Z0-9]"))
_SHAPES = tuple((kind, re.compile(rx)) for kind, rx in (("syslog", _SYSLOG), ("iso", _ISO), ("raw", _RAW)))
_BLANK_BEFORE = re.compile(" (?=[0-9A-Z<\\[])")  # where a head may start after a blank (checked by _head)


def split_run_on(lines: pl.DataFrame) -> tuple[pl.DataFrame, pl.Series | None, int]:
    """(`lines` with the records that ran into each other a line each, numbered 1..m again; for each of
    those lines the number of the line its record's head is on), or (`lines`, None) where no line holds a
    further record. A line whose text went whole into the records before it has no line of its own: the
    file's line count less the distinct numbers says how many (wrapped parts of a record). Last, how many
    records were read from such text."""
    t = pl.col("text")
    first = set(lines.select(t.str.head(1).unique())["text"].to_list())
    parts = []
    for chars, rx, literals, where in _SEEN:
        if not first.intersection(chars):
            continue  # (a pass only for a shape the file's lines start with)
        lit = [x for x in literals if x != ">[" or "<" in first]  # ("<N>[": only where a line starts with "<")
        sub = lines.filter(pl.any_horizontal([t.str.contains(x, literal=True) for x in lit])) if lit else lines
        if where and not any(c.isupper() or c.isdigit() for c in first):
            where = None  # (no line starts with a syslog or journal head)
        parts.append(sub.filter(t.str.contains(rx) & (t.str.contains(where) if where else True)).select("line_no"))
    cand = pl.concat(parts).unique().sort("line_no") if parts else lines.clear()
    if not cand.height:
        return lines, None, 0
    texts = lines["text"].to_list()  # (split_lines numbers lines 1..n: line k is texts[k - 1])
    out: dict[int, list[tuple[int, str]]] = {}  # group's first line -> its records (line, text)
    done = 0  # the last line of a group already cut
    for ln in cand["line_no"].to_list():
        if ln <= done:
            continue
        first, last = _group(texts, ln - 1)
        got = _cut(texts, first, last)
        if got is None and first < last:  # the lines around it are not one wrapped text: the line alone
            first = last = ln - 1
            got = _cut(texts, first, last)
        if got is not None:
            out[first + 1] = got
            for k in range(first + 2, last + 2):
                out[k] = []  # a line of the group: its text is in the records above
            done = last + 1
    if not out:
        return lines, None, 0
    got = pl.DataFrame({"line_no": list(out), "_pieces": [[t for _, t in r] for r in out.values()],
                        "_from": [[k for k, _ in r] for r in out.values()]},
                       schema={"line_no": lines.schema["line_no"], "_pieces": pl.List(pl.String),
                               "_from": pl.List(lines.schema["line_no"])})
    res = (lines.join(got, on="line_no", how="left")
           .with_columns(pl.coalesce(pl.col("_pieces"), pl.concat_list(pl.col("text"))).alias("text"),
                         pl.coalesce(pl.col("_from"), pl.concat_list(pl.col("line_no"))).alias("line_no"))
           .drop("_pieces", "_from").explode("text", "line_no")
           .filter(pl.col("text").is_not_null()))  # (a line whose text is all in the records before it)
    origin = res["line_no"]
    res = res.with_columns(pl.int_range(1, res.height + 1, dtype=origin.dtype).alias("line_no"))
    return res.select(lines.columns), origin, sum(len(r) for r in out.values())


def _head(text: str, at: int = 0):
    """(shape, match) of the record head at `at` in `text`, or None."""
    for kind, rx in _SHAPES:
        m = rx.match(text, at)
        if m is not None:
            return kind, m
    return None


def _group(texts: list[str], i: int) -> tuple[int, int]:
    """The lines (first, last index) read together with line index `i`: back to the line that starts with a
    head, on over the lines that start with none, neither across a blank line or an indented one (the
    kernel's own continuation)."""
    first = i
    while first > 0 and _head(texts[first]) is None and _joins(texts[first - 1], texts[first]):
        first -= 1
    last = i
    while last + 1 < len(texts) and _head(texts[last + 1]) is None and _joins(texts[last], texts[last + 1]):
        last += 1
    return first, last


def _joins(before: str, text: str) -> bool:
    return bool(before.strip()) and bool(text.strip()) and text[:1] not in " \t"


def _cut(texts: list[str], first: int, last: int) -> list[tuple[int, str]] | None:
    """The records of lines first..last (indexes) as (line number, text), or None where they hold no
    further record of the same log (then they are read as they are)."""
    lines = texts[first:last + 1]
    seps = _seps(lines)
    if seps is None:
        return None
    joined, starts = lines[0], [0]
    for sep, ln in zip(seps, lines[1:]):
        joined += sep
        starts.append(len(joined))
        joined += ln
    heads = []  # (position, shape, match)
    own = _head(joined)
    if own is not None:
        heads.append((0, *own))
    for b in _BLANK_BEFORE.finditer(joined):
        h = _head(joined, b.end())
        if h is not None:
            heads.append((b.end(), *h))
    if not heads:
        return None
    kind, ref = heads[0][1], heads[0][2]
    cuts = [heads[0][0]] if heads[0][0] else []
    last_m = ref
    for pos, k, m in heads[1:]:
        if k != kind:
            continue
        if kind == "raw":
            if (m["pri"] is None) != (ref["pri"] is None) or float(m["sec"]) < float(last_m["sec"]):
                continue
        elif m["host"] != ref["host"]:
            continue
        cuts.append(pos)
        last_m = m
    if len(cuts) < 2 - (heads[0][0] == 0):
        return None  # one head and no further one of the same log: nothing ran into it
    bounds = ([0] if cuts[0] else []) + cuts + [len(joined)]
    out = []
    for s, e in zip(bounds, bounds[1:]):
        piece = joined[s:e]
        if e < len(joined) and piece.endswith(" "):
            piece = piece[:-1]  # the blank that stood for the lost line break
        line = first + 1 + max(k for k, st in enumerate(starts) if st <= s)
        out.append((line, piece))
    return out


def _seps(lines: list[str]) -> list[str] | None:
    """How each break between `lines` is joined: as it is after a line that ended with a blank (a soft
    break, or a word wrap that kept the blank), else as wrap.wrap_breaks reads it ("" a cut at the width, " "
    a word wrap that dropped a blank); None where a break is neither (the lines are not one wrapped text)."""
    if len(lines) == 1:
        return []
    breaks = [(len(b.rstrip()), len(t.strip().split(" ", 1)[0])) for b, t in zip(lines, lines[1:])]
    longest = max(len(ln.rstrip()) for ln in lines)
    hard = wrap_breaks(breaks, longest)
    out = []
    for b, sep in zip(lines, hard):
        if b.endswith((" ", "\t")):
            out.append("")
        elif sep is None:
            return None
        else:
            out.append(sep)
    return out
