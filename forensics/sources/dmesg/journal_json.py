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
"""
from __future__ import annotations

import json

MAX_LINES = 400  # an entry's lines (json-pretty: one a field, more for arrays)
MAX_CHARS = 1 << 16  # journald caps a field at far less by default (LineMax 48K)


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
    folded = 0
    i, n = 0, len(texts)
    budget = 4 * n + 4 * MAX_LINES  # lines scanned in all: objects that never close (a hostile file of "{"
    while i < n and budget > 0:     # lines) cannot make it quadratic; past it the rest is read line by line
        if not starts_object(texts[i]):
            i += 1
            continue
        parts = [texts[i].strip()]
        depth, in_str, esc = _scan(parts[0], 0, False, False)
        j = i + 1
        size = len(parts[0])
        while depth > 0 and j < n and j - i < MAX_LINES and size < MAX_CHARS:
            t = texts[j]
            if in_str:  # a wrap inside a string: the space it dropped back, unless the line kept it
                piece = t if parts[-1].endswith(" ") or not t.strip() else " " + t
            else:
                piece = t.strip()
            parts.append(piece)
            size += len(piece)
            depth, in_str, esc = _scan(piece, depth, in_str, esc)
            j += 1
        budget -= j - i
        if depth == 0 and j - i > 1:
            joined = "".join(parts)
            try:
                ok = isinstance(json.loads(joined), dict)
            except ValueError:
                ok = False
            if ok:
                out[i] = joined
                for k in range(i + 1, j):
                    out[k] = ""
                folded += j - i - 1
                i = j
                continue
        i += 1
    return out, folded
