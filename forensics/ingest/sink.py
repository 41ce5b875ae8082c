"""Where parsed frames go: Parquet files written as the frames stream past.

:class:`ParquetSink` (one file per table, ``forensics parse --out``) and :class:`TableSink` (one
file per table and host, the bundle's ``tables/<table>/host=<host>/part-0.parquet``) share the
writer options of :func:`table_writer`.
"""
from __future__ import annotations

import errno
import os
import re
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from forensics import schema


FREE_TEXT = ("message", "text")
#: string columns written without a dictionary: free text, and dcgm_dmon's ``raw`` (each cell's text as printed: a
#: host-hour's 374,400 cells hold 105,211 distinct texts, so the writer hashed them all into a dictionary that
#: overflowed and fell back to plain pages; dcgm_dmon's write 52.5 -> 44.6 CPU ms, 2.88 -> 2.81 MB,
#: benchmarks/results/parse-speed-2026-12-07-issue21-c.md)
NO_DICTIONARY = FREE_TEXT + ("raw",)


def column_options(arrow) -> dict:
    """ParquetWriter options for a table: dictionaries only for string columns (on numbers the writer
    tries and falls back: slower, bigger files), no dictionary for free text (message, text) and the
    other :data:`NO_DICTIONARY` columns, and
    min/max statistics only for numbers and times. Shared by `forensics parse --out` and the bundle
    ingest.

    String statistics cost 18% of the write CPU of a simulated host's tables (0.48 -> 0.38 s per host
    hour, benchmarks/results/parquet-write-2026-12-06.md) and prune nothing: a row group holds all of
    a file's counters, devices and subsystems, and the host is the partition's folder.

    The ``host`` column keeps them: opening a bundle reads each file's hosts from its footer (min =
    max: one host, see :class:`forensics.db._build.FileInfo`), else reads the whole column; without
    them that read was ~2.8 ms of CPU a file, 0.71 s of 1.4 for opening a parsed 8-host bundle's 256
    files (benchmarks/results/ingest-2026-12-06-issue21-collect.md)."""
    words = [f.name for f in arrow if f.name not in NO_DICTIONARY and str(f.type) in ("string", "string_view")]
    stats = [f.name for f in arrow if f.name not in FREE_TEXT
             and (str(f.type) not in ("string", "string_view") or f.name == "host")]
    deltas = {f.name: "DELTA_BINARY_PACKED" for f in arrow if f.name in DELTA_COLUMNS and str(f.type) in ("int32", "int64")}
    return {"use_dictionary": words, "write_statistics": stats, "column_encoding": deltas}


#: whole-number columns that rise by small steps down a file (a line number, a sample number): stored as
#: differences (Parquet's DELTA_BINARY_PACKED) rather than as plain 8-byte values for zstd to squeeze. A host-hour's
#: nic_counters of one interface (143,678 rows): write 17.1 -> 14.8 CPU ms, 384 -> 149 KB, DuckDB's scan of the
#: two columns 4.6 -> 1.4 ms; cpu_util of sar -P ALL (81,000 rows) 15.4 -> 14.1 ms, 870 -> 732 KB; dcgm_dmon
#: unchanged (benchmarks/results/parse-speed-2026-12-07-issue21-b.md)
DELTA_COLUMNS = frozenset({"line_no", "sample_no"})


@lru_cache(maxsize=None)
def _native_schema(table: str) -> pa.Schema:
    """The Arrow schema polars hands `table`'s frames over in (string views: no copy)."""
    return schema.empty(table).to_arrow(compat_level=pl.CompatLevel.newest()).schema


#: the tables' Parquet codec. LZ4 (Parquet's LZ4_RAW) rather than zstd (level 1): a simulated host-hour's 34 tables
#: (2.3 M rows) written in 0.83x the CPU (0.336 -> 0.278 s, 6.7 -> 10.0 MB; benchmarks/parquet_write.py) and read
#: faster: `forensics analyze` of the 64-node x 10 min bundle's cached tables (DuckDB) 6.42 -> 6.01 CPU s, 145 -> 178 MB
#: (benchmarks/results/ingest-2026-12-07-issue21-write.md)
COMPRESSION = "lz4"


