"""Log records of the runtimes around a job's NCCL and training output -> ``runtime_log`` rows.

A job's stdout holds, between NCCL's and the framework's lines, the records of the programs that run
it; each names its program, process, level, time and source line, and many carry the job's own
evidence (a worker that failed with its exit code, a rendezvous, the NCCL library a server loaded).
The logging formats read (each one as its program's source sets it, seen in the real outputs under
tests/fixtures/nccl/ and tests/fixtures/train_log/):

- **vLLM** ``INFO 06-20 01:29:18 utils.py:672] msg`` (``%(levelname)s %(asctime)s %(filename)s:%(lineno)d]``,
  date without a year) and the newer ``INFO 06-20 01:29:18 [utils.py:672] msg``;
- **Ray** driver/worker lines ``2024-01-17 06:16:16,954 INFO worker.py:1673 -- msg``;
- **PyTorch glog** (c10 and torch.distributed's Python logging): ``W1209 23:39:39.912000 19400
  site-packages/torch/distributed/run.py:793] msg``, ``I20241209 23:39:42.495619 138559 File.cpp:905] msg``
  and c10's bracketed ``[W316 16:26:53.533610946 File.cpp:5072] msg`` (no thread id);
- **torch logging** (torch 2.0-2.2) ``[2024-04-11 09:40:32,971] torch.distributed.run: [WARNING] msg``;
- **torchelastic** (0.2 / torch.distributed.run 1.9-1.10) ``[INFO] 2021-12-08 12:28:26,050 api: msg``, and its
  etcd rendezvous (torchelastic 0.2 to torch 2.x) ``INFO 2024-12-10 18:28:00,569 Attempting to join next rendezvous``;
- **Python's default logging** ``WARNING:torch.distributed.elastic.multiprocessing.api:msg``
  (program ``pytorch`` for ``torch.*`` loggers, else ``python``).

Before the record any stack of these prefixes is read: mail quotes (``> ``), Open MPI
``[1,3]<stdout>:``, ``srun -l`` ``3: ``, torchrun ``[rank3]:``, RFC 3339 container stamps, and the
worker prefix Ray and vLLM put on a worker's lines, ``(RayWorkerWrapper pid=50232, ip=10.1.0.67)``,
``(VllmWorkerProcess pid=3681351)``, ``(pid=123)``, ``(raylet)``. Ray's ``[repeated 14x across cluster]``
becomes ``repeated``. Times are local without a zone (converted with ctx.tz, ts_quality ``local``);
dates without a year take ctx.year, else the capture or file time's year (a month after it: the year
before), ts_quality ``local_year_inferred``, else ts is null (``none``). A record's continuation lines
(tracebacks, the lines of a multi-line message) are not records: they stay with the caller.

>>> import polars as pl
>>> from forensics.sources._base import ParseContext
>>> lines = pl.DataFrame({"line_no": [1, 2, 3], "text": [
...     "(RayWorkerWrapper pid=50232, ip=10.1.0.67) INFO 01-29 05:10:25 pynccl.py:69] vLLM is using nccl==2.21.5",
...     "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 1 (pid: 10622)",
...     "Traceback (most recent call last):"]})
>>> rows, rest = read(lines, ParseContext(year=2025))
>>> rows.select("line_no", "program", "worker", "pid", "ip", "level", "src_file", "src_line", "ts_quality").rows()
[(1, 'vllm', 'RayWorkerWrapper', 50232, '10.1.0.67', 'INFO', 'pynccl.py', 69, 'local_year_inferred'), (2, 'pytorch', None, None, None, 'ERROR', None, None, 'none')]
>>> rows["logger"].to_list(), rest["line_no"].to_list()
([None, 'torch.distributed.elastic.multiprocessing.api'], [3])
"""
from __future__ import annotations

import datetime as dt

import polars as pl

from forensics import schema
from forensics.sources._base import ParseContext, local_to_utc

TABLE = "runtime_log"
YEAR_INFERRED = "local_year_inferred"  # as dmesg's syslog times without a year

