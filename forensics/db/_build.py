"""Building the DuckDB catalog of a bundle: base relations, clock offsets, views.

Layout of the catalog (the same for an opened bundle and for an exported ``.duckdb`` file):

- schema ``raw``: one relation per table of ``schemas/`` exactly as parsed (a view over the
  bundle's Parquet files when a bundle is opened, a real table in an export), plus
  ``raw.clock_offsets`` (the per-host estimate of :mod:`forensics.timeline`) and ``raw.bundle_hosts``
  (every host named by the rows of any table, read from the Parquet footers);
- schema ``main``: what users query. Every table name of ``schemas/`` (``kernel_log``,
  ``nic_counters``, ...), where ``hosts``, ``gpus`` and ``nccl_log`` are enriched views defined in
  ``queries/views/``, and the derived views (``events``, ``nic_rates``, ``gpu_episodes``, ...) and
  macros of ``queries/views/*.sql``.

Parquet is read with ``hive_partitioning=false``: the ``host`` column lives inside every file
(``tables/<table>/host=<host>/part-0.parquet``), and the directory name must neither duplicate it
nor override it.
"""
from __future__ import annotations

import datetime as dt
import gc
import os
import re
from functools import lru_cache
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from forensics import schema
from forensics.layout import TABLES_DIR
from forensics.resources import data_dir

_DUCK = {"string": "VARCHAR", "int32": "INTEGER", "int64": "BIGINT", "float64": "DOUBLE", "bool": "BOOLEAN"}
_VIEW_FILE = re.compile(r"^(\d+)_([a-z][a-z0-9_]*)\.sql$")


def duck_type(t: str) -> str:
    """DuckDB type of a schema type string (``timestamp[us, tz=UTC]`` -> ``TIMESTAMPTZ``)."""
    if t in _DUCK:
        return _DUCK[t]
    if t.startswith("timestamp["):
        return "TIMESTAMPTZ"
    m = re.fullmatch(r"list<(\w+)>", t)
    if m:
        return _DUCK[m.group(1)] + "[]"
    raise ValueError(f"unknown schema type {t!r}")


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def table_files(root: Path, table: str, hosts: frozenset[str] | None = None) -> list[Path]:
    """Parquet files of `table` in a bundle directory (``tables/<table>/*/*.parquet``), sorted;
    with `hosts`, only those of the partitions ``host=<h>`` of these hosts."""
    d = root / TABLES_DIR / table
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


def _empty_select(table: str) -> str:
    cols = ", ".join(f"CAST(NULL AS {duck_type(c['type'])}) AS {quote_ident(c['name'])}"
                     for c in schema.load(table)["columns"])
    return f"SELECT {cols} WHERE false"


def _parquet_select(table: str, infos: list[FileInfo]) -> str:
    """SELECT over the files giving exactly the schema's columns and types.

    Files written by an older parser may lack a column added to the schema since (it reads as
    NULL), or differ between hosts (then columns are matched by name across files).
    """
    expected = schema.arrow_schema(table)
    files = [i.path for i in infos]
    schemas = [i.schema for i in infos]
    same = all(s.equals(schemas[0]) for s in schemas[1:])
    present = set(schemas[0].names) if same else set().union(*(s.names for s in schemas))
    exprs = []
    for field in expected:
        name = quote_ident(field.name)
        dt = duck_type(next(c["type"] for c in schema.load(table)["columns"] if c["name"] == field.name))
        if field.name not in present:
            exprs.append(f"CAST(NULL AS {dt}) AS {name}")
        elif same and schemas[0].field(field.name).type == field.type:
            exprs.append(name)
        elif same and pa.types.is_timestamp(field.type) and pa.types.is_timestamp(schemas[0].field(field.name).type) \
                and schemas[0].field(field.name).type.tz is None:
            exprs.append(f"timezone('UTC', {name}) AS {name}")  # naive UTC written by an old writer
        else:
            exprs.append(f"CAST({name} AS {dt}) AS {name}")
    flist = "[" + ", ".join(quote_str(str(f)) for f in files) + "]"
    opts = "hive_partitioning = false" + ("" if same else ", union_by_name = true")
    return f"SELECT {', '.join(exprs)} FROM read_parquet({flist}, {opts})"


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


