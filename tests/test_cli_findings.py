"""`findings` is what `forensics analyze` reports, in `forensics query` and in both exports, with
the parameters of the run in `analysis_params` (issue 14 item 3)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).parent / "forensics"
PFC = ROOT / "sample_bundles" / "pfc_storm.tar.zst"


def cli(env, *args) -> subprocess.CompletedProcess:
    r = subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return r


def test_findings_queryable_and_exported_as_analyze_reports_them(cli_env, tmp_path):
    analysed = json.loads(cli(cli_env, "analyze", PFC, "-q", "--format", "json").stdout)["findings"]
    want = sorted((f["kind"], f["subject"], tuple(f["hosts"])) for f in analysed)
    assert len(want) >= 4

    r = cli(cli_env, "query", PFC, "SELECT kind, subject, hosts FROM findings", "--format", "json")
    assert sorted((f["kind"], f["subject"], tuple(f["hosts"])) for f in json.loads(r.stdout)) == want
    assert "findings computed on demand" in r.stderr

    params = json.loads(cli(cli_env, "query", PFC, "SELECT * FROM analysis_params", "--format", "json").stdout)
    got = {(p["detector"], p["param"]): p["value"] for p in params}
    from forensics.detect.rules import rules

    declared = {(r.name, k): str(v) for r in rules() for k, v in r.params.items()}
    assert declared and {k: v for k, v in got.items() if k[0] != "*"} == declared  # every parameter, its value
    assert got[("*", "errors")] == "[]" and got[("*", "forensics_version")]
    name, value = ("pfc_storm", "min_duration_s"), declared[("pfc_storm", "min_duration_s")]

    db = tmp_path / "e.duckdb"
    cli(cli_env, "export", PFC, "--duckdb", db)
    con = duckdb.connect(str(db), read_only=True)
    rows = con.sql("SELECT kind, subject, hosts FROM findings").fetchall()
    assert sorted((k, s, tuple(h)) for k, s, h in rows) == want
    assert con.execute("SELECT value FROM analysis_params WHERE detector = ? AND param = ?", list(name)).fetchall() == [(value,)]
    con.close()

    pq = tmp_path / "pq"
    cli(cli_env, "export", PFC, "--parquet", pq)
    f = pl.read_parquet(pq / "findings")
    assert sorted(zip(f["kind"], f["subject"], map(tuple, f["hosts"]))) == want
    assert json.loads((pq / "_export.json").read_text())["rows"]["findings"] == len(want)
