"""NCCL RAS reports (NCCL 2.24+: ``ncclras``, or ``echo verbose status | nc localhost 28028``) -> ``nccl_ras``.

RAS is NCCL's own job-wide health view: every process's RAS thread answers the client, which prints
which processes and communicator ranks did not answer or differ. Read here as the client prints them
(format strings of src/ras/client_support.cc, NVIDIA/nccl 2.24.3 to 2.29; samples in its
docs/userguide/source/troubleshooting/ras.rst):

- the text report: ``Job summary`` and ``Communicators`` tables (counted as structure), then the
  ``Errors`` and ``Warnings`` sections. Job-wide blocks ``INCOMPLETE`` (``Missing communicator data
  from N job processes``), ``DEAD`` (``N job process(es) ... considered dead``) and ``TIMEOUT`` list
  ``Process P on node X managing GPU G``; per-communicator blocks ``#g-c (hash) INCOMPLETE|ERROR|
  MISMATCH`` list ``Rank R -- GPU G managed by process P on node X`` (also ``Rank R has status S --
  ...``, ``Rank R has launched up to operation K -- ...``), under headings ``N ranks have launched
  up to operation K`` / ``N ranks have status S``; 2.24 prints ``The missing rank(s): 21,22``;
- the JSON report (2.28.7+, ``ncclras -f json``): per communicator its ``ranks`` (with
  ``collective_counts``) and ``missing_ranks`` (``unresponsive``, ``considered_dead``);
- monitor mode (2.29+, ``ncclras -m``): ``[2025-12-19 13:07:07] PEER_DEAD: Process P on node X managing GPU G``.

One row per process or rank a report names: ``problem`` (INCOMPLETE, DEAD, TIMEOUT, ERROR, MISMATCH,
PEER_DEAD and the other monitor events; ``missing`` / ``present`` for the JSON form), the
communicator (``#g-c``) and its hash, the communicator rank, GPU, pid, the node as RAS prints it
(the address of its RAS socket: an IP address), the operation count and status the block gives.
Text reports carry no time (ts null); JSON and monitor times are the client's local time.

>>> from forensics.sources._base import ParseContext
>>> r = parse(b"Errors\\n======\\n\\nDEAD\\n  1 job process is considered dead (unreachable via the RAS network)\\n"
...           b"  Process 3487984 on node 172.16.64.213 managing GPU 5\\n\\n#0-0 (cf264af53edbe986) INCOMPLETE\\n"
...           b"  Missing communicator data from 1 rank\\n  The missing rank: 21\\n", ParseContext(host="n1"))
>>> r.tables["nccl_ras"].select("problem", "comm", "rank", "gpu", "pid", "node").rows()
[('DEAD', None, None, 5, 3487984, '172.16.64.213'), ('INCOMPLETE', '#0-0', 21, None, None, None)]
>>> r.lines, r.unparsed.height
(10, 0)
"""
from __future__ import annotations

import datetime as dt
import json
import re

import polars as pl

from forensics.sources._base import (ParseContext, ParseResult, Sniff, head_text, local_to_utc, result, split_lines,
                                     unparsed_rows)
from forensics.sources._bounded import INT32, INT64, int_or_none

NAME = "nccl_ras"
VERSION = 3  # 3: an operation count past Int64 (the text report's 19 digits) and a JSON rank, GPU or pid past its column are null, the row kept (building the table raised: the file was lost); 2: JSON nested past the recursion limit is unparsed lines (was a parse error)
TABLES = ("nccl_ras",)
DESCRIPTION = "NCCL RAS client reports (text, JSON, monitor): dead and missing processes and ranks, per-communicator mismatches"

_GPU = r"GPUs? ([0-9]{1,4})(?: \(NVML ([0-9]{1,4})\))?"
_PROC = re.compile(r"^\s*Process ([0-9]{1,12}) on node (\S+) managing " + _GPU + r"\s*$")
_RANK = re.compile(r"^\s*Rank ([0-9]{1,9})(?: has status ([A-Z]+)| has launched up to operation ([0-9]{1,19})"
                   r"| has not launched any operations)? -- (?:GPU ([0-9]{1,4})(?: \(NVML ([0-9]{1,4})\))? managed by process "
                   r"([0-9]{1,12}) on node (\S+)|\[process information not found\])\s*$")
