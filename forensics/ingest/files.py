"""Raw files -> parsed tables: one file (or its bytes) through its source's parser.

Sources whose lines are independent (``CHUNKABLE = True`` in the module) are parsed in chunks of
about CHUNK_BYTES (or the module's own ``CHUNK_BYTES``) split at line boundaries, a few chunks at a
time on worker threads (polars releases the GIL), and their tables streamed to a sink in chunk
order, so memory stays bounded for multi-GB logs.
"""
from __future__ import annotations

import datetime as dt
import io
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import polars as pl

from forensics import schema
from forensics.ingest.sink import ParquetSink
from forensics.sources import SNIFF_BYTES, ParseContext, ParseResult, get, parse_pasted, paste_plan, recognise, sniff_pasted
from forensics.limits import MAX_LINE_BYTES
from forensics.sources._base import Truncation, cap_lines, read_capped
from forensics.sources._mail_qp import looks_encoded
from forensics.sources._quote import strip_prefix

CHUNK_BYTES = 64 << 20
MAX_WORKERS = 4


def _workers() -> int:
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


def _open(src: Path | bytes):
    return io.BytesIO(src) if isinstance(src, (bytes, bytearray)) else open(src, "rb")


def iter_chunks(path: Path | bytes, chunk_bytes: int = CHUNK_BYTES, no_start: tuple[bytes, ...] = (),
                stats: Truncation | None = None, soft_breaks: bool = False) -> Iterator[tuple[int, bytes]]:
    """(first line number - 1, bytes) chunks of a file (or of bytes in memory), each ending at a
    newline (or EOF), lines longer than MAX_LINE_BYTES cut (counted in `stats`).

    No chunk but the first starts with a line whose first byte is in `no_start` (a source's
    ``CHUNK_NO_START``: continuation lines, which belong with the line before them). With `soft_breaks`
    (a quoted-printable mail body), no chunk ends with a line that ends in "=": its soft break joins the
    next line to it (RFC 2045), so both are read in one chunk; looked back for at most MAX_LINE_BYTES (a
    longer run of soft breaks is one line longer than any parser reads whole).

    The cut is looked for across the bytes held back and the block just read without joining them
    first, so each byte is copied once into its chunk (not into a joined buffer and again into the chunk)."""
    line_offset = 0
    rest = b""
    with _open(path) as fh:
        for block in read_capped(fh, stats=stats, block=chunk_bytes):
            cut = _last_cut(rest, block, no_start, soft_breaks)
            if cut < 0:
                rest += block
                continue
            k = cut + 1 - len(rest)  # bytes of `block` that end the chunk (<= 0: the cut is in `rest`)
            if k <= 0:
                chunk, rest = rest[:cut + 1], rest[cut + 1:] + block
            elif rest:
                chunk, rest = b"".join((rest, memoryview(block)[:k])), block[k:]
            else:
                chunk, rest = (block, b"") if k == len(block) else (block[:k], block[k:])
            del block  # (held by nothing here while the next block is read: at most a block and a chunk alive)
            first, line_offset = line_offset, line_offset + chunk.count(b"\n")
            yield first, chunk
            del chunk
    if rest:
        yield line_offset, rest


def _last_cut(rest: bytes, block: bytes, no_start: tuple[bytes, ...], soft_breaks: bool = False) -> int:
    """Where in ``rest + block`` (never joined) the last newline is after which a chunk may end: the next
    line's first byte is known and not in `no_start` (a cut at the very end leaves the next line's first byte
    unknown: that line waits too), and with `soft_breaks` the line before it does not end in a soft break "="
    (looked back for at most MAX_LINE_BYTES: else the last cut as without); -1 where there is none (the
    chunk waits for the next block)."""
    n = len(rest)
    end = n + len(block)
    first = -1  # the last cut the next line's first byte allows

    def at(i: int) -> bytes:
        return rest[i:i + 1] if i < n else block[i - n:i - n + 1]

    while True:
        cut = block.rfind(b"\n", 0, end - n) if end > n else -1
        cut = cut + n if cut >= 0 else rest.rfind(b"\n", 0, min(end, n))
        if cut < 0:  # (soft breaks back to the start: the line goes on in the next block, unless too long)
            return first if soft_breaks and first >= MAX_LINE_BYTES else -1
        if no_start:
            nxt = at(cut + 1)
            if not nxt or nxt in no_start:
                end = cut
                continue
        if not soft_breaks:
            return cut
        if first < 0:
            first = cut
        last = at(cut - 2) if at(cut - 1) == b"\r" else at(cut - 1)
        if last != b"=":
            return cut
        if cut <= first - MAX_LINE_BYTES:
            return first  # (no line end in reach that is no soft break: cut as before)
        end = cut


def _shift(df: pl.DataFrame, offset: int) -> pl.DataFrame:
    if offset and "line_no" in df.columns:
        return df.with_columns(pl.col("line_no") + offset)
    return df