_LVL = "DEBUG|INFO|WARNING|ERROR|CRITICAL"
_DATE = "[0-9]{4}-[0-9]{2}-[0-9]{2}"
_HMS = "[0-9]{2}:[0-9]{2}:[0-9]{2}"
_PY = r"[A-Za-z0-9_.-]{1,200}\.py"
_PREFIX = (r"^(?:> ?)*(?:(?:\[[0-9]{1,9},(?P<mr>[0-9]{1,9})\]<std(?:out|err)>: ?| *(?P<sr>[0-9]{1,9}): "
           r"|\[rank(?P<tr>[0-9]{1,9})\]:|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{8,30}(?:Z|[+-][0-9]{2}:?[0-9]{2}) )*)"
           r"(?:\((?:(?P<worker>[A-Za-z_][A-Za-z0-9_.-]{0,100})(?: pid=(?P<wpid>[0-9]{1,9}))?|pid=(?P<wpid2>[0-9]{1,9}))"
           r"(?:, ip=(?P<ip>[0-9A-Fa-f.:]{1,45}))?\) )?")
_FORMATS = (
    # vLLM
    rf"(?P<a_lvl>{_LVL}) (?P<a_md>[0-9]{{2}}-[0-9]{{2}}) (?P<a_hms>{_HMS})(?:\.[0-9]{{1,6}})? \[?(?P<a_src>{_PY})"
    r":(?P<a_line>[0-9]{1,9})\]? ?(?P<a_msg>.*)",
    # Ray
    rf"(?P<b_date>{_DATE}) (?P<b_hms>{_HMS}),(?P<b_ms>[0-9]{{3}})\t? *(?P<b_lvl>{_LVL}) (?P<b_src>{_PY}):"
    r"(?P<b_line>[0-9]{1,9}) -- (?P<b_msg>.*)",
    # glog (c10, torch.distributed)
    rf"\[?(?P<c_lvl>[IWEF])(?P<c_y>[0-9]{{4}})?(?P<c_md>[0-9]{{3,4}}) (?P<c_hms>{_HMS})(?P<c_frac>\.[0-9]{{1,9}})?"
    r"(?: +(?P<c_tid>[0-9]{1,20}))? (?P<c_src>[^ \]]{1,300}):(?P<c_line>[0-9]{1,9})\] ?(?P<c_msg>.*)",
    # torchelastic 0.2
    rf"\[(?P<d_lvl>{_LVL})\] (?P<d_date>{_DATE}) (?P<d_hms>{_HMS}),(?P<d_ms>[0-9]{{3}}) (?P<d_logger>[A-Za-z0-9_.]{{1,200}}):"
    r" (?P<d_msg>.*)",
    # torch logging (2.0-2.2)
    rf"\[(?P<e_date>{_DATE}) (?P<e_hms>{_HMS}),(?P<e_ms>[0-9]{{3}})\] (?P<e_logger>[A-Za-z0-9_.]{{1,200}}): "
    rf"\[(?P<e_lvl>{_LVL})\] ?(?P<e_msg>.*)",
    # Python's default logging.basicConfig format
    rf"(?P<f_lvl>{_LVL}):(?P<f_logger>[A-Za-z_][A-Za-z0-9_.]{{0,200}}):(?P<f_msg>.*)",
    # torch.distributed.elastic's etcd rendezvous (etcd_rendezvous.py: "%(levelname)s %(asctime)s %(message)s")
    rf"(?P<g_lvl>{_LVL}) (?P<g_date>{_DATE}) (?P<g_hms>{_HMS}),(?P<g_ms>[0-9]{{3}}) (?P<g_msg>.*)",
)
PATTERN = _PREFIX + "(?:" + "|".join(_FORMATS) + ")$"
# the same without the message: its groups are captured on the header alone (the capturing engine's cost
# grows with the text it walks; 7,152 records: 23.5 -> 16.5 ms) and the message is what follows it
_HEAD = _PREFIX + "(?:" + "|".join(f[: f.rindex("(?P<")] for f in _FORMATS) + ")"
_GLOG_LEVEL = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "FATAL"}
_COLUMNS = [c for c in schema.polars_schema(TABLE) if c not in ("host", "source", "file")]


def _year(month: pl.Expr, ctx: ParseContext) -> pl.Expr | None:
    """Year of a date printed without one: ctx.year, else the capture (or file) time's, a month after that
    time's month belonging to the year before; None when nothing tells."""
    if ctx.year is not None:
        return pl.lit(int(ctx.year))
    cap = ctx.capture_time or (ctx.hints or {}).get("file_time")
    if not isinstance(cap, dt.datetime):
        return None
    return pl.when(month > cap.month).then(pl.lit(cap.year - 1)).otherwise(pl.lit(cap.year))


