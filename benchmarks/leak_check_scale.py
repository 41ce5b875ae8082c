"""How the leak check's CPU grows with the number of originals, at 9568955 (one regex alternation of
every original, run on every line) and in this checkout (an Aho-Corasick prefilter, then regexes of
the originals found), on the same 100,000 generated `ip link`-like lines (7 MB) with N random MAC
addresses as originals (issue 15: "time is bounded on any input").

    python benchmarks/leak_check_scale.py [--old REV] [N ...]
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main(argv=None) -> int:
    import polars as pl

    from forensics.redact import verify as new
    from leak_check_ab import _module_at

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", nargs="*", type=int, default=[500, 2000, 4000, 8000])
    ap.add_argument("--old", default="9568955")
    args = ap.parse_args(argv)
    old = _module_at(args.old, "verify_old")
    rnd = random.Random(1)

    def mac() -> str:
        return "0c:42:a1:" + ":".join(f"{rnd.randrange(256):02x}" for _ in range(3))

    ser = pl.Series([f"    link/ether {mac()} brd ff:ff:ff:ff:ff:ff port {rnd.randrange(100)} node{rnd.randrange(64):02d}x"
                     for _ in range(100_000)])
    print(f"{ser.str.len_bytes().sum() / 1e6:.1f} MB of lines\n\n| originals | old CPU s | new CPU s | same kinds found |\n|---:|---:|---:|---|")
    for n in args.n:
        orig = {"hex": {mac() for _ in range(n)}, "name": {f"gpu{i:03d}" for i in range(64)}}
        t = time.process_time()
        found: dict = {}
        old._first_hits(ser, old.checks(orig), found)
        a = time.process_time() - t
        t = time.process_time()
        leaks: list = []
        new._scan(ser, new.Rules(orig), "lines", leaks)
        b = time.process_time() - t
        print(f"| {n + 64:,} | {a:.2f} | {b:.2f} | {sorted(found) == sorted(l.kind for l in leaks)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
