"""Parse speed of the time-series sources of a simulated bundle: sar, iostat, nvidia-smi -q and
--query-gpu CSV, each file timed as ``mod.parse(path.read_bytes(), ctx)`` with the context the
bundle ingest builds (host, zone, capture time, hints).

These files, with ethtool's, dominate ``forensics analyze`` from raw. The script simulates a bundle
under benchmarks/data/ (git-ignored; reused when present), takes one host's raw files, and times
each one (best of --repeat runs, the garbage collector as the parser leaves it). With ``--baseline
REV`` it also times the parsers of git revision REV (extracted into a temporary folder and run in a
subprocess on the same files, interleaved with the current code's runs), checks that both produce
the same tables, and prints a before/after table with the ratio.

Usage:
    python benchmarks/parse_series.py                                  # 2 nodes x 10 min at 1 s
    python benchmarks/parse_series.py --baseline cc6bbda --repeat 5    # before/after against a commit
    python benchmarks/parse_series.py --duration 60m --baseline HEAD~3 # 64-node x 1 h per-host sizes
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"

FILES = (  # (label, path under hosts/<host>/raw/, source)
    ("sar -P ALL", "sar/sar-P-ALL.txt", "sar"),
    ("sar -n EDEV", "sar/sar-n-EDEV.txt", "sar"),
    ("sar -n DEV", "sar/sar-n-DEV.txt", "sar"),
    ("sar -r", "sar/sar-r.txt", "sar"),
    ("sar -u", "sar/sar-u.txt", "sar"),
    ("sar -q", "sar/sar-q.txt", "sar"),
    ("iostat -x", "iostat/iostat.txt", "iostat"),
    ("nvidia-smi -q", "nvidia_smi/q.txt", "nvidia_smi"),
    ("query-gpu CSV", "nvidia_smi/query-gpu.csv", "nvidia_smi"),
)


def _bundle(duration: str, scenario: str) -> Path:
    """The extracted 2-node bundle, made by today's simulator (benchmarks/simcache.py: one made by another simulator
    or with other arguments is made again)."""
    from simcache import cached_bundle

    DATA.mkdir(parents=True, exist_ok=True)
    sim_args = ["--scenario", scenario, "--nodes", "2", "--duration", duration, "--raw-only"]

    def make(out: Path) -> None:
        tar = out.with_name(out.name + ".tar")
        subprocess.run([sys.executable, "-m", "forensics", "simulate", *sim_args, "--out", str(tar)], check=True,
                       cwd=ROOT)
        tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        subprocess.run(["tar", "-xf", str(tar), "-C", str(tmp)], check=True)
        tar.unlink()
        tmp.rename(out)

    out, note = cached_bundle(DATA / f"series-{scenario}-2n-{duration}", sim_args, make)
    print(f"bundle: {note}", file=sys.stderr)
    return out


def _contexts(bundle: Path, host: str) -> list[tuple[str, Path, str, object]]:
    from forensics.ingest import hostfacts as bi

    info = json.loads((bundle / "hosts" / host / "host.json").read_text())
    entries = [json.loads(x) for x in (bundle / "hosts" / host / "commands.jsonl").read_text().splitlines() if x.strip()]
    starts = bi.capture_starts(host, entries)
    out = []
    for label, rel, source in FILES:
        path = bundle / "hosts" / host / "raw" / rel
        if path.is_file():
            relname = f"hosts/{host}/raw/{rel}"
            out.append((label, path, source, bi.parse_context(host, relname, source, path, info, starts)))
    return out


def _worker(bundle: Path, host: str, repeat: int, digest: bool) -> dict:
    """Time every file `repeat` times in this process (the forensics package on sys.path)."""
    from forensics import sources

    reg = sources.registry()
    res: dict[str, dict] = {}
    for label, path, source, ctx in _contexts(bundle, host):
        data = path.read_bytes()
        mod = reg[source]
        mod.parse(data, ctx)  # warm: imports, regex compilation
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            r = mod.parse(data, ctx)
            best = min(best, time.perf_counter() - t0)
        row = {"bytes": len(data), "lines": r.lines, "s": best, "unparsed": r.unparsed.height, "rows": r.rows()}
        if digest:
            row["digest"] = _digest(r)
        res[label] = row
    return res


def _digest(r) -> str:
    import hashlib

    h = hashlib.sha256()  # of the values (not of the memory layout, which may differ)
    for name, df in [*sorted(r.tables.items()), ("unparsed", r.unparsed)]:
        h.update(name.encode())
        h.update(str(df.schema).encode())
        if df.height:
            h.update(df.hash_rows(seed=0).to_numpy().tobytes())
    h.update(json.dumps(r.meta, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


def _run(pythonpath: Path | None, bundle: Path, host: str, repeat: int) -> dict:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--bundle", str(bundle), "--host", host,
           "--repeat", str(repeat)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env, cwd=pythonpath or ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _merge(runs: list[dict]) -> dict:
    out: dict[str, dict] = {}
    for r in runs:
        for k, v in r.items():
            if k in out and out[k]["digest"] != v["digest"]:
                raise SystemExit(f"{k}: output differs between two runs of the same code")
            if k not in out or v["s"] < out[k]["s"]:
                out[k] = dict(v)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", default="10m")
    ap.add_argument("--scenario", default="pfc_storm")
    ap.add_argument("--bundle", type=Path, help="an extracted bundle to use instead of simulating one")
    ap.add_argument("--host", default="node01")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2, help="baseline/current subprocess rounds, interleaved")
    ap.add_argument("--baseline", help="git revision whose parsers to time against")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(_worker(a.bundle, a.host, a.repeat, digest=True)))
        return
    bundle = a.bundle or _bundle(a.duration, a.scenario)
    base_dir = None
    with tempfile.TemporaryDirectory(prefix="parse_series-") as tmp:
        if a.baseline:
            base_dir = Path(tmp)
            arch = subprocess.run(["git", "archive", a.baseline, "forensics", "schemas"], cwd=ROOT, check=True,
                                  capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(base_dir)], input=arch, check=True)
        cur_runs, base_runs = [], []
        for _ in range(a.rounds):
            if base_dir is not None:
                base_runs.append(_run(base_dir, bundle, a.host, a.repeat))
            cur_runs.append(_run(ROOT, bundle, a.host, a.repeat))
    cur = _merge(cur_runs)
    base = _merge(base_runs) if base_runs else {}
    print(f"bundle {bundle} host {a.host}; best of {a.repeat} x {a.rounds} rounds; load {os.getloadavg()[0]:.2f}")
    hdr = "| file | MB | lines | " + ("before ms | before MB/s | " if base else "") + "ms | MB/s |" + \
        (" speed-up | same output |" if base else "")
    print(hdr)
    print("|" + "---|" * (hdr.count("|") - 1))
    for label, _, _ in FILES:
        c = cur.get(label)
        if c is None:
            continue
        mb = c["bytes"] / 1e6
        cells = [label, f"{mb:.2f}", str(c["lines"])]
        if base:
            b = base[label]
            cells += [f"{b['s'] * 1e3:.1f}", f"{mb / b['s']:.1f}"]
        cells += [f"{c['s'] * 1e3:.1f}", f"{mb / c['s']:.1f}"]
        if base:
            cells += [f"{base[label]['s'] / c['s']:.2f}x", "yes" if base[label]["digest"] == c["digest"] else "NO"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
