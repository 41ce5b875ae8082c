"""Ray's own cost on this machine: its start, and its background while idle, Ray's defaults against
the lean local start of ``--engine ray`` (:func:`forensics.engine.executors.start_local_ray`).

    nice -n 15 python benchmarks/ray_start.py --repeat 2 --idle 30     # default, lean, lean, default
    nice -n 15 python benchmarks/ray_start.py --repeat 2 --idle 5 --modes lean,noprestart

Each probe runs in a child process of its own: it starts Ray (``num_cpus=2``), runs a 0.5 s task on
each CPU (so each CPU's worker process is started), then stays idle `--idle` seconds. Measured from
/proc, for the child's whole process tree (Ray's GCS, raylet, agents and workers included): the CPU
seconds of the start (less the child's own before ``import ray``), the CPU seconds per wall second
while idle, both by process (its command line, shortened), the processes started and the load
average. Prints one JSON line per probe and a Markdown table (or --out: appended).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fleet_scale import _descendants, _stats  # noqa: E402  (the same /proc sampler)


def _tree() -> dict[int, tuple[str, float]]:
    st = _stats()
    out = {}
    for pid in _descendants(st, os.getpid()):
        if pid in st:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                cmd = "?"
            out[pid] = (_short(cmd), st[pid][2])
    return out


def _short(cmd: str) -> str:
    """A process's role from its command line: ray::IDLE, raylet, gcs_server, a Ray script's name."""
    first = cmd.split(" ")[0]
    if first.startswith("ray::"):
        return first
    for part in cmd.split(" ")[:3]:
        name = part.rsplit("/", 1)[-1]
        if name in ("raylet", "gcs_server") or name.endswith(".py"):
            return name
    return "driver" if cmd else "?"


def _hold(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def probe(mode: str, idle: float) -> dict:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    c0 = _tree()[os.getpid()][1]
    w0 = time.perf_counter()
    import ray

    if mode in ("lean", "noprestart"):
        from forensics.engine.executors import start_local_ray

        if mode == "noprestart":  # Ray 2.60's switches (ray_config_def.h), read by its daemons from the environment
            os.environ["RAY_prestart_worker_first_driver"] = "0"
            os.environ["RAY_enable_worker_prestart"] = "0"

        start_local_ray(ray, 2)
    else:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    task = ray.remote(num_cpus=1)(_hold)
    ray.get([task.remote(0.5) for _ in range(2)])
    a = _tree()
    start = sum(v for _, v in a.values()) - c0
    w1 = time.perf_counter()
    time.sleep(idle)
    b = _tree()
    w2 = time.perf_counter()
    by: dict[str, float] = {}
    for pid, (name, v) in b.items():
        by[name] = by.get(name, 0.0) + v - a.get(pid, ("", 0.0))[1]
    ray.shutdown()
    return {"mode": mode, "start_cpu_s": round(start, 3), "start_wall_s": round(w1 - w0, 1),
            "idle_cpu_per_s": round(sum(by.values()) / (w2 - w1), 4), "processes": len(b),
            "idle_by_process": {k: round(v, 3) for k, v in sorted(by.items(), key=lambda kv: -kv[1])},
            "load": os.getloadavg()[0]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=2, help="pairs of probes (default, lean / lean, default)")
    ap.add_argument("--idle", type=float, default=30.0)
    ap.add_argument("--probe", choices=["default", "lean", "noprestart"], help=argparse.SUPPRESS)
    ap.add_argument("--modes", default="default,lean",
                    help="the two probes alternated (A B B A): default, lean, noprestart (lean without the workers "
                         "Ray starts ahead of tasks; the tasks start them)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.probe:
        print(json.dumps(probe(args.probe, args.idle)))
        return 0
    rows = []
    a, b = args.modes.split(",")
    for k in range(args.repeat):
        for mode in ((a, b) if k % 2 == 0 else (b, a)):
            r = subprocess.run([sys.executable, __file__, "--probe", mode, "--idle", str(args.idle)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(r.stderr[-2000:])
            rows.append(json.loads(r.stdout.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), flush=True)
    lines = ["| probe | Ray start CPU s | start wall s | idle CPU s per wall s | processes | idle by process (CPU s over "
             f"{args.idle:.0f} s) | load |", "|---|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        top = ", ".join(f"{k} {v:.2f}" for k, v in list(r["idle_by_process"].items())[:6])
        lines.append(f"| {r['mode']} | {r['start_cpu_s']:.2f} | {r['start_wall_s']:.1f} | {r['idle_cpu_per_s']:.4f} "
                     f"| {r['processes']} | {top} | {r['load']:.1f} |")
    for mode in (a, b):
        mine = [r for r in rows if r["mode"] == mode]
        if mine:
            lines.append(f"\n{mode}: mean start {sum(r['start_cpu_s'] for r in mine) / len(mine):.2f} CPU s, idle "
                         f"{sum(r['idle_cpu_per_s'] for r in mine) / len(mine):.4f} CPU s per wall s ({len(mine)} probes)")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "a") as fh:
            fh.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
