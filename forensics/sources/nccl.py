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
literals, and message fields are extracted only on the rows of their kind. ingest parses chunks of
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
import io
import re

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
    byte or the line counts disagree.
    """
    if data and b"\x1f" not in data:
        try:
            df = pl.read_csv(io.BytesIO(data), has_header=False, separator="\x1f", quote_char=None,
                             encoding="utf8-lossy", new_columns=["text"], schema={"text": pl.String},
                             comment_prefix=None, truncate_ragged_lines=False)
            if df.height == count_lines(data):
                return df.with_row_index("line_no", 1).with_columns(pl.col("line_no").cast(pl.Int64))
        except Exception:  # noqa: BLE001 - any reader failure: the exact slow path below
            pass
    return split_lines(data)


def _i(expr: pl.Expr, name: str) -> pl.Expr:
    return expr.cast(_INT[name], strict=False).alias(name)


_LEVEL_OF = {"INFO ": "INFO", "INFO": "INFO", "WARN ": "WARN", "WARN": "WARN", "TRACE": "TRACE", "ABORT": "ABORT",
             "CALL ": "CALL", "CALL": "CALL", "ATTN ": "ATTN", "ATTN": "ATTN", "versi": "VERSION"}


_EXTRA = (r"^(?:[0-9]+\.[0-9]+ )?(?P<src_file>[^\s:()]+):(?P<sl>[0-9]{1,9})(?: \((?P<src_func>[^)]*)\))?$")


def _fast(df: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The common header ``host:pid:tid [dev] [file:line [(func)] | ms func:line] NCCL LEVEL`` at line start,
    split with byte offsets (callers pass ASCII rows only). Returns (parsed rows without text, (line_no, text)
    of rows whose header is not of this form)."""
    t = pl.col("text")
    p, sp, d = pl.col("_p"), pl.col("_sp"), pl.col("_d")
    lf = df.lazy().with_columns(t.str.find(" NCCL ", literal=True).alias("_p"), t.str.find(" ", literal=True).alias("_sp"),
                                t.str.find("] ", literal=True).alias("_d"))
    lf = lf.with_columns(
        t.str.slice(0, sp).str.split_exact(":", 2).struct.rename_fields(["host", "_pid", "_tid"]).alias("_q"),
        t.str.slice(sp + 2, d - sp - 2).str.to_integer(strict=False).alias("_dev"),
        t.str.slice(p + 6, 5).replace_strict(_LEVEL_OF, default=None, return_dtype=pl.String).alias("level"),
    ).unnest("_q")
    lf = lf.with_columns(_i(pl.col("_pid").str.to_integer(strict=False), "pid"),
                         _i(pl.col("_tid").str.to_integer(strict=False), "tid"),
                         _i(pl.col("_dev"), "cuda_dev"))
    ok = (pl.col("pid").is_not_null() & pl.col("tid").is_not_null() & pl.col("cuda_dev").is_not_null()
          & pl.col("level").is_not_null() & (d < p) & (pl.col("host").str.len_bytes() > 0))
    off = p + pl.when(pl.col("level") == "VERSION").then(1).when(pl.col("level").is_in(["TRACE", "ABORT"])).then(12) \
        .otherwise(11)
    # WARN/ABORT: "file:line" or "file:line (func)"; TRACE: "12.345 func:line" (regex runs on those rows only)
    extra = pl.when(p > d + 1).then(t.str.slice(d + 2, p - d - 2)).str.extract_groups(_EXTRA)
    lf = lf.select("line_no", "host", "pid", "tid", "cuda_dev", "level", t.str.slice(off).alias("message"),
                   ok.fill_null(False).alias("_ok"), (p > d + 1).fill_null(False).alias("_x"), extra.alias("_g"))
    lf = lf.unnest("_g").with_columns(_i(pl.col("sl"), "src_line"),
                                      (pl.col("_ok") & (~pl.col("_x") | pl.col("src_file").is_not_null())).alias("_ok"))
    out = lf.drop("sl", "_x").collect(engine="streaming")
    bad = out.select(pl.col("line_no").filter(~pl.col("_ok")))
    if bad.height == 0:
        return out.drop("_ok"), df.clear().select("line_no", "text")
    bad = df.select("line_no", "text").filter(pl.col("line_no").is_in(bad.to_series().implode()))
    return out.filter(pl.col("_ok")).drop("_ok"), bad


