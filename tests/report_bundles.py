"""Bundles and analyses shared by the report tests, built once per test session.

`pfc_analysis()`: a simulated 3-node x 2-GPU PFC storm (3 minutes at 2 s): a pause storm as the
root cause and a spin-waiting node as its consequence (with 2 nodes, the receiving port's 8-14% of
time paused is below the storm threshold and no consequence is left to render), NIC/GPU/disk/CPU series, NCCL logs, dmesg. `wide_bundle()`: parsed
tables of 8 hosts x 8 GPUs over one hour at 1 s (GPU, NIC, disk and CPU samples), written directly,
for the report's size bound.
"""
from __future__ import annotations

import atexit
import datetime as dt
import functools
import shutil
import tempfile
from pathlib import Path

import polars as pl

_ROOT = Path(tempfile.mkdtemp(prefix="forensics-report-tests-"))
atexit.register(shutil.rmtree, _ROOT, True)


@functools.lru_cache(maxsize=None)
def pfc_analysis():
    from forensics.analysis import analyze_bundle
    from forensics.db import open_bundle
    from forensics.simulate import SimConfig, write_bundle

    out = _ROOT / "pfc.tar"
    # the quiet world: these tests check the rendering of a known diagnosis, detection under a real
    # fleet's benign noise is tests/test_detect_simulated.py's and benchmarks/detection_eval.py's
    write_bundle(SimConfig(scenario="pfc_storm", nodes=3, gpus_per_node=2, duration_s=180, interval_s=2,
                           confounders=False), out)
    bundle = open_bundle(out, cache_dir=_ROOT / "cache")
    return analyze_bundle(bundle, paths=[str(out)])


@functools.lru_cache(maxsize=None)
def pfc_report() -> Path:
    """The HTML report of pfc_analysis(), written once."""
    from forensics.report.html import write_html

    return write_html(pfc_analysis(), _ROOT / "pfc-report.html")


def pfc_bundle_path() -> Path:
    pfc_analysis()
    return _ROOT / "pfc.tar"


def cache_dir() -> Path:
    return _ROOT / "cache"


@functools.lru_cache(maxsize=None)
def wide_bundle(hosts: int = 8, gpus: int = 8, seconds: int = 3600) -> Path:
    """tables/ of `hosts` x `gpus` over `seconds` at 1 s (ethtool every 10 s), a thermal episode on one GPU."""
    from table_bundles import write_tables

    root = _ROOT / f"wide-{hosts}-{gpus}-{seconds}"
    t0 = dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.timezone.utc)
    ts = pl.datetime_range(t0, t0 + dt.timedelta(seconds=seconds - 1), "1s", time_zone="UTC", eager=True)
    n = ts.len()
    k = pl.int_range(0, n, eager=True)
    frames: dict[str, list[pl.DataFrame]] = {"gpu_samples": [], "nic_counters": [], "disk_io": [], "cpu_util": []}
    for h in range(hosts):
        host = f"node{h + 1:02d}"
        for g in range(gpus):
            hot = (h == 3 and g == 5)
            wave = ((k * (7 + g)) % 23).cast(pl.Float64)
            frames["gpu_samples"].append(pl.DataFrame({
                "host": host, "source": "nvidia_smi", "file": "q.csv", "line_no": k + 1, "ts": ts,
                "ts_quality": "exact", "gpu": g, "util_pct": 90.0 + wave / 3, "temp_c": 60.0 + wave / 2 + (25.0 if hot else 0.0),
                "power_w": 600.0 - wave, "sm_clock_mhz": pl.Series([1980.0] * n) - (500.0 if hot else 0.0) * (k > n // 2),
            }))
        every10 = ts.gather_every(10)
        m = every10.len()
        j = pl.int_range(0, m, eager=True)
        for i in range(8):
            for counter, step in (("rx_prio3_pause", 5 if h == 2 and i == 4 else 0), ("rx_discards_phy", 1),
                                  ("rx_bytes_phy", 10_000_000_000)):
                frames["nic_counters"].append(pl.DataFrame({
                    "host": host, "source": "ethtool", "file": f"eth{i}.txt", "line_no": j + 1, "ts": every10,
                    "ts_quality": "sampled", "iface": f"eth{i}", "counter": counter, "value": j * step * (i + 1),
                }))
        for dev in ("nvme0n1", "nvme1n1"):
            frames["disk_io"].append(pl.DataFrame({
                "host": host, "source": "iostat", "file": "iostat.txt", "line_no": k + 1, "ts": ts, "ts_quality": "local",
                "device": dev, "since_boot": False, "util_pct": (k % 100).cast(pl.Float64), "r_await_ms": 0.5 + (k % 7) / 10,
                "w_await_ms": 1.0 + (k % 5) / 10,
            }))
        frames["cpu_util"].append(pl.DataFrame({
            "host": host, "source": "sar", "file": "sar-u.txt", "line_no": k + 1, "ts": ts, "ts_quality": "local",
            "since_boot": False, "cpu": "all", "iowait_pct": (k % 9).cast(pl.Float64), "idle_pct": 50.0 + (k % 11),
        }))
    return write_tables(root, frames)
