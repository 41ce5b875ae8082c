"""``nvidia-smi nvlink -s`` (``--status``) and ``-e`` (``--errorcounters``) -> ``nvlink_links`` and
``nvlink_errors``: each GPU link's state and speed, and its error counters.

What the drivers print (the traffic counters of ``nvlink -gt`` are read by the nvidia_smi source)::

    GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5269b708-678a-b1a8-60f0-c90406537486)
             Link 0: 25 GB/s
             Link 1: <inactive>
    GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)
             Link 0: Replay Errors: 0
             Link 0: Recovery Errors: 0
             Link 0: CRC Errors: 0

(older drivers split ``CRC Flit Errors`` and ``CRC Data Errors``; every ``Link N: <name>: <integer>``
line is a counter, its name in snake case). The GPU line, blank lines and markers are structure;
each collector marker starts a snapshot, and without markers a GPU index seen again starts the next
one (outputs pasted one after the other). Prompts, ``[...]`` elisions and other lines go to
``unparsed`` with a reason.

>>> from forensics.sources import ParseContext
>>> sample = (b"GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abc)\\n\\t Link 0: 26.562 GB/s\\n\\t Link 1: <inactive>\\n"
...           b"GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abc)\\n\\t Link 0: Replay Errors: 3\\n\\t Link 0: CRC Errors: 0\\n")
>>> res = parse(sample, ParseContext(host="n1"))
>>> res.tables["nvlink_links"].select("sample_no", "gpu", "link", "active", "speed_gbps").rows()
[(0, 0, 0, True, 26.562), (0, 0, 1, False, None)]
>>> res.tables["nvlink_errors"].select("sample_no", "gpu", "link", "counter", "value").rows()
[(1, 0, 0, 'replay_errors', 3), (1, 0, 0, 'crc_errors', 0)]
"""
from __future__ import annotations

import datetime as dt
import re

import polars as pl

from forensics.sources._base import ParseContext, ParseResult, Sniff, drop_before_first_marker, marker_split, result, sniff_lines, split_lines, unparsed_rows
from forensics.sources._bounded import float_or_none, int_or_none

NAME = "nvlink"
VERSION = 4  # 4: a link speed past a double's range (a run of hundreds of digits) is no speed_gbps (was inf), the link active; 3: an nvlink -e counter of any run of digits past int64 leaves its line unparsed (int() refused over 4,300 digits: the file was lost); 2: lines that only mark an elision ("...", "[...]") are skipped and counted (sources.parse_pasted), no longer unparsed
TABLES = ("nvlink_links", "nvlink_errors")
DESCRIPTION = "nvidia-smi nvlink -s (link state and speed) and -e (replay, recovery, CRC error counters) per GPU link"
SNIFF_PRIORITY = 25  # before nvidia_smi, whose nvlink -gt reader would take the GPU lines

INT64_MAX = (1 << 63) - 1
_TS = pl.Datetime("us", "UTC")
_GPU = re.compile(r"^\s*GPU ([0-9]{1,4}): (.*?) \(UUID: ([^()\s]+)\)\s*$")
_STATUS = re.compile(r"^\s+Link ([0-9]{1,3}): (?:([0-9]+(?:\.[0-9]+)?) GB/s|(<[^>]*>))\s*$")
_ERROR = re.compile(r"^\s+Link ([0-9]{1,3}): ([A-Za-z][A-Za-z0-9 /-]*?): ([0-9]+)\s*$")
_TRAFFIC = re.compile(r"^\s+Link [0-9]{1,3}: (?:Data|Raw) (?:Tx|Rx):|^\s+Link [0-9]{1,3}: (?:Rx|Tx)[0-9]:")
_PROMPT = re.compile(r"(?:^|[\s$#>/])nvidia-smi\s+nvlink\b")


def sniff(head: bytes) -> Sniff:
    lines = sniff_lines(head)
    if not lines:
        return Sniff(0.0, "no lines")
    gpus = sum(1 for ln in lines if _GPU.match(ln))
    links = sum(1 for ln in lines if _STATUS.match(ln) or (_ERROR.match(ln) and not _TRAFFIC.match(ln)))
    if not gpus or not links or any(_TRAFFIC.match(ln) for ln in lines):
        return Sniff(0.0, "no 'GPU n: ... (UUID: ...)' line followed by nvlink -s/-e link lines")
    return Sniff.ratio(gpus + links, len(lines), "are nvlink -s/-e GPU and link lines", floor=0, bonus=0.1)


