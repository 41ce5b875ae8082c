"""CPU of redact's leak check (forensics/redact/verify.py) at another commit against this checkout's,
on one bundle's staged (redacted) tree, in one process, side by side (A B B A; issue 15: "time is
bounded on any input").

    python benchmarks/leak_check_ab.py BUNDLE [--old REV] [--order ABBA] [--work DIR]

`forensics redact` runs in this process as usual up to its leak check; there, instead of the check,
each variant's `find_leaks` runs in turn on the same staged tree and originals (in this process, no
worker pool, so CPU seconds are this process's: polars' threads included), first over the raw
members, then over the tables, then over the member names, and the redaction then stops (nothing is
written). Printed: the originals per kind, the staged tree's size, and per variant and part the CPU
and wall seconds, with the load average. A variant's leaks must equal the other's (checked).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


class _Stop(Exception):
    pass


def _module_at(rev: str, name: str):
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:forensics/redact/verify.py"], check=True,
                         capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory(prefix="leak-ab-") as tmp:
        path = Path(tmp) / f"{name}.py"
        path.write_text(src)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # dataclasses look their module up
        spec.loader.exec_module(mod)
    return mod


def _parts(stage: Path) -> dict[str, list[str]]:
    from forensics.redact.verify import _files

    rels = _files(stage)
    return {"raw members": [r for r in rels if not r.endswith(".parquet")],
            "tables": [r for r in rels if r.endswith(".parquet")]}


def _measure(variants: dict, order: str, stage: Path, originals: dict) -> list[tuple]:
    import polars as pl

    parts = _parts(stage)
    rows = []
    for v in order:
        mod = variants[v]
        found = []
        for part, rels in parts.items():
            c0, w0 = time.process_time(), time.monotonic()
            found += [(l.file, l.kind) for l in mod.scan_files(stage, rels, originals)]
            rows.append((v, part, time.process_time() - c0, time.monotonic() - w0, os.getloadavg()[0]))
        c0, w0 = time.process_time(), time.monotonic()
        names: list = []
        rels = parts["raw members"] + parts["tables"]
        rules = mod.Rules(originals) if hasattr(mod, "Rules") else mod.checks(originals)
        mod._scan(pl.Series(rels, dtype=pl.String), rules, "(member names)", names)
        found += [(l.file, l.kind) for l in names]
        rows.append((v, "member names", time.process_time() - c0, time.monotonic() - w0, os.getloadavg()[0]))
        rows.append((v, "leaks", sorted(found)))
        print(*rows[-4:-1], f"{len(found)} leaks", sep="\n", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--old", default="HEAD", help="commit of the A variant's verify.py (default HEAD)")
    ap.add_argument("--order", default="ABBA", help="A = --old, B = this checkout (default ABBA)")
    ap.add_argument("--work", type=Path, help="folder for the staged tree (default: one under benchmarks/data/)")
    args = ap.parse_args(argv)
    from forensics.redact import bundle as RB
    from forensics.redact import verify as new

    variants = {"A": _module_at(args.old, "verify_old"), "B": new}
    work = args.work or ROOT / "benchmarks" / "data"
    work.mkdir(parents=True, exist_ok=True)
    out: dict = {}

    def check(stage, originals, runner=None, limit=20):
        size = sum(p.stat().st_size for p in Path(stage).rglob("*") if p.is_file())
        print("originals:", {k: len(v) for k, v in originals.items()}, f"staged tree {size / 1e6:.0f} MB", flush=True)
        out["rows"] = _measure(variants, args.order, Path(stage), originals)
        raise _Stop

    RB.find_leaks = check
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="leak-ab-", dir=work) as tmp:
        try:
            RB.redact_bundle(args.bundle, Path(tmp) / "red.tar.zst", os.urandom(32))
        except _Stop:
            pass
    rows = out["rows"]
    leaks = {r[0]: r[2] for r in rows if r[1] == "leaks"}
    same = len({tuple(v) for v in leaks.values()}) == 1
    print(f"\nbundle {args.bundle.name}, A = verify.py at {args.old}, B = this checkout; {time.monotonic() - t0:.0f} s in all")
    print("| variant | part | CPU s | wall s | load (1 min) |\n|---|---|---:|---:|---:|")
    for r in rows:
        if r[1] != "leaks":
            print(f"| {r[0]} | {r[1]} | {r[2]:.2f} | {r[3]:.2f} | {r[4]:.1f} |")
    tot = {v: sum(r[2] for r in rows if r[0] == v and r[1] != "leaks") / args.order.count(v) for v in set(args.order)}
    print(f"mean CPU s per run: " + ", ".join(f"{v} {t:.2f}" for v, t in sorted(tot.items()))
          + (f"; A/B = {tot['A'] / tot['B']:.1f}" if "A" in tot and "B" in tot and tot["B"] else ""))
    print("same leaks in every run:", same, {v: len(x) for v, x in leaks.items()})
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