def _split_nccl(c: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Slow path: candidate lines -> (lines without an NCCL level word, lines with head, level, message)."""
    text = pl.col("text")
    bare = c.filter(text.str.starts_with("NCCL "))
    rest = c.filter(~text.str.starts_with("NCCL "))
    parts = []
    if rest.height:
        sp = text.str.splitn(" NCCL ", 2)
        parts.append(rest.with_columns(sp.struct.field("field_0").alias("head"), sp.struct.field("field_1").alias("tail")))
    if bare.height:
        parts.append(bare.with_columns(pl.lit("").alias("head"), text.str.slice(5).alias("tail")))
    df = pl.concat(parts) if len(parts) > 1 else parts[0]
    tail = pl.col("tail")
    level = pl.lit(None, dtype=pl.String)
    for lv in ("version",) + _LEVELS:
        level = pl.when(tail.str.starts_with(lv + " ") | (tail == lv)).then(pl.lit(lv)).otherwise(level)
    df = df.with_columns(level.alias("lvl"))
    rejected = df.filter(pl.col("lvl").is_null()).select("line_no", "text")
    df = df.filter(pl.col("lvl").is_not_null())
    return rejected, df.with_columns(
        pl.when(pl.col("lvl") == "version").then(pl.lit("NCCL ") + tail)
        .otherwise(tail.str.slice(pl.col("lvl").str.len_bytes() + 1)).alias("message"),
        pl.when(pl.col("lvl") == "version").then(pl.lit("VERSION")).otherwise(pl.col("lvl")).alias("level"),
    ).drop("tail", "lvl")


def _header(df: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """Slow path: parse the head (prefix, NCCL time stamp, host, pid, tid, dev, file:line (func) or TRACE time)."""
    g = pl.col("head").str.extract_groups(_HEAD)
    df = df.with_columns(g.alias("g")).unnest("g")
    ok = (pl.col("pid").is_not_null() | pl.col("dev").is_not_null() | (pl.col("head") == "")
          | (pl.col("src").is_not_null() & pl.col("host").is_null() & (pl.col("pre") == "")))
    df = df.with_columns(ok.fill_null(False).alias("hdr_ok"))
    df = df.with_columns(
        _i(pl.col("pid"), "pid"), _i(pl.col("tid"), "tid"), _i(pl.col("dev"), "cuda_dev"),
        pl.col("src").alias("src_file"), _i(pl.col("sline"), "src_line"), pl.col("func").alias("src_func"),
    ).drop("dev", "src", "sline", "func", "tms", "head")
    return _prefix(df, ctx)


def _prefix(df: pl.DataFrame, ctx: ParseContext, col: str = "pre") -> pl.DataFrame:
    """Launcher prefix -> prefix text, rank, exact (RFC 3339) or local (NCCL [%F %T]) time stamp."""
    pre = pl.col(col)
    has = pre.is_not_null() & (pre != "")
    sub = df.filter(has)
    base = df.filter(~has)
    if sub.height == 0:
        return base
    rk = pl.col("prefix").str.extract_groups(_RANK)
    nts = pre.str.extract(_NCCL_TS, 1)
    rfc = pre.str.extract("^\\s*" + _RFC3339, 1)
    sub = sub.with_columns(pre.str.replace(_NCCL_TS, "").str.strip_chars_end().alias("prefix"))
    sub = sub.with_columns(
        pl.coalesce(rk.struct.field("r1"), rk.struct.field("r2"), rk.struct.field("r3"), rk.struct.field("r4"))
        .cast(pl.Int32, strict=False).alias("prefix_rank"),
        rfc.str.replace("Z$", "+00:00").str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%z", time_unit="us", time_zone="UTC",
                                                        strict=False).alias("ts_exact"),
        local_to_utc(nts.str.replace("T", " ").str.replace(",", ".")
                     .str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False), ctx.tz).alias("ts_local"),
    ).with_columns(pl.when(pl.col("prefix") == "").then(None).otherwise(pl.col("prefix")).alias("prefix"))
    return pl.concat([base, sub], how="diagonal_relaxed")


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
_PREFIX_KIND = dict(_PREFIX_RULES)
_PREFIX_RE = "^(" + "|".join(re.escape(p) for p, _ in _PREFIX_RULES) + ")"  # anchored literal alternation


_CONTAINS_RE = "|".join(re.escape(c) for c in _CONTAINS)  # one regex alternation: faster than contains_any here


def _rules(m: pl.Expr, level: pl.Expr, contains: bool) -> pl.Expr:
    """Kind of each message by the full rule chain (contains rules only when asked: gated rows)."""
    sw, has = m.str.starts_with, (lambda s: m.str.contains(s, literal=True))
    rules = [(sw("NCCL version "), "version")]
    if contains:
        rules += [
            (has("Got completion"), "ib_completion_error"),
            (m.str.contains(r"^[^ ]+:[0-9]+ -> -?[0-9]+"), "error_chain"),
            (has("Connection closed by"), "remote_closed"),
            (has("Failed to execute operation Connect") | has("Call to connect") | (has("Connect to ") & has(" failed")),
             "connect_error"),
            (has("Call to ") & has(" failed"), "socket_error"),
            (has("- Init COMPLETE"), "init_complete"),
            (has("- Init START"), "init_start"),
            (sw("comm 0x") & has(" nNodes "), "comm_info"),
            (has(" set by environment to "), "env"),
            (has("GPU Direct RDMA"), "gdr"),
            (has(" coll channels"), "channel"),
        ]
    rules += [(sw(p), k) for p, k in _PREFIX_RULES[1:]]
    rules += [(level == "CALL", "nccl_call"), (level == "ABORT", "abort")]
    out = pl.lit("other")
    for cond, name in reversed(rules):
        out = pl.when(cond).then(pl.lit(name)).otherwise(out)
    return out


_LIT_KIND = {"Got completion": "ib_completion_error", " -> ": "error_chain", "Connection closed by": "remote_closed",
             "Failed to execute operation Connect": "connect_error", "Call to ": "socket_error",
             "Connect to ": "connect_error", "- Init COMPLETE": "init_complete", "- Init START": "init_start",
             " nNodes ": "comm_info", " set by environment to ": "env", "GPU Direct RDMA": "gdr",
             " coll channels": "channel"}


def _contains_kind(sub: pl.DataFrame) -> pl.Series:
    """Kind of rows holding contains-literals: the first literal found decides (one regex pass), refined where
    a literal alone is not enough; null where no rule applies (the prefix kind then stays)."""
    m = pl.col("message")
    lit = m.str.extract("(" + _CONTAINS_RE + ")", 1)
    has = (lambda x: m.str.contains(x, literal=True))
    kind = (pl.when(lit == " -> ").then(pl.when(m.str.contains(r"^[^ ]+:[0-9]+ -> -?[0-9]+")).then(pl.lit("error_chain")))
            .when(lit == "Call to ").then(pl.when(has("Call to connect")).then(pl.lit("connect_error"))
                                          .when(has(" failed")).then(pl.lit("socket_error")))
            .when(lit == "Connect to ").then(pl.when(has(" failed")).then(pl.lit("connect_error")))
            .when(lit == " nNodes ").then(pl.when(m.str.starts_with("comm 0x")).then(pl.lit("comm_info")))
            .otherwise(lit.replace_strict(_LIT_KIND, default=None, return_dtype=pl.String)))
    return sub.select(kind.alias("kind")).to_series()


def _classify(df: pl.DataFrame) -> pl.Series:
    """Kind of each row of (message, level): the message prefix (one anchored alternation of literals) decides,
    unless the row holds a contains-literal: then the literal of highest rule priority does (computed on that
    subset only and scattered back)."""
    m, lvl = pl.col("message"), pl.col("level")
    kind = m.str.extract(_PREFIX_RE, 1).replace_strict(_PREFIX_KIND, default="other", return_dtype=pl.String)
    k = df.select(kind.alias("kind"), m.str.contains(_CONTAINS_RE).fill_null(False).alias("_hit"),
                  lvl.is_in(["CALL", "ABORT"]).fill_null(False).alias("_lv"))
    out = k.get_column("kind")
    lv = k.select(pl.arg_where(pl.col("_lv") & (pl.col("kind") == "other"))).to_series()
    if lv.len():
        out = out.clone().scatter(lv, df.gather(lv).select(
            pl.when(lvl == "CALL").then(pl.lit("nccl_call")).otherwise(pl.lit("abort"))).to_series())
    hit = k.select(pl.arg_where(pl.col("_hit") & ~pl.col("kind").is_in(["version", "channel", "ring", "tree"]))).to_series()
    if hit.len():
        ck = _contains_kind(df.gather(hit))
        keep = ck.is_not_null()
        out = out.clone().scatter(hit.filter(keep), ck.filter(keep))
    return out


_CFG_COLS = ("line_no", "host", "pid", "rank", "cuda_dev")
_NET_PLUGIN = (pl.when(pl.col("message").str.contains("No plugin found|Using internal network plugin|Plugin load returned"))
               .then(pl.lit("internal"))
               .otherwise(pl.coalesce(pl.col("message").str.extract(r"Loaded net plugin (.+)$", 1),
                                      pl.col("message").str.extract(r"^Assigned NET plugin (.+) to comm", 1))))
_IB_USING = [("ib_hca", pl.col("message").str.extract_all(r"[A-Za-z0-9_.-]+:[0-9]+/(?:IB|RoCE)")),
             ("oob_if", pl.col("message").str.extract(r"OOB ([^\s]+)", 1))]
_NET_CFG = {  # literal message prefix -> nccl_config (key, value) pairs
    "NET/IB : Using": _IB_USING, "NET/IB: Using": _IB_USING,
    "NET/IB : No device found": [("ib_hca", pl.lit("none"))], "NET/IB: No device found": [("ib_hca", pl.lit("none"))],
    "NET/Socket : Using": [("socket_if", pl.col("message").str.extract_all(r"\[[0-9]+\][^\s\[\]]+")
                                         .list.eval(pl.element().str.replace(r"^\[[0-9]+\]", "")))],
    "NET/Socket: Using [": [("socket_if", pl.col("message").str.extract_all(r"\[[0-9]+\][^\s\[\]]+")
                                          .list.eval(pl.element().str.replace(r"^\[[0-9]+\]", "")))],
    "Bootstrap": [("bootstrap_if", pl.col("message").str.extract(r"Using (?:\[[0-9]+\])?([^\s]+)", 1))],
    "Using network ": [("net", pl.col("message").str.slice(14))],
    "NET/Plugin": [("net_plugin", _NET_PLUGIN)], "Assigned NET plugin": [("net_plugin", _NET_PLUGIN)],
    "Plugin Path : ": [("net_plugin_path", pl.col("message").str.slice(14))],
    "P2P plugin ": [("p2p_plugin", pl.col("message").str.slice(11))],
}
_NET_CFG_RE = "^(" + "|".join(re.escape(k) for k in sorted(_NET_CFG, key=len, reverse=True)) + ")"


def _cfg(df: pl.DataFrame, key: str | pl.Expr, value: pl.Expr, where: pl.Expr | None = None) -> pl.DataFrame:
    """nccl_config rows (key, value) for the rows of `df` matching `where` (filtered before extraction)."""
    if where is not None:
        df = df.filter(where)
    key = pl.lit(key) if isinstance(key, str) else key
    out = df.select(*_CFG_COLS, key.alias("key"), value.alias("value"))
    if out.schema["value"] == pl.List(pl.String):
        out = out.explode("value")
    return out.filter(pl.col("key").is_not_null() & pl.col("value").is_not_null() & (pl.col("value") != ""))


def _fields(kind: str, d: pl.DataFrame) -> tuple[pl.DataFrame, list[pl.DataFrame]]:
    """Extract the fields of one kind's rows; returns (rows, nccl_config frames)."""
    m = pl.col("message")
    cfg: list[pl.DataFrame] = []
    if kind == "version":
        d = d.with_columns(m.str.extract(r"NCCL version ([^\s]+)", 1).alias("_v"))
        cfg.append(_cfg(d, pl.lit("version"), pl.col("_v")))
    elif kind == "ib_completion_error":
        d = d.with_columns(m.str.extract(r"from peer ([^\s]*<[0-9]+>) with", 1).alias("peer_addr"),
                           _i(m.str.extract(r"with (?:error |status=)([0-9]{1,9})\b", 1), "ib_status"),
                           _i(m.str.extract(r"vendor err ([0-9]{1,9})\b", 1), "vendor_err"))
    elif kind == "error_chain":
        g = m.str.extract_groups(r"^(?P<f>[^ ]+):(?P<l>[0-9]{1,9}) -> (?P<r>-?[0-9]{1,9})\b")
        d = d.with_columns(pl.coalesce(pl.col("src_file"), g.struct.field("f")).alias("src_file"),
                           pl.coalesce(pl.col("src_line"), _i(g.struct.field("l"), "src_line")).alias("src_line"),
                           _i(g.struct.field("r"), "retcode"))
    elif kind in ("socket_error", "remote_closed", "connect_error"):
        d = d.with_columns(m.str.extract(_PEER, 1).alias("peer_addr"),
                           _i(m.str.extract(r"retcode (-?[0-9]{1,9})\b", 1), "retcode"))
    elif kind in ("init_complete", "init_start", "init_timings", "comm_info"):
        g = m.str.extract_groups(r"(?:comm (?P<c>0x[0-9a-f]+) )?rank (?P<r>[0-9]{1,9}) n[Rr]anks (?P<n>[0-9]{1,9})")
        d = d.with_columns(pl.coalesce(m.str.extract(r"commId (0x[0-9a-f]+)", 1), g.struct.field("c")).alias("comm_id"),
                           _i(g.struct.field("n"), "nranks"), _i(g.struct.field("r"), "msg_rank"))
        d = d.with_columns(pl.coalesce(pl.col("rank"), pl.col("msg_rank")).alias("rank"))
        if kind != "init_timings":
            cfg.append(_cfg(d, pl.lit("nranks"), pl.col("nranks").cast(pl.String)))
            cfg.append(_cfg(d, pl.lit("comm_id"), pl.col("comm_id")))
        if kind == "comm_info":
            cfg.append(_cfg(d, pl.lit("nnodes"), m.str.extract(r" nNodes ([0-9]+)", 1)))
            cfg.append(_cfg(d, pl.lit("local_ranks"), m.str.extract(r" localRanks ([0-9]+)", 1)))
            cfg.append(_cfg(d, pl.lit("mnnvl"), m.str.extract(r" MNNVL ([0-9]+)", 1)))
        d = d.drop("msg_rank")
    elif kind == "env":
        sp = m.str.splitn(" set by environment to ", 2)
        var = sp.struct.field("field_0").str.extract(r"([A-Za-z_][A-Za-z0-9_]*)$", 1)
        val = sp.struct.field("field_1").str.strip_chars_end().str.replace(r"([^.])\.$", "$1")
        cfg.append(_cfg(d, pl.lit("env.") + var, val))
    elif kind == "gdr":
        state = m.str.extract(r"GPU Direct RDMA (?:\([^)]*\) )?([Ee]nabled|[Dd]isabled)", 1).str.to_lowercase()
        hca = pl.coalesce(m.str.extract(r"HCA [0-9a-fx]+ '([^'\s]+)", 1), m.str.extract(r"HCA ([0-9a-fx]+)", 1))
        cfg.append(_cfg(d, pl.lit("gdr.") + hca, state, m.str.contains("GPU Direct RDMA", literal=True)))
        cfg.append(_cfg(d, "dmabuf", pl.lit("available"), m.str.starts_with("DMA-BUF is available")))
    elif kind in ("channel", "ring"):
        at = m.str.find(" via ", literal=True)
        d = d.with_columns(at.alias("_via"))
        via = pl.col("_via").is_not_null()
        # byte offset -> character slice is exact for ASCII messages; others take the split
        ascii_only = d.select((m.str.len_bytes().sum() == m.str.len_chars().sum())).item()
        value = m.str.slice(pl.col("_via") + 5) if ascii_only else m.str.splitn(" via ", 2).struct.field("field_1")
        cfg.append(_cfg(d, "channel_transport", value, via))
        cfg.append(_cfg(d, "nchannels", m.str.extract(r"^Channel 00/0*([0-9]+) :", 1), ~via & m.str.starts_with("Channel 00/")))
        cfg.append(_cfg(d, "nchannels", m.str.extract(r"^([0-9]+) coll channels", 1), ~m.str.starts_with("C")))
        cfg.append(_cfg(d, "gdr", m.str.extract(r"use ring PXN [0-9]+ GDR ([0-9]+)", 1), m.str.starts_with("Connected all rings,")))
    elif kind == "net":
        # the few net lines that carry configuration, keyed by their literal prefix (one anchored pass)
        d = d.with_columns(m.str.extract(_NET_CFG_RE, 1).alias("_nk")).filter(pl.col("_nk").is_not_null())
        for (nk,), part in (d.partition_by("_nk", as_dict=True).items() if d.height else []):
            for key, value in _NET_CFG[nk]:
                cfg.append(_cfg(part, key, value))
    elif kind == "other":
        cfg.append(_cfg(d, "cuda_driver", m.str.slice(18), m.str.starts_with("cudaDriverVersion ")))
        cfg.append(_cfg(d, "cpu_affinity", m.str.splitn(" to ", 2).struct.field("field_1"),
                        m.str.starts_with("Setting affinity for GPU ")))
    return d, cfg


_LAUNCH = (r"^(?P<launch>(?:(?P<rfc>" + _RFC_CORE + r") |\[[0-9]{1,9},(?P<mr>[0-9]{1,9})\]<std(?:out|err)>: ?"
           r"| *(?P<sr>[0-9]{1,9}): |\[(?P<br>[0-9]{1,9})\] |\[rank(?P<tr>[0-9]{1,9})\]:)*)"
           r"(?:\[(?P<nts>[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?)\] )?")


def _strip_launcher(df: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """ASCII rows the fast header missed: strip known launcher prefixes / NCCL's own stamp with one anchored
    regex, then retry the fast header on the rest. Returns (parsed rows, rows left for the slow path)."""
    t = pl.col("text")
    g = t.str.extract_groups(_LAUNCH)
    df = df.with_columns(g.alias("_g")).unnest("_g")
    nts = pl.col("nts")
    plen = pl.col("launch").str.len_bytes() + pl.when(nts.is_not_null()).then(nts.str.len_bytes() + 3).otherwise(0)
    df = df.with_columns(plen.fill_null(0).alias("_plen"))
    cand = df.filter(pl.col("_plen") > 0)
    left = df.filter(pl.col("_plen") == 0).select("line_no", "text")
    if cand.height == 0:
        return cand.clear().select("line_no"), left
    body = cand.select("line_no", t.str.slice(pl.col("_plen")).alias("text"))
    good, bad = _fast(body)
    info = cand.select(
        "line_no",
        pl.col("launch").str.strip_chars_end().alias("prefix"),
        pl.coalesce("mr", "sr", "br", "tr").cast(pl.Int32, strict=False).alias("prefix_rank"),
        pl.col("rfc").str.replace("Z$", "+00:00").str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%z", time_unit="us",
                                                                 time_zone="UTC", strict=False).alias("ts_exact"),
        local_to_utc(nts.str.replace("T", " ").str.replace(",", ".")
                     .str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False), ctx.tz).alias("ts_local"))
    info = info.with_columns(pl.when(pl.col("prefix") == "").then(None).otherwise(pl.col("prefix")).alias("prefix"))
    good = good.join(info, on="line_no", how="left")
    left = pl.concat([left, cand.filter(pl.col("line_no").is_in(bad["line_no"].implode())).select("line_no", "text")])
    return good, left


