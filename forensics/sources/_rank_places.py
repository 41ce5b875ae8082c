"""Where each rank ran, as the launcher itself printed it -> ``rank_hosts`` rows.

Read from a job's own output (its training log, or the stdout of ``torchrun``) by the parsers that
read that output (:mod:`forensics.sources.train_log`): the failure records of torchrun's
``ChildFailedError`` (torch.distributed.elastic.multiprocessing.errors, every release since 1.9),
printed by the elastic agent of the node whose workers failed::

    Failures:
    [1]:
      time      : 2024-08-17_13:24:04
      host      : server
      rank      : 4 (local_rank: 4)
      exitcode  : 1 (pid: 2680834)
      error_file: <N/A>
      traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
    ------------------------------------------------------------
    Root Cause (first observed failure):
    [0]:
      ...

Each record names the host (the agent's ``socket.getfqdn()``), the global rank, its local rank (the
GPU index torchrun gave it, ``LOCAL_RANK``), the exit code and the pid: one row per record, with
``how`` ``torchrun_failure`` or ``torchrun_root_cause``. Any prefix a launcher or logger adds before
the fields (``2026-09-17 13:40:05 ``, ``[default0]:``) is allowed. ``time`` is the agent's local
time (``%Y-%m-%d_%H:%M:%S``), converted with ctx.tz. A record missing its host or rank line gives
no row: its lines stay with the caller's unparsed lines.

>>> import polars as pl
>>> from forensics.sources._base import ParseContext, split_lines
>>> text = ("Root Cause (first observed failure):\\n[0]:\\n  time      : 2022-07-11_09:56:03\\n"
...         "  host      : n20.cluster\\n  rank      : 4 (local_rank: 4)\\n  exitcode  : 1 (pid: 24321)\\n"
...         "  error_file: <N/A>\\n  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\\n")
>>> df, used = read(split_lines(text), ParseContext(host="node01"))
>>> df.select("how", "rank", "local_rank", "node", "pid", "exitcode").rows(), sorted(used)
([('torchrun_root_cause', 4, 4, 'n20.cluster', 24321, 1)], [1, 2, 3, 4, 5, 6, 7, 8])
"""
from __future__ import annotations

import datetime as dt
import re

import polars as pl

from forensics.sources._base import ParseContext, local_to_utc

# a line that may belong to a failure record (polars regex gate: the Python loop sees only these)
GATE = (r"(?:^|[\s\]:])(?:\[[0-9]{1,7}\]:\s*$|(?:time|host|rank|exitcode|error_file|traceback)\s*:"
        r"|Root Cause \(first observed failure\):|Failures:\s*$)|ChildFailedError:\s*$|(?:^|\s)(?:={20,}|-{20,})\s*$"
        r"| FAILED\s*$|<NO_OTHER_FAILURES>")

_START = re.compile(r"(?:^|[\s\]:])\[([0-9]{1,7})\]:\s*$")
_FIELD = re.compile(r"(?:^|[\s\]:])(time|host|rank|exitcode|error_file|traceback)\s*:\s?(.*?)\s*$")
_RANK = re.compile(r"([0-9]{1,9}) \(local_rank: ([0-9]{1,9})\)$")
_EXIT = re.compile(r"(-?[0-9]{1,9}) \(pid: ([0-9]{1,12})\)$")
_TIME = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})_([0-9]{2}:[0-9]{2}:[0-9]{2})$")
_ROOT = "Root Cause (first observed failure):"
_FAILURES = re.compile(r"(?:^|[\s\]:])Failures:\s*$")
_ORDER = ("time", "host", "rank", "exitcode", "error_file", "traceback")
# the summary's frame, structure from its ChildFailedError: line to the closing rule after a record
_SUMMARY = re.compile(r"torch\.distributed\.elastic\.multiprocessing\.errors\.ChildFailedError:\s*$")
_FRAME = re.compile(r"^(?:.*\s)?(?:={20,}|-{20,}|\S+ FAILED|<NO_OTHER_FAILURES>)\s*$")
_CLOSE = re.compile(r"^(?:.*\s)?={20,}\s*$")

