"""`forensics redact`, `forensics bundle --redact`, `forensics collect --redact`."""
from __future__ import annotations

import json
import os
import socket
import stat
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forensics.bundle.errors import BundleError
from forensics.cli import app
from forensics.redact.hooks import redacting_collect
from cli_kit import run_main
from stand_ins.kit import make_tree

FIX = Path(__file__).parent / "fixtures"
NCCL = (FIX / "nccl" / "nccl--nccl-issue795-aws-p4d-broken-pipe-remote-peer-closed-nccl2.14.3.txt").read_bytes()


def blob(path: Path) -> str:
    with tarfile.open(path) as tar:
        return "\n".join(m.name + "\n" + tar.extractfile(m).read().decode("latin-1") for m in tar.getmembers() if m.isfile())


def tree(tmp_path: Path) -> Path:
    nccl = NCCL.replace(b"a100-st-p4d24xlarge-22", b"secret-node-9")
    return make_tree(tmp_path / "b", {"secret-node-9": {
        "info": {"hostname": "secret-node-9.corp.example", "nics": [{"iface": "eth0", "mac": "b8:3f:d2:11:22:33"}]},
        "raw": {"nccl/job.log": nccl}}})


def test_redact_command(tmp_path):
    src = tree(tmp_path)
    out = tmp_path / "r.tar.gz"
    res = CliRunner().invoke(app, ["redact", str(src), "--out", str(out), "--key-file", str(tmp_path / "k"),
                                   "--mapping-out", str(tmp_path / "m.json"), "--format", "json", "--quiet"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["hosts"][0].startswith("host-") and summary["counts"]["hostnames"] >= 1
    text = blob(out)
    for v in ("secret-node-9", "corp.example", "b8:3f:d2:11:22:33", "10.200.84.247"):
        assert v not in text
    assert "b8:3f:d2:" in text  # the vendor part of a MAC stays
    assert json.loads((tmp_path / "m.json").read_text())["mappings"]["hostnames"]["secret-node-9"] == summary["hosts"][0]
    assert stat.S_IMODE(os.stat(tmp_path / "k").st_mode) == 0o600


def main_exit(args, monkeypatch, capsys) -> tuple[int, str]:
    """Run `forensics ARGS` through the real entry point (one-line errors, exit codes)."""
    res = run_main(args, monkeypatch, capsys)
    return res.returncode, res.stderr


def test_redact_command_errors(tmp_path, monkeypatch, capsys):
    src = tree(tmp_path)
    key = tmp_path / "k"
    code, err = main_exit(["redact", src, "--out", tmp_path / "r.tar", "--key-file", key, "--keep", "names"], monkeypatch, capsys)
    assert code == 2 and err.strip() == ("forensics: error: --keep: unknown class 'names' "
                                         "(classes: hostnames, ips, macs, gids, uuids, serials, users)")
    code, err = main_exit(["redact", tmp_path / "nope", "--out", tmp_path / "r.tar", "--key-file", key], monkeypatch, capsys)
    assert code == 2 and "no such file" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.tar").exists()


def test_bundle_redact(tmp_path):
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "job.log").write_bytes(NCCL)
    out = tmp_path / "b.tar"
    res = CliRunner().invoke(app, ["bundle", str(loose), "--out", str(out), "--redact", "--key-file", str(tmp_path / "k"),
                                   "--keep", "ips"])
    assert res.exit_code == 0, res.output
    text = blob(out)
    assert "a100-st-p4d24xlarge-22" not in text and "10.200.84.247" in text
    assert "a100-st-p4d24xlarge-22" not in res.output
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_collect_redact_default_name(tmp_path, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # every tool missing: a quick, valid bundle
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["collect", "--duration", "0", "--host", "secret-node-9", "--quiet", "--redact",
                                   "--key-file", str(tmp_path / "k")])
    assert res.exit_code == 0, res.output
    (out,) = [p for p in tmp_path.iterdir() if p.name.endswith(".tar.gz")]
    assert out.name.startswith("host-") and "secret" not in out.name
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    text = blob(out)
    assert "secret-node-9" not in text
    me = socket.gethostname().split(".")[0]
    if len(me) >= 4:
        assert me not in text
    man = json.loads(text.split("manifest.json\n", 1)[1].split("\nhosts/", 1)[0])
    assert man["redaction"]["redacted"] is True
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".forensics")] == []


def test_collect_redaction_failure_keeps_the_capture(tmp_path, capsys):
    def fake_run(duration, interval, out=None, *args, **kwargs):
        Path(out).write_bytes(b"not a tar")
        return 0

    run = redacting_collect(fake_run, True, key_file=tmp_path / "k")
    with pytest.raises(BundleError, match="redaction failed") as err:
        run(0, 1, str(tmp_path / "n.tar.gz"))
    assert str(tmp_path / "n.UNREDACTED.tar.gz") in str(err.value)
    assert (tmp_path / "n.UNREDACTED.tar.gz").read_bytes() == b"not a tar"
    assert not (tmp_path / "n.tar.gz").exists()
    assert capsys.readouterr().err == ""  # the library prints nothing: the CLI says it
    with pytest.raises(BundleError):
        redacting_collect(fake_run, True, keep=["bogus"])  # refused before anything is collected
