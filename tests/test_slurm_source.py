"""The slurm source (issue 19): hostlist expansion bounds, forms the fixtures do not cover, and the
collector's scontrol/sacct run for $SLURM_JOB_ID (skipped without it, failed without Slurm)."""
from __future__ import annotations

import json
import tarfile

import pytest

import forensics.collect.main as cmain
from forensics.sources import ParseContext, get
from forensics.sources._hostlist import expand
from stand_ins.kit import make_bin

FIX = "tests/fixtures/slurm/"


def test_hostlist_bounds_and_errors():
    assert expand("gpu-[8-10]") == ["gpu-8", "gpu-9", "gpu-10"] and expand("n[001-002],x") == ["n001", "n002", "x"]
    for bad in ("n[1-", "n]1[", "n[a-b]", "n[5-1]", "a,,b", "n[1-9999999]"):
        with pytest.raises(ValueError):
            expand(bad)
    with pytest.raises(ValueError, match="more than 100"):
        expand("n[1-60],m[1-60]", limit=100)


def _parse(text: str):
    return get("slurm").parse(text.encode(), ParseContext(host="h", file="x", tz="Europe/Paris"))


def test_cut_states_one_liners_and_detail_nodes():
    rows = "".join(f"{a:<12} {b:>10} {c:>8} \n" for a, b, c in (("5", "OUT_OF_ME+", "0:125"), ("5.0", "CANCELLED+", "0:9")))
    r = _parse("       JobID      State ExitCode \n------------ ---------- -------- \n" + rows + "\n"
               "JobId=9 JobName=x JobState=TIMEOUT Reason=TimeLimit Dependency=(null) ExitCode=0:15 RunTime=1-00:00:01 "
               "StartTime=2026-01-02T03:04:05 EndTime=2026-01-03T03:04:06 NodeList=g[1-2] NumNodes=2\n"
               "     Nodes=g1 CPU_IDs=0-7 Mem=0 GRES=gpu:8(IDX:0-7)\n     Nodes=g2 CPU_IDs=0-7 Mem=0 GRES=gpu:4(IDX:4-7)\n")
    jobs = r.tables["slurm_jobs"]
    assert jobs.select("job_id", "step", "state", "exit_status", "exit_signal").rows() == [
        ("5", None, "OUT_OF_MEMORY", 0, 125), ("5", "0", "CANCELLED", 0, 9), ("9", None, "TIMEOUT", 0, 15)]
    assert jobs["note"].to_list()[:2] == ["a value is cut by the column width (ends in +)"] * 2
    t = jobs.row(2, named=True)
    assert t["elapsed_s"] == 86401.0 and str(t["start"]) == "2026-01-02 02:04:05+00:00" and str(t["end"]) == "2026-01-03 02:04:06+00:00"
    nodes = r.tables["slurm_job_nodes"]
    assert nodes.select("node", "node_index", "gres").rows() == [("g1", 0, "gpu:8(IDX:0-7)"), ("g2", 1, "gpu:4(IDX:4-7)")]
    assert r.unparsed.height == 0


def test_running_end_time_is_not_an_end_and_secrets_are_not_kept():
    r = _parse("JobId=1 JobName=a\n   JobState=RUNNING Reason=None\n   StartTime=2026-01-02T03:04:05 EndTime=2026-01-03T03:04:05\n"
               "\nSLURM_JOB_ID=1\nAWS_SECRET_ACCESS_KEY=hunter2\nSLURM_JOB_NODELIST=a[1-2]\nSLURM_JOB_ID=1\nSLURM_PROCID=3\n")
    jobs = r.tables["slurm_jobs"]
    assert jobs["end"].to_list() == [None, None, None] and jobs["how"].to_list() == ["scontrol", "env", "env"]
    assert jobs["procid"].to_list() == [None, None, 3]  # a repeated key starts the next task's dump
    assert r.unparsed.rows(named=True)[0]["text"] == "AWS_SECRET_ACCESS_KEY"
    assert "hunter2" not in str(r.unparsed.to_dicts())