def parse_path(path: Path | bytes, source: str | None, ctx: ParseContext, sink=None) -> tuple[str, ParseResult]:
    """Parse one file (or its bytes). With `sink(table, frame)` given, chunkable sources stream their
    frames to it and the returned result holds empty tables (only counts and unparsed)."""
    data = path if isinstance(path, (bytes, bytearray)) else None
    cut = Truncation()  # lines over MAX_LINE_BYTES: cut before any parser sees them
    if data is not None:
        data = cap_lines(bytes(data), stats=cut)
        head = bytes(data[:SNIFF_BYTES])
    else:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    name, verdict = (source, None) if source else recognise(head)
    if name is None:
        raise ValueError(f"{verdict.reason}; use --source NAME")
    mod = get(name)
    # a paste quoted or indented as a block is read without that prefix (line numbers unchanged)
    prefix, plain = paste_plan(name, head)
    size = len(data) if data is not None else path.stat().st_size
    chunk_bytes = getattr(mod, "CHUNK_BYTES", CHUNK_BYTES)
    if sink is None or not getattr(mod, "CHUNKABLE", False) or size <= chunk_bytes:
        if data is None:
            with open(path, "rb") as fh:
                data = b"".join(read_capped(fh, stats=cut))
        # (the paste layer's checks found the head read as it is: not run again where the data starts with it)
        res = parse_pasted(mod, data, ctx, prefix, plain=plain and data[:SNIFF_BYTES] == head)
        if cut.lines:
            res.meta["truncated_lines"] = cut.lines
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
            elif k == "skipped" and isinstance(v, dict):  # skipped lines by reason: summed over chunks
                got = meta.setdefault(k, {})
                for why, n in v.items():
                    got[why] = got.get(why, 0) + n
            else:
                meta.setdefault(k, v)

    workers = _workers()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: deque = deque()
        # a quoted-printable mail body: a soft break never at a chunk's end (the next line joins its line)
        soft = not plain and looks_encoded(strip_prefix(head, prefix) if prefix else head)
        for offset, chunk in iter_chunks(data if data is not None else path, chunk_bytes,
                                         getattr(mod, "CHUNK_NO_START", ()), cut, soft):
            same = plain and chunk[:SNIFF_BYTES] == head  # (the first chunk: the head's checks are done)
            pending.append((offset, pool.submit(parse_pasted, mod, chunk, ctx, prefix, plain=same)))
            del chunk
            if len(pending) >= workers:  # at most `workers` chunks in flight: bounded memory
                off, fut = pending.popleft()
                consume(off, fut.result())
        while pending:
            off, fut = pending.popleft()
            consume(off, fut.result())
    meta["streamed_rows"] = rows
    if cut.lines:
        meta["truncated_lines"] = cut.lines
    up = pl.concat(unparsed) if unparsed else schema.empty("unparsed")
    return name, ParseResult({t: schema.empty(t) for t in rows}, up, lines, meta)


def parse_file(path: Path, source: str | None = None, host: str | None = None, tz: str | None = None,
               out_dir: Path | None = None, year: int | None = None,
               hints: dict | None = None) -> tuple[dict, dict[str, pl.DataFrame]]:
    """`forensics parse` for one file: (coverage summary, {table: frame}). With `out_dir` the tables
    are streamed to ``out_dir/<table>.parquet`` (with ``unparsed.parquet``) and the frames returned
    are empty. The summary has the sniffer's confidence and reason; with `source` given and its
    sniffer rejecting the file, a `warning` saying so (the file is parsed as told)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError("not a readable file")
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
    found, verdict = (source, sniff_pasted(source, head)) if source else recognise(head, hints)
    source = source or found
    # the file's modification time: the year of syslog/journal times that print none, failing --year
    mtime = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc)
    ctx = ParseContext(host=host, file=str(path), tz=tz, year=year, hints={"file_time": mtime, **(hints or {})})
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
    summary = {"file": str(path), "source": name, "lines": res.lines, "unparsed": res.unparsed.height,
               "truncated_lines": int(res.meta.get("truncated_lines", 0)), "rows": rows,
               "confidence": verdict.confidence, "recognition": verdict.reason}
    skipped = res.meta.get("skipped")  # lines deliberately not read (another tool's lines without data), by reason
    summary["skipped"] = sum(skipped.values()) if isinstance(skipped, dict) else 0
    if summary["skipped"]:
        summary["skipped_reasons"] = dict(skipped)
    for k in ("quoted", "indented", "bulleted", "commented", "host_prefix", "decoded", "hard_breaks"):  # the paste's prefix, decoding, Markdown line breaks
        if k in res.meta:
            summary[k] = res.meta[k]
    note = unparsed_note(res.unparsed, res.lines, name)
    if note:
        summary["note"] = note
    if source and not verdict:
        summary["warning"] = (f"does not look like {source} output (confidence {verdict.confidence:.2f}: "
                              f"{verdict.reason}); parsed as {source} as told")
    if isinstance(res.meta.get("warning"), str):  # what the parser itself says of the file (a refused pickle)
        summary["warning"] = "; ".join(x for x in (summary.get("warning"), res.meta["warning"]) if x)
    return summary, res.tables


NOTE_SHARE = 0.2  # from this share of a file's lines left unparsed, `parse` says what they were


def unparsed_note(unparsed: pl.DataFrame, lines: int, source: str | None) -> str | None:
    """One line saying what most of a file's unparsed lines are (their reasons, most frequent first),
    when they are at least NOTE_SHARE of its lines: a file that is mostly another program's log (vLLM,
    Ray, torchrun lines around the NCCL ones) is said to be so, not only counted."""
    if not lines or unparsed.height < NOTE_SHARE * lines or "reason" not in unparsed.columns:
        return None
    top = unparsed.group_by("reason").len().sort(["len", "reason"], descending=[True, False])
    shown = ", ".join(f"{r} x{n}" for r, n in top.head(4).iter_rows())
    more = f", {top.height - 4} more reason(s)" if top.height > 4 else ""
    return (f"{unparsed.height} of {lines} lines are not {source or 'any source'}'s output as read "
            f"(kept in unparsed): {shown}{more}")
