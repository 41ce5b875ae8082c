"""The NCCL header ``host:pid:tid [dev] [file:line [(func)] | ms func:line] NCCL LEVEL``: the fast split by byte
offsets, its retry after stripping a launcher prefix, and the slow regex path for every other shape."""
from __future__ import annotations

import polars as pl

from forensics.sources._base import ParseContext
from forensics.sources.nccl.patterns import _HEAD, _LEVELS, _collect, _i, _lazy_prefix_groups, _nulls
from forensics.sources.nccl.prefixes import _LAUNCH_G, _LAUNCH_LEN, _local_ts, _prefix, _rfc_ts


_LEVEL_OF = {"INFO ": "INFO", "INFO": "INFO", "WARN ": "WARN", "WARN": "WARN", "TRACE": "TRACE", "ABORT": "ABORT",
             "CALL ": "CALL", "CALL": "CALL", "ATTN ": "ATTN", "ATTN": "ATTN", "versi": "VERSION"}


# the message starts at p + this ("NCCL version" keeps its words), by the level read there
_LEVEL_OFF = {v: {"VERSION": 1, "TRACE": 12, "ABORT": 12}.get(v, 11) for v in _LEVEL_OF.values()}


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
    off = p + pl.col("level").replace_strict(_LEVEL_OFF, default=None, return_dtype=pl.Int64)  # (no second slice)
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


_WORKER_ONLY = r"^(?:> ?|[ \t])*(?:\((?:[A-Za-z_][A-Za-z0-9_.-]{0,100})?(?: ?pid=[0-9]{1,9}(?:, ip=[0-9A-Fa-f.:]{1,45})?)?\) ?)+$"


def _split_nccl_plan():
    text, tail, lvl = pl.col("text"), pl.col("tail"), pl.col("lvl")
    bare = text.str.starts_with("NCCL ")
    sp = text.str.splitn(" NCCL ", 2)
    level = pl.lit(None, dtype=pl.String)
    for lv in ("version",) + _LEVELS:
        level = pl.when(tail.str.starts_with(lv + " ") | (tail == lv)).then(pl.lit(lv)).otherwise(level)
    # a head that is only a mail quote or an indent ("> NCCL version 2.20.5+cuda12.4", a paste indented as a
    # whole): as a bare line
    # and a head that is only Ray's or vLLM's worker prefix before a VERSION line ("(RayWorkerWrapper pid=663) NCCL
    # version 2.21.5+cuda12.4": NCCL prints no host there), read as bare too (that line's prefix is not kept)
    quoted = (sp.struct.field("field_0").str.contains(r"^(?:> ?|[ \t])+$")
              | (sp.struct.field("field_1").str.starts_with("version ")
                 & sp.struct.field("field_0").str.contains(_WORKER_ONLY))).fill_null(False)
    split = [pl.when(bare | quoted).then(pl.lit("")).otherwise(sp.struct.field("field_0")).alias("head"),
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
