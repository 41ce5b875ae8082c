"""PyTorch c10d / ProcessGroupNCCL lines (glog headers, watchdog timeouts, last enqueued/completed work,
``terminate called``, ``what():``, ``Exception raised from``) -> nccl_log rows."""
from __future__ import annotations

import datetime as dt

import polars as pl

from forensics.sources._base import ParseContext, local_to_utc
from forensics.sources.nccl.patterns import _GLOG, _GLOG_LEVEL, _LAUNCHER, _RUNNER, _collect, _i
from forensics.sources.nccl.prefixes import _prefix


# --- PyTorch --------------------------------------------------------------------------------------
_GLOG_G = pl.col("text").str.extract_groups(_GLOG).alias("g")  # (its "\[" ends the lazy prefix's search quickly)
_TORCH_MESSAGE = pl.coalesce(pl.col("msg"), pl.col("text").str.replace(_LAUNCHER, "")).alias("message")


def _torch_ok() -> pl.Expr:
    """A glog header, a standard C++/Python exception line that names NCCL, or the watchdog's timeout message (one
    alternation)."""
    std = pl.col("message").str.contains(r"^(?:terminate called after throwing|  what\(\):|Exception raised from)"
                                         r"|NCCL error in: |^[A-Za-z_.]*(?:Error|Exception): .*NCCL"
                                         # the watchdog's message without its glog header, as people quote it
                                         r"|Watchdog caught collective operation timeout")
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
                    _i(m.str.extract(r"(?:at work|Timeout at NCCL work|at work sequence id): ([0-9]{1,18})", 1),
                       "seq")).alias("seq"),
        m.str.extract(r"OpType=([A-Za-z_0-9]+)", 1).alias("op_type"),
        _i(m.str.extract(r"Timeout\(ms\)=([0-9]{1,18})", 1), "timeout_ms"),
        _i(m.str.extract(r"ran for ([0-9]{1,18}) milliseconds", 1), "ran_ms"),
        # "last enqueued NCCL work: N" (2.2-2.5), "Last enqueued NCCL work: N" (the dump-signal line), and
        # "PG status: last enqueued work: N, last started work: N, last completed work: N" (2.6+)
        _i(m.str.extract(r"[Ll]ast enqueued (?:NCCL )?work: (-?[0-9]{1,18})", 1), "last_enqueued"),
        _i(m.str.extract(r"[Ll]ast completed (?:NCCL )?work: (-?[0-9]{1,18})", 1), "last_completed"),
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


_LINE_RANK = r"^\s*(?:" + _RUNNER + r" )?\[rank([0-9]{1,9})\]: "


def _torch_prefix(lf: pl.LazyFrame, ctx: ParseContext) -> pl.LazyFrame:
    out = _prefix(lf.rename({"ts_local": "_gts"}), ctx, "pre")
    torch_rank = pl.col("pre").str.extract(r"\[rank([0-9]{1,9})\]:$", 1).cast(pl.Int32, strict=False)
    # torchrun's "[rank1]: " before a line without a glog header ("[rank1]: torch.distributed.DistBackendError: ...")
    line_rank = pl.col("text").str.extract(_LINE_RANK, 1).cast(pl.Int32, strict=False)
    out = out.with_columns(pl.coalesce(pl.col("_gts"), pl.col("ts_local")).alias("ts_local"),
                           pl.coalesce(torch_rank, pl.col("msg_rank"), pl.col("prefix_rank"), line_rank).alias("rank"))
    return out.drop("_gts", "msg_rank")
