"""Log files a source declares (``Spec`` mode ``copy``: Fabric Manager's /var/log/fabricmanager.log) are
copied at the end of a capture the way NCCL logs are: never through a link, only a regular file with
one link owned by root or the collector's user, the last `cap` bytes of a longer file; an absent file
is a failed copy in commands.jsonl with its reason, and the bundle is still written."""
from __future__ import annotations

import json
import os
import tarfile
import threading

import pytest

import forensics.collect.main as cmain
from forensics.collect import job
from forensics.collect.specs import Spec, by_name
from stand_ins.kit import make_bin

FM = by_name()["fabricmanager_log"]


class _Collector:
    """What job.copy_declared uses of the collector: raw(), record(), skipped(), stop."""

    def __init__(self, tmp_path):
        self.dir, self.stop, self.entries = tmp_path / "raw", threading.Event(), {}

    def raw(self, source, name):
        (self.dir / source).mkdir(parents=True, exist_ok=True)
        return str(self.dir / source / name), f"raw/{source}/{name}"

    def record(self, name, source, res, rel):
        self.entries[name] = {"argv": res.argv, "error": res.error, "exit_code": res.exit_code, "raw_file": rel,
                              "truncated": res.truncated}

    def skipped(self, name, source, argv, why):
        self.entries[name] = {"argv": argv, "error": why, "exit_code": None, "raw_file": None, "truncated": False}


def _copy(tmp_path, monkeypatch, root, spec=FM):
    monkeypatch.setenv("FORENSICS_FILES_ROOT", str(root))
    c = _Collector(tmp_path)
    job.copy_declared(c, spec)
    got = c.dir / "fabricmanager" / "fabricmanager.log"
    return (got.read_bytes() if got.exists() else None), c.entries[spec.name]


def _collect(tmp_path, monkeypatch, root):
    for k, v in make_bin(tmp_path / "bin", {}, tmp_path / "standins.log").items():
        monkeypatch.setenv(k, v)  # no tool of this machine is found
    (tmp_path / "sys" / "class" / "net").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("FORENSICS_SYSFS_ROOT", str(tmp_path / "sys"))
    monkeypatch.setenv("FORENSICS_FILES_ROOT", str(root))
    out = tmp_path / "b.tar"
    assert cmain.main(["--duration", "0", "--out", str(out), "--host", "n1", "--quiet", "--raw-only"]) == 0
    with tarfile.open(out) as tar:
        m = {x.name: tar.extractfile(x).read() for x in tar.getmembers() if x.isfile()}
    cmds = [json.loads(ln) for ln in m["hosts/n1/commands.jsonl"].decode().splitlines()]
    return m, {c["name"]: c for c in cmds}


def _log_dir(root):
    d = root / "var" / "log"
    d.mkdir(parents=True)
    return d


def test_fabric_manager_log_is_copied(tmp_path, monkeypatch):
    root = tmp_path / "root"
    body = b"[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0\n"
    (_log_dir(root) / "fabricmanager.log").write_bytes(body)
    m, cmds = _collect(tmp_path, monkeypatch, root)
    assert m["hosts/n1/raw/fabricmanager/fabricmanager.log"] == body
    c = cmds["fabricmanager_log"]
    assert c["argv"] == ["copy", "/var/log/fabricmanager.log"] and c["error"] is None and c["exit_code"] == 0
    # journalctl is absent on this stand-in node: a failed command, not a missing record
    assert cmds["fabricmanager_journal"]["error"] == "not found"


def test_absent_log_is_a_failed_copy(tmp_path, monkeypatch):
    root = tmp_path / "root"
    _log_dir(root)
    got, rec = _copy(tmp_path, monkeypatch, root)
    assert got is None and "No such file" in rec["error"] and rec["raw_file"] is None


def test_a_link_in_its_place_is_not_followed(tmp_path, monkeypatch):
    root = tmp_path / "root"
    secret = tmp_path / "secret.txt"
    secret.write_text("ROOT-ONLY-CONTENT\n")
    (_log_dir(root) / "fabricmanager.log").symlink_to(secret)
    got, rec = _copy(tmp_path, monkeypatch, root)
    assert got is None and "symbolic link" in rec["error"]


def test_a_long_log_keeps_its_end(tmp_path, monkeypatch):
    root = tmp_path / "root"
    lines = [b"[Jul 23 2024 07:%02d:%02d] [INFO] [tid 1] line %04d\n" % (i // 60, i % 60, i) for i in range(200)]
    (_log_dir(root) / "fabricmanager.log").write_bytes(b"".join(lines))
    small = Spec(FM.name, FM.argv, FM.source, FM.raw, mode="copy", when="end", cap=1000)
    got, rec = _copy(tmp_path, monkeypatch, root, small)
    # the last 1000 bytes, less the cut first line: whole lines only, the newest kept
    kept = [ln for ln in lines if got.startswith(ln) or ln in got]
    assert got == b"".join(lines[-len(kept):]) and 1000 - len(lines[0]) < len(got) <= 1000
    assert rec["truncated"] is True and rec["error"] is None


def test_a_tail_cut_on_a_line_boundary_keeps_that_line(tmp_path, monkeypatch):
    root = tmp_path / "root"
    lines = [b"[Jul 23 2024 07:00:%02d] [INFO] [tid 1] line %04d\n" % (i % 60, i) for i in range(100)]
    (_log_dir(root) / "fabricmanager.log").write_bytes(b"".join(lines))
    cap = sum(len(ln) for ln in lines[-10:])
    small = Spec(FM.name, FM.argv, FM.source, FM.raw, mode="copy", when="end", cap=cap)
    got, rec = _copy(tmp_path, monkeypatch, root, small)
    assert got == b"".join(lines[-10:]) and rec["truncated"] is True


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a file to another user")
def test_a_log_of_another_user_is_refused(tmp_path, monkeypatch):
    root = tmp_path / "root"
    p = _log_dir(root) / "fabricmanager.log"
    p.write_text("PLANTED\n")
    os.chown(p, 54321, 54321)
    monkeypatch.delenv("SUDO_UID", raising=False)
    got, rec = _copy(tmp_path, monkeypatch, root)
    assert got is None and "owned by uid 54321" in rec["error"]
