"""The reduce step alone as the number of hosts grows, on replicas of one parsed incident.

    nice -n 10 python benchmarks/fleet_reduce.py BUNDLE --copies 1,4,16,32

Parsing a 1,024-node bundle takes this shared 2-core machine the better part of an hour, so the
reduce's growth is measured on copies instead: BUNDLE (e.g. the 64-node bundle of
benchmarks/fleet_scale.py) is parsed and its map step run once (serially), then its parsed tables
and the map's outputs (host-local findings, window tables) are copied k times with the hosts renamed
(``node01`` -> ``node01-c3``; every row's ``host`` column, the findings' host lists). Each size is
opened and reduced in a child process of its own: the clock offsets over every host's anchors (the
open), then :func:`forensics.engine.reduce.reduce_findings` (cross-host detectors, anomaly model,
causality over NCCL peers, ranking). Measured: wall and CPU seconds of each (the child's own
process: DuckDB's threads are in it), the child's peak RSS, and the window rows. The copies keep
their original's NCCL communicator ids and anchors, so a collective spans every copy: the work
grows as with a bigger job, its findings are not an incident's.

Appends to benchmarks/results/fleet_scale-<date>.md with a linear fit.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def prepare(bundle: Path, work: Path) -> tuple[Path, list[dict]]:
    """The bundle parsed, and its map step's outputs (serially, 4 groups)."""
    from forensics.db import open_bundle
    from forensics.engine import MapReduce, SerialExecutor
    from forensics.engine import run as engine_run

    eng = MapReduce(SerialExecutor())
    eng.executor.slots = 4
    root = eng.parse(bundle, cache_dir=work / "cache")
    b = open_bundle(root, derive="never")
    from forensics.engine.mapstep import detect_group

    hosts = list(b.hosts)
    groups = engine_run.groups_of(len(hosts), 4)
    outs = [detect_group(str(b.root), [hosts[i] for i in g], b.clock, str(work / "map" / f"g{n}"))
            for n, g in enumerate(groups)]
    b.close()
    return root, outs


def replicate(root: Path, outs: list[dict], k: int, dest: Path) -> list[dict]:
    """`k` copies of the parsed tables under ``dest/tables`` and of the map outputs, hosts renamed."""
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    from forensics.layout import TABLES_DIR

    def rename(table: pa.Table, c: int) -> pa.Table:
        if "host" not in table.column_names:
            return table
        col = pl.from_arrow(table.column("host")).cast(pl.String) + f"-c{c}"
        return table.set_column(table.column_names.index("host"), "host", col.to_arrow())

    src = root / TABLES_DIR
    for f in sorted(src.glob("*/host=*/part-0.parquet")):
        t = pq.read_table(f)
        for c in range(k):
            out = dest / TABLES_DIR / f.parent.parent.name / f"{f.parent.name}-c{c}" / f.name
            out.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(rename(t, c), out)
    new = []
    for n, o in enumerate(outs):
        for c in range(k):
            d = dest / "map" / f"g{n}-c{c}"
            d.mkdir(parents=True, exist_ok=True)
            fd = pl.read_parquet(o["findings"])
            fd = fd.with_columns(pl.col("hosts").list.eval(pl.element() + f"-c{c}"),
                                 (pl.col("id") + f"-c{c}"))
            fd.write_parquet(d / "findings.parquet")
            win = {}
            for t, p in o["windows"].items():
                pq.write_table(rename(pq.read_table(p), c), d / f"{t}.parquet")
                win[t] = str(d / f"{t}.parquet")
            new.append({"findings": str(d / "findings.parquet"), "windows": win, "errors": [],
                        "hosts": [h + f"-c{c}" for h in o["hosts"]]})
    return new


