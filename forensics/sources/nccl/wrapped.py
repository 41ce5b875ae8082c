"""PyTorch c10d lines broken over several lines by whoever passed them on: a job runner that wraps stderr at its
width (``job [stderr] [rank13]:[E909 ... ProcessGroupNCCL.cpp:607] [Rank 13] Watchdog caught collective operation
timeout: `` / ``WorkNCCL(SeqNum=2070, OpType=REDUCE, ...) ran for 600068 milliseconds before timing out.``), a
terminal or issue form that cuts every line at a fixed width mid-word (``... Watchdog caught colle`` / ``ctive
operation timeout: ...``), an author who wrapped the message by hand at ~70 columns. The pieces are joined back
onto the line that starts the record, so the row gets its fields (SeqNum, OpType, Timeout(ms), ran for); the lines
that held the rest are emptied and counted (:data:`WRAPPED`).

A record that is joined: a line with the watchdog's ``Watchdog caught collective operation timeout`` (also without a
glog header: ``[Rank 2] Watchdog caught collective operation timeout:`` as an author pasted it), a PyTorch glog line of level E, W or F (``[E ProcessGroupNCCL.cpp:737]``,
``[rank3]:[E1130 10:15:02.123 1234 ProcessGroupNCCL.cpp:616]``), a ``what():`` line, an ``Exception raised from``
line and a C++ ``frame #N:`` line, whose text does not end as such a record ends (a glog or ``what()`` message
with ``.``, a frame with ``)``, ``Exception raised from ... (most recent call first)`` with ``:``). A line is its
rest when it holds a piece of the watchdog's message (a frame's: of its path, below) (``WorkNCCL(``, ``OpType=``, ``ran for 600068``, ``before timing
out``, ``by watchdog``, ``NCCL work``, ...), is the rest of a frame's library path (``/usr/lib/libc10.so)``,
``7f5a4441bc74 in /home/.../libtorch_cuda.so)``), or follows a line cut at the input's width mid-word (below); and
when it starts as no record does (not blank, not indented (a report's own lines under its head: the desync
report's ``\t - [0] Timeout at collective``) unless with a piece of the watchdog's message (``  WorkNCCL(SeqNum=``,
``  ran for 600030 milliseconds``: a message wrapped and indented by hand), no bracket, launcher or worker prefix, no NCCL or glog header, no
frame, traceback or ``terminate called`` line, not a ``node: `` name where the record's line starts with one: that node's or another's next line). At most MAX_TAIL lines are joined to one record.

The rest is joined with a blank, without one where the record's line ended with one, and without one where the
line before the break is as long as the input's longest lines in an input cut at a fixed width mid-word (``colle``
+ ``ctive``: at least two breaks at that width, and no line before a break ends with a blank; a word wrap at a
width, as a job runner's console makes, keeps the blank it broke at on some of them).
"""
from __future__ import annotations

import re

import polars as pl

# a record that may be continued (polars regex, run on the few lines a literal scan kept)
_FRAME_RE = r"(?:^|\s|:)frame #[0-9]{1,6}: "
_RAISED_RE = r"(?:^|\s|:)Exception raised from "
_RECORD = (r"\[[EWF](?:[0-9]{3,4} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?: +[0-9]{1,12})?)? ?[A-Za-z0-9_.]+"
           r"\.(?:cpp|cc|hpp|h):[0-9]{1,9}\] |^\s*what\(\): |" + _FRAME_RE + "|" + _RAISED_RE
           + r"|Watchdog caught collective operation timeout")
# the lines that may hold one (one regex of literals over all lines: 6 ms on a 20 MB log, contains_any of the same 34)
_CANDIDATE = r"ProcessGroupNCCL|NCCLUtils|what\(\)|frame #|Exception raised from|Watchdog caught"
# a piece of the watchdog's message (an author who wrapped it by hand may indent it: "  WorkNCCL(SeqNum=10707, ..."),
# or of the work numbers of the exception line after it
_PIECE = (r"(?:WorkNCCL\(|SeqNum=|OpType=|NumelIn=|NumelOut=|Timeout\(ms\)=|ran for [0-9]|milliseconds|before timing "
          r"|by watchdog|NCCL work|last (?:enqueued|started|completed) |\(most recent call first\))")
