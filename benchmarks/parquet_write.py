"""CPU seconds of writing one host's tables to Parquet under different writer choices, side by side in
one run (the frames parsed once, in memory; each choice written --repeat times, the least CPU kept).

    python benchmarks/parquet_write.py BUNDLE_DIR [--host node01] [--repeat 5]

BUNDLE_DIR is an extracted bundle (``zstd -dc B.tar.zst | tar -x -C DIR``). "ingest" is what the
ingest writes now (:func:`forensics.ingest.sink.column_options`); the other rows change one choice.
Prints a Markdown table (CPU s, ratio to "ingest", MB written) with the load average.
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


def host_frames(bundle: Path, host: str) -> list:
    from forensics.ingest.host import ingest_host
    from forensics.ingest.hostfacts import HostFacts
    from forensics.ingest.sink import TableSink, arrow_rows

    frames = []
    with tempfile.TemporaryDirectory() as tmp:
        sink = TableSink(Path(tmp))
        sink.listeners.append(lambda t, df: frames.append((t, df)))
        ingest_host(bundle, host, sink, HostFacts(), [])
        sink.close()
    return [(t, arrow_rows(df, t)) for t, df in frames if df.height]


def write_all(arrows: list, options, writer_kw: dict) -> tuple[float, int]:
    import pyarrow.parquet as pq

    from forensics.ingest.sink import COMPRESSION, _native_schema

    with tempfile.TemporaryDirectory() as d:
        c0, writers = time.process_time(), {}
        for t, a in arrows:
            w = writers.get(t)
            if w is None:
                sch = _native_schema(t)
                w = writers[t] = pq.ParquetWriter(Path(d) / f"{t}.parquet", sch, store_schema=False,
                                                  **{"compression": COMPRESSION, **writer_kw}, **options(sch))
            w.write_table(a)
        for w in writers.values():
            w.close()
        return time.process_time() - c0, sum(f.stat().st_size for f in Path(d).iterdir())


def main(argv=None) -> int:
    from forensics.ingest.sink import FREE_TEXT, column_options

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--host", default=None)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    host = args.host or sorted(p.name for p in (args.bundle / "hosts").iterdir())[0]
    arrows = host_frames(args.bundle, host)

    def string_stats(sch):  # before 2026-12-06: statistics on every column but free text
        return {**column_options(sch), "write_statistics": [c for c in sch.names if c not in FREE_TEXT]}

    choices = [
        ("ingest (column_options)", column_options, {}),
        ("+ statistics on strings too (before 2026-12-06)", string_stats, {}),
        ("line_no, sample_no plain (before 2026-12-07)", lambda s: {**column_options(s), "column_encoding": None}, {}),
        ("no statistics at all", lambda s: {**column_options(s), "write_statistics": False}, {}),
        ("dictionary on every column", lambda s: {**column_options(s), "use_dictionary": True, "column_encoding": None},
         {}),
        ("no dictionary", lambda s: {**column_options(s), "use_dictionary": False}, {}),
        ("zstd (level 1; before 2026-12-07)", column_options, {"compression": "zstd"}),
        ("zstd level 3", column_options, {"compression": "zstd", "compression_level": 3}),
        ("lz4", column_options, {"compression": "lz4"}),
        ("no compression", column_options, {"compression": "none"}),
        ("data pages of 1 MB", column_options, {"data_page_size": 1 << 20}),
        ("data page format 2.0", column_options, {"data_page_version": "2.0"}),
    ]
    best: dict[str, tuple[float, int]] = {}
    load0 = os.getloadavg()
    for _ in range(args.repeat):  # interleaved: a busy moment hits every choice alike
        for name, opts, kw in choices:
            cpu, size = write_all(arrows, opts, kw)
            if name not in best or cpu < best[name][0]:
                best[name] = (cpu, size)
    rows = sum(a.num_rows for _, a in arrows)
    ref = best[choices[0][0]][0]
    print(f"host {host}: {rows:,} rows in {len({t for t, _ in arrows})} tables; POLARS_MAX_THREADS="
          f"{os.environ['POLARS_MAX_THREADS']}; least CPU of {args.repeat} interleaved rounds; load average "
          f"{load0[0]:.1f} before, {os.getloadavg()[0]:.1f} after\n")
    print("| writer choice | CPU s | x ingest | MB |\n|---|---:|---:|---:|")
    for name, _, _ in choices:
        cpu, size = best[name]
        print(f"| {name} | {cpu:.3f} | {cpu / ref:.2f} | {size / 1e6:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
