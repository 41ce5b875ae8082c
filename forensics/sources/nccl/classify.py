"""Message classification: the kind of each NCCL message (an anchored alternation of message prefixes, then
one alternation of contains-literals)."""
from __future__ import annotations

import re

import polars as pl


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
