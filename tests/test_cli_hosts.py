"""Whose outputs loose files are (issue 14 item 4): --host makes several loose files one host's and
wins over host names printed inside NCCL lines; a lone file without a host is named after its
folder (README: "else the directory name"), said in a warning; analyze has --merge as bundle does."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).parent / "forensics"
FIX = ROOT / "tests" / "fixtures"
DMESG = FIX / "dmesg" / "dmesg--gpud-decode-iso-xid13-xid43.txt"
ETHTOOL = FIX / "ethtool" / "ethtool--be2net-rxq-txq-prefixed.txt"
NCCL = FIX / "nccl" / "nccl--nccltests-issue185-dgxh100-socketProgressOpt-conn-reset.txt"  # lines say host dgxh100-4


def cli(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)


def hosts_of(r: subprocess.CompletedProcess) -> list[str]:
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    return [h["host"] for h in json.loads(r.stdout)["hosts"]]


def test_several_loose_files_with_one_host_are_that_host(cli_env, tmp_path):
    r = cli(cli_env, "analyze", DMESG, ETHTOOL, NCCL, "--host", "n1", "-q", "--format", "json")
    assert hosts_of(r) == ["n1"]  # not refused, and not 'dgxh100-4' from the NCCL lines
    assert {c["source"] for c in json.loads(r.stdout)["coverage"]} == {"dmesg", "ethtool", "nccl"}
    r = cli(cli_env, "bundle", DMESG, NCCL, "--host", "n1", "--out", tmp_path / "b.tar")
    assert r.returncode == 0 and "1 host(s) (n1)" in r.stderr, r.stderr
    info = json.loads(cli(cli_env, "info", tmp_path / "b.tar", "--format", "json").stdout)
    q = cli(cli_env, "query", tmp_path / "b.tar", "SELECT DISTINCT host FROM nccl_log", "--format", "json")
    assert json.loads(q.stdout) == [{"host": "n1"}] and [h["host"] for h in info["hosts"]] == ["n1"]


def test_lone_file_takes_its_folder_name(cli_env, tmp_path):
    for f in (DMESG, ETHTOOL):
        d = tmp_path / f"gpu-node-{f.parent.name}"
        d.mkdir()
        shutil.copy(f, d / "output.txt")
        r = cli(cli_env, "analyze", d / "output.txt", "-q", "--format", "json")
        assert hosts_of(r) == [d.name]
        assert f"using its folder's name '{d.name}'" in r.stderr


def test_analyze_merge_like_bundle(cli_env, tmp_path):
    a, b = tmp_path / "a.tar", tmp_path / "b.tar"
    assert cli(cli_env, "bundle", DMESG, "--host", "n1", "--out", a).returncode == 0
    assert cli(cli_env, "bundle", ETHTOOL, "--host", "n1", "--out", b).returncode == 0
    r = cli(cli_env, "analyze", a, b, "-q")
    assert r.returncode == 2 and "use --merge to combine them" in r.stderr
    assert hosts_of(cli(cli_env, "analyze", a, b, "--merge", "-q", "--format", "json")) == ["n1"]
