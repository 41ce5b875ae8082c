"""Raw files -> parsed tables, with provenance and coverage.

Sources whose lines are independent (``CHUNKABLE = True`` in the module) are parsed in chunks of
about CHUNK_BYTES (or the module's own ``CHUNK_BYTES``) split at line boundaries, a few chunks at a
time on worker threads (polars releases the GIL), and their tables streamed to Parquet in chunk
order, so memory stays bounded for multi-GB logs.
"""
from __future__ import annotations

import io
import os
import sys
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Iterator

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from forensics import schema
from forensics.sources import SNIFF_BYTES, ParseContext, ParseResult, get, recognise, sniff_as

CHUNK_BYTES = 64 << 20
MAX_WORKERS = 4


def _workers() -> int:
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


def _open(src: Path | bytes):
    return io.BytesIO(src) if isinstance(src, (bytes, bytearray)) else open(src, "rb")


def iter_chunks(path: Path | bytes, chunk_bytes: int = CHUNK_BYTES, no_start: tuple[bytes, ...] = ()) -> Iterator[tuple[int, bytes]]:
    """(first line number - 1, bytes) chunks of a file (or of bytes in memory), each ending at a
    newline (or EOF).

    No chunk but the first starts with a line whose first byte is in `no_start` (a source's
    ``CHUNK_NO_START``: continuation lines, which belong with the line before them)."""
    line_offset = 0
    rest = b""
    with _open(path) as fh:
        while True:
            block = fh.read(chunk_bytes)
            if not block:
                break
            buf = rest + block
            cut = buf.rfind(b"\n")
            # (a cut at the very end leaves the next line's first byte unknown: that line waits too)
            while no_start and cut >= 0 and buf[cut + 1:cut + 2] in no_start + (b"",):
                cut = buf.rfind(b"\n", 0, cut)
            if cut < 0:
                rest = buf
                continue
            chunk, rest = buf[: cut + 1], buf[cut + 1 :]
            yield line_offset, chunk
            line_offset += chunk.count(b"\n")
    if rest:
        yield line_offset, rest


def _shift(df: pl.DataFrame, offset: int) -> pl.DataFrame:
    if offset and "line_no" in df.columns:
        return df.with_columns(pl.col("line_no") + offset)
    return df


def parse_path(path: Path | bytes, source: str | None, ctx: ParseContext, sink=None) -> tuple[str, ParseResult]:
    """Parse one file (or its bytes). With `sink(table, frame)` given, chunkable sources stream their
    frames to it and the returned result holds empty tables (only counts and unparsed)."""
    data = path if isinstance(path, (bytes, bytearray)) else None
    if data is not None:
        head = bytes(data[:SNIFF_BYTES])
    else:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    name, verdict = (source, None) if source else recognise(head)
    if name is None:
        raise ValueError(f"{verdict.reason}; use --source NAME")
    mod = get(name)
    size = len(data) if data is not None else path.stat().st_size
    chunk_bytes = getattr(mod, "CHUNK_BYTES", CHUNK_BYTES)
    if sink is None or not getattr(mod, "CHUNKABLE", False) or size <= chunk_bytes:
        res = mod.parse(data if data is not None else path.read_bytes(), ctx)
        if sink is not None:
            for t, df in res.tables.items():
                sink(t, df)
            res = ParseResult({t: df.clear() for t, df in res.tables.items()}, res.unparsed, res.lines, res.meta)
        return name, res
    lines = 0
    unparsed = []
    rows: dict[str, int] = {}
    meta: dict = {}

    def consume(offset: int, res: ParseResult) -> None:
        nonlocal lines
        lines += res.lines
        for t, df in res.tables.items():
            rows[t] = rows.get(t, 0) + df.height
            sink(t, _shift(df, offset))
        if res.unparsed.height:
            # a copy: string views would otherwise keep the whole chunk's text buffer alive until the end
            unparsed.append(pl.from_arrow(_shift(res.unparsed, offset).to_arrow()))
        for k, v in res.meta.items():
            if isinstance(v, list) and isinstance(meta.get(k), list):  # e.g. hosts: union over chunks
                meta[k] = meta[k] + [x for x in v if x not in meta[k]]
            else:
                meta.setdefault(k, v)

    workers = _workers()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: deque = deque()
        for offset, chunk in iter_chunks(path, chunk_bytes, getattr(mod, "CHUNK_NO_START", ())):
            pending.append((offset, pool.submit(mod.parse, chunk, ctx)))
            del chunk
            if len(pending) >= workers:  # at most `workers` chunks in flight: bounded memory
                off, fut = pending.popleft()
                consume(off, fut.result())
        while pending:
            off, fut = pending.popleft()
            consume(off, fut.result())
    meta["streamed_rows"] = rows
    up = pl.concat(unparsed) if unparsed else schema.empty("unparsed")
    return name, ParseResult({t: schema.empty(t) for t in rows}, up, lines, meta)


