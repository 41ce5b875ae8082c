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

from forensics.bundle.read import check_host_name
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