def _scatter(base: pl.DataFrame, idx: pl.Series, vals: pl.DataFrame) -> pl.DataFrame:
    """Write the columns of `vals` (rows = positions `idx` of `base`) into `base`, creating them as needed."""
    cols = []
    n = base.height
    for name in vals.columns:
        v = vals.get_column(name)
        col = base.get_column(name) if name in base.columns else pl.Series(name, [None], dtype=v.dtype).extend_constant(None, n - 1)
        if col.dtype != v.dtype:
            v = v.cast(col.dtype)
        cols.append(col.clone().scatter(idx, v))
    return base.with_columns(cols)


_OVERRIDES = {"error_chain": ["src_file", "src_line"], "init_complete": ["rank"], "init_start": ["rank"],
              "init_timings": ["rank"], "comm_info": ["rank"]}
_FIELD_IN = ("line_no", "host", "pid", "rank", "cuda_dev", "level", "message", "src_file", "src_line")


def _nccl_rows(c: pl.DataFrame, ctx: ParseContext, ascii_all: bool) -> tuple[pl.DataFrame, pl.DataFrame, list[pl.DataFrame]]:
    """NCCL candidate lines -> (nccl_log rows, lines rejected, nccl_config frames)."""
    text = pl.col("text")
    fast_mask = text.str.contains(" NCCL ", literal=True) & ~text.str.starts_with("NCCL ")
    if not ascii_all:  # byte offsets equal character offsets only on ASCII rows
        fast_mask = fast_mask & (text.str.len_bytes() == text.str.len_chars())
    c = c.with_columns(fast_mask.fill_null(False).alias("_fast"))
    fast_in, slow_in = c.filter(pl.col("_fast")).drop("_fast"), c.filter(~pl.col("_fast")).drop("_fast")
    c = c.drop("_fast")
    parts, bad = [], []
    if fast_in.height:
        good, retry = _fast(fast_in)
        parts.append(good)
        if retry.height:
            good2, retry = _strip_launcher(retry, ctx)
            parts.append(good2)
        slow_in = pl.concat([slow_in, retry])
    if slow_in.height:
        no_level, df = _split_nccl(slow_in)
        df = _header(df, ctx)
        bad = [no_level, df.filter(~pl.col("hdr_ok")).select("line_no", "text")]
        parts.append(df.filter(pl.col("hdr_ok")).drop("hdr_ok", "pre").sort("line_no"))
    parts = [p for p in parts if p.height]
    rejected = pl.concat(bad) if bad else c.clear().select("line_no", "text")
    if not parts:
        return c.clear().select("line_no"), rejected, []
    common = {"prefix_rank": pl.Int32, "prefix": pl.String, "src_file": pl.String, "src_line": pl.Int32,
              "src_func": pl.String, "ts_exact": pl.Datetime("us", "UTC"), "ts_local": pl.Datetime("us", "UTC")}
    parts = [_ensure(p.drop("text", strict=False), common) for p in parts]
    cols = parts[0].columns
    df = parts[0]
    if len(parts) > 1:
        df = pl.concat([df] + [p.select(cols).cast(df.schema) for p in parts[1:]]).sort("line_no")
    df = df.with_columns(pl.col("prefix_rank").alias("rank"))
    df = df.with_columns(_classify(df.select("message", "level")))
    cfg = []
    pieces: dict[str, list[tuple[pl.Series, pl.Series]]] = {}  # column -> (row positions, values), written once
    for kind in df.get_column("kind").unique().to_list():
        if kind in ("tree", "nccl_call"):  # nothing to extract
            continue
        idx = df.select(pl.arg_where(pl.col("kind") == kind)).to_series()
        sub = df.select(_FIELD_IN if kind not in ("channel", "ring", "other", "net", "env") else
                        [c for c in _FIELD_IN if c not in ("src_file", "src_line")]).gather(idx)
        sub, extra = _fields(kind, sub)
        if kind in ("other", "abort"):  # an unclassified WARN may still name its peer
            warn = sub.select(pl.arg_where(pl.col("level") == "WARN")).to_series()
            if warn.len():
                peer = sub.gather(warn).select(pl.col("message").str.extract(_PEER, 1)).to_series()
                pieces.setdefault("peer_addr", []).append((idx.gather(warn), peer))
        for col in [x for x in sub.columns if x not in _FIELD_IN and not x.startswith("_")] + _OVERRIDES.get(kind, []):
            pieces.setdefault(col, []).append((idx, sub.get_column(col)))
        cfg.extend(extra)
    if pieces:
        cols = []
        for col, parts in pieces.items():
            idx = pl.concat([i for i, _ in parts])
            vals = pl.concat([v.cast(_INT.get(col, v.dtype)) for _, v in parts]).alias(col)
            base = df.get_column(col) if col in df.columns else pl.Series(col, [None], dtype=vals.dtype).extend_constant(
                None, df.height - 1)
            cols.append(base.cast(vals.dtype).clone().scatter(idx, vals))
        df = df.with_columns(cols)
    return df, rejected, cfg


