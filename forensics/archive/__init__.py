"""The fleet archive: many incidents' parsed tables and findings in one Hive-partitioned Parquet lake,
queried with the same confined DuckDB SQL as one bundle.

Layout of a lake folder (:mod:`forensics.archive.lake`)::

    lake.json                                          marks the folder as a lake (format, version)
    incidents/incident=<id>/part-0.parquet             the catalogue: one row per incident
    date=<YYYY-MM-DD>/incident=<id>/tables/<table>/host=<host>/part-0.parquet
    date=<YYYY-MM-DD>/incident=<id>/findings/part-0.parquet      (once analysed)

- :func:`add` (``forensics archive add BUNDLE... --to LAKE``) parses each bundle (the cache of
  :func:`forensics.ingest.load`, as ``analyze`` does) and copies its tables in; an incident is the
  SHA-256 of the bundle's bytes, so adding the same bundle twice changes nothing.
- :func:`analyze` (``forensics archive analyze LAKE``) runs the detectors on every incident without
  findings from this tool version, one task per incident on an executor (serial here, or Ray:
  :mod:`forensics.engine.executors`), and writes the findings beside its tables.
- :func:`open_lake` (``forensics archive query LAKE "SQL"``) opens one read-only, confined DuckDB
  over all of it: a view per table (with ``incident`` and ``date`` columns), ``findings`` and
  ``incidents``; the named fleet queries are ``queries/fleet/*.sql``.
"""
from __future__ import annotations

from forensics.archive.lake import AddResult, add, catalogue
from forensics.archive.process import analyze
from forensics.archive.query import fleet_queries, open_lake

__all__ = ["AddResult", "add", "analyze", "catalogue", "fleet_queries", "open_lake"]
