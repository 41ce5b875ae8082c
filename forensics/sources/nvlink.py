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

from forensics.layout import MARKER_PREFIX
from forensics.sources._base import ParseContext, ParseResult, Sniff, head_text, marker_split, result, split_lines, unparsed_rows

NAME = "nvlink"
VERSION = 1
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
    text = head_text(head)
    lines = [ln for ln in text.splitlines()[:400] if ln.strip() and not ln.startswith(MARKER_PREFIX)]
    if not lines:
        return Sniff(0.0, "no lines")
    gpus = sum(1 for ln in lines if _GPU.match(ln))
    links = sum(1 for ln in lines if _STATUS.match(ln) or (_ERROR.match(ln) and not _TRAFFIC.match(ln)))
    if not gpus or not links or any(_TRAFFIC.match(ln) for ln in lines):
        return Sniff(0.0, "no 'GPU n: ... (UUID: ...)' line followed by nvlink -s/-e link lines")
    return Sniff(round(min(1.0, (gpus + links) / len(lines) + 0.1), 3),
                 f"{gpus + links} of {len(lines)} lines are nvlink -s/-e GPU and link lines")


def _snake(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


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
    if n:
        df = marker_split(df)
        has_markers = bool(df["is_marker"].any())
        gpu = None
        sample, last_marker_sample = 0, None
        seen: set[int] = set()
        ts = None if has_markers else cap
        for line_no, text, is_marker, marker_sample, marker_ts in df.select(
                "line_no", "text", "is_marker", "sample_no", "sample_ts").iter_rows():
            if is_marker:
                if last_marker_sample is not None:
                    sample += 1
                last_marker_sample, ts, gpu, seen = marker_sample, marker_ts, None, set()
                continue
            if marker_sample < 0:
                if text.strip():
                    bad.append((line_no, text, "line before the first forensics-sample marker"))
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
                continue
            stamp = {"line_no": line_no, "sample_no": sample, "ts": ts}
            m = _STATUS.match(text)
            if m and gpu is not None:
                kinds.add("status")
                speed = float(m.group(2)) if m.group(2) else None
                links.append({**stamp, **gpu, "link": int(m.group(1)), "active": speed is not None, "speed_gbps": speed,
                              "status": text.split(":", 1)[1].strip()})
                continue
            m = _ERROR.match(text)
            if m and gpu is not None and not _TRAFFIC.match(text):
                kinds.add("errors")
                value = int(m.group(3))
                if value > INT64_MAX:
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
    base = {"line_no": pl.Int64, "sample_no": pl.Int64, "ts": _TS, "gpu": pl.Int32, "gpu_name": pl.String,
            "gpu_uuid": pl.String, "link": pl.Int32}
    lt = pl.DataFrame(links, schema={**base, "active": pl.Boolean, "speed_gbps": pl.Float64, "status": pl.String},
                      orient="row")
    et = pl.DataFrame(errors, schema={**base, "counter": pl.String, "raw_name": pl.String, "value": pl.Int64}, orient="row")
    quality = pl.when(pl.col("ts").is_not_null()).then(pl.lit("sampled")).otherwise(pl.lit("none")).alias("ts_quality")
    tables = {"nvlink_links": lt.with_columns(quality), "nvlink_errors": et.with_columns(quality)}
    variant = "+".join(k for k in ("status", "errors") if k in kinds) or ("empty" if not n else "unrecognised")
    return result(NAME, ctx, n, tables, [unparsed_rows(bad, ctx, NAME)] if bad else [], variant=variant)
