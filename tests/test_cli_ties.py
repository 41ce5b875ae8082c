"""Ranks tied for the lowest last completed SeqNum are reported as ties, not broken by how the
hosts are spelled, so a redacted bundle names the same ranks as the original (issue 14 item 6).

Input: the real PyTorch watchdog log of tests/fixtures/nccl/ (BasicSR issue 737: ranks 0 and 1
both report "last completed NCCL work: 807"), rank 0's lines on one host and the others' on another,
once with the host names one way round and once the other (what redaction's pseudonyms can do)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).parent / "forensics"
LOG = ROOT / "tests" / "fixtures" / "nccl" / "nccl--pytorch-watchdog-basicsr737-pg-guid-format.txt"


def cli(env, *args) -> subprocess.CompletedProcess:
    r = subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    return r


def timeout_finding(env, tmp_path: Path, rank0_host: str, other_host: str) -> dict:
    lines = LOG.read_text().splitlines(keepends=True)
    d = tmp_path / f"{rank0_host}-{other_host}"
    d.mkdir()
    (d / "r0.log").write_text("".join(line for line in lines if line.startswith("[rank0]")))
    (d / "rest.log").write_text("".join(line for line in lines if not line.startswith("[rank0]")))
    cli(env, "bundle", d / "r0.log", "--host", rank0_host, "--out", d / "a.tar")
    cli(env, "bundle", d / "rest.log", "--host", other_host, "--out", d / "b.tar")
    found = json.loads(cli(env, "analyze", d / "a.tar", d / "b.tar", "-q", "--format", "json").stdout)["findings"]
    (f,) = [f for f in found if f["kind"] == "collective_timeout"]
    return f


def test_tied_ranks_reported_alike_whatever_the_host_names(cli_env, tmp_path):
    one = timeout_finding(cli_env, tmp_path, "alpha", "zeta")
    two = timeout_finding(cli_env, tmp_path, "zeta", "alpha")
    assert one["subject"] == two["subject"] == "ranks 0-1"
    assert "lowest last completed work 807 on 2 ranks alike (alpha rank 0, zeta rank 1)" in one["summary"]
    assert "lowest last completed work 807 on 2 ranks alike (zeta rank 0, alpha rank 1)" in two["summary"]
    assert one["evidence"]["straggler_rank"] is None and two["evidence"]["straggler_rank"] is None
    assert [r["rank"] for r in one["evidence"]["lowest_ranks"]] == [r["rank"] for r in two["evidence"]["lowest_ranks"]] == [0, 1]