def _vm(field: str) -> float:
    """This process's /proc/self/status `field` (VmRSS, VmHWM) in MB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak() -> None:
    """Reset VmHWM to the current RSS (Linux: 5 > /proc/self/clear_refs), so each step's peak is its own."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def profile_steps(steps: list[dict], memory: bool = True) -> None:
    """Wrap the open's and the reduce's steps so that each records its CPU seconds and, with `memory`,
    its RSS before, its peak and its RSS after (MB) and the Python heap's peak (tracemalloc, which
    slows Python code several times: without `memory` the CPU seconds are the undisturbed ones) in
    `steps`: which step grows with the hosts."""
    import tracemalloc

    from forensics import timeline
    from forensics.db import _build
    from forensics.detect import anomaly, causality, engine as det_engine
    from forensics.engine import reduce as red

    if not memory:
        tracemalloc.reset_peak = tracemalloc.get_traced_memory = lambda: (0, 0)  # (not started: no cost)
        tracemalloc.start = lambda: None

    def wrap(mod, name, label=None):
        inner = getattr(mod, name)
        if label is None:
            label = name

        def timed(*a, **kw):
            tracemalloc.reset_peak()
            _reset_peak()
            rss0, c0 = _vm("VmRSS"), time.process_time()
            try:
                return inner(*a, **kw)
            finally:
                steps.append({"step": label(*a) if callable(label) else label, "rss_before_mb": round(rss0, 1), "peak_mb": round(_vm("VmHWM"), 1),
                              "rss_after_mb": round(_vm("VmRSS"), 1), "py_peak_mb": round(tracemalloc.get_traced_memory()[1] / 2**20, 1),
                              "cpu_s": round(time.process_time() - c0, 3)})
        setattr(mod, name, timed)
        return timed

    tracemalloc.start()
    for mod, name in ((_build, "create_base"), (timeline, "anchors"), (timeline, "estimate"), (_build, "create_views")):
        wrap(mod, name, f"open: {name}")
    wrap(red, "load_windows")
    rr = wrap(det_engine, "run_rule", lambda bundle, rule, *_: f"cross {rule.name}")
    red.run_rule = rr  # (imported by name inside reduce_findings from forensics.detect.engine)
    wrap(anomaly, "detect_anomalies")
    wrap(causality, "nccl_peers")
    wrap(causality, "link_and_rank")


