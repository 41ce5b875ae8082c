"""CPU time of one source's parser on given files: this tree against a git revision, side by side.

On a loaded shared machine wall-clock times swing several-fold; the CPU time of a single-threaded
parse (``POLARS_MAX_THREADS=1``, ``time.process_time``) does much less. Each side runs in its own
subprocess (the revision's ``forensics/`` and ``schemas/`` extracted with ``git archive`` into a
temporary folder and put first on ``PYTHONPATH``), parses each file once to warm up, then
``--repeat`` times; rounds alternate between the sides. The best CPU time of each side and their
ratio (this / baseline) are printed as a Markdown table (rounds in the order A B B A A B ..., A the
baseline, with the load average after each run); the tables' row counts of both sides are
printed too, so a changed result is visible.

Usage:
    python benchmarks/parse_cpu_ab.py --source nccl --baseline b18bd47 FILE [FILE ...]
    python benchmarks/parse_cpu_ab.py --source sar --baseline HEAD~3 --rounds 3 --repeat 5 FILE
    python benchmarks/parse_cpu_ab.py --source dmesg --baseline main --streamed FILE   # the ingest's chunked read too
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, sys, time
from pathlib import Path
from forensics.sources import get, ParseContext
mod = get(sys.argv[1]); repeat = int(sys.argv[2]); streamed = sys.argv[3] == "1"; out = {}
if streamed:  # as the ingest reads a raw file: in chunks off the disk, tables streamed to a sink (dropped here)
    from forensics.ingest.files import parse_path
    def once(f, data):
        res = parse_path(Path(f), sys.argv[1], ParseContext(host="h", tz="UTC"), sink=lambda t, df: None)[1]
        return res, res.meta["streamed_rows"] if "streamed_rows" in res.meta else res.rows()
else:
    def once(f, data):
        res = mod.parse(data, ParseContext(host="h", tz="UTC"))
        return res, res.rows()
for f in sys.argv[4:]:
    data = None if streamed else open(f, "rb").read()
    res, rows = once(f, data)
    best = None
    for _ in range(repeat):
        t = time.process_time(); once(f, data); t = time.process_time() - t
        best = t if best is None else min(best, t)
    out[f] = {"cpu_s": best, "rows": rows, "unparsed": res.unparsed.height, "lines": res.lines}
print(json.dumps(out))
"""


def _extract(rev: str, into: Path) -> None:
    tar = into / "rev.tar"
    with open(tar, "wb") as fh:
        subprocess.run(["git", "-C", str(ROOT), "archive", rev, "forensics", "schemas"], stdout=fh, check=True)
    with tarfile.open(tar) as tf:
        tf.extractall(into, filter="data")


def _run(pythonpath: Path, source: str, repeat: int, files: list[str], streamed: bool = False) -> dict:
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "POLARS_MAX_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _CHILD, source, str(repeat), "1" if streamed else "0", *files],
                         env=env, check=True,
                         capture_output=True, text=True, cwd=str(pythonpath))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--baseline", required=True, help="git revision to compare with")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds per side")
    ap.add_argument("--repeat", type=int, default=5, help="timed parses per file per round (best kept)")
    ap.add_argument("--streamed", action="store_true",
                    help="parse as the ingest reads a raw file (forensics.ingest.files.parse_path: chunks read off "
                         "the disk, parsed on its worker threads, tables handed to a sink that drops them), not "
                         "the module's parse on bytes in memory")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args(argv)
    files = [str(Path(f).resolve()) for f in a.files]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        _extract(a.baseline, base)
        runs: dict[str, list[dict]] = {"baseline": [], "this": []}
        loads = [os.getloadavg()[0]]
        for i in range(a.rounds):
            # A B B A ...: odd rounds run this tree first, so neither side always runs in the other's wake
            order = [("baseline", base), ("this", ROOT)]
            for side, tree in (order if i % 2 == 0 else order[::-1]):
                runs[side].append(_run(tree, a.source, a.repeat, files, a.streamed))
                loads.append(os.getloadavg()[0])
    print(f"| file | size MB | baseline ({a.baseline}) CPU ms per round | this tree CPU ms per round | best ratio | ratio of means |")
    print("|---|---|---|---|---|---|")
    for f in files:
        b = [r[f]["cpu_s"] * 1e3 for r in runs["baseline"]]
        t = [r[f]["cpu_s"] * 1e3 for r in runs["this"]]
        size = Path(f).stat().st_size / 1e6
        print(f"| {Path(f).name} | {size:.1f} | {' / '.join(f'{x:.0f}' for x in b)} | "
              f"{' / '.join(f'{x:.0f}' for x in t)} | {min(t) / min(b):.2f} | {sum(t) / sum(b):.2f} |")
    print(f"\nOrder A B B A (A = baseline); 1-minute load average before and after each run: "
          f"{' '.join(f'{x:.1f}' for x in loads)}")
    for f in files:
        rb, rt = runs["baseline"][0][f], runs["this"][0][f]
        print(f"\n{Path(f).name}: baseline lines={rb['lines']} unparsed={rb['unparsed']} rows={rb['rows']}; "
              f"this lines={rt['lines']} unparsed={rt['unparsed']} rows={rt['rows']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
