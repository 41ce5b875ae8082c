"""The detectors' 30 s window tables (queries/detectors/_host_windows.sql: det_gpu_windows, det_host_windows,
det_nic_windows; read by the anomaly model and busy_but_slow) are of the reference clock: each host's samples
are bucketed at their time minus the host's clock offset (forensics.timeline), so a moment shared by every
host falls in one window on all of them however far their clocks are apart (issue 16: +-2 s skew)."""
from __future__ import annotations

import datetime as dt

import pytest

from forensics.analysis import analyze_bundle
from forensics.db import open_bundle
from forensics.simulate import SimConfig, write_bundle


@pytest.fixture(scope="module")
def skewed(tmp_path_factory):
    root = tmp_path_factory.mktemp("skew")
    path = root / "b.tar"
    summary = write_bundle(SimConfig(scenario="healthy", nodes=3, gpus_per_node=2, interval_s=1.0, duration_s=180.0,
                                     seed=42, clock_skew_ms=2000.0), path, tables=False)
    bundle = open_bundle(path, cache_dir=root / "cache")
    analyze_bundle(bundle)
    yield bundle, summary["labels"]["clock_offsets_s"]
    bundle.close()


def _bucket(t: dt.datetime) -> dt.datetime:
    return t.replace(second=t.second - t.second % 30, microsecond=0)


def test_windows_are_on_the_reference_clock(skewed):
    bundle, truth = skewed
    con = bundle.con
    offsets = dict(con.execute("SELECT host, clock_offset_s FROM hosts").fetchall())
    # the offsets this bundle needs: two hosts 1.2 and 1.8 s ahead of the reference, estimated within 5 ms
    assert abs(offsets["node01"] - truth["node01"]) < 0.005 and abs(offsets["node02"] - truth["node02"]) < 0.005
    assert min(abs(truth["node01"]), abs(truth["node02"])) > 1.0
    moved = 0
    for host in ("node01", "node02"):
        off = dt.timedelta(seconds=offsets[host])
        samples = con.execute("SELECT gpu, ts FROM gpu_samples WHERE host = ? AND ts IS NOT NULL AND util_pct IS NOT NULL "
                              "AND gpu IS NOT NULL", [host]).fetchall()
        want: dict[tuple, int] = {}
        for gpu, ts in samples:
            key = (gpu, _bucket(ts - off))
            want[key] = want.get(key, 0) + 1
            moved += _bucket(ts - off) != _bucket(ts)
        got = {(g, w): n for g, w, n in con.execute(
            "SELECT gpu, w, samples FROM det_gpu_windows WHERE host = ?", [host]).fetchall()}
        assert got == want
        # the host table (GPU, CPU, disk, run queue) and the NIC table use the same windows
        host_w = {w for (w,) in con.execute("SELECT w FROM det_host_windows WHERE host = ? AND gpus IS NOT NULL",
                                            [host]).fetchall()}
        assert host_w == {w for _, w in want}
        cpu = con.execute("SELECT min(ts) FROM det_cpu_all WHERE host = ?", [host]).fetchone()[0]
        assert con.execute("SELECT min(w) FROM det_host_windows WHERE host = ? AND cpu_busy_pct IS NOT NULL",
                           [host]).fetchone()[0] == _bucket(cpu - off)
    assert moved > 10  # a sample within the offset of a window's edge changed window: the test can fail


def test_capture_span_stays_on_the_host_clock(skewed):
    # det_capture is compared with kernel message times (the host's own clock): the windows moved back
    bundle, _ = skewed
    con = bundle.con
    for host, start, end in con.execute("SELECT host, cap_start, cap_end FROM det_capture").fetchall():
        first, last = con.execute("SELECT min(ts), max(ts) FROM gpu_samples WHERE host = ?", [host]).fetchone()
        assert first - dt.timedelta(seconds=30) <= start <= first
        assert last <= end <= last + dt.timedelta(seconds=31)
