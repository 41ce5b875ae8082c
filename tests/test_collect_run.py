"""`forensics collect` with stand-ins on PATH that replay real outputs, hang, fail, print garbage or 100 MB."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import polars as pl
import pytest

import forensics.collect.main as cmain
import forensics.collect.proc as proc
import forensics.sources as sources
from forensics.bundle.read import open_bundle
from forensics.collect.specs import SPECS
from forensics.importers.build import build_bundle
from forensics.ingest import ingest_bundle
from forensics.report.info import bundle_info
from forensics.sources import ParseContext
from stand_ins.kit import live_standins, make_bin

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures"


def fx(source: str, contains: str) -> str | None:
    files = sorted(p for p in (FIX / source).glob(f"{source}--*{contains}*") if not p.name.endswith(".json"))
    return str(files[0]) if files else None


def replay_config(pid: int | None = None, variant: int = 0) -> dict:
    """Stand-ins replaying real captured outputs (tests/fixtures); a tool without a fixture is left out (missing)."""
    eth = [fx("ethtool", "mlx5-xdp"), fx("ethtool", "bnxt_en"), fx("ethtool", "mlx5-cx4lx")]
    q = [fx("nvidia_smi", "q-a10-535"), fx("nvidia_smi", "q-a-h100"), fx("nvidia_smi", "q-v100-410-throttle")]
    cfg = {
        "ethtool": {"by_arg": {"ens1f0np0": eth[variant % 3], "ens2f0np0": eth[(variant + 1) % 3]}},
        "dmesg": {"by_arg": {"iso": [fx("dmesg", "decode-iso"), fx("dmesg", "journalctl-short-iso"), fx("dmesg", "decode-iso")][variant % 3]}},
        "iostat": {"file": [fx("iostat", "sysstat-test-x-two"), fx("iostat", "xt-two-digit"), fx("iostat", "ubuntu2010-x")][variant % 3]},
        "sar": {"by_arg": {"-u": fx("sar", "centos74-u"), "DEV": fx("sar", "centos76-n-DEV"), "ALL": fx("sar", "u-ALL-P-ALL"),
                           "-r": fx("sar", "r-old-columns")}},
        "numactl": {"file": [fx("numactl", "princeton"), fx("numactl", "leonardo"), fx("numactl", "sigma")][variant % 3]},
        "nvidia-smi": {
            "by_arg": {"-q": q[variant % 3], "-q -x": fx("nvidia_smi", "qx-t4"), "topo -m": fx("nvidia_smi", "topo-8xh100"),
                       "--query-gpu=timestamp": fx("nvidia_smi", "csv-header-units-timestamp"),
                       "nvlink": fx("nvidia_smi", "nvlink-gt-d-6xa100-pcie-two-snapshots")},
            "head_by_arg": {"nvlink": 150},  # the first of its two outputs (6 GPUs x 25 lines)
            "loop_on": ["-lms"],
            "text": {"--query-compute-apps": f"{pid}, GPU-aaaa-1111, 00000000:18:00.0, 81000 MiB\n" if pid else "",
                     "--query-gpu=index,uuid": "0, GPU-aaaa-1111, 00000000:18:00.0\n1, GPU-bbbb-2222, 00000000:2A:00.0\n"},
        },
    }
    for tool, c in list(cfg.items()):
        files = [v for k, v in c.get("by_arg", {}).items()] + ([c["file"]] if "file" in c else [])
        if any(f is None for f in files):
            c["by_arg"] = {k: v for k, v in c.get("by_arg", {}).items() if v}
            if not c.get("by_arg") and not c.get("file"):
                del cfg[tool]
    return cfg


def fake_sysfs(root: Path, nics: list[tuple[str, str, int, str | None]]) -> Path:
    """/sys/class/net with PCI device links, NUMA nodes, drivers, and /sys/class/infiniband."""
    for iface, pci, numa, rdma in nics:
        dev = root / "devices/pci0000:17" / pci
        (dev / "net").mkdir(parents=True, exist_ok=True)
        (dev / "numa_node").write_text(f"{numa}\n")
        drv = root / "bus/pci/drivers/mlx5_core"
        drv.mkdir(parents=True, exist_ok=True)
        (dev / "driver").symlink_to(drv)
        net = root / "class/net" / iface
        net.mkdir(parents=True)
        (net / "device").symlink_to(dev)
        for k, v in (("address", "b8:3f:d2:00:00:01"), ("mtu", "9000"), ("speed", "400000"), ("operstate", "up")):
            (net / k).write_text(v + "\n")
        if rdma:
            ib = root / "class/infiniband" / rdma
            ib.mkdir(parents=True)
            (ib / "device").symlink_to(dev)
            (dev / "net" / iface).mkdir()
    virt = root / "class/net/veth1234"
    virt.mkdir(parents=True)
    (virt / "mtu").write_text("1500\n")
    (virt / "speed").write_text("-1\n")
    return root


@pytest.fixture
def node_env(tmp_path, monkeypatch):
    """Environment of a fake GPU node: stand-ins on PATH, a sysfs with two mlx5 NICs."""
    def setup(config, name="bin"):
        log = tmp_path / f"{name}.log"
        env = make_bin(tmp_path / name, config, log)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("FORENSICS_SYSFS_ROOT", str(fake_sysfs(tmp_path / f"sys-{name}", [
            ("ens1f0np0", "0000:18:00.0", 0, "mlx5_0"), ("ens2f0np0", "0000:2a:00.0", 1, "mlx5_1")])))
        monkeypatch.setenv("TZ", "Europe/Berlin")
        return log
    return setup


def members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def commands(m: dict, host: str) -> list[dict]:
    return [json.loads(ln) for ln in m[f"hosts/{host}/commands.jsonl"].decode().splitlines()]


def _training_process(tmp_path):
    """A stand-in training process with NCCL settings and a secret in its environment."""
    env = dict(os.environ, NCCL_IB_HCA="mlx5_0,mlx5_1", NCCL_DEBUG="INFO", CUDA_VISIBLE_DEVICES="0",
               TORCH_NCCL_ASYNC_ERROR_HANDLING="1", OMP_NUM_THREADS="8", AWS_SECRET_ACCESS_KEY="hunter2-secret")
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "--model", "llama"], env=env)


def test_round_trip_three_hosts(tmp_path, node_env, monkeypatch):
    """collect (stand-ins) on 3 hosts -> bundle merge -> info -> tables equal the parsers' output on the raw files."""
    train = _training_process(tmp_path)
    nccl = tmp_path / "nccl-logs"
    nccl.mkdir()
    nccl_fixture = fx("nccl", "issue1814-ib-completion")
    try:
        outs = []
        for i, host in enumerate(("gpu-a01", "gpu-a02", "gpu-a03")):
            log = node_env(replay_config(train.pid if i == 0 else None, variant=i), name=f"bin{i}")
            duration = "1" if i == 0 else "0"  # one sampled node, two single-snapshot nodes (keeps the test short)
            args = ["--duration", duration, "--interval", "0.5", "--out", str(tmp_path / f"{host}.tar.gz"), "--host", host, "--quiet"]
            if i:
                args.append("--raw-only")  # the merge parses them
            if nccl_fixture:
                shutil.copy(nccl_fixture, nccl / f"nccl.{host}.4242.log")
                args += ["--nccl-log", str(nccl / f"nccl.{host}.*.log")]
            assert cmain.main(args, parse_tables=ingest_bundle) == 0
            outs.append(tmp_path / f"{host}.tar.gz")
            assert live_standins(log) == []
    finally:
        train.kill()
        train.wait()

    m = members(outs[0])
    assert [n for n in m if not n.startswith(("hosts/", "tables/"))] == ["manifest.json"]
    listed = json.loads(m["manifest.json"])["members"]  # every member with its size and SHA-256
    assert listed == {n: {"size": len(d), "sha256": hashlib.sha256(d).hexdigest()} for n, d in m.items() if n != "manifest.json"}
    _altered_raw_is_refused(outs[1], tmp_path)
    assert "tables/_meta.json" in m and "tables/_meta.json" not in members(outs[1])
    host_json = json.loads(m["hosts/gpu-a01/host.json"])
    nic = {n["iface"]: n for n in host_json["nics"]}
    assert nic["ens1f0np0"]["pci_addr"] == "0000:18:00.0" and nic["ens1f0np0"]["numa_node"] == 0
    assert nic["ens1f0np0"]["rdma_dev"] == "mlx5_0" and nic["ens1f0np0"]["driver"] == "mlx5_core"
    assert nic["veth1234"]["speed_mbps"] is None and host_json["timezone"] == "Europe/Berlin"
    assert host_json["clock"]["monotonic_s"] > 0 and host_json["collector"]["interrupted"] is False
    cmds = commands(m, "gpu-a01")
    eth = [c for c in cmds if c["name"] == "ethtool_s"]
    assert {c["argv"][-1] for c in eth} == {"ens1f0np0", "ens2f0np0"} and len(eth) >= 4  # veth not sampled
    assert all(c["exit_code"] == 0 for c in eth)
    assert m["hosts/gpu-a01/raw/ethtool/ens1f0np0.txt"].startswith(b"#### forensics-sample ts=")
    nvl = [c for c in cmds if c["name"] == "nvidia_smi_nvlink"]
    raw_nvl = m["hosts/gpu-a01/raw/nvidia_smi/nvlink-gt-d.txt"]
    assert len(nvl) >= 2 and all(c["exit_code"] == 0 for c in nvl) and nvl[0]["argv"] == ["nvidia-smi", "nvlink", "-gt", "d"]
    assert raw_nvl.startswith(b"#### forensics-sample ts=") and raw_nvl.count(b"#### forensics-sample ") == len(nvl)
    qgpu = [c for c in cmds if c["name"] == "nvidia_smi_query_gpu"]
    if qgpu:  # `nvidia-smi -l` ends when told to: not a failure
        assert qgpu[-1]["error"] is None and not qgpu[-1]["timed_out"]
    sar = [c for c in cmds if c["name"] == "sar_u"]
    assert sar and sar[0]["argv"] == ["sar", "-u", "1", "2"] and sar[0]["exit_code"] == 0
    procs = [json.loads(ln) for ln in m["hosts/gpu-a01/raw/collector/processes.jsonl"].decode().splitlines()]
    assert procs[0]["pid"] == train.pid and procs[0]["gpus"] == [0] and procs[0]["gpu_uuids"] == ["GPU-aaaa-1111"]
    assert procs[0]["env"] == {"CUDA_VISIBLE_DEVICES": "0", "NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "mlx5_0,mlx5_1",
                               "OMP_NUM_THREADS": "8", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1"}
    assert b"hunter2-secret" not in b"".join(m.values())
    assert procs[0]["cmdline"][-2:] == ["--model", "llama"] and procs[0]["cpus_allowed_list"]

    merged = tmp_path / "incident.tar.zst"
    summary = build_bundle(outs, merged)
    assert summary["hosts"] == ["gpu-a01", "gpu-a02", "gpu-a03"] and summary["kind"] == "cluster"
    info = bundle_info(merged, cache_dir=tmp_path / "cache")
    assert [h["host"] for h in info["hosts"]] == ["gpu-a01", "gpu-a02", "gpu-a03"]
    srcs = {(s["host"], s["source"]) for s in info["sources"]}
    assert ("gpu-a02", "ethtool") in srcs and ("gpu-a03", "dmesg") in srcs

    b = open_bundle(merged, workdir=tmp_path / "w")
    _tables_match_parsers(b.root)
    nv = pl.concat([pl.read_parquet(x, hive_partitioning=False)
                    for x in sorted((b.root / "tables/nvlink_counters").glob("host=*/part-0.parquet"))])
    a01 = nv.filter(pl.col("host") == "gpu-a01")
    assert a01["sample_no"].n_unique() == len(nvl) and a01.height == len(nvl) * 6 * 12 * 2
    assert set(a01["ts_quality"].to_list()) == {"sampled"} and a01["ts"].null_count() == 0
    assert set(a01["counter"].to_list()) == {"data"} and a01["link"].max() == 11
    assert nv.filter(pl.col("host") == "gpu-a02")["sample_no"].n_unique() == 1  # --duration 0: one snapshot


def _altered_raw_is_refused(bundle: Path, tmp_path: Path) -> None:
    """A collector bundle whose raw file was altered in place (same size) after it was written: the
    raw file is read from the archive, never extracted, and its SHA-256 is checked as it is read."""
    import io

    from forensics.bundle.errors import BundleError
    from forensics.ingest import load

    bad = tmp_path / "altered.tar.gz"
    with tarfile.open(bundle) as src, tarfile.open(bad, "w:gz") as out:
        victim = next(m.name for m in src.getmembers() if "/raw/" in m.name and m.size > 10)
        for mem in src.getmembers():
            data = src.extractfile(mem).read() if mem.isfile() else None
            if mem.name == victim:
                data = bytes([data[0] ^ 1]) + data[1:]
            out.addfile(mem, io.BytesIO(data) if data is not None else None)
    with pytest.raises(BundleError, match=f"damaged bundle: '{victim}' differs from the SHA-256"):
        load(bad, cache_dir=tmp_path / "cache-altered")


def _tables_match_parsers(root: Path) -> None:
    """Every table row of the bundle is what the parser gives on that raw file with the context of the layout contract."""
    checked = 0
    for hdir in sorted((root / "hosts").iterdir()):
        host = hdir.name
        info = json.loads((hdir / "host.json").read_text())
        starts: dict[str, dt.datetime] = {}
        for ln in (hdir / "commands.jsonl").read_text().splitlines():
            e = json.loads(ln)
            if e.get("raw_file") and e.get("start"):
                t = dt.datetime.fromisoformat(e["start"])
                starts[e["raw_file"]] = min(t, starts.get(e["raw_file"], t))
        for p in sorted((hdir / "raw").rglob("*")):
            if not p.is_file() or p.parent.name == "collector":
                continue
            source, rel = p.parent.name, p.relative_to(root).as_posix()
            cap = starts.get(rel)
            hints = {"iface": p.name[:-4]} if source == "ethtool" else {}
            ctx = ParseContext(host=host, file=rel, tz=info.get("timezone"),
                               boot_time=dt.datetime.fromisoformat(info["boot_time"]), capture_time=cap,
                               year=cap.year if cap else None, hints=hints)
            try:
                expected = sources.get(source).parse(p.read_bytes(), ctx)
            except Exception:  # noqa: BLE001 - a parser being broken is its own test's business; ingest must say so
                cov = pl.read_parquet(root / "tables/coverage" / f"host={host}" / "part-0.parquet")
                assert cov.filter(pl.col("file") == rel)["error"].to_list()[0], f"{rel}: parser failed, coverage silent"
                continue
            for table, df in expected.tables.items():
                parts = sorted((root / "tables" / table).glob("host=*/part-0.parquet"))
                got = pl.concat([pl.read_parquet(x, hive_partitioning=False) for x in parts]).filter(pl.col("file") == rel)
                key = [c for c in ("host", "line_no", "sample_no", "counter", "device", "cpu", "iface", "gpu", "node", "to_node") if c in df.columns]
                assert got.sort(key).equals(df.sort(key)), f"{rel}: {table} differs from the parser's output"
                checked += 1
    assert checked >= 6


def test_hostile_commands(tmp_path, node_env, monkeypatch):
    """A hanging dmesg (ignores SIGTERM, has a child), failing ethtool, garbage numactl, 100 MB from nvidia-smi -q."""
    cfg = {
        "dmesg": {"mode": "hang"}, "ethtool": {"mode": "fail", "message": "bad command line argument(s)"},
        "numactl": {"mode": "garbage"}, "nvidia-smi": {"mode": "fail", "mode_by_arg": {"-q": "huge"}},
        "iostat": {"mode": "fail", "code": 3},
    }
    log = node_env(cfg)
    caps = {s.name: (s.timeout, s.cap) for s in SPECS}
    monkeypatch.setattr(proc, "KILL_GRACE_S", 0.5)
    for s in SPECS:  # scaled down so the test stays short (the hanging dmesg waits 1 s)
        s.timeout = 1.0 if s.name == "dmesg" else min(s.timeout, 20.0)
        s.cap = min(s.cap, 1 << 20)
    try:
        t0 = time.monotonic()
        assert cmain.main(["--duration", "0", "--out", str(tmp_path / "h.tar"), "--host", "bad-node", "--quiet"], parse_tables=ingest_bundle) == 0
        assert time.monotonic() - t0 < 30
    finally:
        for s in SPECS:
            s.timeout, s.cap = caps[s.name]
    assert live_standins(log) == [], "a stand-in (or its child) outlived the collection"
    m = members(tmp_path / "h.tar")
    by = {}
    for c in commands(m, "bad-node"):
        by.setdefault(c["name"], []).append(c)
    dm = by["dmesg"][0]
    assert dm["timed_out"] and dm["exit_code"] is None and dm["error"].startswith("timed out")
    assert len(by["dmesg"]) == 2  # --time-format iso (hangs: plain dmesg is not tried), then journalctl (missing)
    assert by["dmesg"][-1]["error"] == "not found"
    eth = by["ethtool_s"][0]
    assert eth["exit_code"] == 1 and "bad command line" in eth["stderr_tail"] and eth["raw_file"] is None
    q = by["nvidia_smi_q"][0]
    assert q["truncated"] and q["bytes"] <= 1 << 20 and q["exit_code"] == 0
    raw_q = m["hosts/bad-node/raw/nvidia_smi/q.txt"]
    assert len(raw_q) <= (1 << 20) + 200 and raw_q.endswith(b"x" * 99 + b"\n")
    nvl = by["nvidia_smi_nvlink"][0]  # no NVLink / no -gt on this "driver": a failed command, nothing more
    assert nvl["exit_code"] == 1 and nvl["raw_file"] is None
    assert by["iostat"][0]["exit_code"] == 3
    assert by["sar_u"][0]["error"] == "not found"
    assert "hosts/bad-node/raw/numactl/numactl-H.txt" in m  # garbage is kept: the parser reports it as unparsed
    info = bundle_info(tmp_path / "h.tar", cache_dir=tmp_path / "cache")  # `forensics info` lists what went wrong
    probs = {(p["name"], p["truncated"], p["timed_out"]) for p in info["commands"]["problems"]}
    assert ("nvidia_smi_q", True, False) in probs and ("dmesg", False, True) in probs and ("iostat", False, False) in probs
    assert info["commands"]["truncated"] >= 1 and info["commands"]["failed"] >= 3


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_sigterm_leaves_a_valid_bundle(tmp_path, node_env, sig, code):
    """SIGTERM, and SIGINT as Ctrl-C sends it: a valid partial bundle, no children left, non-zero exit saying so."""
    cfg = replay_config()
    cfg["dmesg"] = {"mode": "hang"}  # a command running when the signal comes
    log = node_env(cfg)
    out = tmp_path / "int.tar.gz"
    p = subprocess.Popen([sys.executable, "-m", "forensics.collect", "--duration", "60", "--interval", "0.5",
                          "--out", str(out), "--host", "int-node"], cwd=ROOT, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # wait until sampling has begun
        if log.exists() and "ethtool" in log.read_text():
            break
        time.sleep(0.1)
    time.sleep(1.0)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == code, err
    assert f"interrupted ({sig.name})" in err and str(out) in err
    assert "sample 1/" in err  # progress while sampling
    assert live_standins(log) == []
    b = open_bundle(out, workdir=tmp_path / "w")
    info = json.loads((b.root / "hosts/int-node/host.json").read_text())
    assert info["collector"]["interrupted"] is True and info["collector"]["signal"] == sig.name
    names = {json.loads(ln)["name"]: json.loads(ln) for ln in (b.root / "hosts/int-node/commands.jsonl").read_text().splitlines()}
    assert names["dmesg"]["error"] == "skipped (collection interrupted)"
    assert (b.root / "hosts/int-node/raw/ethtool/ens1f0np0.txt").read_bytes().startswith(b"#### forensics-sample")
    assert not [x for x in tmp_path.iterdir() if x.name.startswith(".forensics")]


def test_bad_options(tmp_path, capsys):
    assert cmain.main(["--out", str(tmp_path / "x.zip"), "--duration", "0"]) == 2
    assert cmain.main(["--out", str(tmp_path / "nope" / "x.tar"), "--duration", "0"]) == 2
    assert cmain.main(["--interval", "0", "--duration", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(e.startswith("forensics: error: ") for e in err)


REAL = [t for t in ("sar", "iostat", "ethtool", "numactl") if shutil.which(t)]


@pytest.mark.skipif(len(REAL) < 4, reason="real sysstat, ethtool and numactl are not all installed")
def test_real_tools_short_collect(tmp_path, monkeypatch):
    """With the real tools: a 2 s collection parses into tables (output stays in tmp_path, never committed)."""
    monkeypatch.setenv("FORENSICS_SYSFS_ROOT", "/sys")
    out = tmp_path / "real.tar.gz"
    assert cmain.main(["--duration", "2", "--interval", "1", "--out", str(out), "--quiet"], parse_tables=ingest_bundle) == 0
    m = members(out)
    host = json.loads(m["manifest.json"])["hosts"][0]
    by = {c["name"]: c for c in commands(m, host)}
    for name in ("iostat", "sar_u", "numactl_h"):
        assert by[name]["exit_code"] == 0, by[name]
    assert any(n.startswith("tables/disk_io/") for n in m) and any(n.startswith("tables/cpu_util/") for n in m)


def _ib_and_roce_ports() -> None:
    """Under the stand-in sysfs: mlx5_0 port 1 on an InfiniBand link layer, mlx5_1 port 1 on Ethernet (RoCE)."""
    ib = Path(os.environ["FORENSICS_SYSFS_ROOT"]) / "class/infiniband"
    for dev, layer in (("mlx5_0", "InfiniBand"), ("mlx5_1", "Ethernet")):
        (ib / dev / "ports/1").mkdir(parents=True)
        (ib / dev / "ports/1/link_layer").write_text(layer + "\n")


def test_perfquery_x_missing_is_a_failed_command_on_infiniband_ports_only(tmp_path, node_env):
    """Issue 18: perfquery -x per InfiniBand link-layer port; without infiniband-diags it is recorded as a failed
    command (not found), the collection goes on, and the RoCE port is not asked."""
    node_env({})  # no stand-in tools at all
    _ib_and_roce_ports()
    assert cmain.main(["--duration", "0", "--out", str(tmp_path / "p.tar"), "--host", "ibnode", "--quiet"]) == 0
    m = members(tmp_path / "p.tar")
    pq = [c for c in commands(m, "ibnode") if c["name"] == "ib_perfquery_x"]
    assert [(c["argv"], c["error"], c["raw_file"]) for c in pq] == [
        (["perfquery", "-x", "-C", "mlx5_0", "-P", "1"], "not found", None)]
    assert sorted({c["argv"][-1].split("/")[4] for c in commands(m, "ibnode") if c["name"] == "ib_sysfs"}) == [
        "mlx5_0", "mlx5_1"]  # the sysfs read goes on for both ports


#: the commands of issue 18's sources, each of which a node may lack (infiniband-diags, MFT, DCGM, nvidia-smi)
ISSUE18_TOOLS = {"ibstat": "ibstat", "ib_perfquery_x": "perfquery", "mlxlink": "mlxlink", "mlnx_qos": "mlnx_qos",
                 "dcgmi_diag": "dcgmi", "dcgmi_discovery": "dcgmi", "dcgmi_dmon": "dcgmi",
                 "nvidia_smi_nvlink_status": "nvidia-smi", "nvidia_smi_nvlink_errors": "nvidia-smi"}


def test_issue18_tools_missing_are_failed_commands(tmp_path, node_env):
    """Issue 18's 'a collect spec that degrades to a failed command when the tool is missing': on a node with an
    InfiniBand and a RoCE port and none of the tools, each of their commands is recorded as failed (not found,
    no raw file) and the collection still succeeds."""
    node_env({})  # no stand-in tools at all
    _ib_and_roce_ports()
    assert cmain.main(["--duration", "0", "--out", str(tmp_path / "p.tar"), "--host", "bare", "--quiet"]) == 0
    by: dict = {}
    for c in commands(members(tmp_path / "p.tar"), "bare"):
        by.setdefault(c["name"], []).append(c)
    for name, tool in ISSUE18_TOOLS.items():
        assert by.get(name), f"{name}: not run"
        for c in by[name]:
            assert c["argv"][0] == tool and c["error"] == "not found" and c["raw_file"] is None, c
    assert sorted(c["argv"][2] for c in by["mlxlink"]) == ["mlx5_0", "mlx5_1"]
    assert sorted(c["argv"][-1] for c in by["mlnx_qos"]) == ["ens1f0np0", "ens2f0np0"]
