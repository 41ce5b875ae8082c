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

DuckDB always lets a query read its own spill folder, whatever ``allowed_directories`` says. That
folder is one DuckDB creates itself inside a fresh private one (:func:`forensics.db.guard.configure`),
so nothing but this connection's spill files is ever in it, and its random name cannot be learnt
inside a statement: the functions that reveal it (``duckdb_settings``, ``duckdb_temporary_files``,
and ``current_setting`` unless its one argument is a constant naming another setting; see
:data:`REVEALING`) are refused, found in DuckDB's own parse tree (``json_serialize_sql``; by name
in the text when DuckDB cannot serialise the statement).
"""
from __future__ import annotations

import re
import threading
from pathlib import Path

import duckdb


class QueryError(ValueError):
    """A statement failed (bad SQL, unknown table or column, wrong parameter): one clear line."""


class RefusedQuery(QueryError):
    """A statement the confinement does not allow."""


ALLOWED = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}
#: functions that tell where DuckDB spills (the one folder a query may read outside tables/)
REVEALING = frozenset({"current_setting", "duckdb_settings", "duckdb_temporary_files"})
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
    else:
        revealing = revealing_calls(st.query)
        if revealing:
            raise RefusedQuery(f"refused: {revealing[0]}() tells where DuckDB spills, the one folder outside "
                               "the bundle a query could read")
    return st


_PARSER: list = []
_PARSER_LOCK = threading.Lock()


def revealing_calls(sql: str) -> list[str]:
    """Names (sorted) of the calls in `sql` that would tell where DuckDB spills: any call of a
    :data:`REVEALING` function, but ``current_setting('<another setting>')`` with a constant name;
    without a parse tree, any of those names in the text."""
    tree = _parse_tree(sql)
    if tree is None:
        words = {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql)}
        return sorted(words & REVEALING)
    found = set()
    for node in _nodes(tree):
        fn = node.get("function_name")
        if not isinstance(fn, str) or fn.lower() not in REVEALING:
            continue
        if fn.lower() == "current_setting" and _setting_named(node) not in (None, "temp_directory"):
            continue
        found.add(fn.lower())
    return sorted(found)


def _setting_named(call: dict) -> str | None:
    """The setting a ``current_setting`` call names when its one argument is a string constant."""
    args = call.get("arguments")
    if not isinstance(args, list) or len(args) != 1 or not isinstance(args[0], dict):
        return None
    expr = args[0].get("expression")
    lit = expr.get("literal") if isinstance(expr, dict) and expr.get("class") == "CONSTANT" else None
    if not isinstance(lit, dict) or lit.get("kind") != "STRING" or not isinstance(lit.get("text"), str):
        return None
    return lit["text"].strip().lower()


def _nodes(tree):
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _parse_tree(sql: str) -> dict | None:
    """DuckDB's parse tree of `sql` (``json_serialize_sql``), None when it cannot give one."""
    import json

    try:
        with _PARSER_LOCK:
            if not _PARSER:
                _PARSER.append(duckdb.connect(":memory:"))
            text = _PARSER[0].execute("SELECT json_serialize_sql(?::VARCHAR)", [sql]).fetchone()[0]
        tree = json.loads(text)
    except (duckdb.Error, ValueError, TypeError, RecursionError):
        return None
    return tree if isinstance(tree, dict) and not tree.get("error") else None


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
