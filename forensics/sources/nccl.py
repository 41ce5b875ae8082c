"""NCCL debug output (``NCCL_DEBUG=VERSION|WARN|INFO|TRACE``) and PyTorch's NCCL watchdog lines.

Reads what NCCL's ``ncclDebugLog`` prints in every version from 2.4 to 2.30, as job stdout, an
``NCCL_DEBUG_FILE`` or a container log:

- ``host:pid:tid [dev] NCCL INFO msg``; WARN as ``host:pid:tid [dev] file.cc:123 NCCL WARN msg``
  (2.24+ may add `` (func)`` after the line number); TRACE as ``host:pid:tid [dev] 12.345 func:67
  NCCL TRACE msg``; ``host:pid:tid NCCL CALL ...``; old ``... file:line NCCL ABORT``; the bare
  ``NCCL version 2.11.4+cuda11.4`` (VERSION level, no host) and ``... NCCL INFO NCCL version ...``;
- NCCL's own time stamp ``[%F %T] `` (NCCL_DEBUG_TIMESTAMP_FORMAT, sub-seconds allowed; recent
  versions stamp WARN lines by default) before the host: local time, converted with ``ctx.tz``;
- launcher and collector prefixes, stacked in any order: RFC 3339 container stamps
  (``2025-11-24T03:20:21.001125857Z``, exact), Open MPI ``[1,3]<stdout>:``, ``srun -l`` ``0: `` /
  `` 0: ``, ``[155] ``, Ray ``(Actor pid=..)`` and anything else before the NCCL header;
  headers whose host was cut (`` [0] NCCL INFO``) or that lack ``pid:tid`` (``host [5] NCCL INFO``);
- PyTorch c10d lines: ``[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation
  timeout: WorkNCCL(SeqNum=.., OpType=.., Timeout(ms)=..) ran for .. milliseconds``, the newer
  ``[rank3]:[E1130 10:15:02.123456 1234 ProcessGroupNCCL.cpp:616] ...`` (also ``[E626 06:24:44.9``
  nanosecond form without thread id), ``[PG ID 0 PG GUID 0(default_pg) Rank 1] Exception ...
  last enqueued NCCL work: N, last completed NCCL work: M``, ``terminate called after throwing``,
  ``what():`` and ``Exception raised from ...`` lines.

Each NCCL or PyTorch line becomes one ``nccl_log`` row with its ``kind`` and the fields it carries
(peer address, IB completion status and vendor error, communicator id, ranks, SeqNum/OpType,
timeouts, ``-> N`` return codes). Configuration lines also yield ``nccl_config`` rows: version,
net, net_plugin, ib_hca (one per HCA), oob_if, socket_if, bootstrap_if, gdr.<hca>
(enabled/disabled), gdr (from "use ring PXN x GDR y"), env.<VAR>, channel_transport (one per
Channel/Ring ... via ... line), nchannels, nranks, nnodes, local_ranks, comm_id, cuda_driver,
cpu_affinity. Everything else (nccl-tests tables, stack frames, program output) is kept in
``unparsed`` with a reason; blank lines and prefix-only lines (NCCL writes a blank line before
each WARN) count as structure. ``rank`` is the launcher rank when a prefix gives one, else the
rank the line itself names. NCCL never prints its subsystem, so ``subsys`` stays null.

Rows come NCCL lines first, then PyTorch lines, each in line order. Hot path: lines are read with
polars' CSV reader (one column, no quoting); the common header is split with byte offsets of literal
finds (`` NCCL ``, the first space, ``] ``) and plain string splits; launcher prefixes are stripped with
one anchored regex before the same fast split (other shapes fall back to a regex on the part before
`` NCCL ``); kinds come from one anchored alternation of message prefixes plus one alternation of
literals, and message fields and configuration come from rules declared once (_make_rules) that read
the message only. Big inputs classify and apply the rules once per distinct message (a log repeats its
messages across ranks and steps) on the rows of each kind; small ones (a rank's init log in a bundle)
apply all rules at once, gated by kind, in a handful of polars calls. Eager polars calls share no common
subexpressions, so a value used twice is computed once into a scratch column. ingest parses chunks of
CHUNK_BYTES on worker threads.

>>> from forensics.sources import ParseContext
>>> data = (b"hostname-test:984:1357 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer"
...         b" 172.36.143.59<44206> with status=12 opcode=129 len=65536 vendor err 129 (Recv) localGid"
...         b" ::ffff:29.87.88.182 remoteGids::ffff:29.87.4.221\\n"
...         b"hostname-test:984:1357 [4] NCCL INFO transport/net.cc:1298 -> 6\\n")
>>> res = parse(data, ParseContext(host="node01"))
>>> res.tables["nccl_log"].select("host", "pid", "cuda_dev", "src_file", "kind", "peer_addr",
...                               "ib_status", "vendor_err", "retcode").rows()
[('hostname-test', 984, 4, 'ib_plugin.c', 'ib_completion_error', '172.36.143.59<44206>', 12, 129, None), ('hostname-test', 984, 4, 'transport/net.cc', 'error_chain', None, None, None, 6)]
>>> res.meta["hosts"], res.unparsed.height
(['hostname-test'], 0)
"""
from __future__ import annotations

import datetime as dt
import functools
import operator
import re
from typing import NamedTuple

import numpy as np
import polars as pl

from forensics import schema
from forensics.sources._base import (ParseContext, ParseResult, count_lines, local_to_utc, result, split_lines,
                                     unparsed_frame)

NAME = "nccl"
VERSION = 1
TABLES = ("nccl_log", "nccl_config")
DESCRIPTION = "NCCL_DEBUG logs (INFO/WARN/TRACE, 2.4-2.30, launcher prefixes) and PyTorch NCCL watchdog lines"
CHUNKABLE = True
CHUNK_BYTES = 16 << 20  # ingest parses chunks of this size on worker threads (bounded memory, both cores busy)
SNIFF_PRIORITY = 40

_LEVELS = ("INFO", "WARN", "TRACE", "ABORT", "ATTN", "CALL")
_SNIFF_MARKERS = tuple(f" NCCL {lv}".encode() for lv in _LEVELS) + (
    b"\nNCCL version ", b"\nNCCL INFO ", b"\nNCCL WARN ", b"ProcessGroupNCCL", b"WorkNCCL(", b"NCCL watchdog",
    b"# Using devices",
)

# --- patterns (only [0-9], bounded digit runs so every cast fits its column) ---------------------
_NUM9 = "[0-9]{1,9}"
_HEAD = (
    r"^(?P<pre>.*?)"
    r"(?:(?P<host>[^\s:\[\]]+)(?::(?P<pid>[0-9]{1,12}):(?P<tid>[0-9]{1,12}))? ?)?"
    r"(?:\[(?P<dev>" + _NUM9 + r")\])?"
    r"(?: (?P<tms>[0-9]+\.[0-9]+))?"
    r"(?:(?:^| )(?P<src>[^\s:()]+):(?P<sline>" + _NUM9 + r"))?"
    r"(?: \((?P<func>[^)]*)\))?$"
)
_RFC_CORE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})"
_RFC3339 = "(" + _RFC_CORE + r")(?:\s|$)"
_NCCL_TS = r"\[([0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?)\] ?$"
_RANK = (r"\[[0-9]{1,9},(?P<r1>" + _NUM9 + r")\]<std(?:out|err)>: ?|^(?:" + _RFC_CORE + r"\s+)? *(?P<r2>" + _NUM9
         + r"):(?: |$)|^\[(?P<r3>"
         + _NUM9 + r")\] |\[rank(?P<r4>" + _NUM9 + r")\]:")
_PREFIX_ONLY = (r"^(?:\s*(?:" + _RFC_CORE + r"|\[[0-9]{1,9},[0-9]{1,9}\]<std(?:out|err)>:|[0-9]{1,9}:|\[[0-9]{1,9}\]"
                r"|\[rank[0-9]{1,9}\]:|\[[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9:.,]+\]|\([^()]*\)))+\s*$")
_LAUNCHER = (r"^(?:\s*(?:" + _RFC_CORE + r"|\[[0-9]{1,9},[0-9]{1,9}\]<std(?:out|err)>:|[0-9]{1,9}:(?: |$)"
             r"|\[[0-9]{1,9}\] |\[[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9:.,]+\]|\([^()]*pid=[0-9]+[^()]*\)))+ ?")
_PEER = r"(?:from peer|from|to|peer) ([^\s<>]*<[0-9]+>)"
_GLOG = (r"^(?P<pre>.*?)\[(?P<glvl>[EWIF])(?:(?P<md>[0-9]{3,4}) (?P<hms>[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?)"
         r"(?: +[0-9]{1,12})?)? ?(?P<gsrc>[A-Za-z0-9_.]+\.(?:cpp|cc|hpp|h)):(?P<gline>" + _NUM9 + r")\] (?P<msg>.*)$")
