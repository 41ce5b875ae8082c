"""What the user gives and what the help says: folders of bundles, compressed loose files,
damaged archives, views in `schema`, readable metavars, filled confirm commands (issue 14
items 1 and 8)."""
from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).parent / "forensics"
PFC = ROOT / "sample_bundles" / "pfc_storm.tar.zst"
XID = ROOT / "sample_bundles" / "xid_79.tar.zst"
DMESG = ROOT / "tests" / "fixtures" / "dmesg"


def cli(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)


def analysed(env, *args) -> dict:
    r = cli(env, "analyze", *args, "-q", "--format", "json")
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    return json.loads(r.stdout)


@pytest.fixture
def node_bundles(cli_env, tmp_path) -> Path:
    """A folder holding two node bundles (.tar.gz, as `forensics collect` writes them)."""
    d = tmp_path / "bundles"
    d.mkdir()
    for host, fixture in (("n1", "dmesg--gpud-decode-iso-xid13-xid43.txt"), ("n2", "dmesg--geerlingguy-cx5-raw-pci-domain-0004.txt")):
        r = cli(cli_env, "bundle", DMESG / fixture, "--host", host, "--out", d / f"{host}.tar.gz")
        assert r.returncode == 0, r.stderr
    return d


def test_folder_of_bundles_is_a_set_of_bundles(cli_env, node_bundles):
    a = analysed(cli_env, node_bundles)
    assert [h["host"] for h in a["hosts"]] == ["n1", "n2"]  # not one host named after the folder
    assert a["coverage"] == [{"source": "dmesg", "files": 2, "lines": 32, "unparsed": 1, "skipped": 0, "failed_files": 0}]
    assert any(f["kind"] == "gpu_xid" and f["hosts"] == ["n1"] for f in a["findings"])


def test_bundles_mixed_with_loose_files(cli_env, node_bundles):
    shutil.copy(DMESG / "dmesg--ec2-ctime-global-oom-redis.txt", node_bundles / "dmesg.txt")
    a = analysed(cli_env, node_bundles)
    # the loose file's host is the folder's name (README: "else the directory name")
    assert [h["host"] for h in a["hosts"]] == ["bundles", "n1", "n2"]
    assert a["coverage"][0]["files"] == 3
    r = cli(cli_env, "bundle", node_bundles, "--out", node_bundles.parent / "all.tar")
    assert r.returncode == 0 and "3 host(s) (bundles, n1, n2)" in r.stderr, r.stderr


def test_compressed_loose_file_accepted_by_analyze_as_by_bundle(cli_env, tmp_path):
    f = tmp_path / "dmesg.gz"
    f.write_bytes(gzip.compress((DMESG / "dmesg--gpud-decode-iso-xid13-xid43.txt").read_bytes()))
    a = analysed(cli_env, f, "--host", "n1")
    assert [h["host"] for h in a["hosts"]] == ["n1"] and a["coverage"][0]["source"] == "dmesg"


@pytest.mark.parametrize("name,data", [
    ("damaged.tar.gz", gzip.compress(b"this is not a tar file at all " * 100)),
    ("truncated.tar.zst", None),
])
def test_damaged_archive_is_not_a_tar_bundle_everywhere(cli_env, tmp_path, name, data):
    f = tmp_path / name
    f.write_bytes(data if data is not None else XID.read_bytes()[:3000])
    for args in (["info", f], ["analyze", f, "-q"], ["bundle", f, "--out", tmp_path / "o.tar"]):
        r = cli(cli_env, *args)
        assert r.returncode == 2 and r.stderr.startswith(f"forensics: error: {f}: not a tar bundle ("), (args, r.stderr)
        assert len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize("view", ["events", "nic_rates", "disk_saturation"])
