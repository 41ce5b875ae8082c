"""Confinement of ad hoc SQL: read-only, inside the bundle's tables, no settings changes.

Two independent layers, so that a gap in one is caught by the other:

1. the connection itself (:func:`lock_down`), using DuckDB's own settings, applied after the views
   over the Parquet files exist: ``allowed_directories`` = the bundle's ``tables/`` directory,
   ``enable_external_access = false`` (no other file, no COPY TO, no ATTACH of a file, no INSTALL),
   extension autoinstall/autoload and community extensions off, and ``lock_configuration = true``
   (no SET/PRAGMA/RESET of anything afterwards);
2. a statement check (:func:`check`): DuckDB's own parser splits the text
   (``duckdb.extract_statements``) and only one statement of type SELECT or EXPLAIN is accepted
   (``DESCRIBE``, ``SHOW``, ``SUMMARIZE``, ``VALUES``, ``FROM t``, ``WITH ...`` are SELECTs);
   anything else (COPY, ATTACH, INSTALL, LOAD, SET, PRAGMA, CREATE, INSERT, EXPORT, CALL, ...) is
   refused with one line naming the statement type. ``EXPLAIN ANALYZE`` runs the statement it
   explains, so an EXPLAIN passes only when the statement after ``EXPLAIN [ANALYZE] [(options)]``
   passes the same check.
"""
from __future__ import annotations

import re
from pathlib import Path

import duckdb


class QueryError(ValueError):
    """A statement failed (bad SQL, unknown table or column, wrong parameter): one clear line."""


class RefusedQuery(QueryError):
    """A statement the confinement does not allow."""


ALLOWED = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}
_WHY = {
    "COPY": "COPY reads or writes files",
    "EXPORT": "EXPORT DATABASE writes files",
    "ATTACH": "ATTACH opens another database",
    "DETACH": "DETACH changes the attached databases",
    "LOAD": "extensions cannot be installed or loaded",
    "EXTENSION": "extensions cannot be installed or loaded",
    "UPDATE_EXTENSIONS": "extensions cannot be installed or loaded",
    "SET": "settings cannot be changed",
    "VARIABLE_SET": "settings and variables cannot be changed",
    "PRAGMA": "PRAGMA statements cannot be run",
    "CALL": "CALL is not allowed (use SELECT * FROM function(...))",
    "TRANSACTION": "transactions are not needed: the bundle is read-only",
    "MULTI": "DuckDB runs it as several statements that create types; for PIVOT, list the values: ON col IN (...)",
}


#: the head of an EXPLAIN statement: EXPLAIN, then ANALYZE/ANALYSE and (options), comments anywhere
_GAP = r"(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*"
_EXPLAIN_HEAD = re.compile(
    rf"\A{_GAP}EXPLAIN\b{_GAP}(?:ANALY[SZ]E\b{_GAP})?(?:\((?:[^()'\"]|'[^']*'|\"[^\"]*\")*\){_GAP})?", re.I | re.S)


def first_line(exc: BaseException) -> str:
    """The first meaningful line of a DuckDB error."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def check(sql: str) -> duckdb.Statement:
    """The single read-only statement of `sql`, or RefusedQuery/QueryError saying why not."""
    if not sql or not sql.strip():
        raise QueryError("empty SQL")
    try:
        stmts = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(first_line(exc)) from None
    if not stmts:
        raise QueryError("no SQL statement found")
    if len(stmts) > 1:
        raise RefusedQuery(f"refused: {len(stmts)} statements given; run one SELECT at a time")
    st = stmts[0]
    if st.type == duckdb.StatementType.EXPLAIN:
        head = _EXPLAIN_HEAD.match(st.query)
        inner = st.query[head.end():] if head else ""
        if not inner.strip():
            raise RefusedQuery("refused: EXPLAIN of a statement that cannot be checked; only SELECT queries run on a bundle")
        check(inner)  # EXPLAIN ANALYZE executes it: the explained statement must pass too
    elif st.type not in ALLOWED:
        name = st.type.name
        why = _WHY.get(name, "the bundle is read-only")
        raise RefusedQuery(f"refused: {name} statement ({why}); only SELECT queries run on a bundle")
    return st


def lock_down(con: duckdb.DuckDBPyConnection, tables_dir: Path) -> None:
    """Confine `con` to reading `tables_dir`; call after every view over Parquet exists."""
    allowed = str(Path(tables_dir).resolve()).rstrip("/") + "/"
    con.execute("SET allowed_directories = [" + "'" + allowed.replace("'", "''") + "']")
    con.execute("SET allowed_paths = []")
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET allow_community_extensions = false")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
