"""Simulator scale: a 64-node x 8-GPU x 1-hour bundle at 1 s sampling (target: under two minutes).

Writes the raw-only bundle to benchmarks/data/ (git-ignored, removed afterwards unless --keep),
measures wall and CPU time, peak RSS and bytes, and, with --tables, a smaller run that also parses
the raw outputs into tables/ (the ingest layer dominates that one). Results go to
benchmarks/results/simulate-<date>.md.

    python benchmarks/simulate_scale.py                  # 64 x 8 x 1h at 1s, raw only
    python benchmarks/simulate_scale.py --tables         # plus 8 x 8 x 10m with tables
    python benchmarks/simulate_scale.py --nodes 16 --duration 30m
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def run(args: list[str], out: Path) -> dict:
    """One `forensics simulate` in a subprocess; wall time, its CPU time and peak RSS (wait4)."""
    cmd = [sys.executable, "-m", "forensics", "simulate", *args, "--out", str(out)]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode})")
    return {"cmd": "forensics simulate " + " ".join(args) + f" --out {out.relative_to(ROOT)}",
            "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024,
            "bytes": out.stat().st_size}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=64)
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--duration", default="1h")
    ap.add_argument("--interval", default="1s")
    ap.add_argument("--scenario", default="pfc_storm")
    ap.add_argument("--tables", action="store_true", help="also time an 8 x 8 x 10m run with tables")
    ap.add_argument("--keep", action="store_true", help="keep the bundles in benchmarks/data/")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    a = ap.parse_args(argv)
    data = ROOT / "benchmarks" / "data"
    data.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    runs = []
    big = data / f"sim-{a.nodes}x{a.gpus_per_node}-{a.duration}.tar"
    args = ["--scenario", a.scenario, "--nodes", str(a.nodes), "--gpus-per-node", str(a.gpus_per_node),
            "--duration", a.duration, "--interval", a.interval, "--seed", "3", "--raw-only"]
    runs.append(("raw only", run(args, big)))
    if a.tables:
        small = data / "sim-8x8-10m-tables.tar.zst"
        runs.append(("with tables", run(["--scenario", a.scenario, "--nodes", "8", "--duration", "10m",
                                         "--seed", "3"], small)))
    if not a.keep:
        for p in (big, data / "sim-8x8-10m-tables.tar.zst"):
            if p.exists():
                p.unlink()
    today = dt.date.today().isoformat()
    cpu = platform.processor() or platform.machine()
    lines = [f"# Simulator scale ({today})", "",
             f"Command: `python benchmarks/simulate_scale.py{' --tables' if a.tables else ''}`", "",
             f"Machine: {os.cpu_count()} CPUs ({cpu}), kernel {platform.release()}, Python {platform.python_version()}; "
             f"load average at start {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} (other jobs may share the machine).", "",
             "One `forensics simulate` process per row (hosts are generated one after another, so memory stays "
             "bounded by one host's outputs). Target for the raw-only 64 x 8 x 1 h run: under 120 s.", "",
             "| run | command | wall s | CPU s | peak RSS MB | bundle MB | result |", "|---|---|---:|---:|---:|---:|---|"]
    for label, r in runs:
        verdict = ""
        if label == "raw only" and a.nodes == 64 and a.duration == "1h" and a.interval == "1s":
            verdict = "met" if r["wall_s"] < 120 else "NOT met"
        lines.append(f"| {label} | `{r['cmd']}` | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:.0f} | "
                     f"{r['bytes'] / 1e6:.0f} | {verdict} |")
    text = "\n".join(lines) + "\n"
    out = Path(a.out) / f"simulate-{today}.md"
    out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
