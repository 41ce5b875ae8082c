"""Detection on a parsed bundle, another commit against this checkout, side by side (A B B A ...):
CPU seconds of opening and of detection (every rule, the anomaly model, causality: what
``forensics analyze`` does once the tables exist), each run in a fresh process, and whether both
sides give the same findings (every column of every row).

    nice -n 15 python benchmarks/detect_ab.py BUNDLE_DIR [--base main] [--this HEAD] [--rounds 2]

The other commit's tree (and with ``--this``, this side's commit too, else the working tree) is
exported with ``git archive`` into a temporary folder and run from there (its ``forensics`` package
and ``queries/``) with this checkout's interpreter. The two trees must
have the same view files: the cached derived relations of the bundle are keyed by them, and one side
would otherwise rebuild them into the bundle (refused, exit 2). Prints one line per run with the
load average, then the medians per side and their ratio. Exit 1 when the findings differ.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import hashlib, json, resource, sys
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
import forensics
from forensics.db import open_bundle
from forensics.detect.engine import run_all
c0 = cpu()
b = open_bundle(sys.argv[1], derive="lazy", confined=False)
c1 = cpu()
findings, errors = run_all(b)
c2 = cpu()
import polars as pl
canon = findings.with_columns(pl.col("hosts").list.join(",")).sort("id").write_csv()
print(json.dumps({"open": c1 - c0, "detect": c2 - c1, "findings": findings.height, "errors": errors,
                  "sha": hashlib.sha1(canon.encode()).hexdigest()[:12],
                  "package": forensics.__file__}))
"""


def views_of(tree: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((tree / "queries" / "views").glob("*.sql"))}


def short(rev: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", rev], capture_output=True, text=True,
                          check=True).stdout.strip()


def export(rev: str, dest: Path) -> Path:
    """The tree of `rev` (its package, queries and schemas) under `dest`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "forensics", "queries", "schemas"],
                             capture_output=True, check=True).stdout
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tf:
        tf.extractall(dest, filter="data")
    return dest


def run(tree: Path, bundle: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", CHILD, bundle], cwd=tree, env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{tree}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(got["package"]).resolve().is_relative_to(tree.resolve()), (got["package"], tree)
    return got


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", help="a parsed bundle folder (its tables/ and their cached derived relations)")
    ap.add_argument("--base", default="main")
    ap.add_argument("--this", help="a commit to run as this side (default: the working tree)")
    ap.add_argument("--rounds", type=int, default=2, help="each round runs base, this, this, base")
    args = ap.parse_args(argv)
    rev = short(args.base)
    with tempfile.TemporaryDirectory(prefix="detect_ab.") as tmp:
        base = export(rev, Path(tmp) / "base")
        this = export(short(args.this), Path(tmp) / "this") if args.this else ROOT
        if views_of(base) != views_of(this):
            print(f"{rev} and this checkout differ in queries/views/: the cached derived relations would be "
                  "rebuilt into the bundle; not run", file=sys.stderr)
            return 2
        sides = {rev: base, "this": this}
        got: dict[str, list[dict]] = {rev: [], "this": []}
        for _ in range(args.rounds):
            for name in (rev, "this", "this", rev):
                r = run(sides[name], args.bundle)
                got[name].append(r)
                load = os.getloadavg()
                print(f"{name if name != 'this' or not args.this else 'this ' + short(args.this):>17}: open {r['open']:.2f} CPU s, detection {r['detect']:.2f} CPU s, {r['findings']} findings "
                      f"(sha {r['sha']}, {len(r['errors'])} errors), load {load[0]:.1f}", flush=True)
    med = {k: statistics.median(x["detect"] for x in v) for k, v in got.items()}
    print(f"median detection CPU s: {rev} {med[rev]:.2f}, this {med['this']:.2f}, this/{rev} {med['this'] / med[rev]:.2f}")
    shas = {r["sha"] for v in got.values() for r in v}
    print("findings identical" if len(shas) == 1 else f"findings DIFFER: {sorted(shas)}")
    return 0 if len(shas) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
