"""Launcher and collector prefixes before an NCCL header (RFC 3339 container stamps, Open MPI
``[1,3]<stdout>:``, ``srun -l`` ranks, ``[rank3]:``, NCCL's own ``[%F %T]`` stamp): prefix text, rank, exact or
local time stamp."""
from __future__ import annotations

import polars as pl

from forensics.sources._base import ParseContext, local_to_utc
from forensics.sources.nccl.patterns import _NCCL_TS, _RANK, _RFC3339, _RFC_CORE


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

_LAUNCH = (r"^(?P<launch>(?:(?P<rfc>" + _RFC_CORE + r") |\[[0-9]{1,9},(?P<mr>[0-9]{1,9})\]<std(?:out|err)>: ?"
           r"| *(?P<sr>[0-9]{1,9}): |\[(?P<br>[0-9]{1,9})\] |\[rank(?P<tr>[0-9]{1,9})\]:)*)"
           r"(?:\[(?P<nts>[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?)\] )?")


_LAUNCH_G = pl.col("text").str.extract_groups(_LAUNCH).alias("_g")
_LAUNCH_LEN = (pl.col("launch").str.len_bytes()
               + pl.when(pl.col("nts").is_not_null()).then(pl.col("nts").str.len_bytes() + 3).otherwise(0)).fill_null(0)