_GLOG_LEVEL = {"E": "ERROR", "W": "WARN", "I": "INFO", "F": "FATAL"}

_INT = {"pid": pl.Int64, "tid": pl.Int64, "cuda_dev": pl.Int32, "src_line": pl.Int32, "rank": pl.Int32,
        "nranks": pl.Int32, "ib_status": pl.Int32, "vendor_err": pl.Int32, "retcode": pl.Int32, "seq": pl.Int64,
        "timeout_ms": pl.Int64, "ran_ms": pl.Int64, "last_enqueued": pl.Int64, "last_completed": pl.Int64, "msg_rank": pl.Int32}


def sniff(head: bytes) -> bool:
    """True when the head holds an NCCL debug header, a VERSION line, PyTorch NCCL watchdog text or nccl-tests."""
    h = b"\n" + head
    return any(m in h for m in _SNIFF_MARKERS)


def read_lines(data: bytes) -> pl.DataFrame:
    """split_lines() semantics (line_no from 1, text; blank lines as null), read by polars' CSV reader.

    One column, no quoting, lossy UTF-8; falls back to split_lines when the input holds the separator
    byte or the line counts disagree. Small ASCII inputs without CR are split in Python (the same lines,
    without the reader's fixed cost).
    """
    if data and len(data) <= _PY_SPLIT_BYTES and b"\r" not in data and data.isascii():
        lines = data.decode("ascii").split("\n")
        if lines[-1] == "":
            lines.pop()
        return pl.DataFrame({"text": lines}, schema={"text": pl.String}).select(_LINE_NO, _BLANK_NULL)
    if data and b"\x1f" not in data:
        try:
            df = pl.read_csv(data, has_header=False, separator="\x1f", quote_char=None,
                             encoding="utf8-lossy", new_columns=["text"], schema={"text": pl.String},
                             comment_prefix=None, truncate_ragged_lines=False)
            if df.height == _count_lines(data):
                return df.select(_LINE_NO, "text")
        except Exception:  # noqa: BLE001 - any reader failure: the exact slow path below
            pass
    return split_lines(data)


def _count_lines(data: bytes) -> int:
    """count_lines(data), a few times faster on big inputs (numpy is loaded with pyarrow anyway)."""
    if len(data) < 1 << 20:
        return count_lines(data)
    n = int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == 10))
    return n if data.endswith(b"\n") else n + 1


_PY_SPLIT_BYTES = 256 << 10
_LINE_NO = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("line_no")
_BLANK_NULL = pl.when(pl.col("text") != "").then(pl.col("text")).alias("text")


def _lazy_prefix_groups(col: str, pattern: str) -> list[pl.Expr]:
    """extract_groups(pattern) for a pattern "^(?P<pre>.*?)REST" (REST without "^" but at its very start): the
    leftmost match of REST alone starts where the shortest "pre" ends, so one linear search for REST and a slice
    give the same groups, without the backtracking over every length of "pre" (dozens of times the work on long
    lines). Returns the columns "pre" and "g" (a struct of the other groups)."""
    head = "^(?P<pre>.*?)"
    assert pattern.startswith(head)
    rest, c = pattern[len(head):], pl.col(col)
    at = c.str.find(rest)
    # byte offsets: a match starts at a character boundary, so the slice is valid UTF-8
    return [pl.when(at.is_not_null()).then(c.cast(pl.Binary).bin.slice(0, at).cast(pl.String)).alias("pre"),
            c.str.extract_groups(rest).alias("g")]


def _i(expr: pl.Expr, name: str) -> pl.Expr:
    return expr.cast(_INT[name], strict=False).alias(name)


_LEVEL_OF = {"INFO ": "INFO", "INFO": "INFO", "WARN ": "WARN", "WARN": "WARN", "TRACE": "TRACE", "ABORT": "ABORT",
             "CALL ": "CALL", "CALL": "CALL", "ATTN ": "ATTN", "ATTN": "ATTN", "versi": "VERSION"}


# the message starts at p + this ("NCCL version" keeps its words)
_LEVEL_OFF = {k: {"VERSION": 1, "TRACE": 12, "ABORT": 12}.get(v, 11) for k, v in _LEVEL_OF.items()}


_EXTRA = (r"^(?:[0-9]+\.[0-9]+ )?(?P<src_file>[^\s:()]+):(?P<sl>[0-9]{1,9})(?: \((?P<src_func>[^)]*)\))?$")


def _fast_plan() -> list:
    t = pl.col("text")
    p, sp, d = pl.col("_p"), pl.col("_sp"), pl.col("_d")
    s1 = [t.str.find(" NCCL ", literal=True).alias("_p"), t.str.find(" ", literal=True).alias("_sp"),
          t.str.find("] ", literal=True).alias("_d")]
    s2 = [t.str.slice(0, sp).str.split_exact(":", 2).struct.rename_fields(["host", "_pid", "_tid"]).alias("_q"),
          t.str.slice(sp + 2, d - sp - 2).str.to_integer(strict=False).alias("_dev"),
          t.str.slice(p + 6, 5).replace_strict(_LEVEL_OF, default=None, return_dtype=pl.String).alias("level")]
    s3 = [_i(pl.col("_pid").str.to_integer(strict=False), "pid"),
          _i(pl.col("_tid").str.to_integer(strict=False), "tid"), _i(pl.col("_dev"), "cuda_dev")]
    ok = (pl.col("pid").is_not_null() & pl.col("tid").is_not_null() & pl.col("cuda_dev").is_not_null()
          & pl.col("level").is_not_null() & (d < p) & (pl.col("host").str.len_bytes() > 0))
    off = p + t.str.slice(p + 6, 5).replace_strict(_LEVEL_OFF, default=None, return_dtype=pl.Int64)
    # ASCII rows: a byte slice (no walk over the characters before the offset)
    message = t.cast(pl.Binary).bin.slice(off).cast(pl.String).alias("message")
    s4 = ["line_no", "host", "pid", "tid", "cuda_dev", "level", message,
          ok.fill_null(False).alias("_ok"), (p > d + 1).fill_null(False).alias("_x"), "_p", "_d"]
    # WARN/ABORT: "file:line" or "file:line (func)"; TRACE: "12.345 func:line" (on those rows only)
    extra = t.str.slice(d + 2, p - d - 2).str.extract_groups(_EXTRA).alias("_g")
    return [s1, s2, s3, s4, extra]


_FAST = _fast_plan()
_NO_EXTRA = [pl.lit(None, dtype=pl.String).alias("src_file"), pl.lit(None, dtype=pl.String).alias("src_func"),
             pl.lit(None, dtype=pl.Int32).alias("src_line")]


def _nulls(name: str, dtype: pl.DataType, n: int) -> pl.Series:
    return pl.repeat(None, n, dtype=dtype, eager=True).alias(name)


def _fast(df: pl.DataFrame) -> tuple[pl.DataFrame, pl.Series]:
    """The common header ``host:pid:tid [dev] [file:line [(func)] | ms func:line] NCCL LEVEL`` at line start,
    split with byte offsets (callers pass ASCII rows only). Returns (parsed rows without text, for the rows whose
    header is of this form; a mask over `df`, true on those rows)."""
    s1, s2, s3, s4, extra = _FAST
    out = _collect(df.lazy().with_columns(s1).with_columns(s2).unnest("_q").with_columns(s3).select(s4), df.height)
    ok, x = out.get_column("_ok"), out.get_column("_x")
    cols = _NO_EXTRA
    if x.any():  # text between "] " and " NCCL " (WARN file:line, TRACE time and function): on those rows only
        xi = x.arg_true()
        g = df.select("text").gather(xi).hstack(out.select("_p", "_d").gather(xi)).select(extra).unnest("_g")
        n = out.height
        cols = [_nulls(name, dtype, n).scatter(xi, v) for name, dtype, v in (
            ("src_file", pl.String, g.get_column("src_file")), ("src_func", pl.String, g.get_column("src_func")),
            ("src_line", pl.Int32, g.get_column("sl").cast(pl.Int32, strict=False)))]
        ok = ok & (~x | cols[0].is_not_null())
    out = out.drop("_ok", "_x", "_p", "_d").with_columns(cols)
    return (out, ok) if ok.all() else (out.filter(ok), ok)


