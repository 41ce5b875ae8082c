"""Parser CPU per core, this checkout against a baseline commit, A B B A (issue 21).

For each source, four fresh processes in the order baseline, this, this, baseline; each parses the
file once to warm up and then `repeat` times more with `parse_file(FILE, SOURCE, out_dir=...)` (parse
and Parquet written) on one polars thread, and reports the least CPU seconds (user + system of the
process, start-up and imports excluded). The baseline runs from `git archive REV` under
benchmarks/data/ (git-ignored), first on PYTHONPATH; the repository's worktrees and refs are untouched.
Inputs are those of benchmarks/parse_throughput.py (make them with its --generate-only).

    python benchmarks/parse_ab.py --baseline 833a2d5 sar:sar-20mb.txt iostat:iostat-20mb.txt
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"

# runs in a fresh process with the tree under test first on sys.path
_CHILD = """
import os, pathlib, shutil, sys, tempfile, time
from forensics.ingest.files import parse_file
src, f, n = sys.argv[1], pathlib.Path(sys.argv[2]), int(sys.argv[3])
best = float("inf")
for i in range(n + 1):
    out = pathlib.Path(tempfile.mkdtemp(prefix="parse-ab-"))
    c = time.process_time()
    parse_file(f, src, out_dir=out / "o")
    t = time.process_time() - c
    shutil.rmtree(out)
    if i:
        best = min(best, t)
print(best)
"""


def baseline_tree(rev: str) -> Path:
    full = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"], capture_output=True,
                          text=True, check=True).stdout.strip()
    tree = DATA / f"baseline-{full[:12]}"
    if not (tree / "forensics").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", full], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def cpu(tree: Path, source: str, path: Path, repeat: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "POLARS_MAX_THREADS": "1"}
    with tempfile.TemporaryDirectory() as cwd:  # not the checkout: its package must not shadow PYTHONPATH's
        res = subprocess.run([sys.executable, "-c", _CHILD, source, str(path), str(repeat)], env=env, cwd=cwd,
                             capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(f"{source} with {tree}: {res.stderr[-2000:]}")
    return float(res.stdout.split()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True, metavar="REV")
    ap.add_argument("--repeat", type=int, default=4, help="timed parses per process (the least is kept)")
    ap.add_argument("inputs", nargs="+", metavar="SOURCE:FILE", help="FILE under benchmarks/data/ or a path")
    args = ap.parse_args(argv)
    base = baseline_tree(args.baseline)
    print(f"A = {args.baseline} ({base.name}), B = this checkout; min of {args.repeat} in-process CPU s, one polars "
          f"thread, order A B B A; load at start {os.getloadavg()[0]:.1f}")
    for spec in args.inputs:
        source, name = spec.split(":", 1)
        path = Path(name) if Path(name).is_file() else DATA / name
        mb = path.stat().st_size / 1e6
        seq: dict[str, list[float]] = {"A": [], "B": []}
        for side in "ABBA":
            seq[side].append(cpu(base if side == "A" else ROOT, source, path, args.repeat))
        a, b = sum(seq["A"]) / 2, sum(seq["B"]) / 2
        print(f"| {source} | {mb:.0f} | {', '.join(f'{x:.3f}' for x in seq['A'])} | {', '.join(f'{x:.3f}' for x in seq['B'])} "
              f"| {b / a:.2f} | {mb / a:.0f} -> {mb / b:.0f} | {os.getloadavg()[0]:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