def create_base(con: duckdb.DuckDBPyConnection, root: Path, materialize: bool = False,
                only_hosts: frozenset[str] | None = None, known: dict | None = None) -> dict[str, list[FileInfo]]:
    """raw.<table> for every schema table; returns {table: its files} for the tables the bundle has
    (with `only_hosts`: only these hosts' partitions, the catalog of a map task of :mod:`forensics.engine`).
    `known`: the footer facts of these files as :func:`footers` gives them, read and checked by the
    process that opened the whole bundle (the files themselves are still listed here: a file it
    does not know is read and checked as usual)."""
    con.execute("CREATE SCHEMA IF NOT EXISTS raw")
    present: dict[str, list[FileInfo]] = {}
    kind = "TABLE" if materialize else "VIEW"
    hosts: set[str] = set()
    # Python's cyclic garbage collector paused while the footers are read: each footer allocates
    # hundreds of container objects (pyarrow's metadata and schema wrappers, none in a cycle:
    # reference counting frees them), which trigger collections that traverse every object kept so
    # far, the FileInfos of all earlier files included, so the open's cost per host grew with the
    # hosts (12.5 -> 14-15 ms per host from 256 to 1,024 hosts; 7.6 -> 8.3 with the collector
    # paused, benchmarks/results/fleet_scale-2026-12-06-d.md). Its previous state is restored after.
    collecting = gc.isenabled()
    gc.disable()
    try:
        _create_tables(con, root, kind, only_hosts, known, present, hosts)
    finally:
        if collecting:
            gc.enable()
    hosts = sorted(hosts)
    con.execute("CREATE OR REPLACE TABLE raw.bundle_hosts (host VARCHAR)")
    if hosts:
        con.executemany("INSERT INTO raw.bundle_hosts VALUES (?)", [[h] for h in hosts])
    return present


def _create_tables(con, root: Path, kind: str, only_hosts, known, present: dict, hosts: set) -> None:
    """raw.<table> of :func:`create_base` for every schema table; fills `present` and `hosts`."""
    for table in schema.table_names():
        infos = []
        schemas, facts = (known or {}).get(table, ([], []))
        facts = {path: (rows, schemas[k], set(hs)) for path, rows, hs, k in facts}
        # one Arrow schema object kept per distinct schema of the table, not one per file (1,024 hosts:
        # the open's peak 395 -> 191 MB); found by hash, so that a bundle whose files all differ costs no more
        distinct: dict[int, list[pa.Schema]] = {}
        for s in schemas:
            distinct.setdefault(hash(s), []).append(s)
        for f in table_files(root, table, only_hosts):
            try:
                info = FileInfo(f, table, known=facts.get(str(f)))
            except (OSError, ValueError, TypeError, OverflowError, pa.ArrowException) as exc:
                raise ValueError(f"{f.relative_to(root)}: not a valid {table} table ({exc})") from None
            alike = distinct.setdefault(hash(info.schema), [])
            same = next((s for s in alike if s is info.schema or s.equals(info.schema, check_metadata=True)), None)
            if same is None:
                alike.append(info.schema)
            else:
                info.schema = same
            infos.append(info)
        sql = _parquet_select(table, infos) if infos else _empty_select(table)
        if infos:
            present[table] = infos
        for i in infos:
            hosts |= i.hosts
        con.execute(f"CREATE OR REPLACE {kind} raw.{quote_ident(table)} AS {sql}")


def view_files() -> list[tuple[str, Path]]:
    """(name, path) of ``queries/views/NN_<name>.sql`` in file order."""
    out = []
    for p in sorted(data_dir("queries").joinpath("views").glob("*.sql")):
        m = _VIEW_FILE.match(p.name)
        if not m:
            raise ValueError(f"view file {p.name} must be named NN_<name>.sql")
        out.append((m.group(2), p))
    return out


def create_views(con: duckdb.DuckDBPyConnection) -> list[str]:
    """main.<table> aliases and the views/macros of queries/views/; returns the derived view names.

    Files run in name order (their numeric prefix is the dependency order). A file named after a
    schema table replaces the plain alias of that table (``hosts``, ``gpus``, ``nccl_log``).
    """
    files = view_files()
    defined = {name for name, _ in files}
    for table in schema.table_names():
        if table not in defined:
            con.execute(f"CREATE OR REPLACE VIEW main.{quote_ident(table)} AS SELECT * FROM raw.{quote_ident(table)}")
    derived = []
    for name, path in files:
        try:
            con.execute(path.read_text())
        except duckdb.InterruptException:
            raise KeyboardInterrupt from None  # Ctrl-C while the views are built
        except duckdb.Error as exc:
            raise RuntimeError(f"queries/views/{path.name}: {str(exc).splitlines()[0]}") from exc
        if name not in schema.table_names() and not name.startswith("macros"):
            derived.append(name)
    return derived


def replace_with_frames(con: duckdb.DuckDBPyConnection, frames: dict) -> None:
    """Make each polars frame of `frames` ({name: frame}) the relation `name` of the catalog: a
    table raw.<name> (replacing the schema's empty one) and the view main.<name> over it, as every
    other table (used for an analysis' findings, :mod:`forensics.detect.published`)."""
    for name, frame in frames.items():
        con.register("_frame_in", frame.to_arrow())
        try:
            kind = con.execute("SELECT table_type FROM information_schema.tables WHERE table_schema = 'raw' "
                               "AND table_name = ?", [name]).fetchone()
            if kind is not None:
                con.execute(f"DROP {'VIEW' if kind[0] == 'VIEW' else 'TABLE'} raw.{quote_ident(name)}")
            con.execute(f"CREATE TABLE raw.{quote_ident(name)} AS SELECT * FROM _frame_in")
            con.execute(f"CREATE OR REPLACE VIEW main.{quote_ident(name)} AS SELECT * FROM raw.{quote_ident(name)}")
        finally:
            con.unregister("_frame_in")
