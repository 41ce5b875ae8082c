"""Does any parser's time grow faster than its input? A stranger's bundle can hold a small file of one
line repeated: this times every registered source's parser on inputs built from its own real fixtures
at N and 4N lines, and flags the shapes whose CPU time grows more than `--flag` times (linear: ~4x).

Shapes, for each source (lines taken evenly across its fixtures, `--lines` of them):
  rep      one fixture line repeated
  hdr+rep  the fixture's first 20 lines, then one of its lines repeated
  cut      the first half of one fixture line repeated (a record cut short, a document that never closes)
  whole    the fixture itself repeated (up to the line count)
  flat     the fixture joined into one line (a pretty-printed document compacted), repeated; flat-cut: its first half

    python benchmarks/parse_scaling.py                    # N = 4,000 and 16,000 lines
    python benchmarks/parse_scaling.py --sources dcgm,nccl --n 8000 --lines 60

Prints one line per flagged shape (source, shape, fixture, line, CPU s at N and 4N, ratio) and a summary;
exit 1 when any shape is flagged. CPU seconds of this process (time.process_time), one polars thread.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("POLARS_MAX_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FIXTURES = ROOT / "tests" / "fixtures"


def fixture_files(source: str) -> list[Path]:
    folder = FIXTURES / source
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and not p.name.endswith((".expected.json", ".md", ".json.sha256")) and p.name != "README")


def shapes(files: list[Path], n: int, per_source: int):
    """(shape, fixture name, line text, bytes) for one input size n."""
    picked: list[tuple[Path, list[bytes], bytes]] = []
    everything = []
    for f in files:
        lines = [ln for ln in f.read_bytes().split(b"\n")]
        everything.append((f, lines))
        for ln in dict.fromkeys(x for x in lines if x.strip()):
            picked.append((f, lines, ln))
    step = max(1, len(picked) // per_source)
    for f, lines, ln in picked[::step][:per_source]:
        yield "rep", f.name, ln, (ln + b"\n") * n
        yield "hdr+rep", f.name, ln, b"\n".join(lines[:20]) + b"\n" + (ln + b"\n") * n
        if len(ln) > 8:
            yield "cut", f.name, ln[: len(ln) // 2], (ln[: len(ln) // 2] + b"\n") * n
    for f, lines in everything:
        if lines:
            reps = max(1, n // max(1, len(lines)))
            yield "whole", f.name, b"", (b"\n".join(lines) + b"\n") * reps
            flat = b" ".join(x.strip() for x in lines if x.strip())
            reps = max(1, min(n, n * 1000 // max(1, len(flat))))  # (at most ~1 KB per line on average: n KB in all)
            yield "flat", f.name, flat[:60], (flat + b"\n") * reps
            yield "flat-cut", f.name, flat[:60], (flat[: len(flat) // 2] + b"\n") * reps


def cpu_of(parse, data: bytes, ctx) -> float:
    t = time.process_time()
    try:
        parse(data, ctx)
    except Exception as exc:  # a parser that raises is its own finding: report it, go on
        print(f"  raised {type(exc).__name__}: {str(exc)[:120]}", file=sys.stderr)
    return time.process_time() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sources", default="", help="comma-separated (default: every registered source)")
    ap.add_argument("--n", type=int, default=4000, help="lines of the smaller input (the larger has 4x)")
    ap.add_argument("--lines", type=int, default=25, help="fixture lines tried per source")
    ap.add_argument("--flag", type=float, default=7.0, help="flag a shape whose time grows more than this for 4x lines")
    ap.add_argument("--min-cpu", type=float, default=0.3, help="only flag where the larger input costs this many CPU s")
    args = ap.parse_args(argv)

    from forensics.sources import ParseContext, registry

    known = registry()
    wanted = [s for s in args.sources.split(",") if s] or sorted(known)
    flagged, tried, worst = [], 0, (0.0, "")
    t_all = time.process_time()
    for source in wanted:
        parse = known[source].parse
        files = fixture_files(source)
        ctx = ParseContext(host="node01", file=f"raw/{source}/x")
        small = list(shapes(files, args.n, args.lines))
        large = list(shapes(files, 4 * args.n, args.lines))
        for (shape, name, line, data), (_, _, _, big) in zip(small, large):
            tried += 1
            a = cpu_of(parse, data, ctx)
            b = cpu_of(parse, big, ctx)
            ratio = b / a if a > 0 else 0.0
            if b > worst[0]:
                worst = (b, f"{source} {shape} {name} {line[:60]!r}")
            if ratio > args.flag and b >= args.min_cpu:
                flagged.append((source, shape, name, line, a, b, ratio))
                print(f"FLAG {source:15} {shape:8} {name[:50]:50} {line[:70]!r}: {a:.3f} -> {b:.3f} CPU s "
                      f"({ratio:.1f}x for 4x the lines)", flush=True)
        print(f"{source}: {len(small)} shapes", file=sys.stderr, flush=True)
    print(f"\n{tried} shapes over {len(wanted)} sources, N = {args.n:,} and {4 * args.n:,} lines: {len(flagged)} flagged "
          f"(> {args.flag}x and >= {args.min_cpu} CPU s); slowest large input {worst[0]:.2f} CPU s ({worst[1]}); "
          f"{time.process_time() - t_all:.0f} CPU s in all; load {os.getloadavg()[0]:.1f}")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
