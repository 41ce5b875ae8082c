"""``nvidia-smi --query-compute-apps=... --format=csv[,noheader][,nounits]`` -> ``processes``.

The fields ``nvidia-smi --help-query-compute-apps`` lists: ``timestamp``, ``gpu_name``, ``gpu_bus_id``,
``gpu_serial``, ``gpu_uuid``, ``pid``, ``process_name`` (alias ``name``), ``used_gpu_memory`` (alias
``used_memory``; printed ``6010 MiB``, ``6010`` with ``nounits``, ``[N/A]`` where the driver cannot
say, e.g. under MIG or WDDM). The header names them as printed (``pid, process_name,
used_gpu_memory [MiB]``); such a block often follows a ``--query-gpu`` block in the same paste. One
``processes`` row per line: ``pid``, ``command`` (the process name), ``gpu_uuids`` (its GPU's UUID,
when queried) and ``gpu_mem_used_mib``. A row with another number of fields, or a pid or memory
value that does not convert, goes to ``unparsed`` naming it. (Rows without a header are not guessed:
their shape is that of --query-gpu rows.)
"""
from __future__ import annotations

import re

import polars as pl

from forensics.sources._bounded import to_float
from forensics.sources.nvidia_smi.common import NA_TOKENS

_ALIASES = {"name": "process_name", "used_memory": "used_gpu_memory"}
FIELDS = ("timestamp", "gpu_name", "gpu_bus_id", "gpu_serial", "gpu_uuid", "pid", "process_name", "used_gpu_memory")
_FIELD = r"[A-Za-z_][A-Za-z0-9_.]*(?: \[[^\],]*\])?"
_HEADER = re.compile(rf"^\s*{_FIELD}(?:\s*,\s*{_FIELD})*\s*$")


def header_fields(line: str) -> list[str] | None:
    """The fields of a --query-compute-apps header line (it names the pid and only fields of that
    query), or None."""
    if not _HEADER.match(line):
        return None
    fields = [re.sub(r"\s*\[[^\]]*\]$", "", f.strip().lower()) for f in line.split(",")]
    fields = [_ALIASES.get(f, f) for f in fields]
    if "pid" not in fields or len(fields) < 2 or not set(fields) <= set(FIELDS) or len(set(fields)) < len(fields):
        return None
    return fields


def parse(part: pl.DataFrame, fields: tuple[str, ...]) -> tuple[pl.DataFrame, list[tuple[pl.DataFrame, object]]]:
    """Rows of one header's block (`part`: line_no, text, _s) -> (processes rows, [(unparsed lines, reason)])."""
    n = len(fields)
    unparsed: list[tuple[pl.DataFrame, object]] = []
    part = part.with_columns(pl.col("_s").str.count_matches(",", literal=True).alias("_n"))
    wrong = part.filter(pl.col("_n") != n - 1)
    if wrong.height:
        unparsed.append((wrong, pl.format("{} fields where the --query-compute-apps header has " + str(n),
                                          pl.col("_n") + 1)))
        part = part.filter(pl.col("_n") == n - 1)
    cells = part.select(pl.col("_s").str.split_exact(",", max(n - 1, 0)).struct.unnest())
    raw = {f: cells.get_column(f"field_{i}").str.strip_chars() for i, f in enumerate(fields)}
    df = part.select("line_no").with_columns([s.alias(f"_{f}") for f, s in raw.items()])
    na = list(NA_TOKENS)
    pid = pl.col("_pid").cast(pl.Int64, strict=False)
    cols = [pid.alias("pid"),
            (pl.when(pl.col("_process_name").is_in(na)).then(None).otherwise(pl.col("_process_name"))
             if "process_name" in fields else pl.lit(None, dtype=pl.String)).alias("command")]
    bad = [pl.when(pid.is_null()).then(pl.format("pid: unexpected value {}", pl.col("_pid").str.slice(0, 60)))]
    if "used_gpu_memory" in fields:
        m = pl.col("_used_gpu_memory")
        mem = to_float(m.str.extract(r"^([0-9]+(?:\.[0-9]+)?)(?: ?MiB)?$", 1))  # (past a double: null, not inf)
        cols.append(mem.alias("gpu_mem_used_mib"))
        bad.append(pl.when(mem.is_null() & ~m.is_in(na))
                   .then(pl.format("used_gpu_memory: unexpected value {}", m.str.slice(0, 60))))
    if "gpu_uuid" in fields:
        u = pl.col("_gpu_uuid")
        cols.append(pl.when(u.str.starts_with("GPU-") | u.str.starts_with("MIG-")).then(pl.concat_list([u]))
                    .alias("gpu_uuids"))
    df = df.with_columns(pl.coalesce(bad).alias("_why"))
    rejected = df.filter(pl.col("_why").is_not_null())
    if rejected.height:
        unparsed.append((part.join(rejected.select("line_no", "_why"), on="line_no"), pl.col("_why")))
    rows = df.filter(pl.col("_why").is_null()).select("line_no", *cols)
    return rows, unparsed