def _split_nccl_plan():
    text, tail, lvl = pl.col("text"), pl.col("tail"), pl.col("lvl")
    bare = text.str.starts_with("NCCL ")
    sp = text.str.splitn(" NCCL ", 2)
    level = pl.lit(None, dtype=pl.String)
    for lv in ("version",) + _LEVELS:
        level = pl.when(tail.str.starts_with(lv + " ") | (tail == lv)).then(pl.lit(lv)).otherwise(level)
    split = [pl.when(bare).then(pl.lit("")).otherwise(sp.struct.field("field_0")).alias("head"),
             pl.when(bare).then(text.str.slice(5)).otherwise(sp.struct.field("field_1")).alias("tail")]
    fields = [pl.when(lvl == "version").then(pl.lit("NCCL ") + tail)
              .otherwise(tail.str.slice(lvl.str.len_bytes() + 1)).alias("message"),
              pl.when(lvl == "version").then(pl.lit("VERSION")).otherwise(lvl).alias("level")]
    return split, level.alias("lvl"), fields


_SPLIT_NCCL = _split_nccl_plan()


_HEADER_COLS = [
    (pl.col("pid").is_not_null() | pl.col("dev").is_not_null() | (pl.col("head") == "")
     | (pl.col("src").is_not_null() & pl.col("host").is_null() & (pl.col("pre") == "")))
    .fill_null(False).alias("hdr_ok"),
    _i(pl.col("pid"), "pid"), _i(pl.col("tid"), "tid"), _i(pl.col("dev"), "cuda_dev"),
    pl.col("src").alias("src_file"), _i(pl.col("sline"), "src_line"), pl.col("func").alias("src_func")]


def _slow(c: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Slow path, one query: split at " NCCL " (or a bare "NCCL ..."), the level word, then the head by regex
    (prefix, NCCL time stamp, host, pid, tid, dev, file:line (func) or TRACE time). Returns (rows parsed, in line
    order; lines rejected: no level word, or a head of no known form)."""
    split, level, fields = _SPLIT_NCCL
    lf = c.lazy().with_columns(split).with_columns(level).with_columns(fields)
    lf = lf.with_columns(_lazy_prefix_groups("head", _HEAD)).unnest("g").with_columns(_HEADER_COLS)
    df = _collect(_prefix(lf, ctx), c.height)
    ok = (df.get_column("lvl").is_not_null() & df.get_column("hdr_ok")).fill_null(False)
    rejected = df.filter(~ok).select("line_no", "text")
    keep = [x for x in df.columns if x not in ("text", "tail", "lvl", "head", "dev", "src", "sline", "func", "tms",
                                                 "hdr_ok", "pre")]
    return df.filter(ok).select(keep).sort("line_no"), rejected


def _collect(lf: pl.LazyFrame, rows: int, engine: str = "in-memory") -> pl.DataFrame:
    """Big inputs: the optimizer (common subexpressions computed once); small ones: no optimizer pass (its fixed
    cost exceeds what it saves on a few rows)."""
    if rows > LEAN_ROWS:
        return lf.collect(engine=engine)
    return lf.collect(engine="in-memory", optimizations=pl.QueryOptFlags.none())


_RANK_G = pl.col("prefix").str.extract_groups(_RANK)
_PREFIX_RANK = (pl.coalesce(_RANK_G.struct.field("r1"), _RANK_G.struct.field("r2"), _RANK_G.struct.field("r3"),
                            _RANK_G.struct.field("r4")).cast(pl.Int32, strict=False).alias("prefix_rank"))


def _rfc_ts(rfc: pl.Expr) -> pl.Expr:
    """RFC 3339 stamp (exact) -> UTC."""
    return rfc.str.replace("Z$", "+00:00").str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%z", time_unit="us", time_zone="UTC",
                                                            strict=False)


def _local_ts(nts: pl.Expr, ctx: ParseContext) -> pl.Expr:
    """NCCL's own [%F %T] stamp (local time of ctx.tz) -> UTC."""
    return local_to_utc(nts.str.replace("T", " ", literal=True).str.replace(",", ".", literal=True)
                        .str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False), ctx.tz)


def _prefix(lf: pl.LazyFrame, ctx: ParseContext, col: str = "pre") -> pl.LazyFrame:
    """Launcher prefix -> prefix text, rank, exact (RFC 3339) or local (NCCL [%F %T]) time stamp. Computed on every
    row: each expression yields null on a null or empty prefix, as rows without one need."""
    pre = pl.col(col)
    lf = lf.with_columns(pre.str.replace(_NCCL_TS, "").str.strip_chars_end().alias("prefix"))
    return lf.with_columns(_PREFIX_RANK, _rfc_ts(pre.str.extract("^\\s*" + _RFC3339, 1)).alias("ts_exact"),
                           _local_ts(pre.str.extract(_NCCL_TS, 1), ctx).alias("ts_local"),
                           pl.when(pl.col("prefix") != "").then(pl.col("prefix")).alias("prefix"))


# --- message classification -----------------------------------------------------------------------
_CONTAINS = ["Got completion", " -> ", "Connection closed by", "Failed to execute operation Connect", "Call to ",
             "Connect to ", "- Init COMPLETE", "- Init START", " nNodes ", " set by environment to ", "GPU Direct RDMA",
             " coll channels"]


_PREFIX_RULES = [("NCCL version ", "version"), ("Init timings", "init_timings"), ("DMA-BUF is available", "gdr"),
                 ("Channel ", "channel"), ("Ring ", "ring"), ("Connected all rings", "ring"), ("Trees ", "tree"),
                 ("Connected all trees", "tree"), ("Connected NVLS tree", "tree"), ("NET/", "net"),
                 ("Using network ", "net"), ("Bootstrap", "net"), ("Failed to open libibverbs", "net"),
                 ("Plugin Path", "net"), ("P2P plugin", "net"), ("Initialized NET plugin", "net"),
                 ("Assigned NET plugin", "net"), ("Using non-device net plugin", "net")]
_PREFIX_RE = "^(" + "|".join(re.escape(p) for p, _ in _PREFIX_RULES) + ")"  # anchored literal alternation


_CONTAINS_RE = "|".join(re.escape(c) for c in _CONTAINS)  # one regex alternation: faster than contains_any here


_LIT_KIND = {"Got completion": "ib_completion_error", " -> ": "error_chain", "Connection closed by": "remote_closed",
             "Failed to execute operation Connect": "connect_error", "Call to ": "socket_error",
             "Connect to ": "connect_error", "- Init COMPLETE": "init_complete", "- Init START": "init_start",
             " nNodes ": "comm_info", " set by environment to ": "env", "GPU Direct RDMA": "gdr",
             " coll channels": "channel"}
_M, _K = pl.col("message"), pl.col("kind")


# Eager polars calls do not share common subexpressions: a value used twice is computed once into a scratch
# column ("_lit", "_pk") and referred to by name.
_LIT = _M.str.extract("(" + _CONTAINS_RE + ")", 1).alias("_lit")  # the first contains-literal of the message
# the kind of the prefix matched: its position in _PREFIX_RULES (an Enum's physical value) indexes their kinds
_PK = (pl.lit(pl.Series([k for _, k in _PREFIX_RULES] + ["other"]))
       .gather(_M.str.extract(_PREFIX_RE, 1).cast(pl.Enum([p for p, _ in _PREFIX_RULES])).to_physical()
               .fill_null(len(_PREFIX_RULES))).alias("_pk"))


def _contains_kind_expr() -> pl.Expr:
    """Kind of a message by its first contains-literal (column "_lit"), refined where a literal alone is not
    enough; null where no literal or no rule applies (the prefix kind then stays)."""
    m, lit = _M, pl.col("_lit")
    has = (lambda x: m.str.contains(x, literal=True))
    return (pl.when(lit == " -> ").then(pl.when(m.str.contains(r"^[^ ]+:[0-9]+ -> -?[0-9]+")).then(pl.lit("error_chain")))
            .when(lit == "Call to ").then(pl.when(has("Call to connect")).then(pl.lit("connect_error"))
                                          .when(has(" failed")).then(pl.lit("socket_error")))
            .when(lit == "Connect to ").then(pl.when(has(" failed")).then(pl.lit("connect_error")))
            .when(lit == " nNodes ").then(pl.when(m.str.starts_with("comm 0x")).then(pl.lit("comm_info")))
            .otherwise(lit.replace_strict(_LIT_KIND, default=None, return_dtype=pl.String)))


_CONTAINS_KIND = _contains_kind_expr().alias("kind")
_REFINED = [" -> ", "Call to ", "Connect to ", " nNodes "]  # the literals _contains_kind_expr refines
_NO_CONTAINS = ["version", "channel", "ring", "tree"]  # prefix kinds no contains-literal overrides


