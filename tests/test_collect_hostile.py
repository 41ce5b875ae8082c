"""The collector on a hostile node (issue 15, items 2 and 9): links and FIFOs planted where NCCL logs are
globbed, secrets in GPU processes' environments, children that leave their process group, hangups,
hung tools under --duration, a single-line output of hundreds of MB. Stand-ins only (tests/stand_ins).
The cases that need no patched constant run the collector as a command through
:func:`hostile_kit.hostile` (the suite's five properties; see the map in tests/test_hostile_inputs.py);
the ones that scale its grace periods down run it in this process."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

import forensics.collect.main as cmain
import forensics.collect.proc as proc
from forensics.collect import files, node
from forensics.collect.specs import SPECS
from hostile_kit import hostile
from stand_ins.kit import live_standins, make_bin

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures"
NUMACTL = sorted((FIX / "numactl").glob("numactl--*princeton*"))[0]
SECRETS = {"NCCL_PASSWORD": "pw-1", "CUDA_TOKEN": "tok-2", "NCCL_IB_SECRET": "sec-3", "TORCH_NCCL_API_KEY": "key-4",
           "NCCL_IB_credential_file": "cred-5", "AWS_SECRET_ACCESS_KEY": "aws-6"}


def members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def commands(m: dict, host: str) -> list[dict]:
    return [json.loads(ln) for ln in m[f"hosts/{host}/commands.jsonl"].decode().splitlines()]


@pytest.fixture
def bare_node(tmp_path, monkeypatch):
    """A node whose tools are the stand-ins of `config` only (no real tool of this machine is found)."""
    def setup(config):
        log = tmp_path / "standins.log"
        for k, v in make_bin(tmp_path / "bin", config, log).items():
            monkeypatch.setenv(k, v)
        (tmp_path / "sys" / "class" / "net").mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv("FORENSICS_SYSFS_ROOT", str(tmp_path / "sys"))
        return log
    return setup


def _sleeper(**env):
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=dict(os.environ, **env))


# ------------------------------------------------------------------ item 2: secrets and links


@pytest.mark.parametrize("key,kept", [
    ("NCCL_IB_HCA", True), ("CUDA_VISIBLE_DEVICES", True), ("TORCH_NCCL_ASYNC_ERROR_HANDLING", True),
    ("OMP_NUM_THREADS", True), ("NCCL_IB_PKEY", True), ("HOME", False), ("NCCL_PASSWORD", False),
    ("CUDA_TOKEN", False), ("NCCL_IB_SECRET", False), ("TORCH_NCCL_API_KEY", False), ("NCCL_S3_Credentials", False),
    ("CUDA_MPS_PASSWD", False), ("NCCL_HOSTKEY", False)])
def test_env_filter(key, kept):
    assert node.env_allowed(key) is kept


@pytest.mark.parametrize("args,kept", [
    (["--hf_token", "t0k", "--lr", "0.1"], ["--hf_token", node.REMOVED, "--lr", "0.1"]),
    (["--api-key=k3y", "--tokenizer", "gpt2"], ["--api-key=" + node.REMOVED, "--tokenizer", "gpt2"]),
    (["env", "NCCL_IB_SECRET=s3c", "python"], ["env", "NCCL_IB_SECRET=" + node.REMOVED, "python"]),
    (["--password", "-v", "--monkey", "x"], ["--password", "-v", "--monkey", "x"])])
def test_secret_arguments_lose_their_values(args, kept):
    assert node.scrub_argv(args) == kept


def test_process_environ_read_only_through_the_filter():
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "--db-password=pw-9"],
                         env=dict(os.environ, NCCL_IB_HCA="mlx5_0", **SECRETS))
    try:
        time.sleep(0.2)
        info = node.process_info(p.pid)
    finally:
        p.kill()
        p.wait()
    assert info["env"] == {"NCCL_IB_HCA": "mlx5_0"}
    assert info["uid"] == os.getuid()
    assert info["cmdline"][-1] == "--db-password=" + node.REMOVED
    text = json.dumps(info)
    assert not any(v in text for v in list(SECRETS.values()) + ["pw-9"])


def _plant(tmp_path: Path, victim_pid: int) -> tuple[Path, Path]:
    """A world-writable (sticky) folder as /tmp is, with one genuine NCCL log and every trick beside it."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "root-only.txt").write_text("ROOT-ONLY-CONTENT\n")
    os.chmod(outside / "root-only.txt", 0o600)
    (outside / "sub").mkdir()
    (outside / "sub" / "nccl.log").write_text("THROUGH-A-DIR-LINK\n")
    (shared / "nccl.node01.100.log").write_text("node01:100:100 [0] NCCL INFO genuine\n")
    (shared / "nccl.link.log").symlink_to(outside / "root-only.txt")
    (shared / "nccl.environ.log").symlink_to(f"/proc/{victim_pid}/environ")
    os.mkfifo(shared / "nccl.fifo.log")
    os.link(outside / "root-only.txt", shared / "nccl.hard.log")
    (shared / "nccl.dir.log").mkdir()
    (shared / "run1").symlink_to(outside / "sub")
    return shared, outside


