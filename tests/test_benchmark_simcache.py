"""benchmarks/simcache.py: a simulated bundle cached under benchmarks/data/ is reused only when today's simulator
made it with the same arguments (a stale bundle reused by its file name skewed an A/B on 2026-12-07)."""
from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def simcache():
    return _module("simcache")


def test_a_small_bundle_is_made_once_reused_then_made_again_when_what_made_it_changes(simcache, tmp_path):
    made = []

    def make(out: Path) -> None:
        made.append(out)
        subprocess.run([sys.executable, "-m", "forensics", "simulate", *args, "--out", str(out)], check=True,
                       capture_output=True)

    args = ["--scenario", "healthy", "--nodes", "1", "--duration", "1m", "--raw-only"]
    path = tmp_path / "b.tar"
    got, note = simcache.cached_bundle(path, args, make)
    assert got == path and len(made) == 1 and "made by this run" in note
    with tarfile.open(path) as tf:
        assert any(n.startswith("hosts/node01/raw/") for n in tf.getnames())
    side = json.loads(simcache.sidecar(path).read_text())
    assert side == {"simulator_sha256": simcache.simulator_digest(), "args": args}
    assert side["simulator_sha256"][:12] in note and "forensics simulate --scenario healthy" in note

    got, note = simcache.cached_bundle(path, args, make)  # same simulator, same arguments: reused
    assert len(made) == 1 and "reused" in note

    # the same file name, other arguments (what happened on 2026-12-07): made again
    other = ["--scenario", "healthy", "--nodes", "1", "--duration", "2m", "--raw-only"]
    args = other
    _, note = simcache.cached_bundle(path, args, make)
    assert len(made) == 2 and "other arguments" in note
    assert json.loads(simcache.sidecar(path).read_text())["args"] == other

    # another simulator (its sources' digest differs): made again
    _, note = simcache.cached_bundle(path, args, make, digest="0" * 64)
    assert len(made) == 3 and "another simulator" in note

    # a bundle without its sidecar (made before this check, or by hand): made again, never trusted
    simcache.sidecar(path).unlink()
    _, note = simcache.cached_bundle(path, args, make)
    assert len(made) == 4 and "no sidecar" in note


def test_a_sidecar_whose_bundle_is_gone_makes_it_again(simcache, tmp_path):
    calls = []

    def make(out: Path) -> None:
        calls.append(out)
        out.mkdir()
        (out / "manifest.json").write_text("{}")

    path = tmp_path / "series"  # a folder, as parse_series keeps it
    simcache.cached_bundle(path, ["--nodes", "2"], make, digest="a" * 64)
    shutil.rmtree(path)
    simcache.cached_bundle(path, ["--nodes", "2"], make, digest="a" * 64)
    assert len(calls) == 2 and (path / "manifest.json").is_file()
    simcache.cached_bundle(path, ["--nodes", "2"], make, digest="a" * 64)
    assert len(calls) == 2


def test_the_digest_covers_the_simulator_and_what_it_imports_inside_functions(simcache, tmp_path, monkeypatch):
    rel = {str(p.relative_to(simcache.ROOT)) for p in simcache.simulator_sources()}
    for must in ("forensics/cli/simulate.py", "forensics/simulate/__init__.py", "forensics/simulate/fmt_sysstat.py",
                 "forensics/simulate/fmt_infiniband.py", "forensics/layout.py",
                 "forensics/gid.py"):  # gid: imported inside a function of the simulator
        assert must in rel, must
    # a copy of the package: one byte of one formatter changed -> another digest; a file it never imports -> same
    shutil.copytree(simcache.PACKAGE, tmp_path / "forensics", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(simcache, "ROOT", tmp_path)
    monkeypatch.setattr(simcache, "PACKAGE", tmp_path / "forensics")
    before = simcache.simulator_digest()
    (tmp_path / "forensics" / "unimported_by_anyone.py").write_text("X = 1\n")
    assert simcache.simulator_digest() == before
    fmt = tmp_path / "forensics" / "simulate" / "fmt_sysstat.py"
    fmt.write_text(fmt.read_text() + "\n# changed\n")
    assert simcache.simulator_digest() != before


def test_the_benchmarks_that_cache_a_simulated_bundle_go_through_the_check():
    for name in ("analyze_speed", "fleet_scale", "parse_series", "parse_throughput"):
        text = (BENCH / f"{name}.py").read_text()
        assert "cached_bundle(" in text, name
    assert "Bundle used: {bundle_note}" in (BENCH / "analyze_speed.py").read_text()