_HAS_PIECE = re.compile(_PIECE)
# the rest of a C++ frame's "(0xADDR in /path/lib.so)" cut before the path or inside it
_PATH_TAIL = re.compile(r"\s{0,16}(?:[0-9a-fx]{1,18} in )?[^\s()]{1,4096}\)\s*$")
# a line that starts a record of its own (Python re on the few lines after a record)
_START = re.compile(
    r"(?:\s(?!\s{0,16}" + _PIECE + r")|$|[\[(<{>#|*-]|frame #|Exception raised from|terminate called|what\(\)|Traceback "
    r"|File \"|[0-9]{1,9}: |[IWEF][0-9]{4,8} |NCCL version |[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"|[A-Za-z0-9_.-]{1,253}:[0-9]{1,12}:[0-9]{1,12} \[)"
    r"|[^\s\[\]()]{1,256} \[std(?:out|err)\]"
    r"|.{0,400}? NCCL (?:INFO|WARN|TRACE|ABORT|ATTN|CALL) ")
# a name and ": " before the record (pdsh/clush's node, a tag): a line that starts with one is a node's next line
_NODE = re.compile(r"[^\s:\[\]()]{1,64}: ")
MAX_TAIL = 8
WRAPPED = "the rest of a PyTorch line (watchdog message, what(), C++ frame) wrapped onto the next line: joined into it"


def _open_heads(lines: pl.DataFrame) -> tuple[list[int], list[str]]:
    """The rows (indices) of records whose text does not end as such a record ends (a frame with ")", "Exception raised
    from ... (most recent call first)" with ":", a glog, what() or watchdog message with "."), and each one's end."""
    t = pl.col("text")
    cand = lines.select(t.str.contains(_CANDIDATE).fill_null(False).arg_true()).to_series()
    if not cand.len():
        return [], []
    sub = lines.select(t.gather(cand), cand.alias("_i")).filter(t.str.contains(_RECORD).fill_null(False))
    end = (pl.when(t.str.contains(_FRAME_RE)).then(pl.lit(")")).when(t.str.contains(_RAISED_RE)).then(pl.lit(":"))
           .otherwise(pl.lit(".")))
    sub = sub.with_columns(end.alias("_end")).filter(~t.str.strip_chars_end().str.ends_with(pl.col("_end")))
    return sub.get_column("_i").to_list(), sub.get_column("_end").to_list()


def join_wrapped(lines: pl.DataFrame) -> tuple[pl.DataFrame, list[int]]:
    """`lines` (line_no, text) with the rest of each wrapped PyTorch record joined onto its first line and the lines
    that held it emptied; (lines, the emptied lines' numbers: counted by the caller, not lost). Polars finds the few
    records left open; Python follows each over the lines after it."""
    heads, ends = _open_heads(lines)
    if not heads:
        return lines, []
    text = lines.get_column("text")
    n = text.len()
    # a cut at a fixed width, mid-word: at least two open records as long as the longest lines, none ending in a blank
    # (the longest line is sought only where two open records are as long as each other)
    firsts = [text[i] or "" for i in heads]
    longest = max(len(h) for h in firsts)
    width = (int(text.str.len_chars().max() or 0)
             if longest >= 60 and sum(len(h) == longest for h in firsts) >= 2 else -1)
    cut_width = width == longest and not any(h.endswith((" ", "\t")) for h in firsts if len(h) == width)
    chains: list[list[int]] = []
    taken: set[int] = set()
    for i, end in zip(heads, ends):
        if i in taken:
            continue
        cur = text[i] or ""
        node = _NODE.match(cur)
        frame = end == ")"
        chain, j = [i], i + 1
        while j < n and j - i <= MAX_TAIL and not cur.rstrip().endswith(end):
            nxt = text[j]
            if nxt is None or _START.match(nxt) or (node is not None and _NODE.match(nxt)):
                break
            cut = cut_width and len(cur) == width
            if not (cut or (_PATH_TAIL.match(nxt) if frame else _HAS_PIECE.search(nxt))):
                break
            chain.append(j)
            cur = nxt
            j += 1
        if len(chain) > 1:
            chains.append(chain)
            taken.update(chain)
    if not chains:
        return lines, []
    new: dict[int, str] = {}
    gone: list[int] = []
    for chain in chains:
        cur = text[chain[0]]
        for k in chain[1:]:
            nxt = text[k]
            cut = cut_width and len(text[k - 1]) == width
            cur = cur + nxt if cut or cur.endswith((" ", "\t")) else cur + " " + nxt.lstrip()
            gone.append(k)
        new[chain[0]] = cur
    idx = pl.Series(list(new) + gone, dtype=pl.UInt32)  # (one scatter: each copies the whole column)
    text = text.scatter(idx, pl.Series(list(new.values()) + [""] * len(gone), dtype=pl.String))
    return lines.with_columns(text), lines.get_column("line_no").gather(gone).to_list()
