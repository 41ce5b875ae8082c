"""Ad hoc SQL is read-only and confined to the bundle's tables: every escape is refused clearly."""
from __future__ import annotations

import duckdb
import pytest

import forensics
from forensics.db import QueryError, RefusedQuery
from test_db_kit import bundle_dir


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("safety")
    (tmp / "outside.csv").write_text("a,b\n1,2\n")
    (tmp / "db.duckdb").write_bytes(b"")
    b = forensics.open_bundle(bundle_dir(tmp, {"kernel_log": [{"host": "n1", "message": "hello"}]}))
    b.tmp = tmp
    yield b
    b.close()


def _escapes(tmp):
    out = tmp / "written.csv"
    return [
        ("copy_to", f"COPY (SELECT * FROM kernel_log) TO '{out}'", "COPY statement"),
        ("copy_from", f"COPY kernel_log FROM '{tmp / 'outside.csv'}'", "COPY statement"),
        ("export", f"EXPORT DATABASE '{tmp / 'exp'}'", "EXPORT statement"),
        ("read_csv", "SELECT * FROM read_csv('/etc/passwd')", "may only read the bundle's tables"),
        ("read_csv_auto", f"SELECT * FROM read_csv_auto('{tmp / 'outside.csv'}')", "may only read the bundle's tables"),
        ("bare_path", f"SELECT * FROM '{tmp / 'outside.csv'}'", "may only read the bundle's tables"),
        ("read_text", "SELECT * FROM read_text('/etc/hostname')", "may only read the bundle's tables"),
        ("read_blob", "SELECT * FROM read_blob('/etc/passwd')", "may only read the bundle's tables"),
        ("read_json", "SELECT * FROM read_json('/etc/passwd')", "may only read the bundle's tables"),
        ("glob", "SELECT * FROM glob('/etc/*')", "may only read the bundle's tables"),
        ("parquet_outside", f"SELECT * FROM read_parquet('{tmp}/*.parquet')", "may only read the bundle's tables"),
        ("dotdot", f"SELECT * FROM read_csv('{tmp}/bundle/tables/../../outside.csv')", "may only read the bundle's tables"),
        ("install", "INSTALL httpfs", "refused"),
        ("load", "LOAD httpfs", "refused"),
        ("force_install", "FORCE INSTALL httpfs FROM core_nightly", "refused"),
        ("attach", f"ATTACH '{tmp / 'db.duckdb'}' AS other", "ATTACH statement"),
        ("attach_memory", "ATTACH ':memory:' AS scratch", "ATTACH statement"),
        ("detach", "DETACH memory", "DETACH statement"),
        ("set", "SET enable_external_access = true", "SET statement"),
        ("set_threads", "SET threads = 1", "SET statement"),
        ("reset", "RESET lock_configuration", "statement"),
        ("pragma", "PRAGMA enable_profiling", "PRAGMA statement"),
        ("create", "CREATE TABLE t AS SELECT 1", "CREATE statement"),
        ("create_view", "CREATE OR REPLACE VIEW events AS SELECT 1", "CREATE statement"),
        ("insert", "INSERT INTO raw.bundle_hosts VALUES ('x')", "INSERT statement"),
        ("drop", "DROP VIEW events", "DROP statement"),
        ("call", "CALL pragma_version()", "CALL statement"),
        ("secret", "CREATE SECRET s (TYPE s3, KEY_ID 'x', SECRET 'y')", "statement"),
        ("two_statements", "SELECT 1; COPY (SELECT 1) TO '/tmp/x.csv'", "2 statements"),
        ("begin", "BEGIN TRANSACTION", "TRANSACTION statement"),
        # EXPLAIN ANALYZE executes the statement it explains
        ("explain_analyze_create", "EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1", "CREATE statement"),
        ("explain_analyze_replace_view", "EXPLAIN ANALYZE CREATE OR REPLACE VIEW events AS SELECT 1", "CREATE statement"),
        ("explain_analyze_insert", "EXPLAIN ANALYZE INSERT INTO raw.bundle_hosts VALUES ('x')", "INSERT statement"),
        ("explain_analyze_drop", "explain /* c */ analyse DROP VIEW events", "DROP statement"),
        ("explain_options_copy", f"EXPLAIN (FORMAT json) COPY (SELECT 1) TO '{out}'", "COPY statement"),
        ("explain_analyze_set", "EXPLAIN ANALYZE SET threads = 1", "SET statement"),
        ("pivot_without_in", "PIVOT kernel_log ON host USING count(*)", "for PIVOT, list the values: ON col IN (...)"),
    ]


def test_every_escape_is_refused_with_one_clear_line(bundle):
    for name, sql, expect in _escapes(bundle.tmp):
        with pytest.raises(QueryError) as info:
            bundle.sql(sql)
        msg = str(info.value)
        assert "\n" not in msg, name
        assert expect in msg, (name, msg)
        assert isinstance(info.value, RefusedQuery) and msg.startswith("refused: "), name
    assert not (bundle.tmp / "written.csv").exists()
    assert not (bundle.tmp / "exp").exists()
    # the catalog is unchanged after all that
    assert bundle.sql("SELECT count(*) AS n FROM events")["n"][0] == 1
    assert bundle.sql("SELECT count(*) FROM raw.bundle_hosts").item() == 1
    assert bundle.sql("SELECT count(*) FROM information_schema.tables WHERE table_name = 't'").item() == 0


def test_reads_inside_the_bundle_still_work(bundle):
    assert bundle.sql("SELECT message FROM kernel_log").item() == "hello"
    assert bundle.sql("DESCRIBE kernel_log").height > 5
    assert bundle.sql("SHOW TABLES").height > 10
    assert bundle.sql("SUMMARIZE kernel_log").height > 5
    assert bundle.sql("EXPLAIN SELECT * FROM events").height >= 1
    assert bundle.sql("EXPLAIN ANALYZE SELECT count(*) FROM events WHERE host = $h", h="n1").height >= 1
    assert bundle.sql("EXPLAIN (FORMAT json) SELECT 1").height >= 1
    assert bundle.sql("PIVOT (SELECT host FROM kernel_log) ON host IN ('n1') USING count(*)").item() == 1
    root = bundle.root / "tables" / "kernel_log"
    assert bundle.sql(f"SELECT count(*) FROM read_parquet('{root}/*/*.parquet')").item() == 1
    assert bundle.sql("WITH x AS (SELECT 1 AS a) SELECT a FROM x").item() == 1
    assert bundle.sql("SELECT current_setting('enable_external_access')").item() is False


def test_the_connection_itself_is_locked(bundle):
    with pytest.raises(duckdb.Error, match="locked"):
        bundle.con.execute("SET enable_external_access = true")
    with pytest.raises(duckdb.Error):
        bundle.con.execute("SELECT * FROM read_csv('/etc/passwd')")
    with pytest.raises(duckdb.Error):
        bundle.con.execute("INSTALL httpfs")
    for setting, value in [("autoinstall_known_extensions", False), ("autoload_known_extensions", False),
                           ("allow_community_extensions", False), ("lock_configuration", True)]:
        assert bundle.con.execute(f"SELECT current_setting('{setting}')").fetchone()[0] is value, setting


def test_syntax_errors_and_empty_sql_are_one_line(bundle):
    for sql in ("SELEC 1", "", "   ", "-- only a comment"):
        with pytest.raises(QueryError) as info:
            bundle.sql(sql)
        assert "\n" not in str(info.value)
