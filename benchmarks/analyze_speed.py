"""`forensics analyze` speed on a simulated cluster bundle: from raw (parse + detect) and parsed
(cached tables), end to end in a subprocess each, wall time, CPU seconds (user + system, the
command and its worker processes) and peak RSS via /usr/bin/time.

Every result is stated against the physical floor measured in the same run: decompressing the
bundle and counting its lines (`zstd -dc BUNDLE | wc -l`, or the same in Python where the `zstd`
command is missing), timed before and after the other steps (the lesser of the two is the floor).

    python benchmarks/analyze_speed.py                     # 64 nodes x 8 GPUs x 10 min at 1 s
    python benchmarks/analyze_speed.py --nodes 64 --duration 1h
    python benchmarks/analyze_speed.py --nodes 64 --duration 1h --baseline 27c39ba   # A B B A in one run
Writes benchmarks/results/analyze-<date>-<nodes>x<duration>.md (a later run the same day is appended).
Bundles go under benchmarks/data/ (git-ignored), reused only when today's simulator made them with the same
arguments (benchmarks/simcache.py; the report says which bundle was used).
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from simcache import cached_bundle

ROOT = Path(__file__).resolve().parent.parent


def timed(argv: list[str], env: dict | None = None, cwd: Path | None = None) -> tuple[float, float, float]:
    """(wall s, peak RSS MB, CPU s = user + system of the command and the children it waited for)."""
    os.sync()  # the previous step's files written back first: not billed to this one
    time.sleep(2)
    res = subprocess.run(["/usr/bin/time", "-v", *argv], capture_output=True, text=True, env=env, cwd=cwd)
    if res.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed: {res.stderr[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", res.stderr)
    h, m, s = wall.groups()
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", res.stderr)
    cpu = sum(float(re.search(rf"{k} time \(seconds\): ([\d.]+)", res.stderr).group(1)) for k in ("User", "System"))
    return int(h or 0) * 3600 + int(m) * 60 + float(s), int(rss.group(1)) / 1024, cpu


def floor(bundle: Path) -> tuple[float, float, int]:
    """(wall s, CPU s, lines) of decompressing `bundle` and counting the lines of its bytes: the least any
    analysis from raw must do. `zstd -dc | wc -l` when both commands exist, else the same in this process."""
    import resource

    def children() -> float:
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime

    if shutil.which("zstd") and shutil.which("wc"):
        c0, t0 = children(), time.perf_counter()
        # (the file itself: zstd skips a symbolic link with only a warning, and the pipe then counts 0 lines)
        out = subprocess.run(f"zstd -dc -- '{bundle.resolve()}' | wc -l", shell=True, capture_output=True, text=True,
                             check=True)
        lines = int(out.stdout.split()[0])
        if lines == 0:
            raise SystemExit(f"floor: zstd -dc {bundle} gave no lines: {out.stderr.strip()[:200]}")
        return time.perf_counter() - t0, children() - c0, lines
    import zstandard

    t0, c0, n = time.perf_counter(), time.process_time(), 0
    with open(bundle, "rb") as fh, zstandard.ZstdDecompressor().stream_reader(fh) as zr:
        while chunk := zr.read(1 << 20):
            n += chunk.count(b"\n")
    return time.perf_counter() - t0, time.process_time() - c0, n


def raw_size(bundle: Path) -> int:
    """Uncompressed bytes of the bundle's raw outputs (members under hosts/)."""
    import tarfile

    import zstandard

    with open(bundle, "rb") as fh, zstandard.ZstdDecompressor().stream_reader(fh) as zr, \
            tarfile.open(fileobj=zr, mode="r|") as tf:
        return sum(m.size for m in tf if m.isfile() and m.name.startswith("hosts/"))


