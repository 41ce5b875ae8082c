"""One read-only, confined DuckDB over a whole lake, and the named fleet queries (``queries/fleet/``).

Relations: ``incidents`` (the catalogue), ``findings`` (every analysed incident's, with ``incident``
and ``date``) and one view per parsed table (``kernel_log``, ``nic_counters``, ``gpus``, ...: the
bundle's columns plus ``incident`` and ``date`` from the lake's folders). Only incidents the
catalogue lists are seen (an add that was killed half way is not). The connection is confined to
the lake's folder as a bundle's is to its tables (:func:`forensics.db.safety.lock_down`): one
SELECT, no file outside, no settings changes, statements can be stopped.
"""
from __future__ import annotations

import time
from pathlib import Path

import duckdb
import polars as pl

from forensics import schema
from forensics.archive.lake import _NAME, CATALOGUE_DIR, FINDINGS_DIR, PART, catalogue, check_lake
from forensics.db import Bundle, guard, safety
from forensics.db._build import quote_ident, quote_str
from forensics.layout import TABLES_DIR

_OWN = ("incidents", "findings")
_HIVE = "hive_partitioning = true, union_by_name = true, hive_types_autocast = false, " \
        "hive_types = {'date': DATE, 'incident': VARCHAR}"


def _tables(lake: Path) -> list[str]:
    names = set()
    for d in lake.glob(f"date=*/incident=*/{TABLES_DIR}/*"):
        if d.is_dir() and not d.is_symlink() and _NAME.match(d.name) and d.name not in _OWN:
            names.add(d.name)
    return sorted(names)


def open_lake(lake: Path | str) -> Bundle:
    """The lake at `lake` opened for SQL (a :class:`forensics.db.Bundle`: ``.sql()``, ``.names``)."""
    t0 = time.perf_counter()
    lake = check_lake(lake).resolve()
    cat = catalogue(lake)
    con = duckdb.connect(":memory:")
    try:
        guard.configure(con)
        con.execute("SET TimeZone = 'UTC'")
        con.execute("SET enable_progress_bar = false")
        con.register("_catalogue", cat.to_arrow())
        con.execute("CREATE TABLE incidents AS SELECT * FROM _catalogue")
        con.unregister("_catalogue")
        listed = "incident IN (SELECT incident FROM incidents)"
        findings = sorted(lake.glob(f"date=*/incident=*/{FINDINGS_DIR}/{PART}"))
        if findings:
            con.execute(f"CREATE VIEW findings AS SELECT * FROM read_parquet("
                        f"{quote_str(str(lake) + f'/date=*/incident=*/{FINDINGS_DIR}/*.parquet')}, {_HIVE}) WHERE {listed}")
        else:
            empty = schema.empty("findings").with_columns(pl.lit(None, pl.Date).alias("date"),
                                                           pl.lit(None, pl.String).alias("incident")).clear()
            con.register("_empty", empty.to_arrow())
            con.execute("CREATE TABLE findings AS SELECT * FROM _empty")
            con.unregister("_empty")
        tables = _tables(lake)
        for t in tables:
            glob = str(lake) + f"/date=*/incident=*/{TABLES_DIR}/{t}/host=*/*.parquet"
            con.execute(f"CREATE VIEW {quote_ident(t)} AS SELECT * FROM read_parquet({quote_str(glob)}, {_HIVE}) "
                        f"WHERE {listed}")
        safety.lock_down(con, lake)
    except Exception:
        guard.release(con)
        raise
    hosts = sorted({h for hs in cat.get_column("hosts").to_list() for h in (hs or [])})
    info = {"present": tables, "views": ["findings", "incidents"], "hosts": hosts, "clock": pl.DataFrame(),
            "cached": [], "files": []}
    return Bundle(lake, con, info, True, time.perf_counter() - t0)


def fleet_queries() -> dict:
    """The named fleet queries of ``queries/fleet/*.sql`` by name (:class:`forensics.db.named.NamedQuery`)."""
    from forensics.db.named import parse_file
    from forensics.resources import data_dir

    out = {}
    for p in sorted((data_dir("queries") / "fleet").glob("*.sql")):
        q = parse_file(p)
        out[q.name] = q
    return out


def run_fleet_query(lake_bundle: Bundle, name: str, params: dict | None = None) -> pl.DataFrame:
    """The named fleet query `name` on an opened lake; string values converted to the declared types."""
    from forensics.errors import UserError

    queries = fleet_queries()
    if name not in queries:
        raise UserError(f"no fleet query {name!r} (known: {', '.join(sorted(queries))})")
    q = queries[name]
    values = q.bind(params or {})
    used = set(getattr(safety.check(q.sql), "named_parameters", set()) or set())
    return lake_bundle.sql(q.sql, **{k: v for k, v in values.items() if k in used})


__all__ = ["CATALOGUE_DIR", "fleet_queries", "open_lake", "run_fleet_query"]
