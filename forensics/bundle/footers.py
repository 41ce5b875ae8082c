"""Footer facts of parsed table files: each Parquet file's rows, Arrow schema and hosts, read and
checked against the table's schema (:class:`FileInfo`), in the compact form another process or a
later open uses instead of reading the footers again (:func:`footers`), and as ingest records them
under the seal of ``tables/_meta.json`` (:func:`record`, believed only under that seal: :func:`sealed`).
"""
from __future__ import annotations

import base64
import datetime as dt
import json
import os
from functools import lru_cache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from forensics import schema
from forensics.bundle import trust
from forensics.layout import TABLES_DIR


def partition_files(d: Path, hosts: frozenset[str] | None = None) -> list[Path]:
    """The Parquet files of the table folder `d` (``<table>/host=<host>/*.parquet``), sorted; with
    `hosts`, only those of these hosts' partitions (:func:`forensics.db._build.table_files`)."""
    if not d.is_dir():
        return []
    # listed with os.scandir and sorted by (partition, file) names, the order of sorting the Paths
    # themselves: Path.glob and Path comparisons were a tenth of the open's CPU at 1,024 hosts
    found = []
    with os.scandir(d) as parts:
        for part in parts:
            if not part.is_dir() or (hosts is not None and part.name.removeprefix("host=") not in hosts):
                continue
            with os.scandir(part.path) as entries:
                found += [(part.name, e.name) for e in entries if e.name.endswith(".parquet") and e.is_file()]
    return [d / part / name for part, name in sorted(found)]


#: times a table may hold: a parsed log says nothing before 1970 or after 2200 (a shipped table
#: claiming year 1 is refused, not shown as fact)
TS_MIN = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
TS_MAX = dt.datetime(2200, 1, 1, tzinfo=dt.timezone.utc)


def _compatible(have: pa.DataType, want: pa.DataType) -> bool:
    """Whether a column written as `have` reads as the schema's `want` without changing meaning."""
    if have.equals(want) or pa.types.is_null(have):
        return True
    if pa.types.is_timestamp(want):
        return pa.types.is_timestamp(have)
    if pa.types.is_integer(want):
        return pa.types.is_integer(have) and have.bit_width <= want.bit_width
    if pa.types.is_floating(want):
        return pa.types.is_floating(have) or pa.types.is_integer(have)
    if pa.types.is_string(want) or pa.types.is_large_string(want):
        return pa.types.is_string(have) or pa.types.is_large_string(have) or pa.types.is_string_view(have) \
            or (pa.types.is_dictionary(have) and _compatible(have.value_type, want))
    if pa.types.is_list(want):
        return (pa.types.is_list(have) or pa.types.is_large_list(have) or pa.types.is_list_view(have)) \
            and _compatible(have.value_type, want.value_type)
    return False


class FileInfo:
    """Footer facts of one Parquet file: its Arrow schema and the hosts its rows name.

    With `table` given, the file must fit that table's schema (compatible column types, times
    between TS_MIN and TS_MAX by the footer statistics), else ValueError names the column.
    """

    def __init__(self, path: Path, table: str | None = None, known: tuple | None = None):
        self.path = path
        if known is not None:  # (rows, Arrow schema, hosts) read and checked by another process
            self.rows, self.schema, self.hosts = known
            return
        # the Arrow schema from the reader, not md.schema.to_arrow_schema(): pyarrow's
        # FileMetaData.schema makes a reference cycle (the metadata caches its ParquetSchema, which
        # refers back to it) that kept ~40 KB per file until the cyclic collector ran, and
        # create_base pauses it: 1,024 hosts' open peaked at 1,855 MB, 395 MB without
        # (benchmarks/results/fleet_scale-2026-12-07.md, section 2). (md.row_group(i) makes such a
        # cycle too, which holds next to nothing: measured, not avoided.)
        f = pq.ParquetFile(path)
        md = f.metadata
        self.rows = md.num_rows
        self.schema = f.schema_arrow
        if table is not None:
            self._check(md, table)
        self.hosts = self._hosts(md)

    def _check(self, md, table: str) -> None:
        want = _arrow_schema(table)
        for field in self.schema:
            idx = want.get_field_index(field.name)
            if idx < 0:
                continue  # a column the schema does not have is never read
            if not _compatible(field.type, want.field(idx).type):
                raise ValueError(f"column {field.name} is {field.type}, the schema says {want.field(idx).type}")
            if pa.types.is_timestamp(field.type):
                self._check_times(md, field.name)

    def _check_times(self, md, name: str) -> None:
        col = self.schema.get_field_index(name)
        for i in range(md.num_row_groups):
            st = md.row_group(i).column(col).statistics
            if st is None or not st.has_min_max:
                continue
            lo, hi = st.min, st.max
            lo = lo if lo.tzinfo else lo.replace(tzinfo=dt.timezone.utc)
            hi = hi if hi.tzinfo else hi.replace(tzinfo=dt.timezone.utc)
            if lo < TS_MIN or hi >= TS_MAX:
                raise ValueError(f"column {name} holds times outside {TS_MIN.year}-{TS_MAX.year} ({lo} .. {hi})")

    def _hosts(self, md) -> set[str]:
        if "host" not in self.schema.names or md.num_rows == 0:
            return set()
        idx = self.schema.names.index("host")
        out: set[str] = set()
        for i in range(md.num_row_groups):
            st = md.row_group(i).column(idx).statistics
            if st is None or not st.has_min_max or st.min != st.max or st.null_count or not isinstance(st.min, (str, bytes)):
                col = pq.read_table(self.path, columns=["host"]).column("host")
                return set(col.drop_null().unique().to_pylist())
            out.add(st.min.decode() if isinstance(st.min, bytes) else st.min)
        return out


