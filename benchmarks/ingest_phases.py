"""Where one host's ingest time goes: CPU seconds per raw file, split into parsing (the source's
parser, frames built) and writing (the table sink: Arrow conversion, partitioning, Parquet), on one
thread (``POLARS_MAX_THREADS=1``: CPU seconds per core), in this process.

    python benchmarks/ingest_phases.py BUNDLE_DIR [--host node01] [--repeat 2] [--profile OUT.prof]

BUNDLE_DIR is an extracted bundle (``zstd -dc B.tar.zst | tar -x -C DIR``). With ``--profile`` the
whole host ingest also runs once under cProfile (its stats written to OUT.prof, the top 25 printed).
Prints a Markdown table: file, MB, parse CPU s, write CPU s, MB/s per core (parse + write).
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
sys.path.insert(0, str(ROOT))


def cpu() -> float:
    return time.process_time()


def run_host(bundle: Path, host: str, out: Path) -> dict[str, list[float]]:
    from forensics.ingest import host as hostmod
    from forensics.ingest.sink import TableSink

    per_file: dict[str, list[float]] = {}
    cur = {"file": "(host setup)"}
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

    hostmod.parse_raw = parse_raw
    try:
        from forensics.ingest.hostfacts import HostFacts

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
    return per_file


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--host", default=None)
    ap.add_argument("--repeat", type=int, default=2, help="runs; the least CPU per file is reported")
    ap.add_argument("--profile", type=Path, default=None)
    args = ap.parse_args(argv)
    host = args.host or sorted(p.name for p in (args.bundle / "hosts").iterdir())[0]
    best: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            got = run_host(args.bundle, host, Path(tmp))
        for k, v in got.items():
            if k not in best or v[1] + v[2] < best[k][1] + best[k][2]:
                best[k] = v
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
