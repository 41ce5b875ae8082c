"""forensics query / queries / timeline / export, in process."""
from __future__ import annotations

import io
import json

import duckdb
import polars as pl
import pytest

from cli_kit import run_main
from test_db_kit import bundle_dir, sample_tables


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return bundle_dir(tmp_path_factory.mktemp("cli"), sample_tables())


def run(monkeypatch, capsys, *args, stdin=None):
    return run_main(args, monkeypatch, capsys, stdin)


def test_query_formats_sources_and_params(root, monkeypatch, capsys, tmp_path):
    r = run(monkeypatch, capsys, "query", root, "SELECT host, count(*) AS n FROM events GROUP BY host ORDER BY host",
            "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout) == [{"host": "n1", "n": 3}, {"host": "n2", "n": 4},
                                                          {"host": "n3", "n": 8}]
    r = run(monkeypatch, capsys, "query", root, "-", "--format", "csv", stdin="SELECT 1 AS a, 'x' AS b")
    assert r.stdout == "a,b\n1,x\n"
    f = tmp_path / "q.sql"
    f.write_text("-- xids\nSELECT host, xid FROM kernel_log WHERE xid = $x")
    r = run(monkeypatch, capsys, "query", root, "--file", f, "--param", "x=79", "--format", "json")
    assert json.loads(r.stdout) == [{"host": "n3", "xid": 79}]
    r = run(monkeypatch, capsys, "query", root, "--name", "xid_history", "-p", "host=n3", "--format", "json")
    assert [row["xid"] for row in json.loads(r.stdout)] == [79]
    out = tmp_path / "p.parquet"
    r = run(monkeypatch, capsys, "query", root, "--name", "pause_rates", "--format", "parquet", "--out", out)
    assert r.returncode == 0 and pl.read_parquet(out)["host"][0] == "n2"
    r = run(monkeypatch, capsys, "query", root, "SELECT host FROM hosts ORDER BY host")
    assert r.returncode == 0 and "n1" in r.stdout and "n3" in r.stdout  # table
    r = run(monkeypatch, capsys, "query", root, "SELECT * FROM nic_counters", "--format", "json", "--limit", "2")
    assert len(json.loads(r.stdout)) == 2


@pytest.mark.parametrize("args,expect", [
    (["COPY (SELECT 1) TO '/tmp/forensics-test-x.csv'"], "refused: COPY statement"),
    (["SELECT * FROM read_csv('/etc/passwd')"], "refused: the query may only read"),
    (["INSTALL httpfs"], "refused: LOAD statement (extensions cannot be installed or loaded)"),
    (["LOAD httpfs"], "refused: LOAD statement (extensions cannot be installed or loaded)"),
    (["ATTACH '/tmp/forensics-test-other.duckdb' AS other"], "refused: ATTACH statement"),
    (["SET enable_external_access = true"], "refused: SET statement"),
    (["SELECT * FROM nosuch"], "nosuch does not exist"),
    (["SELECT 1; SELECT 2"], "refused: 2 statements"),
    (["--name", "window"], "parameter at is required"),
    (["--name", "nope"], "no named query 'nope'"),
    (["SELECT 1", "--name", "drops"], "give exactly one of"),
    (["SELECT $x", "--param", "oops"], "use --param key=value"),
])
def test_query_errors_are_one_line_and_exit_2(root, monkeypatch, capsys, args, expect):
    r = run(monkeypatch, capsys, "query", root, *args)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("forensics: error: ") and expect in lines[0], r.stderr


def test_query_on_a_missing_bundle(monkeypatch, capsys, tmp_path):
    r = run(monkeypatch, capsys, "query", tmp_path / "nope.tar", "SELECT 1")
    assert r.returncode == 2 and "no such file" in r.stderr


