"""Smaller hostile-input cases of issue 15 (items 11 and 12): a host name with a trailing newline, the
mode of a bundle merged from private (0600) bundles, an Xid number too long for its column, a
sosreport whose folders link outside it, JSON members nested too deeply or holding 5000-digit
numbers. Command-line cases run through :func:`hostile_kit.hostile` (the suite's five properties;
see the map in tests/test_hostile_inputs.py)."""
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
from hostile_kit import CANARY, hostile

EXE = Path(sys.executable).parent / "forensics"
DMESG = Path(__file__).resolve().parent / "fixtures" / "dmesg" / "dmesg--gpud-decode-iso-xid13-xid43.txt"


def cli(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("name", ["node01\n", "node01\r", "node 01", "", ".."])
def test_host_names_that_break_paths_or_markdown_are_refused(name):
    with pytest.raises(BundleError):
        check_host_name(name, "--host")


def test_bundle_host_option_with_newline(tmp_path):
    hostile(["bundle", DMESG, "--host", "node01\n", "--out", tmp_path / "o.tar"], tmp_path,
            fails="invalid host name 'node01\\n'", max_mb=300)
    assert not (tmp_path / "o.tar").exists()


def test_merging_private_bundles_gives_a_private_bundle(cli_env, tmp_path):
    a, b = tmp_path / "a.tar", tmp_path / "b.tar"
    assert cli(cli_env, "bundle", DMESG, "--host", "n1", "--out", a).returncode == 0
    assert cli(cli_env, "bundle", DMESG, "--host", "n2", "--out", b).returncode == 0
    os.chmod(a, 0o600)
    os.chmod(b, 0o644)
    hostile(["bundle", a, b, "--out", tmp_path / "m.tar"], tmp_path, max_mb=400, writes=[tmp_path / "m.tar"])
    assert stat.S_IMODE((tmp_path / "m.tar").stat().st_mode) == 0o600
    os.chmod(a, 0o644)
    hostile(["bundle", a, b, "--out", tmp_path / "m2.tar"], tmp_path, max_mb=400, writes=[tmp_path / "m2.tar"])
    assert stat.S_IMODE((tmp_path / "m2.tar").stat().st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    u = os.umask(0o022)
    os.umask(u)
    return u


def test_xid_beyond_its_column_is_null_never_cut(cli_env, tmp_path):
    f = tmp_path / "dmesg.txt"
    f.write_text("[  100.000000] NVRM: Xid (PCI:0000:ab:00): 2147483648, pid=1, name=python, Ch 00000001\n"
                 "[  101.000000] NVRM: Xid (PCI:0000:ab:00): 79, pid=1, GPU has fallen off the bus.\n")
    hostile(["bundle", f, "--host", "n1", "--out", tmp_path / "b.tar"], tmp_path, max_mb=400, writes=[tmp_path / "b.tar"])
    q = hostile(["query", tmp_path / "b.tar", "SELECT xid, message FROM kernel_log ORDER BY line_no", "--format", "json"],
                tmp_path, max_mb=400)
    rows = json.loads(q.out)
    assert [r["xid"] for r in rows] == [None, 79]  # never 214748364
    assert "2147483648" in rows[0]["message"]  # the line itself is kept


def test_a_sosreport_whose_folders_link_outside_is_read_inside_only(tmp_path):
    """A sosreport folder whose ``etc`` and ``sos_commands/kernel`` are links to folders outside it: the
    host name is not taken from the outside ``etc/hostname`` (the report's own name gives it), and the
    dmesg outside is not read."""
    outside = tmp_path / "outside"
    (outside / "etc").mkdir(parents=True)
    (outside / "etc" / "hostname").write_text(CANARY + "\n")
    (outside / "kernel").mkdir()
    (outside / "kernel" / "dmesg").write_text(f"[    1.000000] {CANARY}\n")
    sos = tmp_path / "sosreport-gpu17-2024-05-02-abcdef"
    (sos / "sos_commands" / "networking").mkdir(parents=True)
    (sos / "sos_commands" / "networking" / "ethtool_-S_eth0").write_text("NIC statistics:\n     rx_bytes: 5\n")
    (sos / "sos_commands" / "kernel").symlink_to(outside / "kernel")
    (sos / "etc").symlink_to(outside / "etc")
    out = tmp_path / "b.tar"
    hostile(["bundle", sos, "--out", out], tmp_path, max_mb=400, writes=[out])
    q = hostile(["query", out, "SELECT host FROM hosts", "--format", "json"], tmp_path, max_mb=400)
    assert json.loads(q.out) == [{"host": "gpu17"}]


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
        assert hostile(args, tmp_path, fails=says, max_mb=400).err == f"forensics: error: {says}\n"


@pytest.mark.parametrize("member,text", [
    ("hosts/n1/host.json", '{"host": "n1", "x": ' + DEEP + "}"),
    ("hosts/n1/host.json", '{"host": "n1", "boot_time": ' + HUGE + "}"),
    ("hosts/n1/commands.jsonl", '{"name": ' + DEEP + "}\n"),
    ("hosts/n1/commands.jsonl", '{"name": "x", "exit_code": ' + HUGE + '}\n{"name": "y", "exit_code": 12345678901234567890}\n'),
])
def test_hostile_host_files_are_reported_not_fatal(cli_env, tmp_path, member, text):
    d = _hostile_copy(cli_env, tmp_path, "b", member, text)
    r = hostile(["info", d], tmp_path, max_mb=400, writes=[d / "tables"])  # (a folder bundle is parsed in place)
    if member.endswith("host.json"):
        assert "host.json: not valid JSON" in r.out + r.err
    r = hostile(["analyze", d, "-q", "--format", "json"], tmp_path, max_mb=400, rc_ok=(0, 1),
                writes=[d / "tables"])
    assert {"n1"} <= {h for f in json.loads(r.out)["findings"] for h in f["hosts"]}  # the dmesg's Xids still found
