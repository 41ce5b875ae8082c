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

import gc
import re
from pathlib import Path

import duckdb
import pyarrow as pa

from forensics import schema
from forensics.bundle.footers import FileInfo, footers, host_of, partition_files  # noqa: F401  (footers, host_of: named here too)
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
    return partition_files(root / TABLES_DIR / table, hosts)




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