def table_writer(path: Path, table: str) -> pq.ParquetWriter:
    """A ParquetWriter for frames of `table` (see :func:`arrow_rows`): :data:`COMPRESSION`, the options of
    :func:`column_options`, and no Arrow schema stored, so readers see the Parquet types, which
    are those of schemas/<table>.json. Used by `forensics parse --out` and the bundle ingest."""
    arrow = _native_schema(table)
    return pq.ParquetWriter(path, arrow, compression=COMPRESSION, store_schema=False, **column_options(arrow))


def arrow_rows(df: pl.DataFrame, table: str) -> pa.Table:
    """`df` (conformed to `table` if it is not already) as Arrow, without copying (string views)."""
    if list(df.schema.items()) != list(schema.polars_schema(table).items()):
        df = schema.conform(df, table)
    return df.to_arrow(compat_level=pl.CompatLevel.newest())


class ParquetSink:
    """Collects frames per table into DIR/<table>.parquet, streaming with a ParquetWriter.

    Frames are handed to Arrow without copying (string views); the file stores no Arrow schema, so
    readers see the Parquet types, which are those of schemas/<table>.json. Encodings and
    statistics: see :func:`column_options`.
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


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def partition_name(host: str | None, fallback: str) -> str:
    h = host if host else fallback
    safe = _UNSAFE.sub("_", h)
    return "_" if safe in ("", ".", "..") else safe


class TableSink:
    """Streams frames into ``<out>/<table>/host=<host>/part-0.parquet``, split by the rows' host.

    At most :attr:`MAX_OPEN` files are open at once, whatever the number of hosts and tables (a
    600-host bundle has over 10 000 partitions; ``ulimit -n`` is often 1024): the least recently
    written one is closed, and rows arriving for it later go to a numbered piece
    (``part-0.parquet.1``, not read by anyone) that :meth:`close` appends to ``part-0.parquet``.

    A file's frames are gathered until they hold :attr:`GROUP_ROWS` rows (or the file is closed)
    and written as one row group: the rows and their order are those of the frames, but a host's
    eight NCCL logs make one row group of nccl_log, not eight. Every reader of the tables pays per
    row group and column (DuckDB scans the 64 files of a table for each detector that reads it:
    nccl_log's 30 columns x 8 groups of 40 rows cost 3.6 ms a file to read, most of it fixed
    cost), and so did the writer (one ``write_table`` per frame).
    """

    MAX_OPEN = 64
    GROUP_ROWS = 1 << 16

    def __init__(self, out: Path):
        self.out = out
        self.writers: OrderedDict[tuple[str, str], pq.ParquetWriter] = OrderedDict()
        self.pieces: dict[tuple[str, str], int] = {}  # files made per partition
        self.rows: dict[tuple[str, str], int] = {}
        self.pending: dict[tuple[str, str], list[pa.Table]] = {}  # rows not yet written, per open file
        self.pending_rows: dict[tuple[str, str], int] = {}
        self.listeners: list = []

    def _path(self, key: tuple[str, str], piece: int) -> Path:
        name = "part-0.parquet" + (f".{piece}" if piece else "")
        return self.out / key[0] / f"host={key[1]}" / name

    def _writer(self, table: str, part: str) -> pq.ParquetWriter:
        key = (table, part)
        w = self.writers.get(key)
        if w is not None:
            self.writers.move_to_end(key)
            return w
        while len(self.writers) >= self.MAX_OPEN:
            old_key, old = self.writers.popitem(last=False)
            self._flush(old_key, old)
            old.close()
        piece = self.pieces.get(key, 0)
        path = self._path(key, piece)
        path.parent.mkdir(parents=True, exist_ok=True)
        w = self.writers[key] = table_writer(path, table)
        self.pieces[key] = piece + 1
        self.rows.setdefault(key, 0)
        return w

    def write(self, table: str, df: pl.DataFrame, default_host: str) -> None:
        for fn in self.listeners:
            fn(table, df)
        parts = {(default_host,): df}
        if "host" in df.columns and df.height:
            hosts = df.get_column("host")
            one = hosts.min() if hosts.dtype == pl.String and not hosts.null_count() else None
            if one is not None and one == hosts.max():  # (nearly always: one host, no nulls) as the split would give
                parts = {(one,): df}
            else:
                df = df.with_columns(pl.col("host").fill_null(default_host))
                parts = df.partition_by("host", as_dict=True, maintain_order=True)
        for (host,), part in parts.items():
            key = (table, partition_name(host, default_host))
            w = self._writer(*key)
            if part.height:
                self.pending.setdefault(key, []).append(arrow_rows(part, table))
                n = self.pending_rows[key] = self.pending_rows.get(key, 0) + part.height
                if n >= self.GROUP_ROWS:
                    self._flush(key, w)
                self.rows[key] += part.height

    def _flush(self, key: tuple[str, str], w: pq.ParquetWriter) -> None:
        """The gathered frames of `key` written to `w` as one row group."""
        frames = self.pending.pop(key, None)
        self.pending_rows.pop(key, None)
        if frames:
            w.write_table(frames[0] if len(frames) == 1 else pa.concat_tables(frames))

    def ensure(self, table: str, host: str) -> None:
        """Make sure an (empty) file exists for `table` of `host`."""
        self._writer(table, partition_name(host, host))

    def close(self) -> None:
        while self.writers:
            key, w = self.writers.popitem(last=False)
            self._flush(key, w)
            w.close()
        for key, n in self.pieces.items():
            if n > 1:
                self._join(key, n)

    def _join(self, key: tuple[str, str], n: int) -> None:
        """part-0.parquet and its pieces 1..n-1 into one part-0.parquet, batch by batch."""
        first = self._path(key, 0)
        tmp = first.with_name("part-0.parquet.joined")
        w = table_writer(tmp, key[0])
        try:
            for piece in range(n):
                f = pq.ParquetFile(self._path(key, piece))
                for i in range(f.num_row_groups):
                    w.write_table(f.read_row_group(i).cast(w.schema))
                f.close()
        finally:
            w.close()
        os.replace(tmp, first)
        for piece in range(1, n):
            self._path(key, piece).unlink()

    def table_rows(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for (t, _), n in self.rows.items():
            out[t] = out.get(t, 0) + n
        return dict(sorted(out.items()))


def move_tables(src: Path, dest: Path) -> None:
    """Move a worker's table files into the final folder; a (table, host) file that exists already
    (rows of another host found in this host's files) gets this one's rows appended.

    A partition folder that `dest` lacks is renamed there whole (one rename, where moving its one
    file took a lookup, a mkdir and a rename: 1,856 partitions in a 64-host bundle)."""
    try:
        tables = sorted(os.listdir(src))
    except FileNotFoundError:
        return
    for table in tables:
        try:
            parts = sorted(p for p in os.listdir(src / table) if p.startswith("host="))
        except NotADirectoryError:
            continue
        for part in parts:
            folder = src / table / part
            names = os.listdir(folder)
            if "part-0.parquet" not in names:
                continue
            if names == ["part-0.parquet"] and _rename_folder(folder, dest / table / part):
                continue
            f, target = folder / "part-0.parquet", dest / table / part / "part-0.parquet"
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(f, target)
                continue
            merged = pa.concat_tables([pq.read_table(target), pq.read_table(f)])
            pq.write_table(merged, target, compression=COMPRESSION)


def _rename_folder(folder: Path, target: Path) -> bool:
    """Rename `folder` to `target` when `target` is not there (False when it is)."""
    for _ in range(2):
        try:
            os.rename(folder, target)  # (replaces an empty folder, never one holding a file)
            return True
        except FileNotFoundError:  # the table's folder is new
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                return False
            raise
    return False
