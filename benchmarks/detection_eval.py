"""Detection quality against the simulator's ground truth.

Runs every scenario at several seeds and node counts, analyses each bundle, matches findings to
truth/labels.json (kind, host, subject, time overlap: forensics.detect.evaluate) and records
precision and recall per kind, false findings per healthy node-hour and how often the root cause
is ranked first, in benchmarks/results/detection_eval-<date>.md.

    python benchmarks/detection_eval.py                      # 4 and 16 nodes, seeds 1-3 (long)
    python benchmarks/detection_eval.py --quick              # 4 nodes, seed 1
    python benchmarks/detection_eval.py --scenarios pfc_storm,xid_79 --nodes 4 --seeds 1,2
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from forensics.analysis import analyze_paths  # noqa: E402
from forensics.detect.evaluate import score_bundle  # noqa: E402
from forensics.timeutil import parse_duration  # noqa: E402


def scenarios() -> list[str]:
    from forensics.simulate.scenarios import SCENARIOS

    return sorted(SCENARIOS)


def simulate(scenario: str, nodes: int, seed: int, duration: str, out: Path) -> None:
    subprocess.run([sys.executable, "-m", "forensics", "simulate", "--scenario", scenario, "--nodes", str(nodes),
                    "--seed", str(seed), "--duration", duration, "--out", str(out)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def labels_of(bundle: Path) -> dict:
    with tarfile.open(bundle) as tf:
        return json.load(tf.extractfile("truth/labels.json"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", default="", help="comma-separated (default: all)")
    ap.add_argument("--nodes", default="4,16")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--duration", default="5m")
    ap.add_argument("--quick", action="store_true", help="4 nodes, seed 1")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = ap.parse_args(argv)
    names = [s for s in args.scenarios.split(",") if s] or scenarios()
    nodes = [4] if args.quick else [int(n) for n in args.nodes.split(",")]
    seeds = [1] if args.quick else [int(s) for s in args.seeds.split(",")]
    per_kind: dict[str, dict] = {}
    runs = []
    healthy_false = 0
    healthy_node_hours = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        for n in nodes:
            for seed in seeds:
                for sc in names:
                    b = Path(tmp) / f"{sc}-{n}-{seed}.tar.gz"
                    t0 = time.time()
                    simulate(sc, n, seed, args.duration, b)
                    t1 = time.time()
                    a = analyze_paths([b], cache_dir=cache)
                    t2 = time.time()
                    labels = labels_of(b)
                    findings = a.findings.to_dicts()
                    s = score_bundle(findings, labels)
                    for k, v in s["per_kind"].items():
                        agg = per_kind.setdefault(k, {"tp": 0, "fp": 0, "faults": 0, "found": 0})
                        for key in agg:
                            agg[key] += v[key]
                    if sc == "healthy":
                        healthy_false += len(s["false_findings"])
                        healthy_node_hours += n * parse_duration(args.duration) / 3600
                    runs.append({"scenario": sc, "nodes": n, "seed": seed, "findings": len(findings),
                                 "false": [f"{f['kind']}@{','.join(f['hosts'][:2])}" for f in s["false_findings"]],
                                 "missed": [k for k, v in s["per_kind"].items() if v["found"] < v["faults"]],
                                 "root_first": s["root_first"], "simulate_s": round(t1 - t0, 1), "analyze_s": round(t2 - t1, 1)})
                    print(json.dumps(runs[-1]), flush=True)
    fault_runs = [r for r in runs if r["root_first"] is not None]
    root_first = sum(1 for r in fault_runs if r["root_first"]) / len(fault_runs) if fault_runs else float("nan")
    lines = [f"# Detection quality, {dt.date.today().isoformat()}", "",
             f"Scenarios: {', '.join(names)}; nodes {nodes}; seeds {seeds}; duration {args.duration}.",
             "Command: `python benchmarks/detection_eval.py " + " ".join(argv if argv is not None else sys.argv[1:]) + "`", "",
             "| kind | precision | recall | true findings | false findings | faults | faults found |",
             "|---|---|---|---|---|---|---|"]
    for k, v in sorted(per_kind.items()):
        prec = v["tp"] / (v["tp"] + v["fp"]) if v["tp"] + v["fp"] else float("nan")
        rec = v["found"] / v["faults"] if v["faults"] else float("nan")
        lines.append(f"| {k} | {prec:.2f} | {rec:.2f} | {v['tp']} | {v['fp']} | {v['faults']} | {v['found']} |")
    lines += ["", f"Root cause ranked first: {root_first:.2f} of {len(fault_runs)} fault bundles.",
              f"False findings (warning or worse) per healthy node-hour: "
              f"{healthy_false / healthy_node_hours if healthy_node_hours else float('nan'):.3f} "
              f"({healthy_false} in {healthy_node_hours:.2f} node-hours).", "", "## Runs", "",
              "| scenario | nodes | seed | findings | false | missed | root first | simulate s | analyze s |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        lines.append(f"| {r['scenario']} | {r['nodes']} | {r['seed']} | {r['findings']} | {', '.join(r['false']) or '-'} | "
                     f"{', '.join(r['missed']) or '-'} | {r['root_first']} | {r['simulate_s']} | {r['analyze_s']} |")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"detection_eval-{dt.date.today().isoformat()}{'-quick' if args.quick else ''}.md"
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
