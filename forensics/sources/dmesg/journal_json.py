"""``journalctl -o json-pretty`` objects, and ``-o json`` lines a mail client wrapped, put back on one line.

json-pretty prints each entry as an object over many lines (``{``, one ``\t"KEY" : "value",`` a line,
``}``; arrays such as ``_UDEV_DEVLINK`` over more); a mail client wraps long lines of either form, inside a
MESSAGE (at a space it drops: ``"...critical medium error, dev`` / ``nvme0n1, sector 10000 ..."``) or
between a key and its value (``"__CURSOR" :`` / ``"s=..."``). :func:`join_objects` reads each object from
its opening ``{`` to the brace that closes it (braces inside strings aside) and, where the lines joined are
one valid JSON object, puts it on its first line and leaves the others blank: the ``-o json`` reader then
takes it as it takes a one-line entry. A break inside a string gets the space the wrap dropped back (none
where the line kept it). An object that does not parse, or is longer than :data:`MAX_LINES` lines or
:data:`MAX_CHARS` characters, is left as it was, line by line; so is the rest of a file once four times its
lines were scanned (objects that never close cannot make the scan quadratic).
The parser reads a whole column with :func:`join_column` (the same result, the lines visited in
Python only where an object opens, the characters scanned only where a string is wrapped across lines).
"""
from __future__ import annotations

import json

import numpy as np
import polars as pl

MAX_LINES = 400  # an entry's lines (json-pretty: one a field, more for arrays)
MAX_CHARS = 1 << 16  # journald caps a field at far less by default (LineMax 48K)
# what Python's str.strip() takes off (str.isspace), so that polars strips the same characters
WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + \
    "\u2028\u2029\u202f\u205f\u3000"
_t = pl.col("text")
# a line that opens a journal JSON object left open: starts_object, vectorised
OPENS = (_t.str.strip_chars(WHITESPACE) == "{") | (
    _t.str.strip_chars_start(WHITESPACE).str.starts_with('{ "') & ~_t.str.strip_chars_end(WHITESPACE).str.ends_with("}"))


def _scan(piece: str, depth: int, in_str: bool, esc: bool) -> tuple[int, bool, bool]:
    """Brace depth and string state after `piece`, from the state before it."""
    for ch in piece:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return depth, in_str, esc


def starts_object(text: str) -> bool:
    """A line that opens a journal entry: ``{`` alone (json-pretty) or ``{ "__CURSOR" ...`` cut short."""
    s = text.strip()
    return s == "{" or (s.startswith('{ "') and not s.endswith("}"))


def join_objects(texts: list[str]) -> tuple[list[str], int]:
    """`texts` with each multi-line journal object joined onto its first line (its other lines blank), and
    how many lines were folded into the line before them."""
    out = list(texts)
    starts = [i for i, t in enumerate(texts) if starts_object(t)]
    joins, folded = _join(texts, starts, None, None)
    for i, j, joined in joins:
        out[i] = joined
        for k in range(i + 1, j):
            out[k] = ""
    return out, folded


