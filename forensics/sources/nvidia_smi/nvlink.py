"""`nvidia-smi nvlink -gt d|r` (and the deprecated `-g 0|1`): NVLink traffic counters per GPU link.

Layout, as printed by the drivers seen (V100 DGX-2, A100 PCIe, H800 with 525.105.17)::

    GPU 0: NVIDIA H800 (UUID: GPU-34bf77d1-c686-6821-79a8-32d326c5039c)
    \\t Link 0: Data Tx: 5863784 KiB
    \\t Link 0: Data Rx: 5863677 KiB

(a tab and a space before "Link"; copies pasted from a terminal have spaces). ``-gt d`` prints
"Data Tx/Rx" (payload), ``-gt r`` "Raw Tx/Rx" (payload and protocol overhead), both in KiB; the
deprecated ``-g 0`` of older drivers prints both directions on one line,
"Link 0: Rx0: 0 KBytes, Tx0: 0 KBytes" (what counter 0/1 counts is set with ``-sc``). The values are
running totals: throughput is the difference of two samples over their time difference.

Samples: each collector marker line (``#### forensics-sample ts=...``) starts one (``ts`` = the
marker's time, ``sampled``); without markers, a GPU line whose index already appeared in the current
sample starts the next one (outputs pasted one after the other). Sample 0 of an input without
markers gets ``ctx.capture_time`` (``sampled``); the time of later unmarked samples is unknown
(null, ``none``). The GPU line, blank lines and markers are structure; link speed lines of
``nvlink --status``, prompts, prose and "..." elisions go to unparsed with a reason.
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

from forensics.layout import MARKER_PREFIX, parse_marker
from forensics.sources.nvidia_smi.common import Parts

# the GPU line and the -gt counter line, for the line reader (re) and the series reader (polars) alike
_GPU_RE = r"^GPU (?P<gpu_s>[0-9]{1,4}): (?P<name>.*?) \(UUID: (?P<uuid>[^()\s]+)\)\s*$"
_GT_RE = (r"^\s+Link (?P<link_s>[0-9]{1,3}): (?P<kind>Data|Raw) (?P<dir>Tx|Rx): (?P<value_s>[0-9]{1,30}) "
          r"(?P<unit>[A-Za-z]{1,12})\s*$")
GPU_LINE = re.compile(_GPU_RE)
_GT = re.compile(_GT_RE)
_G = re.compile(r"^\s+Link ([0-9]{1,3}): (Rx|Tx)([0-9]): ([0-9]{1,30}) ([A-Za-z]{1,12}), "
                r"(Rx|Tx)([0-9]): ([0-9]{1,30}) ([A-Za-z]{1,12})\s*$")
_LINK_ANY = re.compile(r"^\s+Link [0-9]{1,3}[:,]")
_STATUS = re.compile(r"^\s+Link [0-9]{1,3}: (?:[0-9.]+ [KMGT]?B/s|<inactive>|<.*>)\s*$")
_INT64_MAX = (1 << 63) - 1


def is_counter_line(line: str) -> bool:
    return bool(_GT.match(line) or _G.match(line))


def starts_here(texts: list[str], i: int, strict: bool) -> bool:
    """True when texts[i] is a `GPU n: name (UUID: ...)` line followed by a link line (a counter line when strict)."""
    if not GPU_LINE.match(texts[i]):
        return False
    nxt = [x for x in texts[i + 1:i + 4] if x.strip() and not x.startswith(MARKER_PREFIX)][:1]
    if not nxt:
        return False
    return is_counter_line(nxt[0]) if strict else bool(_LINK_ANY.match(nxt[0]))


def parse(texts: list[str], ctx) -> Parts:
    out = Parts()
    up = out.unparsed
    rows: list[dict[str, Any]] = []
    capture = ctx.capture_time
    if capture is not None and capture.tzinfo is None:
        capture = capture.replace(tzinfo=dt.timezone.utc)
    has_markers = any(t.startswith(MARKER_PREFIX) for t in texts)
    sample = 0
    used = False  # the current sample has a GPU line or a marker already
    ts = None if has_markers else capture
    seen: set[int] = set()
    gpu: dict[str, Any] | None = None
    kinds: set[str] = set()

    def add(ln: int, link: str, counter: str, direction: str, raw_name: str, value: str, unit: str) -> bool:
        v = int(value)
        if v > _INT64_MAX:
            return False
        rows.append({"line_no": ln, "sample_no": sample, "ts": ts, "ts_quality": "sampled" if ts else "none",
                     "gpu": gpu["gpu"], "gpu_name": gpu["name"], "gpu_uuid": gpu["uuid"], "link": int(link),
                     "counter": counter, "direction": direction, "raw_name": raw_name, "value": v, "unit": unit})
        return True

    for ln, raw in enumerate(texts, start=1):
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        if line.startswith(MARKER_PREFIX):
            m = parse_marker(line)
            if m is None:
                up.append((ln, raw, "malformed forensics-sample marker line"))
                continue
            if used:
                sample += 1
            used, ts, seen, gpu = True, m[0], set(), None
            continue
        m = GPU_LINE.match(line)
        if m:
            idx = int(m.group(1))
            if idx in seen:  # the same GPU again: the next output of the command
                sample += 1
                ts, seen = None, set()
            seen.add(idx)
            used = True
            gpu = {"gpu": idx, "name": m.group(2).strip() or None, "uuid": m.group(3)}
            continue
        m = _GT.match(line)
        if m and gpu is not None:
            link, kind, d, value, unit = m.groups()
            if add(ln, link, kind.lower(), d.lower(), f"{kind} {d}", value, unit):
                kinds.add("gt-" + kind[0].lower())
            else:
                up.append((ln, raw, "counter value beyond the int64 range"))
            continue
        m = _G.match(line)
        if m and gpu is not None:
            link, d1, c1, v1, u1, d2, c2, v2, u2 = m.groups()
            if max(int(v1), int(v2)) > _INT64_MAX:
                up.append((ln, raw, "counter value beyond the int64 range"))
                continue
            add(ln, link, "counter" + c1, d1.lower(), d1 + c1, v1, u1)
            add(ln, link, "counter" + c2, d2.lower(), d2 + c2, v2, u2)
            kinds.add("g")
            continue
        if m or _GT.match(line):
            up.append((ln, raw, "NVLink counter line before any 'GPU n: ... (UUID: ...)' line"))
        elif _STATUS.match(line):
            up.append((ln, raw, "link speed/state line (nvidia-smi nvlink --status), not a traffic counter"))
        elif "nvidia-smi" in line:
            up.append((ln, raw, "command line or prompt, not nvidia-smi output"))
        elif line.strip() == "..." or line.strip() == "…":
            up.append((ln, raw, "elision ('...') in the source, not nvidia-smi output"))
        elif gpu is None:
            up.append((ln, raw, "not part of nvidia-smi nvlink output"))
        else:
            up.append((ln, raw, "unrecognised line in nvidia-smi nvlink output"))
    out.samples = rows
    out.meta = {"variant": "nvlink-" + "+".join(sorted(kinds)) if kinds else "nvlink",
                "samples": sample + 1 if rows else 0}
    return out


def parse_series(text: "pl.Series"):
    """The collector's marker series of ``-gt d|r`` outputs, vectorised: (rows frame, meta), or None
    when the input is anything else (no leading marker, other line kinds, a GPU twice in one sample,
    a counter before its GPU line, a value beyond int64), which :func:`parse` then reads line by line.
    Same rows as :func:`parse` (a test compares them)."""
    import polars as pl

    n = text.len()
    if n == 0:
        return None
    df = pl.DataFrame({"t": text}).with_row_index("i")
    df = df.with_columns(
        pl.col("t").str.starts_with(MARKER_PREFIX).alias("marker"),
        pl.col("t").str.contains(r"^[ \t]*$").alias("blank"),
        pl.col("t").str.extract_groups(_GPU_RE).alias("g"),
        pl.col("t").str.extract_groups(_GT_RE).alias("k"),
    ).unnest("g", "k")
    df = df.with_columns(pl.col("gpu_s").is_not_null().alias("is_gpu"), pl.col("link_s").is_not_null().alias("is_link"))
    ok = df.select((pl.col("marker") | pl.col("blank") | pl.col("is_gpu") | pl.col("is_link")).all()).item()
    first = df.filter(~pl.col("blank")).head(1)
    if not ok or first.height == 0 or not first["marker"][0] or not df["is_link"].any():
        return None
    df = df.with_columns((pl.col("marker").cum_sum() - 1).alias("sample_no"))
    gpus = df.filter(pl.col("is_gpu"))
    if gpus.select(pl.struct("sample_no", "gpu_s").is_duplicated().any()).item():
        return None  # the same GPU twice in one sample: outputs pasted together, read line by line
    markers = [parse_marker(t) for t in df.filter(pl.col("marker"))["t"].to_list()]
    if any(m is None for m in markers):
        return None
    ts_of = pl.DataFrame({"sample_no": list(range(len(markers))), "ts": [m[0] for m in markers]},
                         schema={"sample_no": pl.Int64, "ts": pl.Datetime("us", "UTC")})
    df = df.with_columns(  # the GPU a counter line belongs to: the last GPU line of its sample
        pl.when(pl.col("is_gpu")).then(pl.col("i")).when(pl.col("marker")).then(-1).otherwise(None)
        .forward_fill().alias("gpu_row"))
    links = df.filter(pl.col("is_link"))
    if links.select((pl.col("gpu_row").is_null() | (pl.col("gpu_row") < 0)).any()).item():
        return None
    links = links.with_columns(pl.col("value_s").cast(pl.Int64, strict=False).alias("value"))
    if links["value"].null_count():
        return None
    g = gpus.select(pl.col("i").alias("gpu_row"), pl.col("gpu_s").cast(pl.Int64).alias("gpu"),
                    pl.col("name").str.strip_chars().replace("", None).alias("gpu_name"), pl.col("uuid").alias("gpu_uuid"))
    out = (links.join(g, on="gpu_row", how="left").with_columns(pl.col("sample_no").cast(pl.Int64))
           .join(ts_of, on="sample_no", how="left")
           .select((pl.col("i") + 1).cast(pl.Int64).alias("line_no"), "sample_no", "ts",
                   pl.lit("sampled").alias("ts_quality"), "gpu", "gpu_name", "gpu_uuid",
                   pl.col("link_s").cast(pl.Int64).alias("link"), pl.col("kind").str.to_lowercase().alias("counter"),
                   pl.col("dir").str.to_lowercase().alias("direction"),
                   (pl.col("kind") + " " + pl.col("dir")).alias("raw_name"), "value", "unit")
           .sort("line_no"))
    kinds = sorted({"gt-" + k[0].lower() for k in links["kind"].unique().to_list()})
    return out, {"variant": "nvlink-" + "+".join(kinds), "samples": int(out["sample_no"].max()) + 1}