def _ensure(df: pl.DataFrame, cols: dict[str, pl.DataType]) -> pl.DataFrame:
    missing = [pl.lit(None, dtype=t).alias(n) for n, t in cols.items() if n not in df.columns]
    return df.with_columns(missing) if missing else df


# --- PyTorch --------------------------------------------------------------------------------------
def _torch_rows(c: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """PyTorch c10d/ProcessGroupNCCL lines -> (nccl_log rows, lines not recognised)."""
    text = pl.col("text")
    g = text.str.extract_groups(_GLOG)
    df = c.with_columns(g.alias("g")).unnest("g")
    body = pl.coalesce(pl.col("msg"), text.str.replace(_LAUNCHER, ""))
    df = df.with_columns(body.alias("message"))
    m = pl.col("message")
    std = (m.str.starts_with("terminate called after throwing") | m.str.starts_with("  what():")
           | m.str.starts_with("Exception raised from") | m.str.contains("NCCL error in: ", literal=True)
           | m.str.contains(r"^[A-Za-z_.]*(?:Error|Exception): .*NCCL"))
    ok = pl.col("glvl").is_not_null() | std
    bad = df.filter(~ok).select("line_no", "text")
    df = df.filter(ok)
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
    year = ctx.year or (ctx.capture_time.year if ctx.capture_time else None)
    md = pl.col("md").str.zfill(4)
    naive = (pl.lit(str(year) if year else None, dtype=pl.String) + "-" + md.str.slice(0, 2) + "-" + md.str.slice(2, 2)
             + " " + pl.col("hms")).str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False)
    if ctx.capture_time is not None and not ctx.year:
        cap = ctx.capture_time if ctx.capture_time.tzinfo else ctx.capture_time.replace(tzinfo=dt.timezone.utc)
        later = naive > pl.lit(cap.astimezone(dt.timezone.utc).replace(tzinfo=None) + dt.timedelta(days=1))
        naive = pl.when(later).then(naive.dt.offset_by("-1y")).otherwise(naive)
    wrank = m.str.extract(r"\[(?:PG [^\]]*?)?Rank ([0-9]{1,9})\]", 1)
    df = df.with_columns(
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
        _i(wrank, "msg_rank"),
        local_to_utc(naive, ctx.tz).alias("ts_local"),
    )
    df = df.with_columns(
        pl.when(pl.col("kind") == "exception_raised").then(m.str.extract(r" at [^ ]*?([A-Za-z0-9_]+\.(?:cpp|cc|h|hpp)):", 1))
        .otherwise(pl.col("src_file")).alias("src_file"),
        pl.when(pl.col("kind") == "exception_raised").then(_i(m.str.extract(r"\.(?:cpp|cc|h|hpp):([0-9]{1,9})", 1), "src_line"))
        .otherwise(pl.col("src_line")).alias("src_line"),
        pl.when(pl.col("glvl").is_null()).then(pl.lit(None, dtype=pl.String)).otherwise(pl.col("pre")).alias("pre"),
    )
    return _torch_prefix(df, ctx), bad


