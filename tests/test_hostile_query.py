"""Hostile ad hoc SQL: stopped by its time limit or Ctrl-C within a second, bounded in memory,
spilling only into a private folder that holds nothing but its own spill (issue 15, item 5)."""
from __future__ import annotations

import os
import time

import pytest

from hostile_kit import run
from test_db_kit import bundle_dir

ENDLESS = [
    "SELECT count(*) FROM range(1e12::BIGINT)",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
]


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hq")
    return bundle_dir(tmp, {"kernel_log": [{"host": "n1", "message": "hello"}]})


@pytest.mark.parametrize("sql", ENDLESS, ids=["range", "recursive_cte"])
def test_a_query_stops_at_its_time_limit_with_one_line(parsed, tmp_path, sql):
    r = run(["query", parsed, sql, "--timeout", "1.5"], tmp_path)
    assert "stopped after 1.5 s" in r.one_line_error()
    assert r.seconds < 20


@pytest.mark.parametrize("sql", ENDLESS, ids=["range", "recursive_cte"])
def test_ctrl_c_stops_a_query_within_a_second(parsed, tmp_path, sql):
    # the open takes about a second here: interrupt well after the query started. The interrupt
    # itself takes milliseconds; the bound allows for the process's exit on a loaded 2-core machine.
    r = run(["query", parsed, sql, "--timeout", "0"], tmp_path, interrupt_after=4, timeout=60)
    assert r.seconds < 4 + 2.5, r.seconds
    assert r.rc != 0
    r.no_traceback()


def test_a_memory_hungry_query_stops_at_the_memory_limit(parsed, tmp_path):
    sql = "SELECT length(string_agg(repeat('x', 1000), '')) FROM range(4000000)"  # 4 GB of string
    r = run(["--max-memory", "600M", "query", parsed, sql], tmp_path)
    assert "Out of Memory" in r.one_line_error()
    assert r.peak_mb < 1000, r.peak_mb


def test_spill_folder_is_private_and_not_pwd_tmp(parsed, tmp_path):
    """DuckDB lets a query read its own spill folder: it is a folder DuckDB makes itself inside a
    fresh private one (never $PWD/.tmp, where other files may lie), its name cannot be learnt inside
    a statement, and it is gone afterwards. A query that needs it still spills."""
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "secret.txt").write_text("s3cret")
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    for sql in ("SELECT * FROM read_text('.tmp/secret.txt')", "SELECT * FROM glob('.tmp/*')",
                f"SELECT * FROM glob('{tmpdir}/*/*')", f"SELECT * FROM glob('{tmpdir}/forensics-spill-*/duckdb/*')"):
        r = run(["query", parsed, sql], tmp_path, cwd=tmp_path, TMPDIR=str(tmpdir))
        assert "refused" in r.one_line_error() or "Permission" in r.one_line_error()
    for sql in ("SELECT current_setting('temp_directory') AS d", "SELECT * FROM duckdb_settings()",
                "SELECT * FROM glob(\"Current_Setting\"('temp_' || 'directory') || '/*')",
                "SELECT path FROM duckdb_temporary_files()",
                "EXPLAIN ANALYZE SELECT * FROM duckdb_temporary_files()"):
        r = run(["query", parsed, sql], tmp_path, cwd=tmp_path, TMPDIR=str(tmpdir))
        assert "tells where DuckDB spills" in r.one_line_error()
    sql = "SELECT count(*) AS n FROM (SELECT range AS x FROM range(30000000) ORDER BY hash(range)) LIMIT 1"
    r = run(["--max-memory", "300M", "query", parsed, sql, "--format", "csv"], tmp_path, TMPDIR=str(tmpdir))
    assert r.rc == 0 and r.out.splitlines()[1] == "30000000", r.err  # more than its memory: it spilled
    assert r.peak_mb < 700, r.peak_mb
    assert list(tmpdir.iterdir()) == []  # the spill folder went with the connection


def test_max_memory_must_be_a_size(parsed, tmp_path):
    assert "not a size" in run(["--max-memory", "lots", "query", parsed, "SELECT 1"], tmp_path).one_line_error()
    assert "below" in run(["--max-memory", "1M", "query", parsed, "SELECT 1"], tmp_path).one_line_error()
