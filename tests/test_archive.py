"""The fleet archive (forensics/archive, `forensics archive`): a lake of 20 simulated incidents is
added (idempotently), analysed and queried; the named fleet queries find the host planted with a
fault in four of them; the lake is confined like a bundle and survives an add that was killed."""
from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from forensics.archive import add, analyze, catalogue, open_lake
from forensics.archive.lake import LAKE_MARK, check_lake, incident_dir
from forensics.archive.query import fleet_queries, run_fleet_query
from forensics.errors import UserError
from forensics.simulate import SimConfig
from forensics.simulate.bundle import Simulation, write_bundle

pytestmark = pytest.mark.slow  # 20 simulated incidents parsed and analysed (~1 min of CPU)

# tiny incidents: 3 nodes x 2 GPUs for a minute; the fleet's benign noise off, so that every root
# finding of the lake is a planted fault (detection under noise is tests/test_detect_confounders.py's)
BASE = dict(nodes=3, gpus_per_node=2, duration_s=60, interval_s=5, confounders=False)
PLANTED = "node02"


def _seeds_with_fault_on(scenario: str, host: str, n: int, first: int) -> list[int]:
    seeds, seed = [], first
    while len(seeds) < n:
        if Simulation(SimConfig(scenario, seed=seed, **BASE)).labels()["faults"][0]["hosts"] == [host]:
            seeds.append(seed)
        seed += 1
    return seeds


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    d = tmp_path_factory.mktemp("fleet")
    plan = ([("xid_79", s) for s in _seeds_with_fault_on("xid_79", PLANTED, 4, 100)]
            + [("pfc_storm", s) for s in _seeds_with_fault_on("pfc_storm", "node03", 1, 200)]
            + [("healthy", s) for s in range(300, 315)])
    paths = []
    for scenario, seed in plan:
        p = d / f"{scenario}-{seed}.tar"
        write_bundle(SimConfig(scenario, seed=seed, **BASE), p)
        paths.append(p)
    lake = d / "lake"
    added = add(paths, lake, cache_dir=d / "cache")
    done = analyze(lake)
    return {"dir": d, "lake": lake, "paths": paths, "plan": plan, "added": added, "done": done}


def _planted_incidents(fleet) -> set[str]:
    return {r.incident for r, (scn, _) in zip(fleet["added"], fleet["plan"]) if scn == "xid_79"}


def test_twenty_incidents_are_catalogued_and_analysed(fleet):
    cat = catalogue(fleet["lake"])
    assert cat.height == 20 == len(set(cat["incident"]))
    assert all(r.status == "added" for r in fleet["added"]) and len(fleet["done"]) == 20
    assert cat["analyzed_by"].null_count() == 0 and cat["analyzed_by"].n_unique() == 1
    assert cat["date_basis"].unique().to_list() == ["manifest created_at"]
    for r in cat.iter_rows(named=True):
        assert incident_dir(fleet["lake"], r["date"], r["incident"]).joinpath("findings", "part-0.parquet").is_file()
        assert sorted(r["hosts"]) == ["node01", "node02", "node03"]


def test_adding_the_same_bundles_again_changes_nothing(fleet):
    lake = fleet["lake"]
    before = {p: p.stat().st_mtime_ns for p in lake.rglob("*") if p.is_file()}
    again = add(fleet["paths"][:3], lake, cache_dir=fleet["dir"] / "cache")
    assert [r.status for r in again] == ["present"] * 3
    assert {p: p.stat().st_mtime_ns for p in lake.rglob("*") if p.is_file()} == before
    assert analyze(lake) == []  # nothing left to analyse


def test_repeat_hosts_finds_the_planted_host_in_its_four_incidents(fleet):
    with open_lake(fleet["lake"]) as b:
        rows = run_fleet_query(b, "repeat_hosts", {"min_incidents": "3"}).to_dicts()
        healthy = b.sql("SELECT count(*) AS n FROM findings f JOIN incidents i USING (incident) "
                        "WHERE i.name LIKE 'healthy-%'").item()
    planted = [r for r in rows if r["host"] == PLANTED]
    assert planted and "gpu_xid" in planted[0]["kinds"]
    assert set(planted[0]["incident_ids"]) == _planted_incidents(fleet)
    assert healthy == 0  # the other 15 incidents are healthy: nothing there to repeat


def test_xid_history_and_repeat_gpus_follow_the_boards_of_the_planted_host(fleet):
    with open_lake(fleet["lake"]) as b:
        hist = run_fleet_query(b, "xid_history", {"host": PLANTED})
        gpus = run_fleet_query(b, "repeat_gpus", {"min_incidents": "1"})
    assert set(hist.filter(pl.col("xid") == 79)["incident"]) == _planted_incidents(fleet)
    assert hist["serial"].null_count() == 0  # every Xid resolved to its board's serial through gpus
    assert gpus.height and all(r == [PLANTED] for r in gpus["hosts"].to_list())
    assert gpus["incidents"].sum() >= 4


def test_findings_per_week_and_recurring_ports_count_incidents(fleet):
    with open_lake(fleet["lake"]) as b:
        weeks = run_fleet_query(b, "findings_per_week", {"severity": "critical"})
        ports = run_fleet_query(b, "recurring_ports", {"min_incidents": "1"})
        crit = b.sql("SELECT count(*) FROM findings WHERE severity = 'critical'").item()
    assert weeks["findings"].sum() == crit
    assert weeks.filter(pl.col("kind") == "gpu_xid")["incidents"].sum() == 4
    assert ports.filter(pl.col("kinds").list.contains("pfc_storm"))["host"].to_list() == ["node03"]


