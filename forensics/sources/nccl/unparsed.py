"""Lines that are neither NCCL nor PyTorch lines: structure (blank, prefix only) or unparsed with a reason."""
from __future__ import annotations

import polars as pl
from forensics.sources.nccl.patterns import _LAUNCHER, _PREFIX_ONLY


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
            .when(b.str.contains(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) [0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} "))
            .then(pl.lit("vLLM log line (not an NCCL line)"))
            .when(b.str.contains(r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8},[0-9]{3}\t?\s*(?:DEBUG|INFO|WARNING|ERROR) [a-z_]+\.py:[0-9]+ -- "))
            .then(pl.lit("Ray log line (not an NCCL line)"))
            # glog as PyTorch's Python logging and c10 print it: "W0714 23:06:54.603780 140446678845248 torch/distributed/run.py:757] "
            .when(b.str.contains(r"^[IWEF][0-9]{4}(?:[0-9]{4})? [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+ +[0-9]+ [^ \]]+:[0-9]+\] "))
            .then(pl.lit("PyTorch/torchrun log line (not an NCCL line)"))
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
    # the reason is read behind a mail quote ("> ") and a launcher prefix
    rest = o.filter(~is_struct).with_columns(
        pl.col("text").str.replace(r"^(?:> ?)+", "").str.replace(_LAUNCHER, "").alias("_b"))
    return structure, rest.with_columns(_REASON).select("line_no", "text", "reason")