def _classify(df: pl.DataFrame) -> pl.Series:
    """Kind of each row of (message, level): the message prefix (one anchored alternation of literals) decides,
    unless the row holds a contains-literal: then the first literal found does (searched only on the rows whose
    prefix kind a literal may override, and scattered back)."""
    lvl = pl.col("level")
    k = df.select(_PK, lvl.is_in(["CALL", "ABORT"]).fill_null(False).alias("_lv"))
    out = k.get_column("_pk").alias("kind")
    lv = k.select(pl.arg_where(pl.col("_lv") & (pl.col("_pk") == "other"))).to_series()
    if lv.len():
        out = out.clone().scatter(lv, df.gather(lv).select(
            pl.when(lvl == "CALL").then(pl.lit("nccl_call")).otherwise(pl.lit("abort"))).to_series())
    cand = k.select(pl.arg_where(~pl.col("_pk").is_in(_NO_CONTAINS))).to_series()
    sub = df.select("message").gather(cand).with_columns(_LIT)
    hit = sub.get_column("_lit").is_not_null().arg_true()
    if hit.len():
        sub = sub.gather(hit)
        ck = sub.select(pl.col("_lit").replace_strict(_LIT_KIND, default=None, return_dtype=pl.String)).to_series()
        fine = sub.get_column("_lit").is_in(_REFINED).arg_true()  # literals that need a second look
        if fine.len():
            ck = ck.scatter(fine, sub.gather(fine).select(_CONTAINS_KIND).to_series())
        keep = ck.is_not_null()
        out = out.clone().scatter(cand.gather(hit).filter(keep), ck.filter(keep))
    return out


def _kind_gated() -> pl.Expr:
    lvl, pk = pl.col("level"), pl.col("_pk")
    lv = (pl.when((pk == "other") & (lvl == "CALL")).then(pl.lit("nccl_call"))
          .when((pk == "other") & (lvl == "ABORT")).then(pl.lit("abort")).otherwise(pk))
    return pl.coalesce(pl.when(~pk.is_in(_NO_CONTAINS)).then(_contains_kind_expr()), lv).alias("kind")


_KIND_GATED = _kind_gated()


def _classify_gated(df: pl.DataFrame) -> pl.DataFrame:
    """_classify on all rows at once (small inputs: two passes instead of a few gathers and scatters)."""
    return df.with_columns(_PK, _LIT).with_columns(_KIND_GATED).drop("_pk", "_lit")


# --- per-kind fields and configuration, declared once -----------------------------------------------
# A rule names the kinds it applies to, the columns it computes from the message, stage after stage (names
# starting with "_" are scratch; a value used twice is computed once into a scratch column of an earlier stage:
# eager polars calls do not share common subexpressions), the columns it hands on, and the nccl_config rows it
# yields. Rules read the message and kind only (checked below); _ROW_FIELDS combines what they found with the
# row's own columns. Big inputs evaluate each rule once per distinct message of its kinds (_by_message); small
# inputs evaluate the rules of the kinds present at once on the whole frame, every expression gated by its
# rule's rows (_rules_gated): a few polars calls per file instead of hundreds. No two rules write a column of
# one row.
class _Spec(NamedTuple):
    """nccl_config rows (one per list element when `many`): key and value, on the rule's rows that match
    `where`, are of one of `kinds` (all of the rule's when None) and whose "_nk" (the literal prefix of a net
    line) is `nk` (any when None)."""
    key: pl.Expr
    value: pl.Expr
    where: pl.Expr | None = None
    many: bool = False
    kinds: tuple[str, ...] | None = None
    nk: str | None = None

    def cond(self) -> pl.Expr | None:
        parts = [c for c in (self.where, None if self.kinds is None else _K.is_in(self.kinds),
                             None if self.nk is None else pl.col("_nk") == self.nk) if c is not None]
        return functools.reduce(operator.and_, parts) if parts else None


class _Rule(NamedTuple):
    kinds: tuple[str, ...]
    stages: tuple[tuple[tuple[str, pl.Expr], ...], ...] = ()
    out: tuple[str, ...] = ()
    cfg: tuple[_Spec, ...] = ()
    warn_only: bool = False  # only what WARN rows use (_ROW_FIELDS): skip the messages no WARN row has

    def rows(self, kinds: list[str] | None = None) -> pl.Expr:
        kinds = list(self.kinds if kinds is None else kinds)
        cond = _K.is_in(kinds) if len(kinds) > 1 else _K == kinds[0]
        return cond & (pl.col("level") == "WARN") if self.warn_only else cond


def _c(key: str | pl.Expr, value: pl.Expr, where: pl.Expr | None = None, **kw) -> _Spec:
    return _Spec(pl.lit(key) if isinstance(key, str) else key, value, where, **kw)


_CFG_COLS = ("line_no", "host", "pid", "rank", "cuda_dev")
_NET_PLUGIN = (pl.when(_M.str.contains("No plugin found|Using internal network plugin|Plugin load returned"))
               .then(pl.lit("internal"))
               .otherwise(pl.coalesce(_M.str.extract(r"Loaded net plugin (.+)$", 1),
                                      _M.str.extract(r"^Assigned NET plugin (.+) to comm", 1))))
_SOCKET_IF = _M.str.extract_all(r"\[[0-9]+\][^\s\[\]]+").list.eval(pl.element().str.replace(r"^\[[0-9]+\]", ""))
_IB_USING = [("ib_hca", _M.str.extract_all(r"[A-Za-z0-9_.-]+:[0-9]+/(?:IB|RoCE)"), True),
             ("oob_if", _M.str.extract(r"OOB ([^\s]+)", 1), False)]
_NET_CFG = {  # literal message prefix -> nccl_config (key, value, many)
    "NET/IB : Using": _IB_USING, "NET/IB: Using": _IB_USING,
    "NET/IB : No device found": [("ib_hca", pl.lit("none"), False)],
    "NET/IB: No device found": [("ib_hca", pl.lit("none"), False)],
    "NET/Socket : Using": [("socket_if", _SOCKET_IF, True)], "NET/Socket: Using [": [("socket_if", _SOCKET_IF, True)],
    "Bootstrap": [("bootstrap_if", _M.str.extract(r"Using (?:\[[0-9]+\])?([^\s]+)", 1), False)],
    "Using network ": [("net", _M.str.slice(14), False)],
    "NET/Plugin": [("net_plugin", _NET_PLUGIN, False)], "Assigned NET plugin": [("net_plugin", _NET_PLUGIN, False)],
    "Plugin Path : ": [("net_plugin_path", _M.str.slice(14), False)],
    "P2P plugin ": [("p2p_plugin", _M.str.slice(11), False)],
}
_NET_CFG_RE = "^(" + "|".join(re.escape(k) for k in sorted(_NET_CFG, key=len, reverse=True)) + ")"