def _snake(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _counter_lines(df: pl.DataFrame) -> pl.DataFrame:
    """The ``Link N: <name>: <integer>`` lines of `df` (after the first marker, when there are
    markers) split in polars, with the columns `fast` (the line is such a counter line, parsed
    below without the per-line loop; a value of 19 digits or more, which may exceed 2^63-1, is
    left to the loop), `link`, `raw_name` and `v`."""
    err = pl.col("text").str.extract_groups(_ERROR.pattern).struct.rename_fields(["e_link", "raw_name", "e_val"])
    df = df.with_columns(err.alias("e")).unnest("e")
    fast = (pl.col("e_link").is_not_null() & ~pl.col("is_marker") & (pl.col("sample_no") >= 0)
            & (pl.col("e_val").str.len_bytes() <= 18) & ~pl.col("text").str.contains(_TRAFFIC.pattern))
    return df.with_columns(fast.alias("fast"))


def _fast_errors(df: pl.DataFrame, context: list[tuple]) -> pl.DataFrame:
    """nvlink_errors rows of the fast counter lines: each takes the snapshot and GPU of the last
    marker or GPU line before it (`context`: (line_no, sample_no, ts, gpu, gpu_name, gpu_uuid), gpu
    None after a marker); the ones with no GPU yet come back with a null gpu."""
    ctx_df = pl.DataFrame(context, schema={"line_no": pl.Int64, "sample_no_c": pl.Int64, "ts": _TS, "gpu": pl.Int32,
                                           "gpu_name": pl.String, "gpu_uuid": pl.String}, orient="row")
    rows = df.filter(pl.col("fast")).select("line_no", "text", "e_link", "raw_name", "e_val")
    rows = rows.join_asof(ctx_df, on="line_no", strategy="backward")
    return rows.select(
        "line_no", "text", pl.col("sample_no_c").alias("sample_no"), "ts", "gpu", "gpu_name", "gpu_uuid",
        pl.col("e_link").cast(pl.Int32).alias("link"),
        pl.col("raw_name").str.to_lowercase().str.replace_all("[^a-z0-9]+", "_").str.strip_chars("_").alias("counter"),
        "raw_name", pl.col("e_val").cast(pl.Int64).alias("value"))


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    df = split_lines(data)
    n = df.height
    links: list[dict] = []
    errors: list[dict] = []
    bad: list[tuple[int, str, str]] = []
    cap = ctx.capture_time
    if cap is not None and cap.tzinfo is None:
        cap = cap.replace(tzinfo=dt.timezone.utc)
    kinds: set[str] = set()
    fast = None
    if n:
        df = _counter_lines(marker_split(df))
        has_markers = bool(df["is_marker"].any())
        gpu = None
        sample, last_marker_sample = 0, None
        seen: set[int] = set()
        ts = None if has_markers else cap
        context: list[tuple] = [(0, sample, ts, None, None, None)]  # (what the fast lines take, see _fast_errors)
        for line_no, text, is_marker, marker_sample, marker_ts in drop_before_first_marker(df.filter(~pl.col("fast")), bad).select(
                "line_no", "text", "is_marker", "sample_no", "sample_ts").iter_rows():
            if is_marker:
                if last_marker_sample is not None:
                    sample += 1
                last_marker_sample, ts, gpu, seen = marker_sample, marker_ts, None, set()
                context.append((line_no, sample, ts, None, None, None))
                continue
            if not text.strip():
                continue
            m = _GPU.match(text)
            if m:
                idx = int(m.group(1))
                if idx in seen and not has_markers:  # a pasted second output
                    sample, ts, seen = sample + 1, None, set()
                seen.add(idx)
                gpu = {"gpu": idx, "gpu_name": m.group(2), "gpu_uuid": m.group(3)}
                context.append((line_no, sample, ts, idx, m.group(2), m.group(3)))
                continue
            stamp = {"line_no": line_no, "sample_no": sample, "ts": ts}
            m = _STATUS.match(text)
            if m and gpu is not None:
                kinds.add("status")
                speed = float_or_none(m.group(2))  # (past a double's range: no speed, not inf; the link still active)
                links.append({**stamp, **gpu, "link": int(m.group(1)), "active": m.group(2) is not None, "speed_gbps": speed,
                              "status": text.split(":", 1)[1].strip()})
                continue
            m = _ERROR.match(text)
            if m and gpu is not None and not _TRAFFIC.match(text):
                kinds.add("errors")
                value = int_or_none(m.group(3), 0, INT64_MAX)  # (any run of digits: int() refuses over 4,300)
                if value is None:
                    bad.append((line_no, text, "counter value above 2^63-1"))
                    continue
                errors.append({**stamp, **gpu, "link": int(m.group(1)), "counter": _snake(m.group(2)),
                               "raw_name": m.group(2), "value": value})
                continue
            if (m := _STATUS.match(text) or _ERROR.match(text)) and gpu is None:
                bad.append((line_no, text, "link line before any GPU line"))
            elif _TRAFFIC.match(text):
                bad.append((line_no, text, "nvlink -gt traffic counter (read by the nvidia_smi source)"))
            elif _PROMPT.search(text):
                bad.append((line_no, text, "shell prompt or command line, not nvidia-smi nvlink output"))
            else:
                bad.append((line_no, text, "not nvidia-smi nvlink -s/-e output"))
        fast = _fast_errors(df, context)
        orphans = fast.filter(pl.col("gpu").is_null())
        if orphans.height:
            bad.extend((ln, text, "link line before any GPU line") for ln, text in orphans.select("line_no", "text").iter_rows())
            bad.sort(key=lambda b: b[0])
            fast = fast.filter(pl.col("gpu").is_not_null())
        if fast.height:
            kinds.add("errors")
    base = {"line_no": pl.Int64, "sample_no": pl.Int64, "ts": _TS, "gpu": pl.Int32, "gpu_name": pl.String,
            "gpu_uuid": pl.String, "link": pl.Int32}
    lt = pl.DataFrame(links, schema={**base, "active": pl.Boolean, "speed_gbps": pl.Float64, "status": pl.String},
                      orient="row")
    et = pl.DataFrame(errors, schema={**base, "counter": pl.String, "raw_name": pl.String, "value": pl.Int64}, orient="row")
    if fast is not None and fast.height:
        et = pl.concat([et, fast.select(et.columns)]).sort("line_no") if et.height else fast.select(et.columns)
    quality = pl.when(pl.col("ts").is_not_null()).then(pl.lit("sampled")).otherwise(pl.lit("none")).alias("ts_quality")
    tables = {"nvlink_links": lt.with_columns(quality), "nvlink_errors": et.with_columns(quality)}
    variant = "+".join(k for k in ("status", "errors") if k in kinds) or ("empty" if not n else "unrecognised")
    return result(NAME, ctx, n, tables, [unparsed_rows(bad, ctx, NAME)] if bad else [], variant=variant)
