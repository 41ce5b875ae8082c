"""PyTorch's NCCL desync report (``TORCH_NCCL_DESYNC_DEBUG=1``, or ``TORCH_DISTRIBUTED_DEBUG`` >= INFO
in the releases that tie them) -> ``nccl_desync`` rows.

On a collective timeout each rank's watchdog reads every rank's last collective start/end from the
c10d store and appends a report to its error (torch/csrc/distributed/c10d/TraceUtils.h,
``retrieveDesyncReport``: ``analyzeMissingRanks``, ``analyzeLaggingRanks``, ``dumpSnapshot``); its
lines follow the ``[rankN]:[E...] ... Rank N`` line, tab-indented and without the rank prefix::

             - [0] Timeout at collective: ALLREDUCE, #315
             - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:
               - [4, 5] joined but didn't finish collective #182 (count from 1)
                 [7] finished collective #182, but didn't join collective #183 (count from 1)
             - To our best knowledge, ranks [7] are the lagging ranks that caused this timeout. They never joined any collectives
             - Snapshot of ranks' latest states:
               #182 finished ranks:
                 [7] finished ALLREDUCE
               #315 started ranks:
                 [0, 1, 2] started ALLREDUCE

With ``TORCH_DISTRIBUTED_DEBUG=DETAIL`` PyTorch wraps every process group (ProcessGroupWrapper.cpp)
and checks before each collective that all ranks run the same one; a rank that sees another rank's
fingerprint differ raises (after a logger's or torchrun's prefix, on one line)::

    RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective:
    CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480], ...), but
    Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, ...).
    Collectives differ in the following aspects: ...

(``SequenceNumber=0OpType=REDUCE`` without a comma where the other rank's fingerprint is short;
releases before 2.0 print ``running inconsistent collective`` and no other rank.) Two rows: the
reporting rank (``mismatch_reporter``) and the rank it names (``mismatch_named``), each with the
fingerprint's sequence number (the process group's, not the desync trace's) and op.

One row per rank the report blames (``state`` joined_not_finished, finished_not_joined,
never_joined; ``seq``: the collective it did not finish or did not join, counted from 1 by the
desync trace, not the watchdog's SeqNum), and one per rank of the timeout line (``timed_out``, with
its op) and of the snapshot (``started`` / ``finished``, with op). The report's own heading lines
are structure. Lines pasted without "(count from 1)" are read too.
"""
from __future__ import annotations

import re

import polars as pl

_RANKS = r"\[([0-9]{1,7}(?:, ?[0-9]{1,7})*)\]"
_JOINED = re.compile(r"^\s*-?\s*" + _RANKS + r" joined but didn't finish collective #([0-9]{1,19})(?: \(count from 1\))?\s*$")
_FINISHED = re.compile(r"^\s*-?\s*" + _RANKS + r" finished collective #([0-9]{1,19}), but didn't join collective "
                       r"#([0-9]{1,19})(?: \(count from 1\))?\s*$")
_NEVER = re.compile(r"^\s*-?\s*To our best knowledge, ranks " + _RANKS + r" are the lagging ranks that caused this timeout\."
                    r"(?: They never joined any collectives)?\s*$")
_TIMEOUT = re.compile(r"^\s*-?\s*" + _RANKS + r" Timeout at collective: ([A-Za-z_]+), #([0-9]{1,19})\s*$")
_SNAP_SEQ = re.compile(r"^\s*#([0-9]{1,19}) (started|finished) ranks:\s*$")
_SNAP = re.compile(r"^\s*" + _RANKS + r" (started|finished) ([A-Za-z_]+)\s*$")
_HEAD = re.compile(r"^\s*-?\s*(?:To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:"
                   r"|Snapshot of ranks' latest states:|They never joined any collectives)\s*$")
_FP = r"CollectiveFingerPrint\((?:SequenceNumber=([0-9]{1,19}),? ?)?OpType=([A-Za-z_]+)"
_MISMATCH = re.compile(r"Detected mismatch between collectives on ranks\. Rank ([0-9]{1,7}) is running (?:inconsistent )?collective: "
                       + _FP + r"(?:.*?, but Rank ([0-9]{1,7}) is running collective: (?:" + _FP + r"|([A-Z_]+)\.))?")
GATE = ("collective #|lagging|Snapshot of ranks|started ranks:|finished ranks:|\\] (?:started|finished) [A-Za-z_]+\\s*$"
        "|Detected mismatch between collectives on ranks")

COLUMNS = {"line_no": pl.Int64, "state": pl.String, "rank": pl.Int32, "seq": pl.Int64, "op_type": pl.String}


def _ranks(s: str) -> list[int]:
    return [int(x) for x in s.replace(" ", "").split(",")]


def _int(s: str | None) -> int | None:
    return int(s) if s else None


def desync_rows(rest: pl.DataFrame) -> tuple[pl.DataFrame | None, pl.DataFrame]:
    """(``nccl_desync`` rows or None, the lines of `rest` not read) of the lines left by the NCCL and
    PyTorch readers (columns line_no, text)."""
    gate = rest.get_column("text").str.contains(GATE)
    if not gate.any():
        return None, rest
    cand = rest.filter(gate | rest.get_column("text").str.contains("Timeout at collective|never joined")).sort("line_no")
    rows: list[dict] = []
    used: set[int] = set()
    snap_seq = None
    for line_no, text in zip(cand["line_no"].to_list(), cand["text"].to_list()):
        got: list[dict] = []
        if m := _JOINED.match(text):
            got = [{"state": "joined_not_finished", "rank": r, "seq": int(m.group(2))} for r in _ranks(m.group(1))]
        elif m := _FINISHED.match(text):
            got = [{"state": "finished_not_joined", "rank": r, "seq": int(m.group(3))} for r in _ranks(m.group(1))]
        elif m := _NEVER.match(text):
            got = [{"state": "never_joined", "rank": r} for r in _ranks(m.group(1))]
        elif m := _TIMEOUT.match(text):
            got = [{"state": "timed_out", "rank": r, "op_type": m.group(2), "seq": int(m.group(3))} for r in _ranks(m.group(1))]
        elif m := _SNAP_SEQ.match(text):
            snap_seq = int(m.group(1))
            used.add(line_no)
            continue
        elif (m := _SNAP.match(text)) and snap_seq is not None:
            got = [{"state": m.group(2), "rank": r, "seq": snap_seq, "op_type": m.group(3)} for r in _ranks(m.group(1))]
        elif m := _MISMATCH.search(text):
            got = [{"state": "mismatch_reporter", "rank": int(m.group(1)), "seq": _int(m.group(2)), "op_type": m.group(3)}]
            if m.group(4):
                got.append({"state": "mismatch_named", "rank": int(m.group(4)), "seq": _int(m.group(5)),
                            "op_type": m.group(6) or m.group(7)})
        elif _HEAD.match(text):
            used.add(line_no)
            continue
        else:
            continue
        used.add(line_no)
        rows += [{"line_no": line_no, **g} for g in got]
    if not used:
        return None, rest
    df = pl.DataFrame({c: pl.Series([r.get(c) for r in rows], dtype=t) for c, t in COLUMNS.items()})
    return df, rest.filter(~pl.col("line_no").is_in(list(used)))