FREE_TEXT = ("message", "text")


def column_options(arrow) -> dict:
    """ParquetWriter options for a table: dictionaries only for string columns (on numbers the writer
    tries and falls back: slower, bigger files), and neither dictionaries nor statistics for free
    text (message, text). Shared by `forensics parse --out` and the bundle ingest."""
    stats = [c for c in arrow.names if c not in FREE_TEXT]
    words = [f.name for f in arrow if f.name in stats and str(f.type) in ("string", "string_view")]
    return {"use_dictionary": words, "write_statistics": stats}


@lru_cache(maxsize=None)
def _native_schema(table: str) -> pa.Schema:
    """The Arrow schema polars hands `table`'s frames over in (string views: no copy)."""
    return schema.empty(table).to_arrow(compat_level=pl.CompatLevel.newest()).schema


def table_writer(path: Path, table: str) -> pq.ParquetWriter:
    """A ParquetWriter for frames of `table` (see :func:`arrow_rows`): zstd, the options of
    :func:`column_options`, and no Arrow schema stored, so readers see the Parquet types, which
    are those of schemas/<table>.json. Used by `forensics parse --out` and the bundle ingest."""
    arrow = _native_schema(table)
    return pq.ParquetWriter(path, arrow, compression="zstd", store_schema=False, **column_options(arrow))


def arrow_rows(df: pl.DataFrame, table: str) -> pa.Table:
    """`df` (conformed to `table` if it is not already) as Arrow, without copying (string views)."""
    if list(df.schema.items()) != list(schema.polars_schema(table).items()):
        df = schema.conform(df, table)
    return df.to_arrow(compat_level=pl.CompatLevel.newest())


class ParquetSink:
    """Collects frames per table into DIR/<table>.parquet, streaming with a ParquetWriter.

    Frames are handed to Arrow without copying (string views); the file stores no Arrow schema, so
    readers see the Parquet types, which are those of schemas/<table>.json. Free-text columns
    (message, text) are written without dictionary encoding or statistics; only the other string
    columns use dictionaries (numbers compress better without).
    """

    def __init__(self, out_dir: Path):
        self.out_dir = out_dir
        self.writers: dict[str, pq.ParquetWriter] = {}
        self.rows: dict[str, int] = {}

    def __call__(self, table: str, df: pl.DataFrame) -> None:
        w = self.writers.get(table)
        if w is None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            w = self.writers[table] = table_writer(self.out_dir / f"{table}.parquet", table)
        if df.height:
            w.write_table(arrow_rows(df, table))
        self.rows[table] = self.rows.get(table, 0) + df.height

    def close(self) -> None:
        for w in self.writers.values():
            w.close()


def parse_file_to(path: Path, source: str | None = None, host: str | None = None, tz: str | None = None,
                  out_dir: Path | None = None, fmt: str = "table", year: int | None = None,
                  hints: dict | None = None) -> dict:
    """`forensics parse` for one file: parse, print or write tables, return the coverage summary
    (with the sniffer's confidence and reason; with `source` given and its sniffer rejecting the
    file, a `warning` saying so: the file is parsed as told)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError("not a readable file")
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
    found, verdict = (source, sniff_as(source, head)) if source else recognise(head, hints)
    source = source or found
    ctx = ParseContext(host=host, file=str(path), tz=tz, year=year, hints=dict(hints or {}))
    if out_dir is not None:
        sink = ParquetSink(out_dir)
        try:
            name, res = parse_path(path, source, ctx, sink=sink)
            sink("unparsed", res.unparsed)
        finally:
            sink.close()
        rows = {t: n for t, n in sink.rows.items() if t != "unparsed"}
    else:
        name, res = parse_path(path, source, ctx)
        rows = res.rows()
        from forensics.cli._common import OutFormat, emit_frame

        if fmt != "json":
            for t, df in res.tables.items():
                if fmt == "csv":
                    sys.stdout.write(f"# table {t}\n")
                emit_frame(df, OutFormat(fmt), title=t)
    summary = {"file": str(path), "source": name, "lines": res.lines, "unparsed": res.unparsed.height, "rows": rows,
               "confidence": verdict.confidence, "recognition": verdict.reason}
    if source and not verdict:
        summary["warning"] = (f"does not look like {source} output (confidence {verdict.confidence:.2f}: "
                              f"{verdict.reason}); parsed as {source} as told")
    return summary
