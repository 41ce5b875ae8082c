"""Where `analyze` of a bundle archive from raw spends its CPU: per phase and per source, in this process.

    python benchmarks/from_raw_phases.py BUNDLE.tar.zst [--profile OUT.prof] [--top 30]

Runs :func:`forensics.analyze` on the archive with a fresh cache folder, hosts parsed in this process
(``FORENSICS_INGEST_PROCESSES=1``, ``POLARS_MAX_THREADS=1``: CPU seconds per core), and times with
``time.process_time``:

- extract: the cache's first pass over the archive (its SHA-256 and the members that are not raw files);
- stream: reading the raw members from the archive (decompression, tar headers, copying the bytes),
  and apart from it the SHA-256 of each member checked against the manifest;
- per source (the folder under ``raw/``): parse (the parser, frames built) and write (the table sink:
  Arrow conversion, Parquet), with MB and MB/s per core; the collector's commands.jsonl on its own line;
- sink close (each host's pending row groups written), merge (host tables moved into the bundle's),
  the rest of the ingest (hosts and coverage tables, meta);
- after the ingest: the derived relations the first open builds and caches (:mod:`forensics.db.derived`),
  the detectors (:func:`forensics.detect.engine.run_all`), and the rest (imports, catalog, report).

With several worker processes (the default on a multi-core machine) each worker also streams the whole
archive (it skips the hosts it did not claim), so a real run costs about one stream pass more per extra
worker than shown here: compare with ``/usr/bin/time forensics analyze`` of the same archive.
With ``--profile`` the run is made under cProfile (its overhead inflates every figure; the phase table
then shows shares, not speeds) and the top functions by own time are printed.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ["FORENSICS_INGEST_PROCESSES"] = "1"
os.environ.setdefault("POLARS_MAX_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, os.environ.get("FROM_RAW_PHASES_CODE", str(ROOT)))


def cpu() -> float:
    return time.process_time()


class Clock:
    """CPU seconds by key, with a stack so that an inner phase is not billed to the outer one."""

    def __init__(self):
        self.total: dict[str, float] = {}
        self.mb: dict[str, float] = {}
        self.stack: list[list] = []  # [key, start, child seconds]

    def push(self, key: str) -> None:
        self.stack.append([key, cpu(), 0.0])

    def pop(self) -> float:
        key, t0, child = self.stack.pop()
        spent = cpu() - t0
        self.total[key] = self.total.get(key, 0.0) + spent - child
        if self.stack:
            self.stack[-1][2] += spent
        return spent

    def wrap(self, fn, key):
        def inner(*a, **kw):
            self.push(key(*a, **kw) if callable(key) else key)
            try:
                return fn(*a, **kw)
            finally:
                self.pop()
        return inner


def instrument(clock: Clock) -> None:
    import hashlib

    from forensics.bundle import cache
    from forensics.ingest import archive, host, pool, run, sink
    from forensics.ingest import collector_tables as ct

    cache.extracted = clock.wrap(cache.extracted, "extract (cache: archive SHA-256, non-raw members)")
    real_stream = archive.stream_hosts

    def stream_hosts(*a, **kw):
        gen = real_stream(*a, **kw)
        while True:
            clock.push("stream raw members (decompress, tar, copy)")
            try:
                item = next(gen)
            except StopIteration:
                clock.pop()
                return
            clock.pop()
            yield item

    archive.stream_hosts = stream_hosts
    pool.stream_hosts = stream_hosts

    class Sha:
        def __init__(self):
            self.h = hashlib.sha256()

        def update(self, b):
            clock.push("stream: SHA-256 of raw members")
            try:
                self.h.update(b)
            finally:
                clock.pop()

        def hexdigest(self):
            return self.h.hexdigest()

    class HashMod:
        sha256 = Sha

    archive.hashlib = HashMod
    real_parse_raw = host.parse_raw

    def parse_raw(sink_, host_, source, data, rel, ctx):
        size = len(data) if isinstance(data, bytes) else Path(data).stat().st_size
        key = f"parse {source}"
        clock.mb[key] = clock.mb.get(key, 0.0) + size / 1e6
        clock.push(key)
        try:
            return real_parse_raw(sink_, host_, source, data, rel, ctx)
        finally:
            clock.pop()

    host.parse_raw = parse_raw
    real_write = sink.TableSink.write

    def write(self, table, df, default_host):
        outer = clock.stack[-1][0] if clock.stack else "?"
        src = outer[len("parse "):] if outer.startswith("parse ") else outer
        clock.push(f"write {src}")
        try:
            return real_write(self, table, df, default_host)
        finally:
            clock.pop()

    sink.TableSink.write = write
    sink.TableSink.close = clock.wrap(sink.TableSink.close, "sink close (pending row groups written)")
    real_cmd = ct.parse_commands

    def parse_commands(data, ctx):
        key = "parse commands.jsonl"
        clock.mb[key] = clock.mb.get(key, 0.0) + len(data) / 1e6
        clock.push(key)
        try:
            return real_cmd(data, ctx)
        finally:
            clock.pop()

    ct.parse_commands = parse_commands
    host.routed_source = clock.wrap(host.routed_source, "routing (sniff of raw/nccl files)")
    pool.merge_host = clock.wrap(pool.merge_host, "merge host tables into the bundle's")
    run.ingest_bundle = clock.wrap(run.ingest_bundle, "ingest: rest (hosts, coverage, meta, plan)")
    from forensics.db import derived
    from forensics.detect import engine

    derived.attach = clock.wrap(derived.attach, "open: derived relations built (NIC intervals, ...) and attached")
    engine.run_all = clock.wrap(engine.run_all, "detect: every detector (forensics.detect.engine.run_all)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--profile", type=Path, default=None)
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args(argv)
    import forensics

    clock = Clock()
    instrument(clock)
    with tempfile.TemporaryDirectory(prefix="from-raw-phases-") as cache_dir:
        t0, w0 = cpu(), time.perf_counter()
        clock.push("open + detect: the rest (imports, catalog, report)")
        prof = None
        if args.profile:
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
        res = forensics.analyze(str(args.bundle), cache_dir=cache_dir)
        if prof is not None:
            prof.disable()
        clock.pop()
        total, wall = cpu() - t0, time.perf_counter() - w0
    print(f"{args.bundle.name}: {len(res.findings)} findings; code {Path(forensics.__file__).parent.parent}; "
          f"POLARS_MAX_THREADS={os.environ['POLARS_MAX_THREADS']}; niceness {os.nice(0)}; load {os.getloadavg()[0]:.1f}; "
          f"total {total:.2f} CPU s, {wall:.2f} s wall\n")
    rows = sorted(clock.total.items(), key=lambda kv: -kv[1])
    print("| phase | CPU s | share | MB | MB/s per core |\n|---|---:|---:|---:|---:|")
    for k, v in rows:
        mb = clock.mb.get(k)
        both = v + clock.total.get("write " + k[len("parse "):], 0.0) if k.startswith("parse ") else None
        rate = f"{mb / both:.0f} (with write)" if mb and both else ""
        print(f"| {k} | {v:.2f} | {100 * v / total:.1f}% | {'' if mb is None else f'{mb:.1f}'} | {rate} |")
    print(f"| (sum) | {sum(clock.total.values()):.2f} | | {sum(clock.mb.values()):.0f} | |")
    by_src: dict[str, float] = {}
    for k, v in clock.total.items():
        if k.startswith(("parse ", "write ")):
            s = k.split(" ", 1)[1]
            by_src[s] = by_src.get(s, 0.0) + v
    print("\n| source | parse + write CPU s | MB | MB/s per core |\n|---|---:|---:|---:|")
    for s, v in sorted(by_src.items(), key=lambda kv: -kv[1]):
        mb = clock.mb.get("parse " + s, 0.0)
        print(f"| {s} | {v:.2f} | {mb:.0f} | {mb / v if v else 0:.0f} |")
    if prof is not None:
        import pstats

        prof.dump_stats(args.profile)
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
