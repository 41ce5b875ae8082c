"""nccl-tests output (``all_reduce_perf``, ``all_gather_perf``, ... of github.com/NVIDIA/nccl-tests) -> ``nccl_tests``.

What the tests print (``src/common.cu``), with or without a launcher prefix (``[1,0]<stdout>:``, ``srun -l``
`` 0: ``), and as pasted into Markdown (which eats the leading ``#`` of the header lines):

- ``# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 ...``: a
  ``params`` row (its text in ``detail``);
- ``#  Rank  0 [Group  0] Pid   1465 on ip-10-0-139-244 device  0 [0x00] NVIDIA A10G``: a ``device`` row;
- the column header (``out-of-place  in-place``, ``size count type redop [root] time algbw busbw #wrong|error
  ...``, ``(B) (elements) ...``), ``# Using devices``, ``#``, ``# Collective test starting/concluded: ...`` and
  ``# nccl-tests version ...``: structure (used, no row);
- result lines ``size count type redop [root] time algbw busbw #wrong|error time algbw busbw #wrong|error``:
  ``result`` rows, the out-of-place and in-place halves typed (``N/A`` is null); versions before 2.10 print no
  root and a max ``error`` (``0e+00``) instead of the ``#wrong`` count, and their all_gather_perf no redop either
  (``size count type time algbw busbw error ...``), told apart by the number of fields;
- ``# Out of bounds values : 0 OK`` and ``# Avg bus bandwidth    : 114.556``: ``out_of_bounds`` and
  ``avg_busbw`` rows;
- the tests' own error reports (``TESTCHECK``/``NCCLCHECK``/``CUDACHECK`` of ``src/common.h``):
  ``HOST: Test NCCL failure common.cu:1204 'unhandled cuda error ...'``, ``Test CUDA failure common.cu:730 'unknown
  error'`` and the chain `` .. HOST pid 1015577: Test failure common.cu:915`` (`` .. HOST: Test failure ...`` in
  older versions): ``failure`` rows (the host and pid as printed in ``test_host``/``pid``, the text from ``Test``
  on in ``detail``).

busbw is the figure to compare with the fabric's per-GPU line rate (nccl-tests doc/PERFORMANCE.md).

>>> import polars as pl
>>> lines = pl.DataFrame({"line_no": [1, 2, 3], "text": [
...     "[1,0]<stdout>:  2147483648     536870912     float     sum      -1   8019.8  267.77  468.60      0"
...     "   8019.5  267.78  468.62      0",
...     "           8             2     float     sum    172.7    0.00    0.00  0e+00    168.9    0.00    0.00  0e+00",
...     "# Avg bus bandwidth    : 114.556 "]})
>>> rows, left = perf_rows(lines)
>>> rows.select("line_no", "rank", "kind", "size_b", "root", "oop_busbw_gbs", "oop_wrong", "ip_error",
...             "avg_busbw_gbs").rows()
[(1, 0, 'result', 2147483648, -1, 468.6, 0, None, None), (2, None, 'result', 8, None, 0.0, None, 0.0, None), (3, None, 'avg_busbw', None, None, None, None, None, 114.556)]
>>> left.height
0
"""
from __future__ import annotations

import re

import polars as pl

from forensics.sources._bounded import to_float
from forensics.sources.nccl.patterns import _LAUNCHER, _RANK

# the line without its launcher prefix, and that prefix
_BODY = pl.col("text").fill_null("").str.replace(_LAUNCHER, "").alias("_b")
_NUM = r"(?:-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|N/A)"
# size count type [redop] [root] + one or two halves of (time algbw busbw #wrong|error); the root and the redop are
# told from the number of fields (9 or 13 with both, 8 or 12 without root, 7 or 11 without either: old all_gather)
_RESULT = (r"^\s*[0-9]{1,19}\s+[0-9]{1,19}\s+[a-z][a-z0-9_]{0,15}(?:\s+[a-z][a-z0-9_]{0,15}(?:\s+-?[0-9]{1,9})?)?"
           r"(?:\s+" + _NUM + r"){4}(?:(?:\s+" + _NUM + r"){4})?\s*$")
_DEVICE = (r"^\s*#?\s*Rank\s+([0-9]{1,9})\s+(?:Group\s+[0-9]+\s+)?Pid\s+([0-9]{1,12})\s+on\s+(\S+)\s+device\s+"
           r"([0-9]{1,9})\s+\[[^\]]*\]\s*(.*?)\s*$")