def _make_rules(ascii_only: bool) -> tuple[_Rule, ...]:
    """The rules; with ascii_only (every message ASCII), channel transports are sliced at a byte offset."""
    via = pl.col("_via").is_not_null()
    # byte offset -> character slice is exact for ASCII messages; others take the split (same value)
    transport = _M.str.slice(pl.col("_via") + 5) if ascii_only else _M.str.splitn(" via ", 2).struct.field("field_1")
    chain, init, env = pl.col("_chain").struct.field, pl.col("_init").struct.field, pl.col("_env").struct.field
    gdr_state = _M.str.extract(r"GPU Direct RDMA (?:\([^)]*\) )?([Ee]nabled|[Dd]isabled)", 1).str.to_lowercase()
    gdr_hca = pl.coalesce(_M.str.extract(r"HCA [0-9a-fx]+ '([^'\s]+)", 1), _M.str.extract(r"HCA ([0-9a-fx]+)", 1))
    init_kinds = ("init_complete", "init_start", "comm_info")
    return (
        _Rule(("version",), cfg=(_c("version", _M.str.extract(r"NCCL version ([^\s]+)", 1)),)),
        _Rule(("ib_completion_error",), stages=((
            ("peer_addr", _M.str.extract(r"from peer ([^\s]*<[0-9]+>) with", 1)),
            ("ib_status", _i(_M.str.extract(r"with (?:error |status=)([0-9]{1,9})\b", 1), "ib_status")),
            ("vendor_err", _i(_M.str.extract(r"vendor err ([0-9]{1,9})\b", 1), "vendor_err"))),),
            out=("peer_addr", "ib_status", "vendor_err")),
        _Rule(("error_chain",), stages=(
            (("_chain", _M.str.extract_groups(r"^(?P<f>[^ ]+):(?P<l>[0-9]{1,9}) -> (?P<r>-?[0-9]{1,9})\b")),),
            (("_chain_file", chain("f")), ("_chain_line", _i(chain("l"), "src_line")),
             ("retcode", _i(chain("r"), "retcode")))),
            out=("_chain_file", "_chain_line", "retcode")),
        _Rule(("socket_error", "remote_closed", "connect_error"), stages=((
            ("peer_addr", _M.str.extract(_PEER, 1)),
            ("retcode", _i(_M.str.extract(r"retcode (-?[0-9]{1,9})\b", 1), "retcode"))),),
            out=("peer_addr", "retcode")),
        _Rule(("init_complete", "init_start", "init_timings", "comm_info"), stages=(
            (("_init", _M.str.extract_groups(
                r"(?:comm (?P<c>0x[0-9a-f]+) )?rank (?P<r>[0-9]{1,9}) n[Rr]anks (?P<n>[0-9]{1,9})")),),
            (("comm_id", pl.coalesce(_M.str.extract(r"commId (0x[0-9a-f]+)", 1), init("c"))),
             ("nranks", _i(init("n"), "nranks")), ("_msg_rank", _i(init("r"), "msg_rank")))),
            out=("comm_id", "nranks", "_msg_rank"),
            cfg=(_c("nranks", pl.col("nranks").cast(pl.String), kinds=init_kinds),
                 _c("comm_id", pl.col("comm_id"), kinds=init_kinds),
                 _c("nnodes", _M.str.extract(r" nNodes ([0-9]+)", 1), kinds=("comm_info",)),
                 _c("local_ranks", _M.str.extract(r" localRanks ([0-9]+)", 1), kinds=("comm_info",)),
                 _c("mnnvl", _M.str.extract(r" MNNVL ([0-9]+)", 1), kinds=("comm_info",)))),
        _Rule(("env",), stages=((("_env", _M.str.splitn(" set by environment to ", 2)),),),
              cfg=(_c(pl.lit("env.") + env("field_0").str.extract(r"([A-Za-z_][A-Za-z0-9_]*)$", 1),
                      env("field_1").str.strip_chars_end().str.replace(r"([^.])\.$", "$1")),)),
        _Rule(("gdr",), cfg=(_c(pl.lit("gdr.") + gdr_hca, gdr_state, _M.str.contains("GPU Direct RDMA", literal=True)),
                             _c("dmabuf", pl.lit("available"), _M.str.starts_with("DMA-BUF is available")))),
        _Rule(("channel", "ring"), stages=((("_via", _M.str.find(" via ", literal=True)),),), cfg=(
            _c("channel_transport", transport, via),
            _c("nchannels", _M.str.extract(r"^Channel 00/0*([0-9]+) :", 1), ~via & _M.str.starts_with("Channel 00/")),
            _c("nchannels", _M.str.extract(r"^([0-9]+) coll channels", 1), ~_M.str.starts_with("C")),
            _c("gdr", _M.str.extract(r"use ring PXN [0-9]+ GDR ([0-9]+)", 1),
               _M.str.starts_with("Connected all rings,")))),
        # the few net lines that carry configuration, keyed by their literal prefix (one anchored pass)
        _Rule(("net",), stages=((("_nk", _M.str.extract(_NET_CFG_RE, 1)),),),
              cfg=tuple(_c(key, value, many=many, nk=nk)
                        for nk, specs in _NET_CFG.items() for key, value, many in specs)),
        _Rule(("other",), cfg=(
            _c("cuda_driver", _M.str.slice(18), _M.str.starts_with("cudaDriverVersion ")),
            _c("cpu_affinity", _M.str.splitn(" to ", 2).struct.field("field_1"),
               _M.str.starts_with("Setting affinity for GPU ")))),
        # an unclassified WARN may still name its peer (kept for WARN rows by _ROW_FIELDS)
        _Rule(("other", "abort"), stages=((("_warn_peer", _M.str.extract(_PEER, 1)),),), out=("_warn_peer",),
              warn_only=True),
    )


# What a rule found in the message, combined with the row's own columns (the rules read messages only, so big
# inputs evaluate them once per distinct message): the file:line of an error chain unless the header had one, the
# rank an init line names unless a launcher prefix gave one, the peer of an unclassified WARN.
_ROW_FIELDS = [pl.coalesce(pl.col("src_file"), pl.col("_chain_file")).alias("src_file"),
               pl.coalesce(pl.col("src_line"), pl.col("_chain_line")).alias("src_line"),
               pl.coalesce(pl.col("rank"), pl.col("_msg_rank")).alias("rank"),
               pl.coalesce(pl.col("peer_addr"), pl.when(pl.col("level") == "WARN").then(pl.col("_warn_peer")))
               .alias("peer_addr")]
_ROW_FIELD_INPUTS = {c: pl.lit(None, dtype=t).alias(c) for c, t in (  # typed nulls where no rule wrote them
    ("_chain_file", pl.String), ("_chain_line", pl.Int32), ("_msg_rank", pl.Int32), ("peer_addr", pl.String),
    ("_warn_peer", pl.String))}


_RULES = {True: _make_rules(True), False: _make_rules(False)}


def _inputs(rule: _Rule) -> list[str]:
    """Columns a rule reads (not those it computed itself before reading them)."""
    roots = (lambda exprs: {n for e in exprs if e is not None for n in e.meta.root_names()})
    need, made = set(), set()
    for stage in rule.stages:
        need |= roots([e for _, e in stage]) - made
        made |= {name for name, _ in stage}
    return sorted(need | (roots([e for spec in rule.cfg for e in (spec.key, spec.value, spec.cond())]) - made))


_RULE_INPUTS = {flag: [_inputs(r) for r in rules] for flag, rules in _RULES.items()}
assert all(set(i) <= {"message", "kind"} for ins in _RULE_INPUTS.values() for i in ins), "rules read messages only"


def _cfg_rows(df):
    """nccl_config rows with a key and a non-empty value."""
    v = pl.col("value")
    return df.filter(pl.col("key").is_not_null() & v.is_not_null() & (v != ""))


def _rules_by_kind(df: pl.DataFrame, ascii_only: bool) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """Big inputs, on (message, kind) rows: each rule on the rows of its kinds, written back with one scatter per
    column; nccl_config (_r: row, key, value) of all rules from one lazy query, spec after spec."""
    pieces: dict[str, list[tuple[pl.Series, pl.Series]]] = {}  # column -> (row positions, values), written once
    groups = df.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("_r"), "kind").group_by("kind").agg("_r")
    rows_of = dict(zip(groups.get_column("kind").to_list(), groups.get_column("_r")))  # kind -> row positions
    present = set(rows_of)
    branches = []
    for rule, inputs in zip(_RULES[ascii_only], _RULE_INPUTS[ascii_only]):
        kinds = [k for k in rule.kinds if k in present]
        if not kinds:
            continue
        idx = pl.concat([rows_of[k] for k in kinds]) if len(kinds) > 1 else rows_of[kinds[0]]
        if rule.warn_only:  # messages some WARN row has
            idx = idx.filter(df.get_column("_warn").gather(idx))
            if idx.len() == 0:
                continue
        sub = df.select(inputs).gather(idx)
        for stage in rule.stages:
            sub = sub.with_columns([e.alias(name) for name, e in stage])
        for col in rule.out:
            pieces.setdefault(col, []).append((idx, sub.get_column(col)))
        specs = [s for s in rule.cfg if s.kinds is None or present.intersection(s.kinds)]
        if specs:
            lf = sub.with_columns(idx.alias("_r")).lazy()
            for spec in specs:
                cond = spec.cond()
                q = (lf if cond is None else lf.filter(cond)).select(
                    "_r", spec.key.alias("key"), spec.value.alias("value"))
                branches.append(_cfg_rows(q.explode("value") if spec.many else q))
    cols = []
    for col, parts in pieces.items():
        idx = pl.concat([i for i, _ in parts])
        vals = pl.concat([v.cast(_INT.get(col, v.dtype)) for _, v in parts]).alias(col)
        cols.append(_nulls(col, vals.dtype, df.height).scatter(idx, vals))
    df = df.with_columns(cols)
    if not branches:
        return df, None
    return df, pl.concat(branches).collect(optimizations=pl.QueryOptFlags.none())  # the optimizer costs more here


