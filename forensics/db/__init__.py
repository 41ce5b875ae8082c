"""The SQL layer: a bundle's parsed tables and derived views in DuckDB.

>>> b = open_bundle("incident.tar")                                    # doctest: +SKIP
>>> b.sql("SELECT host, count(*) AS n FROM events WHERE severity = $s GROUP BY host", s="critical")  # doctest: +SKIP

:func:`open_bundle` gets a directory of parsed Parquet tables (``tables/<table>/host=<h>/*.parquet``)
from :func:`forensics.ingest.load` (which extracts safely and caches parsed tables by the bundle's
hash) or takes a directory that already has ``tables/``, and opens an in-memory DuckDB catalog over
it (see :mod:`forensics.db._build` for its layout, ``queries/views/`` for the views and macros).

Ad hoc SQL through :meth:`Bundle.sql` is confined (see :mod:`forensics.db.safety`): one SELECT,
no file access outside the bundle's tables, no settings changes. The connection itself
(:attr:`Bundle.con`) is locked down the same way; detectors may still create temporary tables or
views in it (memory only).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from forensics.bundle import footers
from forensics.bundle.errors import BundleError  # the bundle layer's one error type
from forensics.db import _build, guard, safety
from forensics.db.safety import QueryError, RefusedQuery
from forensics.layout import TABLES_DIR

__all__ = ["Bundle", "BundleError", "QueryError", "RefusedQuery", "open_bundle", "connect"]


def _resolve(path: Path, cache_dir: Path | None, progress=None) -> Path:
    """Directory with tables/ for `path` (a tar, a raw bundle directory, or a parsed directory)."""
    if not path.exists():
        raise BundleError(f"{path}: no such file or directory")
    try:
        from forensics.ingest import load  # extraction, ingest and the parsed-table cache
    except ImportError:
        load = None
    if path.is_dir() and (path / TABLES_DIR).is_dir() and (load is None or not (path / "hosts").is_dir()):
        from forensics.bundle.trust import check_parsed_dir

        check_parsed_dir(path)  # only tables, nothing to re-parse from: no link, types checked on open
        return path
    if load is None:
        raise BundleError(f"{path}: not a directory with parsed tables/ (bundle loading is unavailable)")
    try:
        out = load(path, cache_dir=cache_dir, progress=progress)
    except (OSError, ValueError) as exc:
        raise BundleError(str(exc).splitlines()[0] if str(exc) else f"{path}: cannot be loaded") from None
    return out if isinstance(out, Path) else Path(getattr(out, "root", out))


def connect(root: Path, materialize: bool = False, database: str = ":memory:",
            derive: str = "auto", hosts: frozenset[str] | None = None,
            clock: pl.DataFrame | None = None, memory: int | None = None,
            known: dict | None = None) -> tuple[duckdb.DuckDBPyConnection, dict]:
    """A DuckDB connection with the whole catalog of the bundle directory `root` built.

    Returns (connection, info) where info has ``present`` (tables with data), ``views`` (derived
    views), ``hosts``, ``clock`` (the offsets frame) and ``cached`` (relations read from the
    Parquet cache of :mod:`forensics.db.derived`; `derive` = auto|always|never|lazy). Not locked down:
    see :func:`open_bundle`. A map task of :mod:`forensics.engine` opens only some `hosts` of the
    bundle with the `clock` offsets estimated over all of them (:func:`forensics.timeline.clock_offsets`
    of the whole bundle) and its share of the `memory` budget, given the footer facts its driver
    read (`known`, :func:`forensics.db._build.footers`) rather than reading every footer again.
    """
    from forensics import timeline
    from forensics.db import derived

    con = duckdb.connect(database)
    try:
        guard.configure(con, memory)  # memory limit, private spill folder (removed by guard.release)
        con.execute("SET TimeZone = 'UTC'")
        con.execute("SET enable_progress_bar = false")  # never mixed into --format json output
        con.execute("SET parquet_metadata_cache = true")
        if known is None:  # the footer facts this machine's ingest recorded and sealed, if it did
            known = footers.sealed(root)
        files = _build.create_base(con, root, materialize=materialize, only_hosts=hosts, known=known)
        if clock is None:
            clock = timeline.clock_offsets(con)
        elif hosts is not None:
            clock = clock.filter(pl.col("host").is_in(sorted(hosts)))
        timeline.store_offsets(con, clock)
        views = _build.create_views(con)
        store = None
        if hosts is not None:  # some hosts' catalog: its derived relations cached apart from the whole bundle's
            import hashlib

            digest = hashlib.sha1("\n".join(sorted(hosts)).encode()).hexdigest()[:16]
            store = root / TABLES_DIR / derived.DIR / "groups" / digest
        cached = derived.attach(con, root, files, derive, store=store)
    except Exception:
        guard.release(con)
        raise
    hosts = [r[0] for r in con.execute("SELECT host FROM raw.bundle_hosts ORDER BY host").fetchall()]
    return con, {"present": sorted(files), "files": [i.path for infos in files.values() for i in infos], "views": views, "hosts": hosts, "clock": clock, "cached": cached,
                 "infos": files}


class Bundle:
    """An opened bundle: ``.sql()``, ``.tables``, ``.views``, ``.hosts``, ``.con``, ``.root``."""

    def __init__(self, root: Path, con: duckdb.DuckDBPyConnection, info: dict, confined: bool, open_s: float):
        self.root = root
        self.con = con
        self.tables: list[str] = info["present"]
        self.views: list[str] = info["views"]
        self.hosts: list[str] = info["hosts"]
        self.clock: pl.DataFrame = info["clock"]
        self.cached: list[str] = info["cached"]
        self.confined = confined
        self.open_seconds = open_s
        self.files: list[Path] = info.get("files", [])
        self.file_infos: dict = info.get("infos", {})  # {table: [FileInfo]}: the footer facts read when opened
        self.timeout: float | None = None  # seconds a statement of .sql() may run (None: no limit)

    @property
    def names(self) -> list[str]:
        """Every relation users can query in schema main (tables, views), sorted."""
        rows = self.con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1"
        ).fetchall()
        return [r[0] for r in rows]

    @property
    def meta(self) -> dict:
        p = self.root / TABLES_DIR / "_meta.json"
        try:
            return json.loads(p.read_text())
        except (OSError, ValueError):
            return {}

    def sql(self, query: str, /, **params: Any) -> pl.DataFrame:
        """Run one read-only SELECT with named parameters (``$name``) and return a polars frame."""
        st = safety.check(query)
        wanted = set(getattr(st, "named_parameters", set()) or set())
        missing = sorted(wanted - set(params))
        if missing:
            raise QueryError(f"missing value for parameter{'s' if len(missing) > 1 else ''} "
                             + ", ".join("$" + m for m in missing))
        extra = sorted(set(params) - wanted)
        if extra:
            raise QueryError("unknown parameter" + ("s " if len(extra) > 1 else " ") + ", ".join(extra)
                             + (f" (the query uses {', '.join('$' + w for w in sorted(wanted))})" if wanted else
                                " (the query uses none)"))
        def run() -> pl.DataFrame:
            rel = self.con.sql(query, params=params) if params else self.con.sql(query)
            return _to_polars(rel) if rel is not None else pl.DataFrame()

        return self._guarded(run)

    def stream(self, query: str, rows: int = 65_536):
        """Run one read-only SELECT and return its result as a pyarrow RecordBatchReader of at most
        `rows` rows a batch (a result too big to hold at once; the connection runs nothing else
        until it is read). Errors as :meth:`sql`'s."""
        safety.check(query)
        return self._guarded(lambda: self.con.sql(query).to_arrow_reader(rows))

    def _guarded(self, run):
        try:
            return guard.run(self.con, run, self.timeout)
        except guard.QueryTimeout as exc:
            raise QueryError(str(exc)) from None
        except duckdb.OutOfMemoryException as exc:
            raise QueryError(safety.first_line(exc) + " (the memory limit is a share of --max-memory)") from None
        except duckdb.PermissionException as exc:
            raise RefusedQuery("refused: the query may only read the bundle's tables and views ("
                               + safety.first_line(exc).split(": ", 1)[-1] + ")") from None
        except duckdb.Error as exc:
            raise QueryError(safety.first_line(exc)) from None

    def query(self, name: str, /, **params: Any) -> pl.DataFrame:
        """Run the named query ``queries/<name>.sql``; string values are converted to the declared types."""
        from forensics.db import named

        q = named.get(name)
        values = q.bind(params)
        used = set(getattr(safety.check(q.sql), "named_parameters", set()) or set())
        return self.sql(q.sql, **{k: v for k, v in values.items() if k in used})

    def check_intact(self) -> None:
        """BundleError when a table file this bundle was opened on is gone (a cache cleaned while in
        use): results computed meanwhile are incomplete, never a clean answer."""
        for f in self.files:
            if not f.is_file():
                raise BundleError(f"{f.relative_to(self.root) if f.is_relative_to(self.root) else f}: "
                                  "removed while the bundle was in use (was the cache cleaned?); run again")

    def close(self) -> None:
        guard.release(self.con)

    def __enter__(self) -> "Bundle":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Bundle {self.root} hosts={len(self.hosts)} tables={len(self.tables)}>"