def test_queries_lists_names_descriptions_and_params(monkeypatch, capsys):
    r = run(monkeypatch, capsys, "queries", "--views")
    assert r.returncode == 0
    assert "pause_rates" in r.stdout and "--param at (TIMESTAMPTZ, required)" in r.stdout
    assert "bucket(ts, seconds)" in r.stdout and "nic_rates" in r.stdout and "events" in r.stdout


def test_timeline_filters_and_formats(root, monkeypatch, capsys):
    r = run(monkeypatch, capsys, "timeline", root)
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and len(lines) == 15
    assert lines[0].startswith("2026-11-30T10:00:00.000Z") and "command_failed" in lines[0]
    r = run(monkeypatch, capsys, "timeline", root, "--host", "n3", "--kind", "xid,link_*", "--format", "json")
    assert [(e["host"], e["kind"]) for e in json.loads(r.stdout)] == [
        ("n3", "link_down"), ("n3", "link_up"), ("n3", "xid")]
    r = run(monkeypatch, capsys, "timeline", root, "--severity", "critical", "--since", "2026-11-30T10:00:14Z",
            "--limit", "2", "--format", "csv")
    assert pl.read_csv(io.StringIO(r.stdout))["kind"].to_list() == ["gpu_ecc_dbe", "gpu_remap_pending"]
    r = run(monkeypatch, capsys, "timeline", root, "--since", "yesterday")
    assert r.returncode == 2 and "bad time" in r.stderr


def test_timeline_is_colour_coded_by_severity_in_a_terminal_only(root, monkeypatch, capsys):
    r = run(monkeypatch, capsys, "timeline", root)
    assert "\x1b[" not in r.stdout  # not a terminal: plain text
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich's switch for "this is a terminal"
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    r = run(monkeypatch, capsys, "timeline", root)
    lines = r.stdout.splitlines()
    crit = [ln for ln in lines if " CRIT " in ln]
    warn = [ln for ln in lines if " WARN " in ln]
    info = [ln for ln in lines if " info " in ln]
    assert crit and warn and info
    assert all(ln.startswith("\x1b[1;31m") for ln in crit)  # bold red
    assert all(ln.startswith("\x1b[33m") for ln in warn)  # yellow
    assert not any(ln.startswith("\x1b[") for ln in info)


def test_export_duckdb_and_parquet(root, monkeypatch, capsys, tmp_path):
    db = tmp_path / "incident.duckdb"
    r = run(monkeypatch, capsys, "export", root, "--duckdb", db)
    assert r.returncode == 0, r.stderr
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM events").fetchone()[0] == 15
        assert con.execute("SELECT count(*) FROM raw.nic_counters").fetchone()[0] == 3 * 21 * 2 * 7
        assert con.execute("SELECT max(rate_per_s) FROM nic_rates WHERE counter = 'rx_prio3_pause'").fetchone()[0] == 20000
        assert con.execute("SELECT table_type FROM information_schema.tables WHERE table_name = 'events'").fetchone()[0] == "VIEW"
    finally:
        con.close()
    assert [p.name for p in tmp_path.iterdir()] == ["incident.duckdb"]  # no temporary left behind

    out = tmp_path / "pq"
    r = run(monkeypatch, capsys, "export", root, "--parquet", out)
    assert r.returncode == 0, r.stderr
    meta = json.loads((out / "_export.json").read_text())
    assert meta["rows"]["events"] == 15 and meta["rows"]["kernel_log"] == 3
    assert sorted(p.name for p in (out / "events").iterdir()) == ["host=n1", "host=n2", "host=n3"]
    ev = pl.read_parquet(out / "events" / "**" / "*.parquet", hive_partitioning=True)
    assert ev.height == 15 and set(ev["host"]) == {"n1", "n2", "n3"}
    assert (out / "findings" / "part-0.parquet").is_file()  # empty relations keep their schema
    r = run(monkeypatch, capsys, "export", root, "--parquet", out)
    assert r.returncode == 2 and "not an empty directory" in r.stderr
    r = run(monkeypatch, capsys, "export", root)
    assert r.returncode == 2 and "exactly one of" in r.stderr
