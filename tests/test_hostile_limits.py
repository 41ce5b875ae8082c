"""Limits of one process and of the cache (issue 15, items 6 and 8): file descriptors bounded
whatever the host count, caches keyed by content, a broken entry rebuilt, a cache removed under
a run is an error (never 0 findings), the cache size-limited with least-recently-used eviction.
Command-line cases run through :func:`hostile_kit.hostile` (the suite's five properties; see the map
in tests/test_hostile_inputs.py)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

import polars as pl
import pytest

from forensics.ingest.sink import TableSink
from hostile_kit import hostile, small_bundle_members, write_tar_zst


def test_the_table_sink_keeps_few_files_open_and_loses_no_row(tmp_path, monkeypatch):
    monkeypatch.setattr(TableSink, "MAX_OPEN", 2)
    sink = TableSink(tmp_path)
    expect: dict[str, list[str]] = {}
    for i in range(7):  # rows of h0..h3 arrive interleaved: partitions closed and reopened
        host = f"h{i % 4}"
        msg = f"m{i}"
        sink.write("kernel_log", pl.DataFrame({"host": [host], "message": [msg]}), host)
        expect.setdefault(host, []).append(msg)
        assert len(sink.writers) <= 2
    sink.close()
    for host, msgs in expect.items():
        part = tmp_path / "kernel_log" / f"host={host}"
        assert [p.name for p in part.iterdir()] == ["part-0.parquet"]
        assert pl.read_parquet(part / "part-0.parquet")["message"].to_list() == msgs


def _many_hosts(n: int) -> dict[str, bytes]:
    hosts = [f"n{i:03d}" for i in range(n)]
    m = {"manifest.json": json.dumps({"format_version": 1, "created_by": "test", "created_at": "2026-12-03T10:00:00+00:00",
                                      "hosts": hosts, "redaction": None}).encode()}
    for h in hosts:
        m[f"hosts/{h}/host.json"] = json.dumps({"host": h, "hostname": h, "boot_time": "2026-12-03T09:00:00+00:00"}).encode()
        m[f"hosts/{h}/raw/dmesg/dmesg.txt"] = b"[   1.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
        m[f"hosts/{h}/raw/nccl/nccl.log"] = f"{h}:1:1 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n".encode()
    return m


@pytest.mark.slow
def test_a_600_host_bundle_ingests_under_ulimit_n_256(tmp_path):
    tar = write_tar_zst(tmp_path / "many.tar.zst", _many_hosts(600))
    r = hostile(["query", tar, "SELECT count(DISTINCT host) AS hosts, count(*) FILTER (WHERE xid = 79) AS xids "
                 "FROM kernel_log", "--format", "json"], tmp_path, max_mb=800, ulimit_nofile=256,
                FORENSICS_INGEST_PROCESSES="1")
    assert json.loads(r.out) == [{"hosts": 600, "xids": 600}]


def _findings(args, tmp_path) -> int:
    return len(json.loads(hostile(args, tmp_path, max_mb=500, rc_ok=(0, 1)).out)["findings"])


def test_a_folder_of_loose_files_is_keyed_by_its_content(tmp_path):
    """A file rewritten in place inside a folder of saved outputs gives new findings (the folder's
    own mtime does not change when a file in it is rewritten)."""
    d = tmp_path / "saved"
    d.mkdir()
    f = d / "dmesg.txt"
    f.write_text("[    1.000000] usb 1-1: new high-speed USB device number 2\n")
    assert _findings(["analyze", d, "--host", "n1", "--format", "json"], tmp_path) == 0
    with open(f, "w") as fh:  # same folder entry, new content
        fh.write("[    2.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n")
    assert _findings(["analyze", d, "--host", "n1", "--format", "json"], tmp_path) >= 1


def test_a_broken_cache_entry_is_rebuilt_and_removed_tables_are_reparsed(tmp_path):
    tar = write_tar_zst(tmp_path / "b.tar.zst", small_bundle_members())
    cache = tmp_path / "cache"
    q = ["query", tar, "SELECT count(*) AS n FROM kernel_log", "--format", "json"]
    first = hostile(q, tmp_path, max_mb=500)
    assert json.loads(first.out)[0]["n"] > 0
    entry = next(p for p in cache.iterdir() if p.is_dir() and not p.name.startswith("."))
    (entry / "manifest.json").unlink()  # half removed, as by an rm -rf interrupted
    assert hostile(q, tmp_path, max_mb=500).out == first.out
    victim = next((entry / "tables" / "kernel_log").glob("host=*/part-0.parquet"))
    victim.unlink()  # a table file gone: the seal no longer matches, parsed again
    assert hostile(q, tmp_path, max_mb=500).out == first.out


def test_tables_removed_while_analysing_are_an_error(tmp_path):
    from forensics.analysis import analyze_bundle
    from forensics.db import open_bundle
    from forensics.errors import BundleError

    tar = write_tar_zst(tmp_path / "b.tar.zst", small_bundle_members())
    b = open_bundle(tar, cache_dir=tmp_path / "cache")
    try:
        shutil.rmtree(b.root / "tables")  # the cache cleaned under a running analysis
        with pytest.raises(BundleError, match="removed while the bundle was in use"):
            analyze_bundle(b)
    finally:
        b.close()


def test_cache_ls_and_prune(tmp_path):
    cache = tmp_path / "cache"
    tars = [write_tar_zst(tmp_path / f"b{i}.tar.zst", small_bundle_members(1 + i)) for i in range(2)]
    for t in tars:
        hostile(["query", t, "SELECT 1"], tmp_path, max_mb=500)
    ls = hostile(["cache", "ls", "--cache-dir", cache], tmp_path, max_mb=300)
    assert ls.out.count("extracted archive") == 2 and "2 entries" in ls.out
    pr = hostile(["cache", "prune", "--cache-dir", cache, "--max-size", "0"], tmp_path, max_mb=300)
    assert "removed 2 entries" in pr.out
    assert "0 entries" in hostile(["cache", "ls", "--cache-dir", cache], tmp_path, max_mb=300).out
    # a small limit evicts the least recently used entry as soon as a new one is made
    hostile(["query", tars[0], "SELECT 1"], tmp_path, max_mb=500)
    hostile(["query", tars[1], "SELECT 1"], tmp_path, max_mb=500, FORENSICS_CACHE_MAX="1")
    assert hostile(["cache", "ls", "--cache-dir", cache], tmp_path, max_mb=300).out.count("extracted archive") == 1


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_ingest_workers_end_when_the_command_is_killed(tmp_path):
    """A SIGTERM or SIGKILL reaches only `forensics analyze` itself: its ingest workers must not go
    on parsing into the cache entry (seen: 12 minutes after a SIGTERM, and the next run then failed)."""
    script = ("import os, sys, time\n"
              "from forensics.ingest.pool import worker_pool\n"
              "with worker_pool(2) as pool:\n"
              "    sleepers = [pool.submit(time.sleep, 120) for _ in range(2)]\n"
              "    pids = set()\n"
              "    while len(pids) < 2:\n"
              "        pids = {p.pid for p in pool._processes.values()}\n"
              "        time.sleep(0.05)\n"
              "    print(' '.join(map(str, sorted(pids))), flush=True)\n"
              "    time.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(p) for p in proc.stdout.readline().split()]
        assert len(workers) == 2 and all(_alive(p) for p in workers)
        time.sleep(0.5)  # the workers have run their initializer
        proc.kill()
        proc.wait(10)
        deadline = time.monotonic() + 15
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in workers if _alive(p)], "ingest workers outlived the killed command"
    finally:
        proc.kill()


def test_ingest_workers_get_their_allocator_options_and_the_parent_keeps_its_own(monkeypatch):
    """The workers' polars allocator keeps freed pages (WORKER_MALLOC_CONF, after any options already set:
    later ones win) and one polars thread a CPU share; the parent's environment is as it was afterwards."""
    import os

    from forensics.ingest.pool import MALLOC_CONF_VAR, WORKER_MALLOC_CONF, worker_pool

    monkeypatch.setenv(MALLOC_CONF_VAR, "narenas:2")
    monkeypatch.delenv("POLARS_MAX_THREADS", raising=False)
    with worker_pool(2) as pool:
        conf, threads = pool.submit(os.getenv, MALLOC_CONF_VAR).result(), pool.submit(os.getenv, "POLARS_MAX_THREADS").result()
    assert conf.endswith("narenas:2," + WORKER_MALLOC_CONF), conf
    assert threads == str(max(1, (os.cpu_count() or 1) // 2))
    assert os.environ[MALLOC_CONF_VAR] == "narenas:2" and "POLARS_MAX_THREADS" not in os.environ