def test_a_lake_incident_has_the_findings_of_its_bundle(fleet):
    import forensics

    i = next(i for i, (scn, _) in enumerate(fleet["plan"]) if scn == "xid_79")
    direct = forensics.analyze(fleet["paths"][i], cache_dir=fleet["dir"] / "cache")
    cols = ["id", "kind", "severity", "hosts", "subject", "start", "end", "caused_by"]
    with open_lake(fleet["lake"]) as b:
        stored = b.sql("SELECT * FROM findings WHERE incident = $i", i=fleet["added"][i].incident)
    assert stored.select(cols).sort("id").equals(direct.findings.select(cols).sort("id"))


def test_the_lake_is_confined_and_read_only(fleet):
    from forensics.db import QueryError

    with open_lake(fleet["lake"]) as b:
        for sql in ("SELECT * FROM read_csv('/etc/passwd')", "COPY findings TO '/tmp/x.csv'",
                    "SET enable_external_access = true", "DROP VIEW kernel_log"):
            with pytest.raises(QueryError):
                b.sql(sql)


def test_an_add_killed_half_way_is_invisible_and_redone(fleet, tmp_path):
    lake = tmp_path / "lake"
    shutil.copytree(fleet["lake"], lake)
    victim = catalogue(lake).row(0, named=True)
    shutil.rmtree(lake / "incidents" / f"incident={victim['incident']}")  # killed before its catalogue row
    with open_lake(lake) as b:
        assert b.sql("SELECT count(DISTINCT incident) FROM kernel_log").item() == 19
        assert b.sql("SELECT count(*) FROM findings WHERE incident = $i", i=victim["incident"]).item() == 0
    path = next(p for p, r in zip(fleet["paths"], fleet["added"]) if r.incident == victim["incident"])
    [again] = add([path], lake, cache_dir=fleet["dir"] / "cache")
    assert again.status == "added" and catalogue(lake).height == 20
    assert [d["incident"] for d in analyze(lake)] == [victim["incident"]]


def test_a_folder_that_is_no_lake_is_never_written(tmp_path):
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(UserError, match="not a forensics lake"):
        add([tmp_path / "x.tar"], other)
    assert sorted(p.name for p in other.iterdir()) == ["cat.jpg"]
    with pytest.raises(UserError, match="no such lake"):
        check_lake(tmp_path / "absent")
    (tmp_path / "lk").mkdir()
    (tmp_path / "lk" / LAKE_MARK).write_text('{"format": "forensics-lake", "version": 99}')
    with pytest.raises(UserError, match="version 99"):
        open_lake(tmp_path / "lk")


def test_names_in_the_lake_that_are_no_table_are_not_queried(fleet, tmp_path):
    lake = tmp_path / "lake"
    shutil.copytree(fleet["lake"], lake)
    inc = catalogue(lake).row(0, named=True)
    odd = incident_dir(lake, inc["date"], inc["incident"]) / "tables" / "x'; DROP TABLE incidents; --" / "host=a"
    odd.mkdir(parents=True)
    with open_lake(lake) as b:
        assert b.sql("SELECT count(*) FROM incidents").item() == 20
        assert all("DROP" not in n for n in b.names)


def test_ray_analyses_the_same_findings(ray_local, fleet, tmp_path):
    from forensics.engine.executors import RayExecutor

    lake = tmp_path / "lake"
    picks = [i for i, (scn, _) in enumerate(fleet["plan"]) if scn in ("xid_79", "pfc_storm")][:3]
    add([fleet["paths"][i] for i in picks], lake, cache_dir=fleet["dir"] / "cache")
    ex = RayExecutor()
    try:
        assert len(analyze(lake, executor=ex)) == 3
    finally:
        ex.close()
    cols = ["incident", "id", "kind", "severity", "hosts", "subject", "start", "caused_by"]
    q = "SELECT * FROM findings WHERE incident IN (SELECT incident FROM incidents) ORDER BY incident, id"
    with open_lake(lake) as b:
        got = b.sql(q).select(cols)
    ids = [fleet["added"][i].incident for i in picks]
    with open_lake(fleet["lake"]) as b:
        want = b.sql(q).select(cols).filter(pl.col("incident").is_in(ids))
    assert got.height and got.equals(want)


def test_cli_add_query_list_and_one_line_errors(fleet, tmp_path):
    env = {**os.environ, "TZ": "UTC", "LC_ALL": "C.UTF-8", "FORENSICS_CACHE_DIR": str(fleet["dir"] / "cache")}
    exe = [sys.executable, "-m", "forensics"]
    lake = tmp_path / "lake"
    r = subprocess.run(exe + ["archive", "add", str(fleet["paths"][0]), "--to", str(lake), "-q"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "added as incident" in r.stdout
    r = subprocess.run(exe + ["archive", "add", str(fleet["paths"][0]), "--to", str(lake), "-q"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "unchanged" in r.stdout
    r = subprocess.run(exe + ["archive", "query", str(fleet["lake"]), "-n", "repeat_hosts", "-p", "min_incidents=4",
                              "--format", "csv"], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and PLANTED in r.stdout
    r = subprocess.run(exe + ["archive", "query", str(fleet["lake"]), "SELECT * FROM read_text('/etc/hostname')"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    r = subprocess.run(exe + ["archive", "list", str(tmp_path / "nowhere")], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "no such lake" in r.stderr and "Traceback" not in r.stderr
    assert set(fleet_queries()) == {"findings_per_week", "recurring_ports", "repeat_gpus", "repeat_hosts", "xid_history"}