def test_schema_describes_views(view):
    r = subprocess.run([str(EXE), "schema", view], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(view) and "a view (or macro)" in r.stdout and "queries --views" in r.stdout
    assert "(a counter that went down was reset: delta = its new value" in r.stdout or view != "nic_rates"


def test_queries_views_lists_no_internal_names():
    out = subprocess.run([str(EXE), "queries", "--views"], capture_output=True, text=True).stdout
    names = [line.split()[0] for line in out.split("views and macros")[1].splitlines()[1:] if line.strip()]
    assert "raw" not in names and "events" in names and "nic_rates" in names


def test_help_names_values_not_python_types(monkeypatch, capsys):
    from forensics.cli import app, command

    monkeypatch.setenv("COLUMNS", "200")
    cmd = command()
    names = sorted(c.name or c.callback.__name__ for c in app.registered_commands)
    for name in [None] + names:
        with pytest.raises(SystemExit) as exc:
            cmd.main(args=([name] if name else []) + ["--help"], prog_name="forensics")
        assert exc.value.code == 0
        text = capsys.readouterr().out
        assert "Usage" in text
        bad = re.findall(r"<(?:bool|str|int|float|path|list\[[^\]]*\])>|\{[a-z_]+\}", text)
        assert not bad, (name, bad)
    cmd.main(args=["analyze", "--help"], prog_name="forensics", standalone_mode=False)
    text = capsys.readouterr().out
    assert "forensics analyze [OPTIONS] BUNDLES..." in text and re.search(r"--host\s+HOST", text)


def test_confirm_commands_name_the_interface(cli_env):
    a = analysed(cli_env, PFC)
    storms = [f for f in a["findings"] if f["kind"] == "pfc_storm"]
    assert storms and all(f["confirm"].startswith("ethtool -S enp91s0np0 ") and "<iface>" not in f["confirm"] for f in storms)


def test_markdown_ends_with_a_newline(cli_env):
    r = cli(cli_env, "analyze", XID, "-q", "--format", "md")
    assert r.stdout.endswith("\n") and not r.stdout.endswith("\n\n")


def test_year_is_stated_for_loose_inputs_of_bundle_and_analyze(cli_env, tmp_path):
    """--year (not only on `parse`): the year of a loose syslog's times, which print none; without it the
    file's modification time gives the year (here 2019), and the rows say the year was inferred."""
    import os

    log = tmp_path / "kern.log"
    shutil.copy(DMESG / "dmesg--sonic-issue7310-syslog-level-word-igb-link-down.txt", log)
    os.utime(log, (1561939200, 1561939200))  # 2019-07-01
    for year, want in ((2021, "2021-04-09"), (None, "2019-04-09")):
        out = tmp_path / f"b{year}.tar"
        r = cli(cli_env, "bundle", log, "--host", "sw1", "--out", out, *(["--year", year] if year else []))
        assert r.returncode == 0, r.stderr
        q = cli(cli_env, "query", out, "select cast(ts as varchar) as t, ts_quality from kernel_log", "--format", "json")
        rows = json.loads(q.stdout)
        assert [r["ts_quality"] for r in rows] == ["local_year_inferred"] and rows[0]["t"].startswith(want), rows
    r = cli(cli_env, "analyze", log, "--host", "sw1", "--year", "1969")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "--year" in cli(cli_env, "analyze", "--help").stdout


def test_bundle_says_what_each_loose_file_was_taken_to_be(cli_env, tmp_path):
    out = tmp_path / "b.tar"
    r = cli(cli_env, "bundle", DMESG / "dmesg--linux-asm1083-commit-untimed-aer-indented.txt", "--host", "n1", "--out", out)
    assert r.returncode == 0, r.stderr
    line = [ln for ln in r.stderr.splitlines() if "dmesg--linux-asm1083" in ln]
    assert line == ["  dmesg--linux-asm1083-commit-untimed-aer-indented.txt: dmesg of host n1 (confidence 0.90: "
                    "5 of 5 lines are kernel messages printed without a time (5 of a shape only the kernel prints) "
                    "(read without the paste's prefix: indented 2 spaces))"]