_NO_POLARS_TYPE = ("INTERVAL", "UNION", "BIT", "TIME WITH TIME ZONE")


def _to_polars(rel: duckdb.DuckDBPyRelation) -> pl.DataFrame:
    """The relation as a polars frame; columns of a type polars cannot take (INTERVAL, UNION, BIT,
    and any list, struct or map holding one) come as DuckDB's text for them ('01:23:45.5',
    '1 day 02:00:00'), so every result has a form in every output format."""
    types = [str(t) for t in rel.types]
    if not any(k in t for t in types for k in _NO_POLARS_TYPE):
        return rel.pl()
    names = rel.columns
    if len(set(names)) != len(names):
        raise QueryError("the result has columns of the same name and a type polars cannot read "
                         "(INTERVAL, UNION, BIT): name each column (AS ...)")
    exprs = []
    for name, t in zip(names, types):
        quoted = '"' + name.replace('"', '""') + '"'
        exprs.append(f"CAST({quoted} AS VARCHAR) AS {quoted}" if any(k in t for k in _NO_POLARS_TYPE) else quoted)
    return rel.project(", ".join(exprs)).pl()


def open_bundle(path: str | Path, cache_dir: str | Path | None = None, *, confined: bool = True,
                derive: str = "auto", progress=None) -> Bundle:
    """Open a bundle (tar, raw directory, or a directory with parsed ``tables/``) for SQL.

    Parsing happens at most once per bundle (the cache of :func:`forensics.ingest.load`); opening an
    already parsed bundle only builds views. With ``confined=False`` the connection is not locked
    down (trusted internal use such as ``forensics export``). `derive` (auto|always|never|lazy) says
    when window-heavy views are cached as Parquet beside the tables (see :mod:`forensics.db.derived`).
    `progress`: None or a callable given one message per file or host parsed.
    """
    t0 = time.perf_counter()
    root = _resolve(Path(path), Path(cache_dir) if cache_dir else None, progress)
    con, info = connect(root, derive=derive)
    if confined:
        safety.lock_down(con, root / TABLES_DIR)
    return Bundle(root, con, info, confined, time.perf_counter() - t0)
