"""What building the derived relations (:mod:`forensics.db.derived`) costs when a parsed bundle is opened, per
relation, in CPU seconds, and A B B A against another commit.

    python benchmarks/derived_build.py PARSED_DIR [--mode lazy] [--baseline REV]

PARSED_DIR: a parsed bundle's folder (the one holding tables/, e.g. the cache entry `forensics analyze` of a
simulated bundle left: benchmarks/analyze_speed.py's benchmarks/data/analyze-cache/<sha256>/). Each run, in a
subprocess, removes ``tables/_derived/`` and opens the bundle with `--mode` (``lazy``: as `forensics analyze`
does) with ``POLARS_MAX_THREADS=1``; it prints the open's CPU seconds (process time: DuckDB's and the NIC
builder's threads included) and each relation's build. With `--baseline REV` the code of that commit (a
`git archive` copy under benchmarks/data/) runs too, in the order this, it, it, this, and the means' ratio is
printed. The machine's load average is printed with each run: compare only runs side by side.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, os, shutil, sys, time
from pathlib import Path
root, mode = Path(sys.argv[1]), sys.argv[2]
from forensics.db import connect, derived
shutil.rmtree(root / "tables" / "_derived", ignore_errors=True)
items = {}

def timed(name, fn):
    def inner(*a, **kw):
        t0 = time.process_time()
        try:
            return fn(*a, **kw)
        finally:
            key = name(a) if callable(name) else name
            items[key] = items.get(key, 0.0) + time.process_time() - t0
    return inner

derived._build = timed(lambda a: a[2].name, derived._build)
derived._build_nic = timed("nic_interval_rows + nic_summary", derived._build_nic)
t0 = time.process_time()
con, info = connect(root, derive=mode)
total = time.process_time() - t0
print(json.dumps({"open_cpu_s": total, "items": items, "cached": info["cached"], "load": os.getloadavg()[0]}))
"""


def run(code: Path, parsed: Path, mode: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code), "POLARS_MAX_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", CHILD, str(parsed), mode], capture_output=True, text=True, env=env,
                         cwd=code, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parsed", type=Path)
    ap.add_argument("--mode", default="lazy", choices=("lazy", "auto", "always"))
    ap.add_argument("--baseline", metavar="REV")
    args = ap.parse_args(argv)
    sides = [("this checkout", ROOT)]
    if args.baseline:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from analyze_speed import baseline_tree

        data = ROOT / "benchmarks" / "data"
        base = ("baseline " + args.baseline, baseline_tree(args.baseline, data))
        sides = [sides[0], base, base, sides[0]]
    got: dict[str, list[float]] = {}
    print("| run | code | load | open CPU s | built (CPU s) |\n|---|---|---:|---:|---|")
    for n, (name, code) in enumerate(sides, 1):
        res = run(code, args.parsed, args.mode)
        got.setdefault(name, []).append(res["open_cpu_s"])
        built = ", ".join(f"{k} {v:.2f}" for k, v in res["items"].items()) or "none"
        print(f"| {n} | {name} | {res['load']:.1f} | {res['open_cpu_s']:.2f} | {built} |", flush=True)
    if args.baseline:
        mean = {k: sum(v) / len(v) for k, v in got.items()}
        print(f"\nopen CPU s, this checkout / baseline {args.baseline} (means, A B B A): "
              f"{mean['this checkout']:.2f} / {mean['baseline ' + args.baseline]:.2f} = "
              f"**{mean['this checkout'] / mean['baseline ' + args.baseline]:.2f}**")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