def test_nccl_globs_follow_no_link(tmp_path, bare_node):
    log = bare_node({})
    victim = _sleeper(**SECRETS)
    try:
        shared, outside = _plant(tmp_path, victim.pid)
        out = tmp_path / "b.tar"
        hostile(["collect", "--duration", "0", "--out", out, "--host", "n1", "--quiet", "--raw-only",
                     "--nccl-log", shared / "nccl.*.log", "--nccl-log", shared / "run*" / "nccl.log",
                     "--nccl-log", f"/proc/{victim.pid}/environ", "--nccl-log", "/dev/zero"], tmp_path,
                    max_mb=200, writes=[out, log], timeout=240)  # (a blocking open of the FIFO: killed, rc -9)
    finally:
        victim.kill()
        victim.wait()
    m = members(out)
    nccl = {k: v for k, v in m.items() if "/raw/nccl/" in k}
    assert list(nccl) == ["hosts/n1/raw/nccl/nccl.node01.100.log"]
    blob = b"".join(m.values())
    for v in list(SECRETS.values()) + ["ROOT-ONLY-CONTENT", "THROUGH-A-DIR-LINK"]:
        assert v.encode() not in blob
    why = {c["argv"][1]: c["error"] for c in commands(m, "n1") if c["name"] == cmain.NCCL_NAME}
    assert why[str(shared / "nccl.node01.100.log")] is None
    assert "symbolic link" in why[str(shared / "nccl.link.log")]
    assert "symbolic link" in why[str(shared / "nccl.environ.log")]
    assert "not a regular file" in why[str(shared / "nccl.fifo.log")]
    assert "not a regular file" in why[str(shared / "nccl.dir.log")]
    assert "hard links" in why[str(shared / "nccl.hard.log")]
    assert "links are not followed" in why[str(shared / "run1" / "nccl.log")]
    assert "/proc" in why[f"/proc/{victim.pid}/environ"] and "/dev" in why["/dev/zero"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a file to another user")
def test_nccl_log_of_another_user_is_refused(tmp_path, bare_node, monkeypatch):
    bare_node({})
    monkeypatch.delenv("SUDO_UID", raising=False)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    (shared / "nccl.a.log").write_text("FROM-ANOTHER-USER\n")
    os.chown(shared / "nccl.a.log", 54321, 54321)
    (shared / "nccl.b.log").write_text("OURS\n")
    evil = tmp_path / "evil-base"
    evil.symlink_to(shared)
    os.chown(evil, 54321, 54321, follow_symlinks=False)
    out = tmp_path / "b.tar"
    assert cmain.main(["--duration", "0", "--out", str(out), "--host", "n1", "--quiet", "--raw-only",
                       "--nccl-log", str(shared / "nccl.*.log"), "--nccl-log", str(evil / "*.log")]) == 0
    m = members(out)
    assert m["hosts/n1/raw/nccl/nccl.b.log"] == b"OURS\n" and b"FROM-ANOTHER-USER" not in b"".join(m.values())
    why = {c["argv"][1]: c["error"] for c in commands(m, "n1") if c["name"] == cmain.NCCL_NAME}
    assert "owned by uid 54321" in why[str(shared / "nccl.a.log")]
    assert "link owned by uid 54321" in why[str(evil / "nccl.b.log")]
    # the job's user (the owner of a recorded GPU process) is trusted like root
    fd = files.open_captured(str(shared / "nccl.a.log"), str(shared), files.job_uids([54321]))
    os.close(fd)


# ------------------------------------------------------------------ item 9: processes, hangups, time, memory


def test_setsid_children_do_not_survive(tmp_path, bare_node, monkeypatch):
    """A daemonising tool (setsid child, output closed, ignores SIGTERM) and a hung one whose setsid child
    holds the output open: none of them is left after the run."""
    log = bare_node({"numactl": {"mode": "setsid", "file": str(NUMACTL)}, "dmesg": {"mode": "setsid_hang"},
                     "chronyc": {"mode": "setsid"}})
    monkeypatch.setattr(proc, "KILL_GRACE_S", 0.5)
    dm = next(s for s in SPECS if s.name == "dmesg")
    monkeypatch.setattr(dm, "timeout", 2.0)
    out = tmp_path / "b.tar"
    assert cmain.main(["--duration", "0", "--out", str(out), "--host", "n1", "--quiet", "--raw-only"]) == 0
    entries = [json.loads(ln) for ln in log.read_text().splitlines()]
    assert sum(1 for e in entries if e["tool"].endswith(":setsid")) >= 3  # the children did start
    assert live_standins(log) == [], "a setsid child outlived the collection"
    m = members(out)
    by: dict[str, list] = {}
    for c in commands(m, "n1"):
        by.setdefault(c["name"], []).append(c)
    assert by["numactl_h"][0]["exit_code"] == 0 and m["hosts/n1/raw/numactl/numactl-H.txt"] == NUMACTL.read_bytes()
    assert by["dmesg"][0]["timed_out"]


def test_sighup_writes_a_partial_bundle(tmp_path, bare_node):
    """An ssh drop: a valid partial bundle, exit 129, no staging folder left, no child left (setsid ones too)."""
    log = bare_node({"numactl": {"mode": "setsid_hang"}, "iostat": {"mode": "setsid_hang"}})
    out = tmp_path / "hup.tar"
    started = time.monotonic()

    def children_running() -> bool:  # (or 30 s gone)
        return time.monotonic() - started > 30 or (log.exists() and log.read_text().count(":setsid") >= 2)

    hostile(["--duration", "60", "--interval", "1", "--out", out, "--host", "hup-node", "--raw-only"], tmp_path,
            argv0=[sys.executable, "-m", "forensics.collect"], rc_ok=(129,), warns="interrupted (SIGHUP)",
            max_mb=200, writes=[out, log], signal_when=(children_running, signal.SIGHUP), timeout=90,
            PYTHONPATH=str(ROOT))
    assert live_standins(log) == []
    assert not [x for x in tmp_path.iterdir() if x.name.startswith(".forensics")]
    m = members(out)
    info = json.loads(m["hosts/hup-node/host.json"])
    assert info["collector"]["signal"] == "SIGHUP"
    assert {c["name"] for c in commands(m, "hup-node")} >= {"numactl_h", "iostat", "dmesg"}


def test_duration_is_honoured_with_hung_tools(tmp_path, bare_node, monkeypatch):
    """Every tool hangs (ignoring SIGTERM, children in their own sessions): the run still ends near
    --duration + END_SLACK_S (scaled down here: 2 s of sampling, 3 s of slack, 0.5 s kill grace)."""
    tools = ("nvidia-smi", "iostat", "sar", "numactl", "dmesg", "chronyc", "timedatectl", "journalctl")
    log = bare_node({t: {"mode": "setsid_hang" if t in ("numactl", "sar") else "hang"} for t in tools})
    monkeypatch.setattr(proc, "KILL_GRACE_S", 0.5)
    monkeypatch.setattr(cmain, "SAMPLE_GRACE_S", 1.0)
    monkeypatch.setattr(cmain, "END_SLACK_S", 3.0)
    monkeypatch.setattr(cmain, "STREAM_GRACE_S", 1.0)
    out = tmp_path / "d.tar"
    t0 = time.monotonic()
    assert cmain.main(["--duration", "2", "--interval", "1", "--out", str(out), "--host", "n1", "--quiet",
                       "--raw-only"]) == 0
    took = time.monotonic() - t0
    # commands: by 2 + 3 s; a command ignoring SIGTERM needs its kill grace and the reading give-up (3.5 s)
    assert took < 2 + 3 + 4.5, took
    assert live_standins(log) == []
    by = {}
    for c in commands(members(out), "n1"):
        by.setdefault(c["name"], []).append(c)
    assert by["numactl_h"][0]["timed_out"]
    assert any(c["error"] in (cmain.SKIPPED_TIME,) or c["timed_out"] for c in by["dmesg"])


def test_single_line_of_300_mb_keeps_memory_small(tmp_path, bare_node):
    """nvidia-smi -q printing 300 MB without a newline (cap 256 MB): the tail is kept on disk, the
    collector's peak RSS stays far below the output's size."""
    log = bare_node({"nvidia-smi": {"mode": "fail", "mode_by_arg": {"-q": "oneline"}, "bytes": 300 << 20}})
    out = tmp_path / "big.tar"
    # 300 MB went through it: the collector and its stand-in tools together stay under 150 MiB
    hostile(["--duration", "0", "--out", out, "--host", "n1", "--quiet", "--raw-only"], tmp_path,
            argv0=[sys.executable, "-m", "forensics.collect"], max_mb=150, writes=[out, log], timeout=120,
            PYTHONPATH=str(ROOT))
    with tarfile.open(out) as tar:
        q = tar.getmember("hosts/n1/raw/nvidia_smi/q.txt")
        cmds = [json.loads(ln) for ln in tar.extractfile("hosts/n1/commands.jsonl").read().splitlines()]
    assert 256 << 20 < q.size < (256 << 20) + 1024  # the marker line and the last 256 MB (no line start to cut at)
    qc = next(c for c in cmds if c["name"] == "nvidia_smi_q")
    assert qc["truncated"] and qc["bytes"] == 256 << 20 and qc["exit_code"] == 0
    assert live_standins(log) == []