def test_hostlist_too_long_is_noted_not_expanded():
    r = _parse("JobId=3 JobName=a JobState=RUNNING NodeList=n[1-99999999]\n")
    assert r.tables["slurm_job_nodes"].height == 0
    assert "node list not expanded" in r.tables["slurm_jobs"]["note"][0]


def _collect(tmp_path, monkeypatch, job_id, tools):
    log = tmp_path / "standin.log"
    cfg = {t: {"file": FIX + f} for t, f in tools.items()}
    for k, v in make_bin(tmp_path / "bin", cfg, log).items():
        monkeypatch.setenv(k, v)
    if job_id is None:
        monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    else:
        monkeypatch.setenv("SLURM_JOB_ID", job_id)
    out = tmp_path / "b.tar"
    assert cmain.main(["--duration", "0", "--out", str(out), "--host", "n1", "--quiet", "--raw-only"]) == 0
    with tarfile.open(out) as tf:
        cmds = [json.loads(ln) for ln in tf.extractfile("hosts/n1/commands.jsonl").read().decode().splitlines()]
        names = tf.getnames()
    return {c["name"]: c for c in cmds if c["source"] == "slurm"}, names


def test_collect_runs_scontrol_and_sacct_for_the_job(tmp_path, monkeypatch):
    cmds, names = _collect(tmp_path, monkeypatch, "10737675", {"scontrol": "slurm--scontrol-show-job-ccr-8node-hostlist.txt",
                                                               "sacct": "slurm--sacct-parsable2-snakemake-failed.txt"})
    assert cmds["scontrol_job"]["argv"] == ["scontrol", "show", "job", "-d", "10737675"] and cmds["scontrol_job"]["exit_code"] == 0
    assert cmds["sacct_job"]["argv"][:4] == ["sacct", "-j", "10737675", "--parsable2"]
    assert "hosts/n1/raw/slurm/scontrol-show-job.txt" in names and "hosts/n1/raw/slurm/sacct.txt" in names


def test_collect_without_a_job_or_without_slurm(tmp_path, monkeypatch):
    cmds, _ = _collect(tmp_path / "a", monkeypatch, None, {})
    assert cmds["scontrol_job"]["error"].startswith("skipped (no SLURM_JOB_ID") and cmds["sacct_job"]["argv"][2] == "{slurm_job_id}"
    cmds, _ = _collect(tmp_path / "b", monkeypatch, "42", {})
    assert cmds["scontrol_job"]["error"] == "not found" and cmds["scontrol_job"]["argv"][-1] == "42"


def _findings(tmp_path, texts: dict[str, str], only=("slurm_job_failure",)):
    from forensics.db import open_bundle
    from forensics.detect.engine import run_all
    from table_bundles import write_tables

    frames: dict = {}
    for host, text in texts.items():
        res = get("slurm").parse(text.encode(), ParseContext(host=host, file="raw/slurm/x.txt", tz="UTC"))
        for t, df in res.tables.items():
            frames.setdefault(t, []).append(df)
    findings, errors = run_all(open_bundle(write_tables(tmp_path / "t", frames)), only=set(only), anomaly=False)
    assert errors == []
    return [dict(r, evidence=json.loads(r["evidence"])) for r in findings.to_dicts()]


