"""Mistakes and interruptions end with one line and the documented exit status, never a
traceback (issue 14 item 5, issue 15 item 11)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).parent / "forensics"
XID = ROOT / "sample_bundles" / "xid_79.tar.zst"
PFC = ROOT / "sample_bundles" / "pfc_storm.tar.zst"


@pytest.fixture
def env(cli_env):
    return cli_env


def cli(env, *args, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("capture_output", True)
    return subprocess.run([str(EXE), *map(str, args)], text=True, env=env, timeout=300, **kw)


def one_line(r: subprocess.CompletedProcess, code: int = 2) -> str:
    assert r.returncode == code, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    return r.stderr


@pytest.mark.parametrize("out,says", [
    ("missing/q.csv", "missing does not exist"),
    ("afile/q.csv", "afile is not a folder"),
    ("/sys/forensics-test.csv", "/sys/forensics-test.csv: "),  # sysfs: no new files, even for root
])
def test_query_out_where_nothing_can_be_written(env, tmp_path, out, says):
    (tmp_path / "afile").write_text("x")
    target = out if out.startswith("/") else tmp_path / out
    for fmt in ("csv", "table", "parquet") if "/" not in says else ("csv",):
        assert says in one_line(cli(env, "query", XID, "--name", "drops", "--format", fmt, "--out", target))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a mode 0500 folder")
def test_query_out_into_read_only_folder(env, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    assert "permission denied" in one_line(cli(env, "query", XID, "--name", "drops", "--out", ro / "q.csv"))


def test_unknown_zone_is_refused_by_parse_and_analyze(env, tmp_path):
    f = tmp_path / "dmesg.txt"
    f.write_text("[  100.000000] mlx5_core 0000:1a:00.0 eth0: Link down\n")
    assert "unknown time zone 'Mars/Olympus'" in one_line(cli(env, "parse", f, "--tz", "Mars/Olympus"))
    assert "unknown time zone 'Mars/Olympus'" in one_line(cli(env, "analyze", f, "--tz", "Mars/Olympus"))
    # on a bundle the zone was silently ignored: refused when bad, and said to be unused when good
    assert "unknown time zone" in one_line(cli(env, "analyze", XID, "--tz", "Mars/Olympus", "-q"))
    r = cli(env, "analyze", XID, "--tz", "Europe/Paris", "-q")
    assert r.returncode == 0 and "--tz not used" in r.stderr and "is a bundle" in r.stderr


def test_closed_or_full_standard_output(env):
    r = cli(env, "query", XID, "--name", "drops", capture_output=False, stderr=subprocess.PIPE,
            preexec_fn=lambda: os.close(1))
    assert "standard output: it is closed" in one_line(r)
    with open("/dev/full", "w") as full:
        r = cli(env, "analyze", XID, "-q", stdout=full, capture_output=False, stderr=subprocess.PIPE)
    assert "standard output: No space left on device" in one_line(r)


def test_reader_that_goes_away_is_no_error(env):
    p = subprocess.Popen([str(EXE), "query", PFC, "SELECT * FROM nic_counters", "--format", "csv"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    p.stdout.read(10)
    p.stdout.close()  # as `| head -c 10` does
    err = p.stderr.read().decode()
    p.wait(timeout=300)
    assert p.returncode in (0, 1) and err == "", err


def test_ctrl_c_during_detection_is_one_line_and_130(env):
    args = [str(EXE), "analyze", PFC, "-q"]
    t0 = time.monotonic()
    assert subprocess.run(args, env=env, capture_output=True, timeout=300).returncode == 0  # parsed and cached
    total = time.monotonic() - t0
    for share in (0.75, 0.6, 0.45):  # a warm run is mostly detection; later than imports (~1 s)
        p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(max(1.2, share * total))
        p.send_signal(signal.SIGINT)
        err = p.communicate(timeout=120)[1]
        if p.returncode == 0:
            continue  # finished before the signal: try earlier
        assert p.returncode == 130 and err == "forensics: interrupted\n", (p.returncode, err)
        return
    pytest.skip("analysis finished before every interrupt")