def _torch_prefix(df: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    glog_ts = df.get_column("ts_local")
    out = _prefix(df.drop("ts_local").with_columns(glog_ts.alias("_gts")), ctx, "pre")
    out = _ensure(out, {"prefix_rank": pl.Int32, "prefix": pl.String, "ts_local": pl.Datetime("us", "UTC")})
    torch_rank = pl.col("pre").str.extract(r"\[rank([0-9]{1,9})\]:$", 1).cast(pl.Int32, strict=False)
    out = out.with_columns(pl.coalesce(pl.col("_gts"), pl.col("ts_local")).alias("ts_local"),
                           pl.coalesce(torch_rank, pl.col("msg_rank"), pl.col("prefix_rank")).alias("rank"))
    return out.drop("_gts", "msg_rank")


# --- lines that are neither -----------------------------------------------------------------------
def _other_reasons(o: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(structure lines: blank / prefix only, unparsed lines with a reason)."""
    o = o.with_columns(pl.col("text").fill_null(""))
    t = pl.col("text")
    blank = t.str.strip_chars() == ""
    o = o.with_columns((blank | t.str.contains(_PREFIX_ONLY)).alias("_struct"))
    structure = o.filter(pl.col("_struct"))
    rest = o.filter(~pl.col("_struct")).with_columns(t.str.replace(_LAUNCHER, "").alias("_b"))
    b = pl.col("_b")
    reason = (pl.when(b.str.contains(r"^\s*# ?(?:nThread|Using devices|\s*Rank +[0-9]+ |Out of bounds|Avg bus bandwidth"
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
              .otherwise(pl.lit("not an NCCL line")))
    return structure, rest.with_columns(reason.alias("reason")).select("line_no", "text", "reason")


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    """Parse NCCL debug output and PyTorch NCCL watchdog lines into nccl_log and nccl_config."""
    lines = read_lines(data)
    n = lines.height
    if n == 0:
        return result(NAME, ctx, 0, {"nccl_log": schema.empty("nccl_log"), "nccl_config": schema.empty("nccl_config")},
                      None, hosts=[], variant="empty")
    text = pl.col("text")
    cand = lines.with_columns(text.str.contains("NCCL ", literal=True).fill_null(False).alias("_c"))
    nc = cand.filter(pl.col("_c")).drop("_c")
    rest = cand.filter(~pl.col("_c")).drop("_c")
    log_parts, cfg = [], []
    if nc.height:
        rows, bad, cfg = _nccl_rows(nc, ctx, data.isascii())
        log_parts.append(rows)
        rest = pl.concat([rest, bad])
    pt_cond = (text.str.contains("NCCL", literal=True) | text.str.contains("atchdog", literal=True)
               | text.str.contains("terminate called after throwing", literal=True)
               | text.str.contains("what():", literal=True)).fill_null(False)
    pt = rest.filter(pt_cond)
    if pt.height:
        rest = rest.filter(~pt_cond)
        trows, tbad = _torch_rows(pt, ctx)
        if trows.height:
            log_parts.append(trows.sort("line_no"))
        rest = pl.concat([rest, tbad])
    _structure, unparsed = _other_reasons(rest)

    log = _finish_log(log_parts)
    cfg_df = (pl.concat([c for c in cfg if c.height], how="vertical_relaxed")
              if any(c.height for c in cfg) else schema.empty("nccl_config").select(
                  "line_no", "host", "pid", "rank", "cuda_dev", "key", "value"))
    cfg_df = cfg_df.sort("line_no", maintain_order=True)
    hosts = sorted(h for h in log.get_column("host").unique().to_list() if h) if log.height else []
    variant = _variant(log)
    up = unparsed_frame(unparsed, pl.col("reason"), ctx, NAME)
    return result(NAME, ctx, n, {"nccl_log": log, "nccl_config": cfg_df}, up, hosts=hosts, variant=variant)


_LOG_COLS = [c for c in schema.polars_schema("nccl_log") if c not in ("source", "file")]


def _finish_log(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """Final nccl_log columns: NCCL rows, then PyTorch rows, each part in line order (not interleaved: no copy)."""
    if not parts:
        return schema.empty("nccl_log").drop("source", "file")
    types = {c: t for c, t in schema.polars_schema("nccl_log").items() if c in _LOG_COLS}
    out = None
    for df in parts:
        df = _ensure(df, {"ts_exact": pl.Datetime("us", "UTC"), "ts_local": pl.Datetime("us", "UTC")})
        exact, local = pl.col("ts_exact"), pl.col("ts_local")
        if df.get_column("ts_exact").null_count() == df.height and df.get_column("ts_local").null_count() == df.height:
            df = df.with_columns(pl.lit(None, dtype=pl.Datetime("us", "UTC")).alias("ts"), pl.lit("none").alias("ts_quality"))
        else:
            df = df.with_columns(
                pl.coalesce(exact, local).alias("ts"),
                pl.when(exact.is_not_null()).then(pl.lit("exact")).when(local.is_not_null()).then(pl.lit("local"))
                .otherwise(pl.lit("none")).alias("ts_quality"))
        df = _ensure(df, types).select(list(types))
        out = df if out is None else pl.concat([out, df.cast(out.schema)])
    return out


def _variant(log: pl.DataFrame) -> str:
    """Short name of what the input held: nccl, pytorch, rfc3339 stamps, launcher prefixes."""
    if log.height == 0:
        return "no-nccl-lines"
    facts = log.select(
        pl.col("level").is_in(["INFO", "WARN", "TRACE", "CALL", "ABORT", "ATTN", "VERSION"]).any().alias("nccl"),
        (pl.col("level").is_in(["ERROR", "FATAL"]) | pl.col("kind").is_in(
            ["watchdog_timeout", "watchdog_exception", "terminate", "exception_raised"])).any().alias("pytorch"),
        (pl.col("ts_quality") == "exact").any().alias("rfc3339"),
        pl.col("prefix").is_not_null().any().alias("prefixed")).row(0, named=True)
    return "+".join(k for k, v in facts.items() if v) or "other"
