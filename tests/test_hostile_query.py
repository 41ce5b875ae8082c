"""Hostile ad hoc SQL: stopped by its time limit or Ctrl-C within a second, bounded in memory,
spilling only into a private folder that holds nothing but its own spill (issue 15, item 5). Each case
runs through :func:`hostile_kit.hostile` (the suite's five properties; see the map in
tests/test_hostile_inputs.py)."""
from __future__ import annotations


import pytest

from hostile_kit import CANARY, hostile
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
    r = hostile(["query", parsed, sql, "--timeout", "1.5"], tmp_path, fails="stopped after 1.5 s", max_mb=600)
    assert r.seconds < 20


@pytest.mark.parametrize("sql", ENDLESS, ids=["range", "recursive_cte"])
def test_ctrl_c_stops_a_query_within_a_second(parsed, tmp_path, sql):
    # the open takes about a second here: interrupt well after the query started. The interrupt
    # itself takes milliseconds; the bound allows for the process's exit on a loaded 2-core machine.
    r = hostile(["query", parsed, sql, "--timeout", "0"], tmp_path, rc_ok=(130,), max_mb=600, interrupt_after=4,
                timeout=60)
    assert r.seconds < 4 + 2.5, r.seconds
    assert r.err == "forensics: interrupted\n", r.err


def test_a_memory_hungry_query_stops_at_the_memory_limit(parsed, tmp_path):
    sql = "SELECT length(string_agg(repeat('x', 1000), '')) FROM range(4000000)"  # 4 GB of string
    hostile(["--max-memory", "600M", "query", parsed, sql], tmp_path, fails="Out of Memory", max_mb=1000)


def test_spill_folder_is_private_and_not_pwd_tmp(parsed, tmp_path):
    """DuckDB lets a query read its own spill folder: it is a folder DuckDB makes itself inside a
    fresh private one (never $PWD/.tmp, where other files may lie), its name cannot be learnt inside
    a statement, and it is gone afterwards. A query that needs it still spills."""
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "secret.txt").write_text(CANARY)
    tmpdir = tmp_path / ".sandbox" / "tmp"  # the kit's TMPDIR (it asserts it is left empty)
    for sql in ("SELECT * FROM read_text('.tmp/secret.txt')", "SELECT * FROM glob('.tmp/*')",
                f"SELECT * FROM glob('{tmpdir}/*/*')", f"SELECT * FROM glob('{tmpdir}/forensics-spill-*/duckdb/*')"):
        r = hostile(["query", parsed, sql], tmp_path, cwd=tmp_path, fails="", max_mb=600)
        assert "refused" in r.err or "Permission" in r.err
    for sql in ("SELECT current_setting('temp_directory') AS d", "SELECT * FROM duckdb_settings()",
                "SELECT * FROM glob(\"Current_Setting\"('temp_' || 'directory') || '/*')",
                "SELECT path FROM duckdb_temporary_files()",
                "EXPLAIN ANALYZE SELECT * FROM duckdb_temporary_files()"):
        hostile(["query", parsed, sql], tmp_path, cwd=tmp_path, fails="tells where DuckDB spills", max_mb=600)
    sql = "SELECT count(*) AS n FROM (SELECT range AS x FROM range(30000000) ORDER BY hash(range)) LIMIT 1"
    r = hostile(["--max-memory", "300M", "query", parsed, sql, "--format", "csv"], tmp_path, max_mb=700)
    assert r.out.splitlines()[1] == "30000000", r.err  # more than its memory: it spilled (the spill folder is gone)


def test_max_memory_must_be_a_size(parsed, tmp_path):
    hostile(["--max-memory", "lots", "query", parsed, "SELECT 1"], tmp_path, fails="not a size", max_mb=300)
    hostile(["--max-memory", "1M", "query", parsed, "SELECT 1"], tmp_path, fails="below", max_mb=300)
