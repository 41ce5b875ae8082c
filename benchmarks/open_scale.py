"""The driver's open of a bundle (`create_base`: list the tables' files, read and check every
Parquet footer, one view per table) at N hosts, on copies of one parsed bundle's partitions.

    python benchmarks/open_scale.py TREE N DEST [time|prof] [nogc]

TREE: a parsed bundle's directory (the one holding tables/); DEST gets N hosts' partitions, copies
of TREE's as they are (`host=<h>-cNNNN`; the rows' host column is not renamed: the open's cost does
not depend on it). Prints create_base's CPU seconds (and ms per host) in this process, and a digest
of what it found (paths, rows, hosts, schemas) to compare two versions of the code. `prof`: a
cProfile of it; `nogc`: with Python's cyclic garbage collector off for the whole process.
Results: benchmarks/results/fleet_scale-2026-12-06-d.md."""

from __future__ import annotations

import cProfile
import gc
import hashlib
import io
import pstats
import shutil
import sys
import time
from pathlib import Path

import duckdb

from forensics.db import _build
from forensics.layout import TABLES_DIR


def replicate(src: Path, n: int, dest: Path) -> None:
    """`n` hosts' partitions under `dest`, copies of those of the bundle tree `src`."""
    parts = sorted(src.glob(f"{TABLES_DIR}/*/host=*"))
    per = len({p.name for p in parts})
    for c in range(n // per):
        for p in parts:
            d = dest / TABLES_DIR / p.parent.name / f"{p.name}-c{c:04d}"
            d.mkdir(parents=True, exist_ok=True)
            for f in p.iterdir():
                shutil.copy(f, d / f.name)


def main(argv: list[str]) -> int:
    src, n, dest = Path(argv[0]), int(argv[1]), Path(argv[2])
    mode = argv[3] if len(argv) > 3 else "time"
    if not (dest / TABLES_DIR).exists():
        replicate(src, n, dest)
    files = sum(1 for _ in (dest / TABLES_DIR).glob("*/*/*.parquet"))
    if "nogc" in argv:
        gc.disable()
    prof = cProfile.Profile(time.process_time) if mode == "prof" else None
    if prof:
        prof.enable()
    c0 = time.process_time()
    _build.create_base(duckdb.connect(), dest)
    cpu = time.process_time() - c0
    if prof:
        prof.disable()
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(14)
        print(text.getvalue())
    print(f"hosts {n} files {files} create_base CPU {cpu:.3f} s  {1000 * cpu / n:.2f} ms/host")
    digest = hashlib.sha1()
    found = _build.create_base(duckdb.connect(), dest)
    for table in sorted(found):
        for i in found[table]:
            digest.update(f"{i.path}|{i.rows}|{sorted(i.hosts)}|{i.schema}".encode())
    print("digest", digest.hexdigest()[:12], "gc enabled after:", gc.isenabled())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
