"""One clock for time windows: ``--since``/``--until`` select [since, until) on the aligned timeline.

:func:`restrict` shadows every relation of schema main that has a ``ts`` column with a temporary
view holding only the rows of the window: on ``ts_aligned`` where the relation has it, else on
``ts`` moved to the reference clock by its host's offset (``raw.clock_offsets``, as the views align
times). Rows without a time (configuration, a pasted counter snapshot, untimed log lines) are kept:
no time cannot place them outside the window. Everything that reads the bundle by name afterwards
reads the window: the detectors' SQL (so a window's findings are the findings of that window, rates
and episodes computed from its samples only), the anomaly model, the HTML report's charts and
events, the Perfetto export. The views of ``queries/views/`` read ``raw.*`` and are unaffected, so
clock offsets and host facts still come from the whole bundle.
"""
from __future__ import annotations

import datetime as dt

import duckdb

from forensics.db._build import quote_ident


def _literal(t: dt.datetime) -> str:
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    return f"TIMESTAMPTZ '{t.astimezone(dt.timezone.utc).isoformat()}'"


def restrict(con: duckdb.DuckDBPyConnection, since: dt.datetime | None, until: dt.datetime | None) -> list[str]:
    """Shadow the time-bearing relations of `con` by their rows in [since, until) on the aligned
    clock; returns the relations shadowed (none when neither bound is given)."""
    if since is None and until is None:
        return []
    db = con.execute("SELECT current_database()").fetchone()[0]
    rows = con.execute(
        "SELECT table_name, list(column_name) FROM duckdb_columns() WHERE database_name = current_database() "
        "AND schema_name = 'main' GROUP BY table_name ORDER BY table_name").fetchall()
    done = []
    for name, cols in rows:
        if "ts" not in cols:
            continue
        if "ts_aligned" in cols:
            t, join = "r.ts_aligned", ""
        elif "host" in cols:
            t = "align_ts(r.ts, c.clock_offset_s)"
            join = " LEFT JOIN raw.clock_offsets c ON c.host = r.host"
        else:
            t, join = "r.ts", ""
        bounds = [f"{t} >= {_literal(since)}"] if since is not None else []
        bounds += [f"{t} < {_literal(until)}"] if until is not None else []
        src = f"{quote_ident(db)}.main.{quote_ident(name)}"
        con.execute(f"CREATE OR REPLACE TEMP VIEW {quote_ident(name)} AS SELECT r.* FROM {src} r{join} "
                    f"WHERE r.ts IS NULL OR ({' AND '.join(bounds)})")
        done.append(name)
    return done