COLUMNS = {"line_no": pl.Int64, "how": pl.String, "rank": pl.Int32, "local_rank": pl.Int32, "node": pl.String,
           "pid": pl.Int64, "exitcode": pl.Int32, "naive": pl.Datetime("us")}


def read(lines: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, set[int]]:
    """(rows of ``rank_hosts`` without host/source/file, line numbers they used) from `lines`
    (:func:`forensics.sources._base.split_lines`'s frame)."""
    cand = lines.filter(pl.col("text").str.contains(GATE))
    rows: list[dict] = []
    used: set[int] = set()
    how = "torchrun_failure"
    rec: dict | None = None
    last = -1

    def close() -> None:
        nonlocal rec
        if rec is not None and rec.get("node") and rec.get("rank") is not None:
            rows.append(rec)
            used.update(rec.pop("lines"))
        rec = None

    frame = False  # inside a summary (after its ChildFailedError: line)
    for line_no, text in zip(cand["line_no"].to_list(), cand["text"].to_list()):
        if rec is not None and line_no != last + 1:  # a record's lines follow one another
            close()
        if frame and line_no != last + 1:
            frame = False
        last = line_no
        if _SUMMARY.search(text):
            close()
            frame = True
            used.add(line_no)
            continue
        if frame and _FRAME.match(text):
            closing = _CLOSE.match(text) and (rec is not None or rows)
            close()
            used.add(line_no)
            frame = not closing
            continue
        if _ROOT in text:
            close()
            how = "torchrun_root_cause"
            used.add(line_no)
            continue
        if _FAILURES.search(text):
            close()
            how = "torchrun_failure"
            used.add(line_no)
            continue
        m = _START.search(text)
        if m:
            close()
            rec = {"how": how, "line_no": line_no, "lines": [line_no], "seen": set()}
            continue
        m = _FIELD.search(text)
        if rec is None or not m or m.group(1) in rec["seen"]:
            close()
            continue
        key, value = m.group(1), m.group(2)
        rec["seen"].add(key)
        if not _store(rec, key, value):
            rec = None  # a field that does not read as torchrun writes it: not a record
            continue
        rec["lines"].append(line_no)
    close()
    df = pl.DataFrame({c: pl.Series([r.get(c) for r in rows], dtype=t) for c, t in COLUMNS.items()})
    df = df.with_columns(local_to_utc(pl.col("naive"), ctx.tz).alias("ts"),
                         pl.when(pl.col("naive").is_null()).then(pl.lit("none")).otherwise(pl.lit("local"))
                         .alias("ts_quality")).drop("naive")
    return df, used


def count_records(lines: list[str]) -> int:
    """How many ``host :`` lines of `lines` are followed by a torchrun ``rank : N (local_rank: M)`` line (the sniffers' test)."""
    n = 0
    for a, b in zip(lines, lines[1:]):
        ma, mb = _FIELD.search(a), _FIELD.search(b)
        if ma and mb and ma.group(1) == "host" and mb.group(1) == "rank" and _RANK.match(mb.group(2)):
            n += 1
    return n


def _store(rec: dict, key: str, value: str) -> bool:
    if key == "host":
        if not value or " " in value:
            return False
        rec["node"] = value
    elif key == "rank":
        m = _RANK.match(value)
        if not m:
            return False
        rec["rank"], rec["local_rank"] = int(m.group(1)), int(m.group(2))
    elif key == "exitcode":
        m = _EXIT.match(value)
        if not m:
            return False
        rec["exitcode"], rec["pid"] = int(m.group(1)), int(m.group(2))
    elif key == "time":
        m = _TIME.match(value)
        if not m:
            return False
        try:
            rec["naive"] = dt.datetime.fromisoformat(f"{m.group(1)} {m.group(2)}")
        except ValueError:
            return False
    return True