def test_slurm_job_failure_names_the_failed_node(tmp_path):
    fixture = open(FIX + "slurm--sacct-o-fr-tp-node-fail-steps.txt").read()  # job 77: NODE_FAIL, step 77.2 too
    scontrol = ("JobId=77 JobName=script-2.3.sh\n   JobState=NODE_FAIL Reason=NodeDown FailedNode=vm1 Dependency=(null)\n"
                "   ExitCode=1:0\n   StartTime=2026-02-05T05:00:00 EndTime=2026-02-05T05:03:48\n   NodeList=vm[0-1]\n"
                "   NumNodes=2 NumCPUs=4 NumTasks=4\n")
    (f,) = _findings(tmp_path, {"vm0": fixture + "\n" + scontrol})
    assert f["kind"] == "slurm_job_failure" and f["severity"] == "critical" and f["hosts"] == ["vm1"]
    assert f["subject"] == "job 77" and f["evidence"]["steps"] == ["2", "job"] and f["evidence"]["failed_node"] == "vm1"
    assert "failed node vm1" in f["summary"] and f["confirm"].startswith("sacct -j 77 ") and "scontrol show node vm1" in f["confirm"]
    assert str(f["start"]) == "2026-02-05 05:03:48+00:00"


def test_slurm_job_failure_without_failed_node_or_node_list(tmp_path):
    fixture = open(FIX + "slurm--sacct-o-fr-tp-node-fail-steps.txt").read()
    (f,) = _findings(tmp_path, {"vm0": fixture})
    assert f["hosts"] == ["vm0"] and "does not say which" in f["summary"] and "not in the bundle" in f["summary"]
    timeout = "JobId=5 JobName=t JobState=TIMEOUT Reason=TimeLimit ExitCode=0:0 NodeList=g[1-3] NumNodes=3\n"
    (f,) = _findings(tmp_path / "b", {"g1": timeout})
    assert f["severity"] == "warning" and f["hosts"] == ["g1", "g2", "g3"] and "time limit" in f["summary"]
    assert _findings(tmp_path / "c", {"g1": open(FIX + "slurm--scontrol-show-job-ccr-8node-hostlist.txt").read()}) == []


def test_collect_over_ssh_takes_the_job_of_the_gpu_processes(tmp_path, monkeypatch):
    """Started outside the job (no SLURM_JOB_ID of its own), the collector asks Slurm about the one job its
    GPU processes run in (their SLURM_JOB_ID, now kept with RANK & co. in process_env)."""
    import os
    import subprocess
    import sys

    from forensics.collect import node
    assert node.env_allowed("SLURM_JOB_ID") and node.env_allowed("RANK") and not node.env_allowed("SLURM_JOB_USER")
    train = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             env=dict(os.environ, SLURM_JOB_ID="777", RANK="5", LOCAL_RANK="1"))
    try:
        log = tmp_path / "standin.log"
        cfg = {"scontrol": {"file": FIX + "slurm--scontrol-show-job-ccr-8node-hostlist.txt"},
               "nvidia-smi": {"text": {"--query-compute-apps": f"{train.pid}, GPU-aaaa-1111, 00000000:18:00.0, 81000 MiB\n",
                                       "--query-gpu=index,uuid": "0, GPU-aaaa-1111, 00000000:18:00.0\n"}}}
        for k, v in make_bin(tmp_path / "bin", cfg, log).items():
            monkeypatch.setenv(k, v)
        monkeypatch.delenv("SLURM_JOB_ID", raising=False)
        out = tmp_path / "b.tar"
        assert cmain.main(["--duration", "0", "--out", str(out), "--host", "n1", "--quiet", "--raw-only"]) == 0
    finally:
        train.kill()
        train.wait()
    with tarfile.open(out) as tf:
        cmds = [json.loads(ln) for ln in tf.extractfile("hosts/n1/commands.jsonl").read().decode().splitlines()]
        procs = [json.loads(ln) for ln in tf.extractfile("hosts/n1/raw/collector/processes.jsonl").read().decode().splitlines()]
    assert {c["name"]: c["argv"] for c in cmds}["scontrol_job"] == ["scontrol", "show", "job", "-d", "777"]
    assert {k: v for k, v in procs[0]["env"].items() if not k.startswith(("NCCL_", "CUDA_", "TORCH_NCCL_", "OMP_"))} == \
        {"LOCAL_RANK": "1", "RANK": "5", "SLURM_JOB_ID": "777"}