_COMM = re.compile(r"^#([0-9]{1,6}-[0-9]{1,6}) \(([0-9a-f]{1,16})\) ([A-Z,]+)\s*$")
_JOB = re.compile(r"^(INCOMPLETE|DEAD|TIMEOUT)\s*$")
_GROUP = re.compile(r"^\s*([0-9]{1,9}) ranks? (?:have launched up to operation ([0-9]{1,19})|have status ([A-Z]+)"
                    r"|have not launched any operations|reported .*)\s*$")
_MISSING = re.compile(r"^\s*The missing ranks?: ([0-9]{1,9}(?:,[0-9]{1,9})*)\s*$")
_MONITOR = re.compile(r"^\s*\[([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2})\] ([A-Z_]+): Process ([0-9]{1,12}) "
                      r"on node (\S+) managing " + _GPU + r"\s*$")
# lines of the format that carry no row: titles, underlines, table headers and rows, block texts
_STRUCT = re.compile(r"^\s*(?:Job summary|Communicators\.\.\. \([0-9.]+s\)|Errors|Warnings|=+|Nodes +Processes.*|\(total\).*"
                     r"|per node.*|Group +Comms.*|# +in group.*|[0-9]+(?: +[0-9-]+){2,}(?: +[A-Z,]+){0,2}|\[\.\.\.\]"
                     r"|Missing communicator data from [0-9]+ (?:job process(?:es)?|ranks?)"
                     r"|[0-9]+ job process(?:es are| is) considered dead \(unreachable via the RAS network\)"
                     r"|Encountered [0-9]+ communication timeouts? while gathering communicator data"
                     r"|Communicator ranks have different .*|(?:Initialization|Asynchronous) errors? on [0-9]+ ranks?"
                     r"|RAS Monitor Mode - watching for peer changes \(Ctrl\+C to exit\)\.\.\."
                     r"|The outlier nodes?:|\[could not find information on [0-9]+ process(?:es)?\])\s*$")

_COLS = {"line_no": pl.Int64, "naive": pl.Datetime("us"), "section": pl.String, "problem": pl.String, "comm": pl.String,
         "comm_hash": pl.String, "rank": pl.Int32, "gpu": pl.Int32, "nvml_gpu": pl.Int32, "pid": pl.Int64, "node": pl.String,
         "ops_launched": pl.Int64, "status": pl.String, "detail": pl.String}
_NOT = "not a line of an NCCL RAS report"


def sniff(head: bytes) -> Sniff:
    """A RAS report: its section titles and table headers, a ``#g-c (hash) KIND`` block, a monitor
    event line, or the JSON report's ``nccl_version`` + ``communicators`` keys."""
    text = head_text(head)
    if text.lstrip().startswith("{") and '"communicators"' in text and '"nccl_version"' in text:
        return Sniff(0.95, "NCCL RAS JSON report (nccl_version, communicators)")
    marks = [m for m in ("Group     Comms     Nodes", "Communicators... (", "considered dead (unreachable via the RAS network)",
                         "Missing communicator data from", "RAS Monitor Mode", "  Nodes  Processes")
             if m in text]
    lines = text.splitlines()
    blocks = sum(1 for ln in lines[:2000] if _COMM.match(ln) or _MONITOR.match(ln))
    if marks or blocks:
        return Sniff(0.9 if len(marks) + blocks >= 2 else 0.7, f"NCCL RAS report: {len(marks)} title(s), {blocks} block/event line(s)")
    return Sniff(0.0, "no NCCL RAS report title, block or event")


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    lines = split_lines(data)
    head = data.lstrip()[:1]
    if head == b"{":
        return _parse_json(data, lines.height, ctx)
    rows: list[dict] = []
    bad: list[tuple[int, str, str]] = []
    section = problem = comm = comm_hash = None
    group: dict = {}
    for line_no, text in zip(lines["line_no"].to_list(), lines["text"].to_list()):
        s = text.strip()
        if not s:
            continue
        if s in ("Errors", "Warnings"):
            section, problem, comm, comm_hash, group = s.lower(), None, None, None, {}
            continue
        m = _JOB.match(s)
        if m:
            problem, comm, comm_hash, group = m.group(1), None, None, {}
            continue
        m = _COMM.match(s)
        if m:
            comm, comm_hash, problem, group = "#" + m.group(1), m.group(2), m.group(3), {}
            continue
        base = {"line_no": line_no, "section": section, "problem": problem, "comm": comm, "comm_hash": comm_hash}
        m = _PROC.match(text)
        if m and problem:
            rows.append({**base, "pid": int(m.group(1)), "node": m.group(2), "gpu": int(m.group(3)),
                         "nvml_gpu": int(m.group(4)) if m.group(4) else None})
            continue
        m = _RANK.match(text)
        if m and problem:
            rows.append({**base, "rank": int(m.group(1)), "status": m.group(2) or group.get("status"),
                         "ops_launched": _ops(m.group(3)) if m.group(3) else (0 if "not launched" in s else group.get("ops")),
                         "gpu": int(m.group(4)) if m.group(4) else None, "nvml_gpu": int(m.group(5)) if m.group(5) else None,
                         "pid": int(m.group(6)) if m.group(6) else None, "node": m.group(7)})
            continue
        m = _GROUP.match(text)
        if m and problem:
            group = {"ops": _ops(m.group(2)) if m.group(2) else (0 if "not launched" in s else None), "status": m.group(3)}
            continue
        m = _MISSING.match(text)
        if m and problem:
            rows += [{**base, "rank": int(r)} for r in m.group(1).split(",")]
            continue
        m = _MONITOR.match(text)
        if m:
            rows.append({"line_no": line_no, "section": "monitor", "problem": m.group(2), "pid": int(m.group(3)),
                         "node": m.group(4), "gpu": int(m.group(5)), "nvml_gpu": int(m.group(6)) if m.group(6) else None,
                         "naive": dt.datetime.fromisoformat(m.group(1))})
            continue
        if _STRUCT.match(text):
            continue
        bad.append((line_no, text, _NOT))
    return _result(rows, bad, lines.height, ctx)