def _fields(g: pl.DataFrame, ctx: ParseContext) -> pl.DataFrame:
    """The extracted groups (one struct field per group, unnested) -> runtime_log columns."""
    c = pl.col
    fmt = (pl.when(c("a_lvl").is_not_null()).then(pl.lit("vllm")).when(c("b_lvl").is_not_null()).then(pl.lit("ray"))
           .when(c("c_lvl").is_not_null()).then(pl.lit("pytorch")).when(c("d_lvl").is_not_null())
           .then(pl.lit("torchelastic")).when(c("e_lvl").is_not_null()).then(pl.lit("pytorch"))
           .when(c("g_lvl").is_not_null()).then(pl.lit("torchelastic"))
           .when(c("f_logger").str.starts_with("torch.") | (c("f_logger") == "torch")).then(pl.lit("pytorch"))
           .otherwise(pl.lit("python")))
    full = pl.coalesce(
        pl.concat_str([c("b_date"), pl.lit(" "), c("b_hms"), pl.lit("."), c("b_ms")]),
        pl.concat_str([c("d_date"), pl.lit(" "), c("d_hms"), pl.lit("."), c("d_ms")]),
        pl.concat_str([c("e_date"), pl.lit(" "), c("e_hms"), pl.lit("."), c("e_ms")]),
        pl.concat_str([c("g_date"), pl.lit(" "), c("g_hms"), pl.lit("."), c("g_ms")]),
        pl.concat_str([c("c_y"), pl.lit("-"), c("c_md").str.zfill(4).str.slice(0, 2), pl.lit("-"),
                       c("c_md").str.zfill(4).str.slice(2, 2), pl.lit(" "), c("c_hms"),
                       c("c_frac").fill_null("").str.slice(0, 7)]),
    ).str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False)
    # month and day of the dates printed without a year (vLLM MM-DD, glog MMDD)
    md = pl.coalesce(c("a_md").str.replace("-", "", literal=True),
                     pl.when(c("c_y").is_null()).then(c("c_md").str.zfill(4)))
    month = md.str.slice(0, 2).cast(pl.Int32, strict=False)
    year = _year(month, ctx)
    if year is None:
        partial = pl.lit(None, dtype=pl.Datetime("us"))
    else:
        hms = pl.coalesce(c("a_hms"), pl.concat_str([c("c_hms"), c("c_frac").fill_null("").str.slice(0, 7)]))
        partial = pl.concat_str([year.cast(pl.String), pl.lit("-"), md.str.slice(0, 2), pl.lit("-"), md.str.slice(2, 2),
                                 pl.lit(" "), hms]).str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", strict=False)
    naive = pl.coalesce(full, partial)
    msg = c("_msg")
    out = g.with_columns(
        fmt.alias("program"),
        pl.coalesce(c("a_lvl"), c("b_lvl"), c("c_lvl").replace_strict(_GLOG_LEVEL, default=None), c("d_lvl"),
                    c("e_lvl"), c("f_lvl"), c("g_lvl")).alias("level"),
        local_to_utc(naive, ctx.tz).alias("ts"),
        pl.when(full.is_not_null()).then(pl.lit("local")).when(partial.is_not_null()).then(pl.lit(YEAR_INFERRED))
        .otherwise(pl.lit("none")).alias("ts_quality"),
        pl.coalesce(c("mr"), c("sr"), c("tr")).cast(pl.Int32, strict=False).alias("rank"),
        pl.coalesce(c("wpid"), c("wpid2")).cast(pl.Int64, strict=False).alias("pid"),
        c("c_tid").cast(pl.Int64, strict=False).alias("tid"),
        pl.coalesce(c("a_src"), c("b_src"), c("c_src")).alias("src_file"),
        pl.coalesce(c("a_line"), c("b_line"), c("c_line")).cast(pl.Int32, strict=False).alias("src_line"),
        pl.coalesce(c("d_logger"), c("e_logger"), c("f_logger")).alias("logger"),
        msg.str.strip_chars_end().alias("message"),
        msg.str.extract(r" \[repeated ([0-9]{1,9})x across cluster\]", 1).cast(pl.Int32, strict=False).alias("repeated"),
    )
    return out.select(_COLUMNS)


def read(lines: pl.DataFrame, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(runtime_log rows of the records among `lines` (line_no, text), the lines that are none)."""
    text = pl.col("text")
    hit = lines.select(text.str.contains(PATTERN).fill_null(False)).to_series()
    if not hit.any():
        return schema.empty(TABLE).select(_COLUMNS), lines
    got = lines.filter(hit).sort("line_no")
    g = got.select("line_no", text.str.extract_groups(_HEAD).alias("g"),
                   text.str.replace(_HEAD, "").alias("_msg")).unnest("g")
    return _fields(g, ctx), lines.filter(~hit)