_PARAMS = r"^\s*#?\s*(nThread [0-9]+ nGpus [0-9]+ .*?)\s*$"
_AVG = r"^\s*#?\s*Avg bus bandwidth\s*:\s*(" + _NUM + r")\s*$"
_OOB = r"^\s*#?\s*(Out of bounds values\s*:\s*([0-9]+)\s*(?:OK|FAILED)?)\s*$"
_FAIL = (r"^\s*(?:\.\.\s+)?(?:(\S+?)(?:\s+pid\s+([0-9]{1,12}))?:\s+)?"
         r"(Test (?:(?:NCCL|CUDA) )?failure\s+[^\s:]+:[0-9]{1,9}(?:\s+'.*')?)\s*$")
_STRUCT = (r"^\s*#\s*$|^\s*#?\s*(?:Using devices|out-of-place\s+in-place|size\s+count\s+type\s+(?:redop|time)|\(B\)\s+\(elements\)"
           r"|Collective test (?:starting|concluded)|nccl-tests version )")
_F, _I = pl.Float64, pl.Int64


def _result_cols() -> list[pl.Expr]:
    """Fields of a result line (its words in struct fields _0 .. _12, "_new" true with the root column, "_noop" true
    without a redop column): size, count, type, [redop], [root], then the out-of-place and in-place halves (time,
    algbw, busbw, #wrong|error). With the root column (nccl-tests 2.10+) a half's 4th field is the #wrong count;
    before, it is the max error."""
    f, new, noop = [pl.col(f"_{i}") for i in range(_WORDS)], pl.col("_new"), pl.col("_noop")

    def tok(e: pl.Expr, dtype: pl.DataType) -> pl.Expr:
        cell = pl.when(e != "N/A").then(e)
        return to_float(cell) if dtype == _F else cell.cast(dtype, strict=False)  # (past a double: null, not inf)

    out = [tok(f[0], _I).alias("size_b"), tok(f[1], _I).alias("count"), f[2].alias("dtype"),
           pl.when(~noop).then(f[3]).alias("redop"), pl.when(new).then(tok(f[4], pl.Int32)).alias("root")]
    for side, at in (("oop", 4), ("ip", 8)):
        def g(j: int, at: int = at) -> pl.Expr:  # field j of the half
            return pl.when(new).then(f[at + j + 1]).when(noop).then(f[at + j - 1]).otherwise(f[at + j])
        out += [tok(g(0), _F).alias(f"{side}_time_us"), tok(g(1), _F).alias(f"{side}_algbw_gbs"),
                tok(g(2), _F).alias(f"{side}_busbw_gbs"),
                pl.when(new).then(tok(f[at + 4], _I)).alias(f"{side}_wrong"),
                pl.when(~new).then(tok(g(3), _F)).alias(f"{side}_error")]
    return out


_WORDS = 13  # the most a result line has (_RESULT): size count type redop root + 2 x 4
_RESULT_COLS = _result_cols()
# the words of a result line as struct fields _0 .. _12 (null past its last word) and whether it has the root column
# (9 or 13 words; 8 or 12 without): each field computed once, not once per expression that reads it
_WORDS_OF = [pl.col("_t").list.to_struct(fields=[f"_{i}" for i in range(_WORDS)]).alias("_s"),
             (pl.col("_t").list.len() % 4 == 1).alias("_new"), (pl.col("_t").list.len() % 4 == 3).alias("_noop")]
# the fields of the header and summary rows, each on the rows of its kind only
_DEV = pl.col("_d").struct.field
_KIND_COLS = {
    "device": [_DEV("1").cast(pl.Int32, strict=False).alias("test_rank"), _DEV("3").alias("test_host"),
               _DEV("2").cast(_I, strict=False).alias("pid"), _DEV("4").cast(pl.Int32, strict=False).alias("cuda_dev"),
               pl.when(_DEV("5") != "").then(_DEV("5")).alias("gpu")],
    "avg_busbw": [to_float(pl.col("_b").str.extract(_AVG, 1)).alias("avg_busbw_gbs")],
    "out_of_bounds": [pl.col("_b").str.extract(_OOB, 2).cast(_I, strict=False).alias("wrong_total"),
                      pl.col("_b").str.extract(_OOB, 1).alias("detail")],
    "params": [pl.col("_b").str.extract(_PARAMS, 1).alias("detail")],
    "failure": [pl.col("_b").str.extract(_FAIL, 1).alias("test_host"),
                pl.col("_b").str.extract(_FAIL, 2).cast(_I, strict=False).alias("pid"),
                pl.col("_b").str.extract(_FAIL, 3).alias("detail")],
}
_KIND_ORDER = (("device", _DEVICE), ("avg_busbw", _AVG), ("out_of_bounds", _OOB), ("params", _PARAMS),
               ("failure", _FAIL), ("structure", _STRUCT))


