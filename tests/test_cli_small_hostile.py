"""Smaller hostile-input cases of issue 15 item 12: a host name with a trailing newline, the mode of
a bundle merged from private (0600) bundles, an Xid number too long for its column."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.bundle.manifest import check_host_name
from forensics.errors import BundleError

EXE = Path(sys.executable).parent / "forensics"
DMESG = Path(__file__).resolve().parent / "fixtures" / "dmesg" / "dmesg--gpud-decode-iso-xid13-xid43.txt"


def cli(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("name", ["node01\n", "node01\r", "node 01", "", ".."])
def test_host_names_that_break_paths_or_markdown_are_refused(name):
    with pytest.raises(BundleError):
        check_host_name(name, "--host")


def test_bundle_host_option_with_newline(cli_env, tmp_path):
    r = cli(cli_env, "bundle", DMESG, "--host", "node01\n", "--out", tmp_path / "o.tar")
    assert r.returncode == 2 and "invalid host name 'node01\\n'" in r.stderr and not (tmp_path / "o.tar").exists()


def test_merging_private_bundles_gives_a_private_bundle(cli_env, tmp_path):
    a, b = tmp_path / "a.tar", tmp_path / "b.tar"
    assert cli(cli_env, "bundle", DMESG, "--host", "n1", "--out", a).returncode == 0
    assert cli(cli_env, "bundle", DMESG, "--host", "n2", "--out", b).returncode == 0
    os.chmod(a, 0o600)
    os.chmod(b, 0o644)
    r = cli(cli_env, "bundle", a, b, "--out", tmp_path / "m.tar")
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE((tmp_path / "m.tar").stat().st_mode) == 0o600
    os.chmod(a, 0o644)
    assert cli(cli_env, "bundle", a, b, "--out", tmp_path / "m2.tar").returncode == 0
    assert stat.S_IMODE((tmp_path / "m2.tar").stat().st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    u = os.umask(0o022)
    os.umask(u)
    return u


def test_xid_beyond_its_column_is_null_never_cut(cli_env, tmp_path):
    f = tmp_path / "dmesg.txt"
    f.write_text("[  100.000000] NVRM: Xid (PCI:0000:ab:00): 2147483648, pid=1, name=python, Ch 00000001\n"
                 "[  101.000000] NVRM: Xid (PCI:0000:ab:00): 79, pid=1, GPU has fallen off the bus.\n")
    r = cli(cli_env, "bundle", f, "--host", "n1", "--out", tmp_path / "b.tar")
    assert r.returncode == 0, r.stderr
    q = cli(cli_env, "query", tmp_path / "b.tar", "SELECT xid FROM kernel_log ORDER BY line_no", "--format", "json")
    assert json.loads(q.stdout) == [{"xid": None}, {"xid": 79}]  # never 214748364


DEEP = "[" * 100000 + "]" * 100000
HUGE = "1" * 5000


def _hostile_copy(cli_env, tmp_path, name: str, member: str, text: str) -> Path:
    """A bundle folder (built from a real dmesg) whose `member` is replaced by `text`, without the
    manifest's member list (so that the content, not its hash, is what is read)."""
    import tarfile

    b = tmp_path / "src.tar"
    if not b.exists():
        assert cli(cli_env, "bundle", DMESG, "--host", "n1", "--out", b).returncode == 0
    d = tmp_path / name
    with tarfile.open(b) as t:
        t.extractall(d, filter="data")
    man = json.loads((d / "manifest.json").read_text())
    man.pop("members", None)
    (d / "manifest.json").write_text(json.dumps(man))
    import shutil

    shutil.rmtree(d / "tables", ignore_errors=True)
    (d / member).write_text(text)
    return d


@pytest.mark.parametrize("member,text,says", [
    ("manifest.json", '{"format_version": 1, "hosts": ["n1"], "x": ' + DEEP + "}", "manifest.json: not valid JSON (nested too deeply)"),
    ("manifest.json", '{"format_version": ' + HUGE + ', "hosts": ["n1"]}', "manifest.json: not valid JSON (a number too long)"),
])
def test_hostile_manifest_is_one_line(cli_env, tmp_path, member, text, says):
    d = _hostile_copy(cli_env, tmp_path, "b", member, text)
    for args in (["info", d], ["analyze", d, "-q"]):
        r = cli(cli_env, *args)
        assert r.returncode == 2 and r.stderr == f"forensics: error: {says}\n", r.stderr


@pytest.mark.parametrize("member,text", [
    ("hosts/n1/host.json", '{"host": "n1", "x": ' + DEEP + "}"),
    ("hosts/n1/host.json", '{"host": "n1", "boot_time": ' + HUGE + "}"),
    ("hosts/n1/commands.jsonl", '{"name": ' + DEEP + "}\n"),
    ("hosts/n1/commands.jsonl", '{"name": "x", "exit_code": ' + HUGE + '}\n{"name": "y", "exit_code": 12345678901234567890}\n'),
])
def test_hostile_host_files_are_reported_not_fatal(cli_env, tmp_path, member, text):
    d = _hostile_copy(cli_env, tmp_path, "b", member, text)
    r = cli(cli_env, "info", d)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    if member.endswith("host.json"):
        assert "host.json: not valid JSON" in r.stdout + r.stderr
    r = cli(cli_env, "analyze", d, "-q", "--format", "json")
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