def _by_message(df: pl.DataFrame, ascii_only: bool) -> tuple[pl.DataFrame, list[pl.DataFrame]]:
    """Big inputs: kinds and rules once per distinct message (a log repeats its messages across ranks, channels
    and steps), then per row: the kind (CALL/ABORT levels turn "other" into nccl_call/abort, whose rows take
    nothing from the rules), the message's fields, _ROW_FIELDS, and its nccl_config rows."""
    g = df.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("_r"), "message").group_by("message").agg("_r")
    rows = g.get_column("_r")
    code = pl.repeat(0, df.height, dtype=pl.UInt32, eager=True).scatter(
        rows.explode(), pl.int_range(g.height, dtype=pl.UInt32, eager=True).repeat_by(rows.list.len()).explode())
    u = g.select("message")
    u = u.with_columns(_classify(u.with_columns(pl.lit(None, dtype=pl.String).alias("level"))),
                       pl.repeat(False, u.height, eager=True).scatter(
                           code.filter(df.get_column("level") == "WARN"), True).alias("_warn"))
    u, cfg = _rules_by_kind(u, ascii_only)
    found = [c for c in u.columns if c not in ("message", "_warn", "kind") and u.get_column(c).null_count() < u.height]
    per_row = u.select("kind", *found).gather(code)  # columns no message filled stay absent (typed nulls below)
    lvl, k = pl.col("level"), pl.col("kind")
    same = ~((k == "other") & lvl.is_in(["CALL", "ABORT"])).fill_null(False)  # the row keeps its message's kind
    df = df.hstack(per_row).with_columns(
        pl.when(same).then(k).when(lvl == "CALL").then(pl.lit("nccl_call")).otherwise(pl.lit("abort")).alias("kind"),
        same.alias("_same"))
    df = df.with_columns([e for c, e in _ROW_FIELD_INPUTS.items() if c not in df.columns])
    df = df.with_columns(_ROW_FIELDS)
    if cfg is None:
        return df, []
    # each config row of a message, for every row of that message that keeps its kind (spec order kept)
    cfg = cfg.with_columns(rows.gather(cfg.get_column("_r")).alias("_row")).explode("_row")
    if not df.get_column("_same").all():
        cfg = cfg.filter(df.get_column("_same").gather(cfg.get_column("_row")))
    return df, [df.select(_CFG_COLS).gather(cfg.get_column("_row")).hstack(cfg.select("key", "value"))]


def _rules_gated(df: pl.DataFrame) -> tuple[pl.DataFrame, list[pl.DataFrame]]:
    """Small inputs: the rules of the kinds present, at once on the whole frame, each expression gated by its
    rule's rows (values equal to _by_message's), then _ROW_FIELDS. nccl_config: a (key, value) column pair per
    spec with rows (the specs of net prefixes, one per row at most, share pairs by position), unpivoted spec after
    spec, sorted by (line, spec)."""
    kinds = frozenset(df.get_column("kind").unique().to_list())
    rules = tuple(i for i, r in enumerate(_RULES[False]) if kinds.intersection(r.kinds))
    lf = df.lazy()
    for stage in _gated_stages(rules, tuple(df.columns)):
        lf = lf.with_columns(stage)
    df = _collect(lf.with_columns(_ROW_FIELDS), 0)
    if not rules:
        return df, []
    nks = frozenset(df.get_column("_nk").unique().to_list()) if "_nk" in df.columns else frozenset()
    scalar, many = _gated_cfg(rules, kinds, nks)
    if not (scalar or many):
        return df, []
    # (key, value) column pairs, unpivoted spec after spec; list values exploded; sorted by (line, spec)
    wide = df.select(*_CFG_COLS, *[e for pair in scalar + many for e in pair]).lazy()
    parts = []
    for pairs in (scalar, many):
        if pairs:
            names = [(k.meta.output_name(), v.meta.output_name()) for k, v in pairs]
            keys = wide.unpivot([k for k, _ in names], index=list(_CFG_COLS), variable_name="_s", value_name="key")
            vals = wide.unpivot([v for _, v in names], index=[], variable_name="_v", value_name="value").drop("_v")
            part = pl.concat([keys, vals], how="horizontal")
            parts.append(part.explode("value") if pairs is many else part)
    cfg = _cfg_rows(pl.concat(parts) if len(parts) > 1 else parts[0])
    cfg = cfg.with_columns(pl.col("_s").str.slice(2).cast(pl.Int32).alias("_o"))
    return df, [_collect(cfg.sort("line_no", "_o", maintain_order=True).drop("_s", "_o"), 0)]


@functools.lru_cache(maxsize=256)
def _gated_stages(rules: tuple[int, ...], columns: tuple[str, ...]) -> list[list[pl.Expr]]:
    """with_columns lists, stage after stage, of the given rules, gated (expressions built once per rule set)."""
    stages, have = [], set(columns)
    for s in range(max((len(_RULES[False][i].stages) for i in rules), default=0)):
        chains: dict[str, pl.Expr] = {}
        for i in rules:
            rule = _RULES[False][i]
            for name, e in (rule.stages[s] if s < len(rule.stages) else ()):
                chains[name] = (chains[name].when(rule.rows()) if name in chains else pl.when(rule.rows())).then(e)
        if chains:
            stages.append([(ch.otherwise(pl.col(n)) if n in have else ch).alias(n) for n, ch in chains.items()])
            have |= set(chains)
    missing = [e for c, e in _ROW_FIELD_INPUTS.items() if c not in have]  # what _ROW_FIELDS reads
    return stages + [missing] if missing else stages


@functools.lru_cache(maxsize=256)
def _gated_cfg(rules: tuple[int, ...], kinds: frozenset, nks: frozenset) -> tuple[list, list]:
    """(key, gated value) column pairs of the specs of the given rules that can have rows: scalar values, list
    values; each key named _k<n>, its value _v<n>, n the spec's place in row order. The specs of net prefixes
    (one per row at most) share a pair by their position in their prefix's list."""
    specs: list[tuple[bool, list]] = []  # (many, [(cond, key, value)])
    for i in rules:
        rule = _RULES[False][i]
        by_pos: list[list] = []
        for k, spec in enumerate(rule.cfg):
            if ((spec.kinds is not None and not kinds.intersection(spec.kinds))
                    or (spec.nk is not None and spec.nk not in nks)):
                continue
            c = spec.cond()
            item = (rule.rows() if c is None else rule.rows() & c, spec.key, spec.value)
            if spec.nk is None:
                specs.append((spec.many, [item]))
                continue
            j = sum(1 for s in rule.cfg[:k] if s.nk == spec.nk)
            while len(by_pos) <= j:
                by_pos.append([])
            by_pos[j].append((spec.many, item))
        for pos in by_pos:  # one pair per position; list-valued if any spec there is
            many = any(m for m, _ in pos)
            specs.append((many, [(c, k, v if m or not many else pl.concat_list(v)) for m, (c, k, v) in pos]))
    scalar, many = [], []
    for n, (is_many, items) in enumerate(specs):
        (c0, k0, v0), rest = items[0], items[1:]
        # a null value drops the row (_cfg_rows): a spec of its own needs no gate on its key
        key, val = (pl.when(c0).then(k0) if rest else k0), pl.when(c0).then(v0)
        for c, k, v in rest:
            key, val = key.when(c).then(k), val.when(c).then(v)
        (many if is_many else scalar).append((key.alias(f"_k{n:03d}"), val.alias(f"_v{n:03d}")))
    return scalar, many


_LAUNCH = (r"^(?P<launch>(?:(?P<rfc>" + _RFC_CORE + r") |\[[0-9]{1,9},(?P<mr>[0-9]{1,9})\]<std(?:out|err)>: ?"
           r"| *(?P<sr>[0-9]{1,9}): |\[(?P<br>[0-9]{1,9})\] |\[rank(?P<tr>[0-9]{1,9})\]:)*)"
           r"(?:\[(?P<nts>[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?)\] )?")


_LAUNCH_G = pl.col("text").str.extract_groups(_LAUNCH).alias("_g")
_LAUNCH_LEN = (pl.col("launch").str.len_bytes()
               + pl.when(pl.col("nts").is_not_null()).then(pl.col("nts").str.len_bytes() + 3).otherwise(0)).fill_null(0)