def join_column(text: pl.Series) -> tuple[pl.Series, int]:
    """:func:`join_objects` of a column of lines, the same result: only the lines that open an object are
    visited in Python, and only the lines that hold a backslash or an odd number of quotes (a string
    wrapped across lines) or start inside a string have their characters scanned: each other line's
    brace depth is its own (counted in polars), and an object all of whose lines are such is found by the
    depth its lines sum to (numpy) and joined without a step per line."""
    starts = text.to_frame("text").select(OPENS.arg_true())["text"].to_list()
    if not starts:
        return text, 0
    n = text.len()
    # the lines a scan from an opening line can reach (MAX_LINES from it): only these are looked at
    edge = np.zeros(n + 1, dtype=np.int64)
    first = np.asarray(starts, dtype=np.int64)
    np.add.at(edge, first, 1)
    np.add.at(edge, np.minimum(first + MAX_LINES, n), -1)
    near = np.cumsum(edge[:n]) > 0
    idx = np.flatnonzero(near)
    sub = text.gather(idx)  # (polars' string kernels take as long over null rows as over text)
    opened = sub.str.count_matches(r"[{\[]").cast(pl.Int64).fill_null(0)
    closed = sub.str.count_matches(r"[}\]]").cast(pl.Int64).fill_null(0)
    quoted = sub.str.count_matches('"', literal=True).cast(pl.Int64).fill_null(0)
    sub_delta = (opened - closed).to_numpy().copy()
    # braces inside strings do not count: taken out where a line has both (read only where its quotes
    # pair up and it has no backslash: other lines are scanned)
    both = np.flatnonzero(((opened + closed > 0) & (quoted > 0)).to_numpy())
    if both.size:
        bare = sub.gather(both).str.replace_all(r'"[^"]*"', "")
        sub_delta[both] = (bare.str.count_matches(r"[{\[]").cast(pl.Int64)
                           - bare.str.count_matches(r"[}\]]").cast(pl.Int64)).fill_null(0).to_numpy()
    delta = np.zeros(n, dtype=np.int64)
    delta[idx] = sub_delta
    simple = np.zeros(n, dtype=bool)
    simple[idx] = (~sub.str.contains("\\", literal=True).fill_null(True) & (quoted % 2 == 0)).to_numpy()
    cum = np.cumsum(delta)
    bad = np.cumsum(~simple)

    def end_at(i: int) -> int | None:
        """The line whose brace closes the object opened at line `i`, where its lines are all simple and
        the scan would reach it (None: scan it)."""
        base = int(cum[i - 1]) if i else 0
        window = cum[i:i + MAX_LINES] <= base
        k = i + int(window.argmax())
        if not window[k - i] or int(cum[k]) != base or int(bad[k]) != (int(bad[i - 1]) if i else 0):
            return None
        return k

    texts = pl.DataFrame({"t": text, "near": near}).select(pl.when(pl.col("near")).then(pl.col("t")))["t"].to_list()
    deltas = pl.DataFrame({"d": delta, "s": simple}).select(pl.when(pl.col("s")).then(pl.col("d")))["d"].to_list()
    joins, folded = _join(texts, starts, end_at, deltas)
    if not joins:
        return text, 0
    first_lines = [i for i, _, _ in joins]
    edge = np.zeros(n + 1, dtype=np.int64)  # the lines folded into an object's first: blank
    np.add.at(edge, np.asarray(first_lines, dtype=np.int64) + 1, 1)
    np.add.at(edge, np.asarray([j for _, j, _ in joins], dtype=np.int64), -1)
    out = text.clone().scatter(first_lines, [joined for _, _, joined in joins])
    out = pl.DataFrame({"t": out, "blank": np.cumsum(edge[:n]) > 0}).select(
        pl.when(pl.col("blank")).then(pl.lit("")).otherwise(pl.col("t")).alias("t"))["t"]
    return out.alias(text.name), folded


def _join(texts: list[str], starts: list[int], end_at, deltas: list[int | None] | None
          ) -> tuple[list[tuple[int, int, str]], int]:
    """The objects opened at lines `starts` (ascending) that join into one valid JSON object: (first
    line, line after the last, joined text) each, and how many lines they fold. `end_at(i)`, where
    given, names an object's last line without a scan (None where it cannot); `deltas`, where given,
    the brace depth a line adds when it starts outside a string (None: scan it)."""
    joins = []
    folded = 0
    n = len(texts)
    nxt = 0  # lines before it belong to an object already joined
    budget = 4 * n + 4 * MAX_LINES  # lines scanned in all: objects that never close (a hostile file of "{"
    for i in starts:                # lines) cannot make it quadratic; past it the rest is read line by line
        if budget <= 0:
            break
        if i < nxt:
            continue
        k = end_at(i) if end_at is not None else None
        joined = None
        if k is not None:
            parts = [t.strip() for t in texts[i:k + 1]]
            if sum(map(len, parts)) - len(parts[-1]) < MAX_CHARS:  # the scan would have reached line k
                j, depth = k + 1, 0
                joined = "".join(parts)
        if joined is None:
            parts = [texts[i].strip()]
            d = deltas[i] if deltas is not None else None
            depth, in_str, esc = (d, False, False) if d is not None else _scan(parts[0], 0, False, False)
            j = i + 1
            size = len(parts[0])
            while depth > 0 and j < n and j - i < MAX_LINES and size < MAX_CHARS:
                t = texts[j]
                if in_str:  # a wrap inside a string: the space it dropped back, unless the line kept it
                    piece = t if parts[-1].endswith(" ") or not t.strip() else " " + t
                    depth, in_str, esc = _scan(piece, depth, in_str, esc)
                else:
                    piece = t.strip()
                    d = deltas[j] if deltas is not None else None
                    if d is None:
                        depth, in_str, esc = _scan(piece, depth, in_str, esc)
                    else:
                        depth += d
                parts.append(piece)
                size += len(piece)
                j += 1
            joined = "".join(parts)
        budget -= j - i
        if depth == 0 and j - i > 1:
            try:
                ok = isinstance(json.loads(joined), dict)
            except ValueError:
                ok = False
            if ok:
                joins.append((i, j, joined))
                folded += j - i - 1
                nxt = j
    return joins, folded
