"""Where one host's ingest time goes: CPU seconds per raw file, split into parsing (the source's
parser, frames built) and writing (the table sink: Arrow conversion, partitioning, Parquet), on one
thread (``POLARS_MAX_THREADS=1``: CPU seconds per core), in this process.

    python benchmarks/ingest_phases.py BUNDLE_DIR [--host node01] [--repeat 2] [--profile OUT.prof]
    python benchmarks/ingest_phases.py BUNDLE_DIR --baseline REV --repeat 3   # side by side with commit REV

BUNDLE_DIR is an extracted bundle (``zstd -dc B.tar.zst | tar -x -C DIR``). With ``--profile`` the
whole host ingest also runs once under cProfile (its stats written to OUT.prof, the top 25 printed).
Prints a Markdown table: file, MB, parse CPU s, write CPU s, MB/s per core (parse + write). With
``--baseline REV`` the code of commit REV (``git archive``) and this checkout each run in their own
process, alternately, --repeat times, and the table puts their parse + write CPU side by side.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("POLARS_MAX_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
# the code measured: this checkout, or the tree of --baseline's commit (its child runs this script)
CODE = os.environ.get("INGEST_PHASES_CODE", str(ROOT))
sys.path.insert(0, CODE)


def cpu() -> float:
    return time.process_time()


def run_host(bundle: Path, host: str, out: Path) -> dict[str, list[float]]:
    try:
        from forensics.ingest import host as hostmod
        from forensics.ingest.sink import TableSink

        from forensics.ingest import collector_tables as ct
        from forensics.ingest.hostfacts import HostFacts
    except ImportError:  # a tree from before issue 13 (e.g. 6bff860): all of ingest in forensics/bundle/
        hostmod = _OldLayout()
        from forensics.bundle import collector_tables as ct
        from forensics.bundle.ingest import TableSink
        from forensics.bundle.ingest import _Derived as HostFacts

    per_file: dict[str, list[float]] = {}
    write_s = {"t": 0.0}
    sink = TableSink(out)
    real_write = sink.write

    def write(table, df, default_host):
        t0 = cpu()
        real_write(table, df, default_host)
        write_s["t"] += cpu() - t0

    sink.write = write
    real_parse = hostmod.parse_raw

    def parse_raw(sink_, host_, source, data, rel, ctx):
        write_s["t"] = 0.0
        t0 = cpu()
        cov = real_parse(sink_, host_, source, data, rel, ctx)
        total = cpu() - t0
        size = len(data) if isinstance(data, bytes) else Path(data).stat().st_size
        per_file[rel.split("/raw/", 1)[-1]] = [size / 1e6, total - write_s["t"], write_s["t"]]
        return cov

    real_commands = ct.parse_commands

    def parse_commands(data, ctx):
        t0 = cpu()
        out = real_commands(data, ctx)
        per_file["commands.jsonl"] = [len(data) / 1e6, cpu() - t0, 0.0]
        return out

    hostmod.parse_raw = parse_raw
    ct.parse_commands = parse_commands
    try:
        derived = HostFacts()
        sink.listeners.append(derived)
        t0 = cpu()
        hostmod.ingest_host(bundle, host, sink, derived, [])
        t1 = cpu()
        sink.close()
        per_file["(sink close)"] = [0.0, 0.0, cpu() - t1]
        per_file["(whole host)"] = [sum(v[0] for v in per_file.values()), 0.0, cpu() - t0]
    finally:
        hostmod.parse_raw = real_parse
        ct.parse_commands = real_commands
    return per_file


class _OldLayout:
    """forensics.ingest.host's two names on a tree where they were forensics.bundle.ingest's privates."""

    def __getattr__(self, name):
        from forensics.bundle import ingest as old

        return getattr(old, "_" + name)

    def __setattr__(self, name, value):
        from forensics.bundle import ingest as old

        setattr(old, "_" + name, value)


def best_of(bundle: Path, host: str, repeat: int) -> dict[str, list[float]]:
    best: dict[str, list[float]] = {}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            got = run_host(bundle, host, Path(tmp))
        for k, v in got.items():
            if k not in best or v[1] + v[2] < best[k][1] + best[k][2]:
                best[k] = v
    return best


def side_by_side(args, host: str) -> int:
    import json
    import subprocess

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from analyze_speed import baseline_tree

    tree = baseline_tree(args.baseline, ROOT / "benchmarks" / "data")
    me = [sys.executable, str(Path(__file__).resolve()), str(args.bundle.resolve()), "--host", host, "--repeat", "1",
          "--json"]
    runs: dict[str, list[dict]] = {"this": [], "base": []}
    for _ in range(args.repeat):  # alternately: a busy moment hits both alike
        for side, code in (("this", ROOT), ("base", tree)):
            env = {**os.environ, "INGEST_PHASES_CODE": str(code)}
            out = subprocess.run(me, capture_output=True, text=True, check=True, env=env, cwd=code).stdout
            res = json.loads(out.strip().splitlines()[-1])
            if Path(res.pop("_code")).resolve() != (Path(code) / "forensics" / "__init__.py").resolve():
                raise SystemExit(f"the {side} run imported the wrong code")  # (each side must run its own tree)
            runs[side].append(res)
    best = {side: {k: min(r[k][1] + r[k][2] for r in rs if k in r) for k in rs[0]} for side, rs in runs.items()}
    mb = runs["this"][0]
    print(f"host {host}, one polars thread, least CPU of {args.repeat} alternating runs each, load "
          f"{os.getloadavg()[0]:.1f}; baseline {args.baseline}\n")
    print(f"| file | MB | {args.baseline} CPU s | this CPU s | this / {args.baseline} |\n|---|---:|---:|---:|---:|")
    for k in sorted(best["this"], key=lambda k: -best["this"][k]):
        b, t = best["base"].get(k), best["this"][k]
        ratio = f"{t / b:.2f}" if b else "-"
        print(f"| {k} | {mb[k][0]:.1f} | {'-' if b is None else f'{b:.3f}'} | {t:.3f} | {ratio} |")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--host", default=None)
    ap.add_argument("--repeat", type=int, default=2, help="runs; the least CPU per file is reported")
    ap.add_argument("--profile", type=Path, default=None)
    ap.add_argument("--baseline", metavar="REV", help="also run the code of commit REV, alternately, side by side")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    host = args.host or sorted(p.name for p in (args.bundle / "hosts").iterdir())[0]
    if args.baseline:
        return side_by_side(args, host)
    best = best_of(args.bundle, host, args.repeat)
    if args.json:
        import json

        import forensics

        print(json.dumps({**best, "_code": forensics.__file__}))
        return 0
    print(f"host {host}, POLARS_MAX_THREADS={os.environ['POLARS_MAX_THREADS']}, load {os.getloadavg()[0]:.1f}, "
          f"best of {args.repeat}\n")
    print("| file | MB | parse CPU s | write CPU s | MB/s per core |\n|---|---:|---:|---:|---:|")
    for k, (mb, p, w) in sorted(best.items(), key=lambda kv: -(kv[1][1] + kv[1][2])):
        rate = mb / (p + w) if p + w > 0 and mb else float("nan")
        print(f"| {k} | {mb:.1f} | {p:.3f} | {w:.3f} | {rate:.0f} |")
    if args.profile:
        import cProfile
        import pstats

        with tempfile.TemporaryDirectory() as tmp:
            prof = cProfile.Profile()
            prof.runcall(run_host, args.bundle, host, Path(tmp))
        prof.dump_stats(args.profile)
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