def _strip_launcher(df: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """ASCII rows the fast header missed: strip known launcher prefixes / NCCL's own stamp with one anchored
    regex, then retry the fast header on the rest. Returns (parsed rows, rows left for the slow path)."""
    x = df.with_columns(_LAUNCH_G).unnest("_g").with_columns(_LAUNCH_LEN.alias("_plen"))
    has = x.get_column("_plen") > 0
    if not has.any():
        return df.clear().select("line_no"), df
    cand = x.filter(has) if not has.all() else x
    good, ok = _fast(cand.select("line_no", pl.col("text").str.slice(pl.col("_plen"))))
    info = cand.select(  # then the rows of `good`, in its order
        pl.col("launch").str.strip_chars_end().alias("prefix"),
        pl.coalesce("mr", "sr", "br", "tr").cast(pl.Int32, strict=False).alias("prefix_rank"),
        _rfc_ts(pl.col("rfc")).alias("ts_exact"), _local_ts(pl.col("nts"), ctx).alias("ts_local"))
    info = info.filter(ok) if not ok.all() else info
    good = good.hstack(info.with_columns(pl.when(pl.col("prefix") != "").then(pl.col("prefix")).alias("prefix")))
    left = [df.filter(~has)] if not has.all() else []
    if not ok.all():
        left.append(cand.select("line_no", "text").filter(~ok))
    return good, pl.concat(left) if len(left) > 1 else left[0] if left else df.clear()


LEAN_ROWS = 2048  # inputs of at most this many NCCL rows evaluate the rules on the whole frame (_rules_gated)


def _nccl_rows(c: pl.DataFrame, ctx: ParseContext, ascii_all: bool) -> tuple[pl.DataFrame, pl.DataFrame, list[pl.DataFrame]]:
    """NCCL candidate lines -> (nccl_log rows, lines rejected, nccl_config frames)."""
    text = pl.col("text")
    if ascii_all:  # lines without " NCCL " or starting with "NCCL " fail the fast header and its retry anyway
        fast_in, slow_in = c, c.clear()
    else:  # byte offsets equal character offsets only on ASCII rows
        fast_mask = (text.str.contains(" NCCL ", literal=True) & ~text.str.starts_with("NCCL ")
                     & (text.str.len_bytes() == text.str.len_chars()))
        mask = c.select(fast_mask.fill_null(False)).to_series()
        fast_in, slow_in = c.filter(mask), c.filter(~mask)
    parts, rejected = [], c.clear().select("line_no", "text")
    if fast_in.height:
        good, ok = _fast(fast_in)
        parts.append(good)
        if not ok.all():
            retry = fast_in.filter(~ok)
            # a launcher prefix (or NCCL's stamp) starts with a digit, "[" or a space: other lines go straight on
            may = retry.select(pl.col("text").str.contains(r"^[\[ 0-9]").fill_null(False)).to_series()
            if may.any():
                good2, left = _strip_launcher(retry.filter(may) if not may.all() else retry, ctx)
                parts.append(good2)
                retry = pl.concat([left, retry.filter(~may)]) if not may.all() else left
            slow_in = pl.concat([slow_in, retry]) if slow_in.height else retry
    if slow_in.height:
        good3, rejected = _slow(slow_in, ctx)
        parts.append(good3)
    parts = [p for p in parts if p.height]
    if not parts:
        return c.clear().select("line_no"), rejected, []
    parts = [p.select(_part_columns(tuple(p.columns))) for p in parts]
    df = parts[0]
    if len(parts) > 1:  # one chunk first: sorting (gathering) chunked string columns costs several times more
        df = pl.concat([df] + [p if p.schema == df.schema else p.cast(df.schema) for p in parts[1:]],
                       rechunk=True).sort("line_no")
    if df.height <= LEAN_ROWS:
        df, cfg = _rules_gated(_classify_gated(df.with_columns(pl.col("prefix_rank").alias("rank"))))
    else:
        df, cfg = _by_message(df.with_columns(pl.col("prefix_rank").alias("rank")), ascii_all)
    return df, rejected, cfg


_PART_COLS = {"line_no": pl.Int64, "host": pl.String, "pid": pl.Int64, "tid": pl.Int64, "cuda_dev": pl.Int32,
              "level": pl.String, "message": pl.String, "src_file": pl.String, "src_func": pl.String,
              "src_line": pl.Int32, "prefix_rank": pl.Int32, "prefix": pl.String, "ts_exact": pl.Datetime("us", "UTC"),
              "ts_local": pl.Datetime("us", "UTC")}


@functools.lru_cache(maxsize=64)
def _part_columns(columns: tuple[str, ...]) -> list[pl.Expr]:
    """The columns every part of NCCL rows has, in one order (typed nulls where a path has none)."""
    return [pl.col(c) if c in columns else _null_col(c, t) for c, t in _PART_COLS.items()]


@functools.lru_cache(maxsize=None)
def _null_col(name: str, dtype: pl.DataType) -> pl.Expr:
    return pl.lit(None, dtype=dtype).alias(name)


# --- PyTorch --------------------------------------------------------------------------------------
_GLOG_G = pl.col("text").str.extract_groups(_GLOG).alias("g")  # (its "\[" ends the lazy prefix's search quickly)
_TORCH_MESSAGE = pl.coalesce(pl.col("msg"), pl.col("text").str.replace(_LAUNCHER, "")).alias("message")


def _torch_ok() -> pl.Expr:
    """A glog header, or a standard C++/Python exception line that names NCCL (one alternation)."""
    std = pl.col("message").str.contains(r"^(?:terminate called after throwing|  what\(\):|Exception raised from)"
                                         r"|NCCL error in: |^[A-Za-z_.]*(?:Error|Exception): .*NCCL")
    return (pl.col("glvl").is_not_null() | std).alias("_ok")


def _torch_fields() -> list[list[pl.Expr]]:
    m = pl.col("message")
    wd = m.str.contains("Watchdog caught collective operation timeout", literal=True)
    kind = (pl.when(m.str.contains("thread terminated with exception", literal=True)
                    | m.str.contains("detected by watchdog", literal=True)).then(pl.lit("watchdog_exception"))
            .when(wd).then(pl.lit("watchdog_timeout"))
            .when(m.str.contains("last completed NCCL work", literal=True)).then(pl.lit("last_completed"))
            .when(m.str.contains("last enqueued NCCL work", literal=True)).then(pl.lit("last_enqueued"))
            .when(m.str.starts_with("terminate called after throwing")).then(pl.lit("terminate"))
            .when(m.str.starts_with("Exception raised from")).then(pl.lit("exception_raised"))
            .when(m.str.contains("NCCL error", literal=True)).then(pl.lit("nccl_error"))
            .otherwise(pl.lit("pytorch")))
    wrank = m.str.extract(r"\[(?:PG [^\]]*?)?Rank ([0-9]{1,9})\]", 1)
    first = [
        kind.alias("kind"),
        pl.col("glvl").replace_strict(_GLOG_LEVEL, default=None).alias("level"),
        pl.col("gsrc").alias("src_file"), _i(pl.col("gline"), "src_line"),
        pl.coalesce(_i(m.str.extract(r"SeqNum=([0-9]{1,18})", 1), "seq"),
                    _i(m.str.extract(r"(?:at work|Timeout at NCCL work): ([0-9]{1,18})", 1), "seq")).alias("seq"),
        m.str.extract(r"OpType=([A-Za-z_0-9]+)", 1).alias("op_type"),
        _i(m.str.extract(r"Timeout\(ms\)=([0-9]{1,18})", 1), "timeout_ms"),
        _i(m.str.extract(r"ran for ([0-9]{1,18}) milliseconds", 1), "ran_ms"),
        _i(m.str.extract(r"last enqueued NCCL work: (-?[0-9]{1,18})", 1), "last_enqueued"),
        _i(m.str.extract(r"last completed NCCL work: (-?[0-9]{1,18})", 1), "last_completed"),
        _i(wrank, "msg_rank")]
    raised = pl.col("kind") == "exception_raised"
    second = [
        pl.when(raised).then(m.str.extract(r" at [^ ]*?([A-Za-z0-9_]+\.(?:cpp|cc|h|hpp)):", 1))
        .otherwise(pl.col("src_file")).alias("src_file"),
        pl.when(raised).then(_i(m.str.extract(r"\.(?:cpp|cc|h|hpp):([0-9]{1,9})", 1), "src_line"))
        .otherwise(pl.col("src_line")).alias("src_line"),
        pl.when(pl.col("glvl").is_null()).then(pl.lit(None, dtype=pl.String)).otherwise(pl.col("pre")).alias("pre")]
    return [first, second]


_TORCH_OK = _torch_ok()
_TORCH_FIELDS = _torch_fields()


def _torch_rows(c: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """PyTorch c10d/ProcessGroupNCCL lines -> (nccl_log rows, lines not recognised)."""
    df = _collect(c.lazy().with_columns(_GLOG_G).unnest("g").with_columns(_TORCH_MESSAGE).with_columns(_TORCH_OK),
                  c.height)
    ok = df.get_column("_ok")
    bad = df.filter(~ok).select("line_no", "text")
    df = df.filter(ok).drop("_ok")
    year = ctx.year or (ctx.capture_time.year if ctx.capture_time else None)
    md = pl.col("md").str.zfill(4)
    naive = (pl.lit(str(year) if year else None, dtype=pl.String) + "-" + md.str.slice(0, 2) + "-" + md.str.slice(2, 2)
             + " " + pl.col("hms")).str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False)
    if ctx.capture_time is not None and not ctx.year:
        cap = ctx.capture_time if ctx.capture_time.tzinfo else ctx.capture_time.replace(tzinfo=dt.timezone.utc)
        later = naive > pl.lit(cap.astimezone(dt.timezone.utc).replace(tzinfo=None) + dt.timedelta(days=1))
        naive = pl.when(later).then(naive.dt.offset_by("-1y")).otherwise(naive)
    first, second = _TORCH_FIELDS
    lf = df.lazy().with_columns(*first, local_to_utc(naive, ctx.tz).alias("ts_local")).with_columns(second)
    return _collect(_torch_prefix(lf, ctx), df.height), bad


def _torch_prefix(lf: pl.LazyFrame, ctx: ParseContext) -> pl.LazyFrame:
    out = _prefix(lf.rename({"ts_local": "_gts"}), ctx, "pre")
    torch_rank = pl.col("pre").str.extract(r"\[rank([0-9]{1,9})\]:$", 1).cast(pl.Int32, strict=False)
    out = out.with_columns(pl.coalesce(pl.col("_gts"), pl.col("ts_local")).alias("ts_local"),
                           pl.coalesce(torch_rank, pl.col("msg_rank"), pl.col("prefix_rank")).alias("rank"))
    return out.drop("_gts", "msg_rank")


# --- lines that are neither -----------------------------------------------------------------------
def _reason() -> pl.Expr:
    b = pl.col("_b")
    return (pl.when(b.str.contains(r"^\s*# ?(?:nThread|Using devices|\s*Rank +[0-9]+ |Out of bounds|Avg bus bandwidth"
                                   r"|\s*size +count|\s*\(B\)|\s+out-of-place|$)"))
            .then(pl.lit("nccl-tests header or summary (not an NCCL debug line)"))
            .when(b.str.contains(r"^\s+[0-9]+ +[0-9]+ +[a-z0-9_]+ +[a-z]+ +(?:-?[0-9]+ +)?[0-9.]+ "))
            .then(pl.lit("nccl-tests result row (not an NCCL debug line)"))
            .when(b.str.contains(r"^\s*frame #[0-9]+: "))
            .then(pl.lit("C++ stack frame of a PyTorch exception (not an NCCL line)"))
            .when(b.str.starts_with("Traceback (most recent call last)") | b.str.starts_with("  File \""))
            .then(pl.lit("Python traceback (not an NCCL line)"))
            .when(b.str.contains(r"^[A-Za-z0-9_.-]+@[^\s]+[#$] "))
            .then(pl.lit("shell prompt or command line (not an NCCL line)"))
            .when(b.str.contains(r"NCCL (?:INFO|WARN|TRACE)|WorkNCCL|[Ww]atchdog|ProcessGroupNCCL|NCCL work|what\(\)"))
            .then(pl.lit("NCCL/PyTorch text without a recognised header (wrapped or partial line)"))
            .otherwise(pl.lit("not an NCCL line"))).alias("reason")


_REASON = _reason()
_STRUCT = ((pl.col("text").str.strip_chars() == "") | pl.col("text").str.contains(_PREFIX_ONLY)).alias("_struct")


def _other_reasons(o: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(structure lines: blank / prefix only, unparsed lines with a reason)."""
    o = o.with_columns(pl.col("text").fill_null("")).with_columns(_STRUCT)
    is_struct = o.get_column("_struct")
    structure = o.filter(is_struct)
    rest = o.filter(~is_struct).with_columns(pl.col("text").str.replace(_LAUNCHER, "").alias("_b"))
    return structure, rest.with_columns(_REASON).select("line_no", "text", "reason")


_NC_COND = pl.col("text").str.contains("NCCL ", literal=True).fill_null(False)
# lines holding "NCCL", "atchdog", "terminate called after throwing" or "what():" (one pass: a literal contains per
# word costs more than this alternation)
_PT_COND = pl.col("text").str.contains(r"NCCL|atchdog|terminate called after throwing|what\(\):").fill_null(False)


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    """Parse NCCL debug output and PyTorch NCCL watchdog lines into nccl_log and nccl_config."""
    lines = read_lines(data)
    n = lines.height
    if n == 0:
        return result(NAME, ctx, 0, {"nccl_log": schema.empty("nccl_log"), "nccl_config": schema.empty("nccl_config")},
                      None, hosts=[], variant="empty")
    is_nc = lines.select(_NC_COND).to_series()
    nc, rest = lines.filter(is_nc), lines.filter(~is_nc)
    log_parts, cfg, rows, trows = [], [], None, None
    if nc.height:
        rows, bad, cfg = _nccl_rows(nc, ctx, data.isascii())
        log_parts.append(rows)
        rest = pl.concat([rest, bad]) if bad.height else rest
    if rest.height:
        is_pt = rest.select(_PT_COND).to_series()
        if is_pt.any():
            trows, tbad = _torch_rows(rest.filter(is_pt), ctx)
            if trows.height:
                log_parts.append(trows.sort("line_no"))
            rest = pl.concat([rest.filter(~is_pt), tbad])
    unparsed = _other_reasons(rest)[1] if rest.height else None

    log = _finish_log(log_parts)
    cfg = [c for c in cfg if c.height]
    if not cfg:
        cfg_df = schema.empty("nccl_config").select("line_no", "host", "pid", "rank", "cuda_dev", "key", "value")
    else:
        cfg_df = pl.concat(cfg, how="vertical_relaxed") if len(cfg) > 1 else cfg[0]
        cfg_df = cfg_df.sort("line_no", maintain_order=True)
    hosts = sorted(h for h in log.get_column("host").unique().to_list() if h) if log.height else []
    variant = _variant(rows, trows)
    up = unparsed_frame(unparsed, pl.col("reason"), ctx, NAME) if unparsed is not None and unparsed.height else None
    return result(NAME, ctx, n, {"nccl_log": log, "nccl_config": cfg_df}, up, hosts=hosts, variant=variant)


_LOG_TYPES = {c: t for c, t in schema.polars_schema("nccl_log").items() if c not in ("source", "file")}
_LOG_NULLS = {c: pl.lit(None, dtype=t).alias(c) for c, t in _LOG_TYPES.items()}


@functools.lru_cache(maxsize=64)
def _log_select(columns: tuple[str, ...], ts_known: bool) -> list[pl.Expr]:
    """The nccl_log columns of a part: its own where it has them, typed nulls where not; ts and ts_quality from
    the exact (RFC 3339) and local stamps."""
    utc = pl.Datetime("us", "UTC")
    exact, local = (pl.col(c) if c in columns else pl.lit(None, dtype=utc) for c in ("ts_exact", "ts_local"))
    if ts_known:
        ts = [pl.coalesce(exact, local).alias("ts"),
              pl.when(exact.is_not_null()).then(pl.lit("exact")).when(local.is_not_null()).then(pl.lit("local"))
              .otherwise(pl.lit("none")).alias("ts_quality")]
    else:
        ts = [_LOG_NULLS["ts"], pl.lit("none").alias("ts_quality")]
    own = {c: pl.col(c) for c in columns if c in _LOG_TYPES}
    return [dict(zip(("ts", "ts_quality"), ts)).get(c, own.get(c, _LOG_NULLS[c])) for c in _LOG_TYPES]


def _finish_log(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """Final nccl_log columns: NCCL rows, then PyTorch rows, each part in line order (not interleaved: no copy)."""
    if not parts:
        return schema.empty("nccl_log").drop("source", "file")
    out = None
    for df in parts:
        known = any(c in df.columns and df.get_column(c).null_count() < df.height for c in ("ts_exact", "ts_local"))
        df = df.select(_log_select(tuple(df.columns), known))
        out = df if out is None else pl.concat([out, df.cast(out.schema)])
    return out


_NCCL_LEVELS = ["INFO", "WARN", "TRACE", "CALL", "ABORT", "ATTN", "VERSION"]
_TORCH_KINDS = ["watchdog_timeout", "watchdog_exception", "terminate", "exception_raised"]
_TORCH_FACTS = [pl.col("level").is_in(_NCCL_LEVELS).any().alias("nccl"),
                (pl.col("level").is_in(["ERROR", "FATAL"]) | pl.col("kind").is_in(_TORCH_KINDS)).any().alias("pytorch"),
                pl.col("ts_exact").is_not_null().any().alias("rfc3339"),
                pl.col("prefix").is_not_null().any().alias("prefixed")]


def _variant(nccl: pl.DataFrame | None, torch: pl.DataFrame | None) -> str:
    """Short name of what the input held: nccl, pytorch, rfc3339 stamps, launcher prefixes. NCCL rows always carry
    an NCCL level and never a PyTorch level or kind, so their facts come from null counts."""
    facts = dict.fromkeys(("nccl", "pytorch", "rfc3339", "prefixed"), False)
    if nccl is not None and nccl.height:
        facts.update(nccl=True, rfc3339=nccl.get_column("ts_exact").null_count() < nccl.height,
                     prefixed=nccl.get_column("prefix").null_count() < nccl.height)
    if torch is not None and torch.height:
        for k, v in torch.select(_TORCH_FACTS).row(0, named=True).items():
            facts[k] = facts[k] or bool(v)
    if not any(df is not None and df.height for df in (nccl, torch)):
        return "no-nccl-lines"
    return "+".join(k for k, v in facts.items() if v) or "other"
