"""`forensics bundle` and `forensics info`: loose files, sosreports, bug reports, merging, user errors."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import polars as pl
import pytest

import forensics.sources as sources
from forensics.importers.build import build_bundle
from forensics.bundle.errors import BundleError
from forensics.bundle.read import open_bundle
from cli_kit import run_main
from stand_ins.kit import make_tree

FIX = Path(__file__).parent / "fixtures"
FORENSICS = [str(Path(sys.executable).parent / "forensics")]


def fixture(source: str, contains: str = "") -> Path:
    """A real fixture of `source` (skip when that source or its fixtures are not there yet)."""
    if source not in sources.registry():
        pytest.skip(f"source {source} not registered yet")
    files = sorted(p for p in (FIX / source).glob(f"{source}--*{contains}*") if not p.name.endswith(".json"))
    if not files:
        pytest.skip(f"no {source} fixture matching {contains!r}")
    return files[0]


def cli(args, tmp_path, capsys=None, monkeypatch=None):
    """Run the CLI: in-process with capsys/monkeypatch given (fast), else as a real process."""
    import os

    if capsys is None:
        env = dict(os.environ, FORENSICS_CACHE_DIR=str(tmp_path / "cache"))
        return subprocess.run(FORENSICS + [str(a) for a in args], capture_output=True, text=True, env=env, timeout=120)
    monkeypatch.setenv("FORENSICS_CACHE_DIR", str(tmp_path / "cache"))
    return run_main(args, monkeypatch, capsys)


def tables(root: Path, table: str) -> pl.DataFrame:
    files = sorted((root / "tables" / table).glob("host=*/part-0.parquet"))
    return pl.read_parquet(files, hive_partitioning=False) if files else pl.DataFrame()


def test_loose_directory(tmp_path):
    d = tmp_path / "gpu-node-3"
    d.mkdir()
    (d / "kern.log").write_bytes(fixture("dmesg", "xe9680").read_bytes())
    (d / "ethtool-eth2.txt").write_bytes(fixture("ethtool", "mlx5-xdp-kernel5.15").read_bytes())
    (d / "notes.md").write_text("the job slowed down at 10:15\n")
    (d / "dmesg.txt.gz").write_bytes(gzip.compress(fixture("dmesg", "decode-iso").read_bytes()))
    warnings = []
    summary = build_bundle([d], tmp_path / "out.tar.zst", warn=warnings.append)
    assert summary["hosts"] == ["gpu-node-3"] and summary["kind"] == "loose"
    assert any("notes.md" in w for w in warnings)
    b = open_bundle(tmp_path / "out.tar.zst", workdir=tmp_path / "w")
    raw = sorted(p.relative_to(b.root).as_posix() for p in (b.root / "hosts").rglob("raw/*/*"))
    assert raw == ["hosts/gpu-node-3/raw/dmesg/dmesg.txt", "hosts/gpu-node-3/raw/dmesg/kern.log",
                   "hosts/gpu-node-3/raw/ethtool/ethtool-eth2.txt"]
    info = json.loads((b.root / "hosts/gpu-node-3/host.json").read_text())
    assert info["files"]["hosts/gpu-node-3/raw/ethtool/ethtool-eth2.txt"]["original"] == "ethtool-eth2.txt"
    kl = tables(b.root, "kernel_log")
    assert kl.height > 0 and set(kl["host"]) == {"gpu-node-3"}


def test_loose_file_host_from_host_or_its_folder(tmp_path):
    d = tmp_path / "node07"
    d.mkdir()
    f = d / "x.txt"
    f.write_bytes(fixture("dmesg", "xe9680").read_bytes())
    said = []
    build_bundle([f], tmp_path / "n.tar", warn=said.append)  # README: else the directory name, said
    assert open_bundle(tmp_path / "n.tar", workdir=tmp_path / "w0").hosts == ["node07"]
    assert said == ["x.txt: names no host; using its folder's name 'node07' (use --host NAME to say which)"]
    build_bundle([f], tmp_path / "o.tar", host="node09", tz="Europe/Berlin")
    b = open_bundle(tmp_path / "o.tar", workdir=tmp_path / "w")
    assert b.hosts == ["node09"]
    assert json.loads((b.root / "hosts/node09/host.json").read_text())["timezone"] == "Europe/Berlin"


def _sosreport(root: Path, host: str) -> Path:
    sos = root / f"sosreport-{host}-2025-02-23-abcdef"
    (sos / "sos_commands/kernel").mkdir(parents=True)
    (sos / "sos_commands/networking").mkdir(parents=True)
    (sos / "sos_commands/host").mkdir(parents=True)
    (sos / "sos_commands/kernel/dmesg").write_bytes(fixture("dmesg", "xe9680").read_bytes())
    (sos / "sos_commands/kernel/uname_-a").write_text(f"Linux {host} 5.15.0-112-generic #122-Ubuntu SMP x86_64 GNU/Linux\n")
    (sos / "sos_commands/networking/ethtool_-S_ens1f0np0").write_bytes(fixture("ethtool", "mlx5-xdp-kernel5.15").read_bytes())
    (sos / "sos_commands/networking/ethtool_-i_ens1f0np0").write_text("driver: mlx5_core\n")
    (sos / "sos_commands/host/hostname").write_text(f"{host}.cluster.example\n")
    return sos


def test_sosreport_directory_and_tarball(tmp_path):
    sos = _sosreport(tmp_path / "a", "hgx07")
    build_bundle([sos], tmp_path / "d.tar")
    b = open_bundle(tmp_path / "d.tar", workdir=tmp_path / "w1")
    assert b.hosts == ["hgx07"]
    info = json.loads((b.root / "hosts/hgx07/host.json").read_text())
    assert info["kernel"] == "5.15.0-112-generic" and info["hostname"] == "hgx07.cluster.example"
    nic = tables(b.root, "nic_counters")
    assert set(nic["iface"]) == {"ens1f0np0"}  # from the sos file name, not the bundle file name
    # the same report as the .tar.xz sos writes, with a symlink to the outside that must not matter
    tarball = tmp_path / "sosreport-hgx07.tar.xz"
    with tarfile.open(tarball, "w:xz") as tar:
        tar.add(sos, arcname=sos.name)
        link = tarfile.TarInfo(f"{sos.name}/etc/mtab")
        link.type, link.linkname = tarfile.SYMTYPE, "/proc/self/mounts"
        tar.addfile(link)
    build_bundle([tarball], tmp_path / "t.tar.gz")
    b2 = open_bundle(tmp_path / "t.tar.gz", workdir=tmp_path / "w2")
    assert sorted(p.name for p in (b2.root / "hosts/hgx07/raw").rglob("*.txt")) == ["dmesg.txt", "ens1f0np0.txt"]


def _bug_report(host: str) -> bytes:
    """The layout nvidia-bug-report.sh writes: blocks appended through `gzip -c >>` (many gzip members)."""
    sep = "____________________________________________\n\n"
    blocks = [
        sep + "Start of NVIDIA bug report log file.  Please include this file, along\nwith a detailed description "
        "of your problem, when reporting a graphics\ndriver bug via the NVIDIA Linux forum (see forums.developer.nvidia.com)\n"
        "or by sending email to 'linux-bugs@nvidia.com'.\n\nnvidia-bug-report.sh Version: 35109185\n\n"
        f"Date: Sun Feb 23 16:31:02 UTC 2025\nuname: Linux {host} 5.15.0-112-generic #122-Ubuntu SMP Thu May 23 07:48:21 UTC 2024 x86_64 x86_64 x86_64 GNU/Linux\ncommand line flags: \n\n",
        sep + "*** /etc/issue\n*** ls: -rw-r--r-- 1 root root 26 2024-04-01 12:00:00.000000000 +0000 /etc/issue\nUbuntu 22.04.4 LTS \\n \\l\n\n",
        sep + "dmesg:\n\n" + fixture("dmesg", "raw").read_text(),
        sep + "/usr/bin/nvidia-smi --query\n\n" + "Timestamp                                 : Sun Feb 23 16:31:05 2025\n\n"
        "/usr/bin/nvidia-smi --query --unit\n\nTimestamp                                 : Sun Feb 23 16:31:06 2025\n\n",
        sep + "\nEnd of NVIDIA bug report log file.\n",
    ]
    return b"".join(gzip.compress(b.encode()) for b in blocks)


def test_nvidia_bug_report(tmp_path):
    p = tmp_path / "nvidia-bug-report.log.gz"
    p.write_bytes(_bug_report("dgx-a100-12"))
    build_bundle([p], tmp_path / "o.tar")
    b = open_bundle(tmp_path / "o.tar", workdir=tmp_path / "w")
    assert b.hosts == ["dgx-a100-12"]
    raw = b.root / "hosts/dgx-a100-12/raw"
    assert (raw / "dmesg/nvidia-bug-report-dmesg.txt").read_text() == fixture("dmesg", "raw").read_text()
    assert (raw / "nvidia_smi/nvidia-bug-report-q.txt").read_text().startswith("Timestamp")
    assert "--unit" not in (raw / "nvidia_smi/nvidia-bug-report-q.txt").read_text()


def _node_bundle(tmp_path, host, name=None):
    root = make_tree(tmp_path / (name or host), {host: {"info": {"timezone": "UTC"},
                                                        "raw": {"dmesg/dmesg.txt": fixture("dmesg", "xe9680").read_bytes()}}})
    from forensics.bundle.write import write_tree

    return write_tree(root, tmp_path / f"{name or host}.tar.gz")


def test_merge_and_duplicates(tmp_path):
    a, b, a2 = _node_bundle(tmp_path, "node01"), _node_bundle(tmp_path, "node02"), _node_bundle(tmp_path, "node01", "again")
    summary = build_bundle([a, b], tmp_path / "cluster.tar.zst")
    assert summary["hosts"] == ["node01", "node02"] and summary["kind"] == "cluster"
    with pytest.raises(BundleError, match="use --merge"):
        build_bundle([a, a2], tmp_path / "dup.tar")
    assert not (tmp_path / "dup.tar").exists()
    build_bundle([a, a2], tmp_path / "merged.tar", merge=True)
    m = open_bundle(tmp_path / "merged.tar", workdir=tmp_path / "w")
    assert [p.name for p in (m.root / "hosts/node01/raw/dmesg").iterdir()] == ["dmesg.txt"]  # identical: kept once


def test_cli_bundle_info_and_errors(tmp_path, capsys, monkeypatch):
    a, b = _node_bundle(tmp_path, "node01"), _node_bundle(tmp_path, "node02")
    out = tmp_path / "incident.tar.gz"
    r = cli(["bundle", a, b, "--out", out], tmp_path, capsys, monkeypatch)
    assert r.returncode == 0, r.stderr
    r = cli(["info", out, "--format", "json"], tmp_path, capsys, monkeypatch)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["format_version"] == 1 and [h["host"] for h in info["hosts"]] == ["node01", "node02"]
    dm = [s for s in info["sources"] if s["source"] == "dmesg"]
    assert len(dm) == 2 and all(s["rows"]["kernel_log"] > 0 and s["first"] and s["last"] for s in dm)
    text = cli(["info", out], tmp_path, capsys, monkeypatch).stdout
    assert "node02" in text and "dmesg" in text

    # user errors: one line on stderr, exit 2, no traceback, no output file
    hostile = tmp_path / "hostile.tar"
    with tarfile.open(hostile, "w") as tar:
        ti = tarfile.TarInfo("../../etc/cron.d/evil")
        ti.size = 0
        tar.addfile(ti)
    cases = (["info", hostile], ["bundle", hostile, "--out", tmp_path / "x.tar"],
             ["bundle", a, a.with_name("missing.tar"), "--out", tmp_path / "y.tar"],
             ["bundle", a, "--out", tmp_path / "z.zip"], ["bundle", a, "--tz", "Mars/Olympus", "--out", tmp_path / "w.tar"])
    for i, args in enumerate(cases):
        r = cli(args, tmp_path) if i == 0 else cli(args, tmp_path, capsys, monkeypatch)  # one as a real process
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.startswith("forensics: error: ")
    assert not [p for p in tmp_path.iterdir() if p.name in ("x.tar", "y.tar", "z.zip", "w.tar") or p.name.startswith(".forensics")]
