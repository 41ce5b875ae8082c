"""An ``ethtool -S`` whose line breaks a page lost (an HTML ``<pre>`` copied as text, a chat message): the header
and the counters on one line, ``NIC statistics: rx_packets: 1 tx_packets: 2 ...``, read as the lines ethtool
printed (:mod:`forensics.sources.ethtool`).

Only a line that holds the ``NIC statistics:`` header with at least two ``name: value`` pairs after it is taken
apart (the header is what says the pairs are ethtool's; ``Rx Queue#: 0`` sections of vmxnet3 stay where they are).
Each part is read as a line of its own; the rows keep the number of the line in the file, and a part nothing reads
(the words before the header, "# ethtool -S eth0") is kept in meta ``collapsed_leftovers`` of a line whose
counters were read, and in unparsed (the whole line, once) of a line of which no counter was read.
"""
from __future__ import annotations

import re

import polars as pl

MAX_LINE = 1 << 20  # a longer line is not taken apart (read, and reported, as it is)
_HEADER = "NIC statistics:"
# a counter as ethtool prints it ("%s: %llu"), starting a word of the collapsed line (the lookbehind keeps the
# search linear: a run of name characters is tried once, from its start)
_PAIR = re.compile(r"(?<!\S)[A-Za-z0-9_.\-\[\]]{1,128}: [0-9]{1,20}(?=\s|$)")
_GATE = re.compile(rb"NIC statistics: +[A-Za-z0-9_.\-\[\]]{1,128}: [0-9]")
_SNIFF = re.compile(r"NIC statistics: +[A-Za-z0-9_.\-\[\]]{1,128}: [0-9]{1,20}\s+[A-Za-z0-9_.\-\[\]]{1,128}: [0-9]")


def looks_collapsed(text: str) -> bool:
    """A line of `text` holds the NIC statistics header and two counters after it."""
    return _HEADER in text and bool(_SNIFF.search(text))


def parts(line: str) -> list[str] | None:
    """The lines ethtool printed, from one collapsed line; None when `line` is not one."""
    at = line.find(_HEADER)
    if at < 0 or len(line) > MAX_LINE:
        return None
    head, rest = line[:at].strip(), line[at + len(_HEADER):]
    pairs = list(_PAIR.finditer(rest))
    if len(pairs) < 2:
        return None
    out = ([head] if head else []) + [_HEADER]
    pos = 0
    for m in pairs:
        gap = rest[pos:m.start()].strip()
        if gap:
            out.append(gap)
        out.append("    " + m.group(0))
        pos = m.end()
    if rest[pos:].strip():
        out.append(rest[pos:].strip())
    return out


def expand(data: bytes) -> tuple[bytes, list[int], dict[int, str]] | None:
    """(the input with each collapsed line taken apart, the line number in `data` of each line of the new input,
    {line number: text} of the collapsed lines), or None when no line is collapsed."""
    if not _GATE.search(data):
        return None
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    out: list[str] = []
    origin: list[int] = []
    collapsed: dict[int, str] = {}
    for i, ln in enumerate(lines, start=1):
        got = parts(ln.rstrip("\r")) if _HEADER in ln else None
        if got is None:
            out.append(ln)
            origin.append(i)
            continue
        collapsed[i] = ln.rstrip("\r")
        out.extend(got)
        origin.extend([i] * len(got))
    if not collapsed:
        return None
    return ("\n".join(out) + "\n").encode(), origin, collapsed


def restore(res, n_lines: int, origin: list[int], collapsed: dict[int, str]):
    """`res` (the parse of the expanded input) told in the lines of the file: rows and unparsed lines renumbered,
    a collapsed line's leftovers kept in meta (counters read from it) or the line once in unparsed (none read)."""
    index = pl.Series("origin", origin, dtype=pl.Int64)

    def renumber(df: pl.DataFrame) -> pl.DataFrame:
        if "line_no" not in df.columns or not df.height:
            return df
        return df.with_columns(pl.col("line_no").map_batches(lambda s: index.gather(s - 1), return_dtype=pl.Int64))

    tables = {k: renumber(v) for k, v in res.tables.items()}
    read = set()
    for df in tables.values():
        if "line_no" in df.columns and df.height:
            read.update(x for x in df["line_no"].unique().to_list() if x in collapsed)
    up = renumber(res.unparsed)
    from_collapsed = up["line_no"].is_in(list(collapsed))
    left = up.filter(from_collapsed)
    leftovers = [{"line_no": int(r["line_no"]), "text": r["text"]} for r in left.iter_rows(named=True)
                 if r["line_no"] in read]
    unread = left.filter(~pl.col("line_no").is_in(list(read))).unique("line_no", keep="first", maintain_order=True)
    unread = unread.with_columns(pl.col("line_no").replace_strict(collapsed, default=None, return_dtype=pl.String)
                                 .alias("text"))
    up = pl.concat([up.filter(~from_collapsed), unread]).sort("line_no")
    res.tables, res.unparsed, res.lines = tables, up, n_lines
    res.meta = {**res.meta, "collapsed_lines": len(collapsed)}
    if leftovers:
        res.meta["collapsed_leftovers"] = leftovers[:200]
    return res