def child(dest: str, profile: bool = False, memory: bool = True) -> dict:
    """In a child process: open the replicated tables, reduce; what it cost."""
    from forensics.db import open_bundle
    from forensics.engine.reduce import reduce_findings

    steps: list[dict] = []
    if profile:
        profile_steps(steps, memory)
    outs = json.loads((Path(dest) / "outputs.json").read_text())
    c0, w0 = time.process_time(), time.perf_counter()
    b = open_bundle(Path(dest), derive="never")
    c1, w1 = time.process_time(), time.perf_counter()
    open_peak = _vm("VmHWM")
    findings, errors = reduce_findings(b, outs)
    c2, w2 = time.process_time(), time.perf_counter()
    rows = b.con.execute("SELECT count(*) FROM det_host_windows").fetchall()[0][0]
    if profile:  # the detectors' calls summed: CPU added up, the highest peak
        rules_ = [s for s in steps if s["step"].startswith("cross")]
        steps = [s for s in steps if not s["step"].startswith("cross")] + ([{
            "step": f"cross detectors ({len(rules_)})", "rss_before_mb": rules_[0]["rss_before_mb"],
            "peak_mb": max(s["peak_mb"] for s in rules_), "rss_after_mb": rules_[-1]["rss_after_mb"],
            "py_peak_mb": max(s["py_peak_mb"] for s in rules_), "cpu_s": round(sum(s["cpu_s"] for s in rules_), 3),
            "each": rules_}] if rules_ else [])
    return {"steps": steps, "hosts": len(b.hosts), "open_cpu_s": c1 - c0, "open_wall_s": w1 - w0, "reduce_cpu_s": c2 - c1,
            "reduce_wall_s": w2 - w1, "window_rows": rows, "findings": findings.height, "errors": errors,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "open_peak_mb": open_peak}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", type=Path, nargs="?")
    ap.add_argument("--copies", default="1,4,16")
    ap.add_argument("--profile", action="store_true",
                    help="also each step's RSS before/after, its peak and the Python heap's peak (tracemalloc)")
    ap.add_argument("--cpu-steps", action="store_true",
                    help="each step's CPU seconds only (no tracemalloc, which slows Python code several times)")
    ap.add_argument("--work", type=Path, default=None,
                    help="keep the parsed bundle, its map outputs and the copies here, and reuse them when run again")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.profile or args.cpu_steps, not args.cpu_steps), default=str))
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="fleet-reduce-", dir=ROOT / "benchmarks" / "tmp"))
    rows = []
    try:
        saved = work / "prepared.json"
        if args.work and saved.exists():
            root, outs = Path(json.loads(saved.read_text())["root"]), json.loads(saved.read_text())["outputs"]
        else:
            work.mkdir(parents=True, exist_ok=True)
            root, outs = prepare(args.bundle, work)
            saved.write_text(json.dumps({"root": str(root), "outputs": outs}))
        for k in [int(x) for x in args.copies.split(",")]:
            dest = work / f"x{k}"
            if not (args.work and (dest / "outputs.json").exists()):
                shutil.rmtree(dest, ignore_errors=True)
                new = replicate(root, outs, k, dest)
                (dest / "outputs.json").write_text(json.dumps(new))
            load = os.getloadavg()[0]
            r = subprocess.run([sys.executable, __file__, "--child", str(dest)] + (["--profile"] if args.profile else [])
                               + (["--cpu-steps"] if args.cpu_steps else []),
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(r.stderr[-2000:])
            res = json.loads(r.stdout.strip().splitlines()[-1])
            res.update(copies=k, load=load)
            rows.append(res)
            print(json.dumps(res), flush=True)
            if not args.work:
                shutil.rmtree(dest, ignore_errors=True)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    from fleet_scale import fit

    xs = [r["hosts"] for r in rows]
    lines = [f"## Reduce alone on copies of {args.bundle.name} ({dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, "
             "benchmarks/fleet_reduce.py)", "",
             "| hosts | open (clock offsets) CPU s | reduce CPU s | reduce wall s | window rows | child peak RSS MB | load |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['hosts']} | {r['open_cpu_s']:.2f} | {r['reduce_cpu_s']:.2f} | {r['reduce_wall_s']:.2f} | "
                     f"{r['window_rows']} | {r['peak_rss_mb']:.0f} | {r['load']:.1f} |")
    if len(rows) >= 2:
        a, b = fit(xs, [r["reduce_cpu_s"] for r in rows])
        a2, b2 = fit(xs, [r["open_cpu_s"] for r in rows])
        a3, b3 = fit(xs, [r["peak_rss_mb"] for r in rows])
        lines += ["", f"Linear fits: reduce CPU s = {a:.2f} + {b * 1000:.2f} ms x hosts; open CPU s = {a2:.2f} + "
                      f"{b2 * 1000:.2f} ms x hosts; peak RSS MB = {a3:.0f} + {b3:.3f} x hosts. Per host: " +
                  ", ".join(f"{r['hosts']}: {1000 * r['reduce_cpu_s'] / r['hosts']:.1f} ms, "
                            f"{r['peak_rss_mb'] / r['hosts']:.2f} MB" for r in rows) + "."]
    if rows and rows[0].get("steps"):  # --profile / --cpu-steps: CPU s of each step by size, and per host
        names = list(dict.fromkeys(s["step"] for r in rows for s in r["steps"]))
        lines += ["", "CPU s by step (" + ("--cpu-steps: no tracemalloc" if args.cpu_steps else "--profile: under tracemalloc")
                  + "), and ms per host:", "", "| step | " + " | ".join(f"{r['hosts']} hosts" for r in rows)
                  + " | " + " | ".join(f"ms/host at {r['hosts']}" for r in rows) + " |",
                  "|---|" + "---:|" * (2 * len(rows))]
        for name in names:
            cpu = [sum(s["cpu_s"] for s in r["steps"] if s["step"] == name) for r in rows]
            lines.append(f"| {name} | " + " | ".join(f"{c:.3f}" for c in cpu) + " | "
                         + " | ".join(f"{1000 * c / r['hosts']:.2f}" for c, r in zip(cpu, rows)) + " |")
        for e in (rows[0]["steps"][-1].get("each") or []):
            name = e["step"]
            cpu = [sum(x["cpu_s"] for s in r["steps"] for x in s.get("each") or [] if x["step"] == name) for r in rows]
            lines.append(f"| ({name}) | " + " | ".join(f"{c:.3f}" for c in cpu) + " | "
                         + " | ".join(f"{1000 * c / r['hosts']:.2f}" for c, r in zip(cpu, rows)) + " |")
    text = "\n".join(lines) + "\n"
    out = args.out or ROOT / "benchmarks" / "results" / f"fleet_scale-{dt.date.today():%Y-%m-%d}.md"
    with open(out, "a") as fh:
        fh.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
