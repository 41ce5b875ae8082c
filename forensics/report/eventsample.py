"""The events a report or trace loads: all of them when they are few, a bounded sample otherwise.

A bundle's kernel log can hold 10^7 lines (a tiny archive can, too); the HTML report and the
Perfetto trace draw at most a few hundred thousand events, so loading all of them only costs
memory (gigabytes). Above :data:`MAX_EVENTS` the query keeps every warning and critical event up
to half the budget (critical first, then earliest), and of the info events an even, deterministic
share per host (a hash of the row against the host's count: a streaming filter, no sort of the
whole table), then sorts the at most MAX_EVENTS rows kept by time.
"""
from __future__ import annotations

import polars as pl

MAX_EVENTS = 200_000
WHERE = "ts_aligned IS NOT NULL AND host IS NOT NULL"
# a total order (events of one moment and host, e.g. a journal's lines of one second, in their file's
# order): the same bundle gives the same report and trace, byte for byte, on every run
ORDER = "ts_aligned, host, file, line_no, source, kind, subject, message"


def load(bundle, columns: str, max_events: int = MAX_EVENTS) -> tuple[pl.DataFrame, int]:
    """(events with the SELECT list `columns`, in :data:`ORDER`; how many there are)."""
    total = bundle.sql(f"SELECT count(*) AS n FROM events WHERE {WHERE}")["n"][0]
    if total <= max_events:
        return bundle.sql(f"SELECT {columns} FROM events WHERE {WHERE} ORDER BY {ORDER}"), total
    half = max_events // 2
    sql = f"""
        WITH alerts AS (
            SELECT * FROM events WHERE {WHERE} AND severity IN ('warning', 'critical')
            ORDER BY severity_rank(severity) DESC, {ORDER} LIMIT {half}),
        per_host AS (
            SELECT host, count(*) AS n FROM events WHERE {WHERE} AND coalesce(severity, 'info') = 'info' GROUP BY host),
        infos AS (
            SELECT e.* FROM events e JOIN per_host p USING (host)
            WHERE e.{WHERE.replace(' AND ', ' AND e.')} AND coalesce(e.severity, 'info') = 'info'
              AND hash(e.host, e.ts_aligned, e.source, e.message) %
                  greatest(1, ceil(p.n * (SELECT count(*) FROM per_host) / {half}))::UBIGINT = 0)
        SELECT {columns} FROM (SELECT * FROM alerts UNION ALL SELECT * FROM infos) ORDER BY {ORDER}
    """
    return bundle.sql(sql), total