def _result(rows: list[dict], bad: list, n: int, ctx: ParseContext) -> ParseResult:
    df = pl.DataFrame({c: pl.Series([r.get(c) for r in rows], dtype=t) for c, t in _COLS.items()})
    df = df.with_columns(local_to_utc(pl.col("naive"), ctx.tz).alias("ts"),
                         pl.when(pl.col("naive").is_null()).then(pl.lit("none")).otherwise(pl.lit("local"))
                         .alias("ts_quality")).drop("naive")
    return result(NAME, ctx, n, {"nccl_ras": df}, unparsed_rows(bad, ctx, NAME) if bad else None, hosts=[])


def _parse_json(data: bytes, n: int, ctx: ParseContext) -> ParseResult:
    """The JSON report: every line of the document is used, or (not JSON, not a RAS report) all are unparsed."""
    try:
        doc = json.loads(data)
        comms = doc["communicators"]
        if not isinstance(comms, list):
            raise TypeError("communicators is not a list")
        naive = None
        if isinstance(doc.get("timestamp"), str):
            try:
                naive = dt.datetime.fromisoformat(doc["timestamp"])
            except ValueError:
                naive = None
        rows = []
        for c in comms:
            h = str(c.get("hash", "")).removeprefix("0x") or None
            for key, problem in (("ranks", "present"), ("missing_ranks", "missing")):
                for r in c.get(key) or []:
                    st = r.get("status") or {}
                    counts = r.get("collective_counts") or {}
                    p = problem
                    if problem == "missing" and st.get("considered_dead"):
                        p = "DEAD"
                    rows.append({"line_no": 1, "naive": naive, "section": "json", "problem": p, "comm_hash": h,
                                 "rank": _int(r.get("rank"), INT32), "gpu": _int(r.get("cuda_dev"), INT32),
                                 "nvml_gpu": _int(r.get("nvml_dev"), INT32), "pid": _int(r.get("pid"), INT64), "node": str(r["host"]) if r.get("host") is not None else None,
                                 "ops_launched": _int(sum(v for v in counts.values() if _int(v, INT64) is not None), INT64)
                                 if counts else None,
                                 "status": ("unresponsive" if st.get("unresponsive") else None) if problem == "missing" else
                                 ("async_error" if st.get("async_error") else "init_error" if st.get("init_state") not in (0, 7, None)
                                  else "abort" if st.get("abort_flag") else "finalize" if st.get("finalize_called") else "ok"),
                                 "detail": f"communicator size {c.get('size')}"})
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:  # (RecursionError: deep nesting)
        lines = split_lines(data)
        return _result([], [(ln, t, f"not an NCCL RAS JSON report ({type(exc).__name__})")
                            for ln, t in zip(lines["line_no"].to_list(), lines["text"].to_list())], n, ctx)
    return _result(rows, [], n, ctx)


def _int(v, bounds: tuple[int, int]) -> int | None:
    """A JSON integer within its column's `bounds` (JSON numbers have no size), else None."""
    return int_or_none(v, *bounds) if isinstance(v, int) else None


def _ops(digits: str) -> int | None:
    """An operation count as the text report prints it (up to 19 digits: past Int64 it is null)."""
    return int_or_none(digits, *INT64)
