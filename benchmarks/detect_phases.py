"""Where detection spends its time on an already parsed bundle: CPU seconds (this process, every
DuckDB thread included) and wall seconds of opening the bundle, of each setup script
(``queries/detectors/_*.sql``), of each detector, of the anomaly model with causality, and of the
rest of ``analyze`` (hosts, coverage, failed commands). With ``--views``, each view of
``queries/views/`` is also materialised once on its own (``CREATE TEMP TABLE AS SELECT *``), which
is what a detector reading all of it pays.

    python benchmarks/detect_phases.py BUNDLE [--cache-dir DIR] [--top 15] [--views]

BUNDLE is parsed first if its cache entry has no tables (that part is not reported). The sum of
the phases is what ``forensics analyze`` costs on the parsed bundle, less interpreter start-up.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


class Clock:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float]] = []

    def __call__(self, name: str, fn):
        c0, t0 = cpu(), time.perf_counter()
        out = fn()
        self.rows.append((name, cpu() - c0, time.perf_counter() - t0))
        return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle")
    ap.add_argument("--cache-dir")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--views", action="store_true", help="also time each view materialised on its own")
    args = ap.parse_args(argv)

    from forensics.db import open_bundle
    from forensics.detect import engine
    from forensics.detect.rules import prepare, rules, setup_scripts
    from forensics.detect.xid_catalog import register

    clock = Clock()
    bundle = clock("open bundle", lambda: open_bundle(args.bundle, cache_dir=args.cache_dir, derive="lazy"))
    con = bundle.con
    c0 = cpu()
    from forensics.db.derived import NIC_HOT

    cached = bundle.cached
    src = "nic_counter_summary" if "nic_summary" in cached else "nic_counters"
    hot = f" AND class IN ({', '.join(repr(c) for c in NIC_HOT)})" if src == "nic_counter_summary" else ""
    clock("setup det_counter_names + xid catalogue", lambda: (con.execute(
        f"CREATE OR REPLACE TEMP VIEW det_counter_names AS SELECT DISTINCT counter FROM {src} "
        f"WHERE counter IS NOT NULL{hot}"), register(con)))
    for name, sql in setup_scripts():
        for i, stmt in enumerate(s for s in sql.split(";\n") if s.strip() and not all(
                l.strip().startswith("--") or not l.strip() for l in s.splitlines())):
            first = next(l for l in stmt.splitlines() if l.strip() and not l.strip().startswith("--"))
            clock(f"setup {name}: {first[:60]}", lambda s=stmt: con.execute(s))
    del prepare  # (the statements above are what prepare() runs, one by one)
    findings = []
    for rule in rules():
        findings.append(clock(f"rule {rule.name}", lambda r=rule: engine.run_rule(bundle, r)))
    import polars as pl

    from forensics import schema

    allf = pl.concat(findings) if findings else schema.empty("findings")
    clock("anomaly + causality", lambda: engine.finish(bundle, allf, []))
    from forensics.analysis import _read

    errs: list[str] = []
    clock("hosts, coverage, failed commands", lambda: (
        _read(bundle, errs, "hosts", lambda: bundle.sql("SELECT host, kernel, driver_version, nccl_version, gpu_count, "
                                                           "clock_offset_s, clock_offset_confidence FROM hosts ORDER BY host")),
        _read(bundle, errs, "coverage", lambda: bundle.query("coverage")),
        _read(bundle, errs, "failed", lambda: bundle.query("failed_commands"))))
    total_c = cpu() - c0
    if args.views:
        for v in bundle.views:
            try:
                clock(f"view {v}", lambda v=v: con.execute(f"CREATE OR REPLACE TEMP TABLE _t AS SELECT * FROM {v}"))
            except Exception as exc:  # noqa: BLE001 (a view over an absent table: said, not fatal)
                print(f"view {v}: {str(exc).splitlines()[0]}", file=sys.stderr)
    load = os.getloadavg()
    print(f"load {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}; detection (after open) {total_c:.2f} CPU s; "
          f"{sum(f.height for f in findings)} rule findings")
    print(f"{'phase':<72} {'CPU s':>7} {'wall s':>7}")
    for name, c, w in sorted(clock.rows, key=lambda r: -r[1])[:args.top]:
        print(f"{name[:72]:<72} {c:7.2f} {w:7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