@lru_cache(maxsize=None)
def _arrow_schema(table: str) -> pa.Schema:
    """:func:`forensics.schema.arrow_schema`, built once per table (not once per file)."""
    return schema.arrow_schema(table)


def host_of(path: Path) -> str:
    """The host of a table file ``tables/<table>/host=<host>/part-0.parquet`` (its partition's name)."""
    return path.parent.name.removeprefix("host=")


def footers(files: dict[str, list[FileInfo]], hosts: frozenset[str]) -> dict:
    """The footer facts of `files` ({table: [FileInfo]}, as :func:`create_base` returns them) of the
    partitions of `hosts`, in a compact picklable form for another process's :func:`create_base`
    (a map task of :mod:`forensics.engine` over some hosts of a bundle this process opened): each
    table's distinct schemas once, then (path, rows, hosts, schema index) per file."""
    out = {}
    for table, infos in files.items():
        schemas: list[pa.Schema] = []
        rows = []
        for i in infos:
            if host_of(i.path) not in hosts:
                continue
            k = next((n for n, s in enumerate(schemas) if s.equals(i.schema)), None)
            if k is None:
                k = len(schemas)
                schemas.append(i.schema)
            rows.append((str(i.path), i.rows, tuple(sorted(i.hosts)), k))
        if rows:
            out[table] = (schemas, rows)
    return out


def record(tables: Path) -> dict:
    """The footer facts of every table file under `tables` (an ingest's output folder), read and
    checked as :func:`create_base` would, for ``_meta.json`` (JSON): per table, its distinct Arrow
    schemas (IPC bytes, base64) and [path under `tables`, rows, hosts, schema index] per file. Ingest
    seals them with the rest of ``_meta.json`` so that opening the tables need not read every footer
    again (:func:`sealed`)."""
    infos = {}
    for table in schema.table_names():
        for f in partition_files(tables / table):
            try:
                infos.setdefault(table, []).append(FileInfo(f, table))
            except (OSError, ValueError, TypeError, OverflowError, pa.ArrowException):
                continue  # not recorded: opening reads it and says what is wrong with it
    out = {}
    for table, (schemas, rows) in footers(infos, frozenset(host_of(i.path) for v in infos.values() for i in v)).items():
        out[table] = [[base64.b64encode(s.serialize().to_pybytes()).decode() for s in schemas],
                      [[Path(p).relative_to(tables).as_posix(), n, list(hs), k] for p, n, hs, k in rows]]
    return out


def sealed(root: Path) -> dict | None:
    """The footer facts ingest recorded in ``root/tables/_meta.json`` (:func:`record`), in
    :func:`footers`' form for :func:`create_base`'s `known`; None unless that file carries this
    machine's seal (a bundle's own ``_meta.json`` is never believed). A file whose size is not the
    sealed one, or that the record lacks, is left out: create_base reads its footer itself."""
    tables = root / TABLES_DIR
    try:
        meta = json.loads((tables / trust.META).read_text())
    except (OSError, ValueError, RecursionError):
        return None
    if not trust.sealed(meta) or not isinstance(meta.get(trust.FOOTERS), dict) or not isinstance(meta.get("files"), dict):
        return None
    sizes = meta["files"]
    out = {}
    try:
        for table, (schemas, rows) in meta[trust.FOOTERS].items():
            schemas = [pa.ipc.read_schema(pa.py_buffer(base64.b64decode(s))) for s in schemas]
            kept = []
            for rel, n, hs, k in rows:
                path = tables / rel
                try:
                    if os.lstat(path).st_size != sizes.get(rel):
                        continue
                except OSError:
                    continue
                kept.append((str(path), n, tuple(hs), k))
            out[table] = (schemas, kept)
    except (TypeError, ValueError, pa.ArrowException):
        return None  # sealed here, so never expected: read the footers
    return out