def baseline_tree(rev: str, data: Path) -> Path:
    """The files of commit `rev` (git archive: the repository's worktrees and refs are untouched)."""
    full = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"], capture_output=True,
                          text=True, check=True).stdout.strip()
    tree = data / f"baseline-{full[:12]}"
    if not (tree / "forensics").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", full], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=64)
    ap.add_argument("--duration", default="10m")
    ap.add_argument("--scenario", default="pfc_storm")
    ap.add_argument("--interval", default="1s", help="sampling interval of the simulated series")
    ap.add_argument("--baseline", metavar="REV", help="also time analyze from raw with the code of this commit "
                                                         "(runs in the order this, it, it, this), for a ratio")
    args = ap.parse_args(argv)
    data = ROOT / "benchmarks" / "data"
    data.mkdir(parents=True, exist_ok=True)
    suffix = "" if args.interval == "1s" else f"-{args.interval}"
    bundle = data / f"analyze-{args.scenario}-{args.nodes}x8-{args.duration}{suffix}.tar.zst"
    cache = data / "analyze-cache"
    shutil.rmtree(cache, ignore_errors=True)
    fx = [sys.executable, "-m", "forensics"]
    rows = []
    load0 = os.getloadavg()
    sim_args = ["--scenario", args.scenario, "--nodes", str(args.nodes), "--duration", args.duration,
                "--interval", args.interval, "--seed", "1", "--raw-only"]
    bundle, bundle_note = cached_bundle(bundle, sim_args, lambda out: rows.append(
        ("simulate (raw only)", *timed(fx + ["simulate", *sim_args, "--out", str(out)]))))
    analyze = ["analyze", str(bundle), "--cache-dir", str(cache), "--format", "json", "--quiet"]
    floors = [floor(bundle)]

    def from_raw(env: dict | None = None, cwd: Path | None = None) -> tuple[float, float, float]:
        shutil.rmtree(cache, ignore_errors=True)
        return timed(fx + analyze, env=env, cwd=cwd)

    if args.baseline:  # A B B A: each side runs once right after the other side and once not
        tree = baseline_tree(args.baseline, data)
        env = {**os.environ, "PYTHONPATH": str(tree)}  # its package first on the path
        ours = [from_raw()]
        base = [from_raw(env, tree), from_raw(env, tree)]
        ours.append(from_raw())
    else:
        ours, base = [from_raw()], []
    for n, res in enumerate(ours, 1):
        rows.append((f"analyze from raw (parse + detect){f', run {n} of {len(ours)}' if len(ours) > 1 else ''}", *res))
    rows.append(("analyze parsed (cached tables)", *timed(fx + analyze)))
    for n, res in enumerate(base, 1):
        rows.append((f"baseline {args.baseline}, analyze from raw (run {n} of 2)", *res))
    floors.append(floor(bundle))
    fwall, fcpu, flines = min(floors)
    raw_mb = raw_size(bundle) / 1e6
    load = os.getloadavg()
    lines = [f"# analyze speed, {dt.date.today().isoformat()}", "",
             f"Bundle: `forensics simulate --scenario {args.scenario} --nodes {args.nodes} --duration {args.duration} "
             f"--interval {args.interval} --seed 1 --raw-only` "
             f"({bundle.stat().st_size / 1e6:.0f} MB, {raw_mb:,.0f} MB of raw outputs). Machine: {os.cpu_count()} CPUs, "
             f"load average before the run {load0[0]:.1f}/{load0[1]:.1f}/{load0[2]:.1f}, after it "
             f"{load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}.", "", f"Bundle used: {bundle_note}.", "",
             f"Floor, measured in this run (decompress the bundle and count its {flines:,} lines, best of "
             f"{len(floors)}): {fwall:.2f} s wall, {fcpu:.2f} CPU s. The x floor columns divide by these.", "",
             "| step | wall s | CPU s | wall x floor | CPU x floor | peak RSS MB |", "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {name} | {wall:.1f} | {cpu:.1f} | {wall / fwall:.1f} | {cpu / fcpu:.1f} | {rss:.0f} |"
              for name, wall, rss, cpu in rows]
    if base:
        mean = sum(r[0] for r in ours) / len(ours) / (sum(r[0] for r in base) / len(base))
        cpu = sum(r[2] for r in ours) / len(ours) / (sum(r[2] for r in base) / len(base))
        lines += ["", f"From raw, this checkout / baseline {args.baseline} (means of the runs in the order A B B A): "
                      f"**{mean:.2f}** in wall time, **{cpu:.2f}** in CPU seconds"]
    out = ROOT / "benchmarks" / "results" / f"analyze-{dt.date.today().isoformat()}-{args.nodes}x{args.duration}{suffix}.md"
    if out.exists():  # another run the same day: appended, earlier figures and notes kept
        lines[0] = f"## Run of {dt.datetime.now().strftime('%H:%M')}"
        out.write_text(out.read_text().rstrip("\n") + "\n\n" + "\n".join(lines) + "\n")
    else:
        out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