def _kinds(df: pl.DataFrame) -> pl.Series:
    """Kind of each line (its body in "_b"): result, else the first header/summary pattern it matches (evaluated on
    the lines that are not results only), else null."""
    b = pl.col("_b")
    is_res = df.select(b.str.contains(_RESULT).fill_null(False)).to_series()
    kind = pl.lit(None, dtype=pl.String)
    for name, rx in reversed(_KIND_ORDER):
        kind = pl.when(b.str.contains(rx)).then(pl.lit(name)).otherwise(kind)
    out = pl.repeat("result", df.height, dtype=pl.String, eager=True).alias("kind")
    if is_res.all():
        return out
    if not is_res.any():
        return df.select(kind.alias("kind")).to_series()
    rest = (~is_res).arg_true()
    return out.scatter(rest, df.gather(rest).select(kind).to_series())


def perf_rows(lines: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(line_no, text) lines no NCCL/PyTorch reader took -> (nccl_tests rows without host/source/file, in line order;
    structure lines dropped, other lines left as they came)."""
    piped = lines.get_column("text").str.contains("|", literal=True).fill_null(False)
    if piped.any():  # a Markdown table's or side-by-side paste's cells (see _unpipe)
        lines = _unpipe(lines, piped)
    df = lines.with_columns(_BODY)
    b = pl.col("_b")
    df = df.with_columns(_kinds(df))
    hit = df.get_column("kind").is_not_null()
    left = df.filter(~hit).select("line_no", "text")
    got = df.filter(hit & (pl.col("kind") != "structure"))
    if got.height == 0:
        return _empty(), left
    pre = pl.col("text").str.slice(0, pl.col("text").str.len_chars() - b.str.len_chars())
    k = pl.col("_k").struct.field
    rank = pl.coalesce(k("r1"), k("r2"), k("r3"), k("r4")).cast(pl.Int32, strict=False).alias("rank")
    got = got.with_columns(pre.str.extract_groups(_RANK).alias("_k"))
    parts = []
    kinds = got.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("_r"), "kind").group_by("kind").agg("_r")
    for kind, idx in zip(kinds.get_column("kind").to_list(), kinds.get_column("_r")):
        sub = got if idx.len() == got.height else got.gather(idx)
        if kind == "result":  # result rows: their words
            sub = sub.with_columns(b.str.extract_all(r"\S+").alias("_t")).with_columns(_WORDS_OF).unnest("_s")
            parts.append(sub.select("line_no", rank, "kind", *_RESULT_COLS))
        else:  # the few header and summary rows: the fields of their kind
            if kind == "device":
                sub = sub.with_columns(b.str.extract_groups(_DEVICE).alias("_d"))
            parts.append(sub.select("line_no", rank, "kind", *_KIND_COLS[kind]))
    out = pl.concat(parts, how="diagonal").sort("line_no") if len(parts) > 1 else parts[0]
    return out, left


_RESULT_RE = re.compile(_RESULT)
_TABLE_RULE = re.compile(r"^:?-{3,}:?$")
_ANY_KIND = re.compile("|".join(f"(?:{rx})" for rx in (_RESULT, _STRUCT, _DEVICE, _PARAMS, _AVG, _OOB)))
MAX_PIPED = 4096  # longer lines are left as they are


def _unpipe(lines: pl.DataFrame, piped: pl.Series) -> pl.DataFrame:
    """`lines` with the lines cut into cells by ``|`` read as nccl-tests printed them: two result lines side by side
    (``8 2 float sum -1 ... 0 | 8 2 float sum -1 ... 0``, two runs compared) become one line per cell (the same
    line number twice); a Markdown table's row of one field per cell (``| 8 | 2 | float | sum | -1 | ... |``) or of
    the header's words is read with its cells joined; its ``|---|---|`` rule is structure. Other lines as they came."""
    out: list[tuple[int, str]] = []
    for ln, text in lines.filter(piped).iter_rows():
        cells = [c.strip() for c in text.split("|")] if len(text) <= MAX_PIPED else []
        cells = [c for c in cells if c]
        if len(cells) > 1 and all(_RESULT_RE.match(c) for c in cells):
            out.extend((ln, c) for c in cells)
        elif cells and all(_TABLE_RULE.match(c) for c in cells):
            out.append((ln, "#"))
        elif cells and _ANY_KIND.match(" ".join(cells).lstrip("# ") if cells[0] != "#" else " ".join(cells)):
            out.append((ln, " ".join(cells)))
        else:
            out.append((ln, text))
    fixed = pl.DataFrame(out, schema={"line_no": lines.schema["line_no"], "text": pl.String}, orient="row")
    return pl.concat([lines.filter(~piped), fixed]).sort("line_no", maintain_order=True)


def _empty() -> pl.DataFrame:
    from forensics import schema

    return schema.empty("nccl_tests").drop("host", "source", "file")
