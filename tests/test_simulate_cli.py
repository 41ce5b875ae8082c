"""`forensics simulate`: same arguments and seed give the same bytes; the CLI's options and errors."""
from __future__ import annotations

import io
import json
import tarfile

import pytest
from typer.testing import CliRunner

from forensics.cli import app
from forensics.simulate import SCENARIOS, SimConfig, write_bundle

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, ["simulate", *args])


def test_list_names_every_scenario():
    res = _run("--list")
    assert res.exit_code == 0
    for name in SCENARIOS:
        assert name in res.output
    for name in ("healthy", "pfc_storm", "packet_drops", "link_flap", "thermal_throttle", "xid_79", "ecc_remap",
                 "dataloader_starvation", "numa_misplacement", "nccl_misconfig", "pulsing_utilization",
                 "straggler", "seed000_case_study"):
        assert name in SCENARIOS


@pytest.mark.parametrize("suffix", [".tar.gz", ".tar.zst"])
def test_same_seed_same_bytes(tmp_path, suffix):
    args = ["--scenario", "xid_79", "--nodes", "3", "--gpus-per-node", "1", "--duration", "150s",
            "--interval", "5s", "--seed", "7", "--raw-only"]
    a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    assert _run(*args, "--out", str(a)).exit_code == 0
    assert _run(*args, "--out", str(b)).exit_code == 0
    assert a.read_bytes() == b.read_bytes()
    c = tmp_path / f"c{suffix}"
    assert _run(*args[:-2], "8", "--raw-only", "--out", str(c)).exit_code == 0
    assert c.read_bytes() != a.read_bytes()


def test_archive_members_fixed_and_ordered(tmp_path):
    out = tmp_path / "b.tar"
    write_bundle(SimConfig("healthy", nodes=2, gpus_per_node=1, duration_s=60, interval_s=5, seed=3), out,
                 tables=False)
    with tarfile.open(out) as tf:
        members = tf.getmembers()
    names = [m.name for m in members]
    assert names[0] == "manifest.json" and names[-1] == "truth/labels.json"
    hosts = [n for n in names if n.startswith("hosts/")]
    assert hosts == sorted(hosts)
    assert len({m.mtime for m in members}) == 1 and all(m.uid == 0 and m.uname == "" for m in members)
    with tarfile.open(out) as tf:
        man = json.load(tf.extractfile("manifest.json"))
    assert man["kind"] == "simulated" and man["hosts"] == ["node01", "node02"] and man["format_version"] == 1


@pytest.mark.slow
def test_tables_are_deterministic_too(tmp_path):
    cfg = SimConfig("link_flap", nodes=3, gpus_per_node=1, duration_s=150, interval_s=5, seed=2)
    a, b = tmp_path / "a.tar", tmp_path / "b.tar"
    write_bundle(cfg, a, tables=True)
    write_bundle(cfg, b, tables=True)
    assert a.read_bytes() == b.read_bytes()
    with tarfile.open(a) as tf:
        names = tf.getnames()
        meta = json.load(tf.extractfile("tables/_meta.json"))
    assert any(n.startswith("tables/nic_counters/host=") for n in names)
    assert meta["created_at"].startswith("20")


def test_bad_arguments_are_one_line_errors(tmp_path):
    from forensics.cli import main  # noqa: F401  (UserError handling lives in main)
    for args, needle in ((["--scenario", "nope"], "unknown scenario"),
                         ([], "--scenario is required"),
                         (["--scenario", "healthy", "--duration", "5x"], "bad duration"),
                         (["--scenario", "healthy", "--gpus-per-node", "9"], "gpus-per-node"),
                         (["--scenario", "healthy", "--out", str(tmp_path / "x.zip")], "must end with")):
        res = _run(*args)
        assert res.exit_code != 0
        assert needle in str(res.exception) + res.output


def test_truth_lives_outside_the_tables(tmp_path):
    out = tmp_path / "b.tar.gz"
    write_bundle(SimConfig("pfc_storm", nodes=2, gpus_per_node=1, duration_s=60, interval_s=5, seed=1), out,
                 tables=False)
    with tarfile.open(out) as tf:
        labels = json.load(io.BytesIO(tf.extractfile("truth/labels.json").read()))
        names = tf.getnames()
    assert labels["faults"][0]["kind"] == "pfc_storm"
    assert not any("truth" in n for n in names if not n.startswith("truth/"))
