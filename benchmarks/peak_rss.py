"""Peak memory (RSS) of `analyze`, `report`, `export --perfetto`, `redact` and `query` on a bundle
with a 10^7-row kernel log (issue 15: "under 2 GB each"), each command in its own process, peak
resident memory, wall time and CPU seconds from /usr/bin/time -v, with the load average (2 cores are
shared, so wall times are noisy; compare CPU seconds).

    python benchmarks/peak_rss.py                    # 10^7 dmesg lines on one host (generated)
    python benchmarks/peak_rss.py --lines 1000000    # smaller
    python benchmarks/peak_rss.py --bundle B.tar.zst # any existing bundle (e.g. analyze_speed.py's 64-node one)

The bundle is generated from a small simulated one (2 nodes) whose node01 dmesg is replaced by
LINES generated kernel lines (a mix of USB, NIC link and NVRM Xid messages with increasing
timestamps), streamed into a .tar.zst under benchmarks/data/ (git-ignored). Results go to
benchmarks/results/peak-rss-<date>.md (appended when run again the same day).
"""
from __future__ import annotations

import argparse
import datetime as dt
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORENSICS = str(Path(sys.executable).with_name("forensics"))
MESSAGES = [
    b"usb 1-1: new high-speed USB device number %d using xhci_hcd",
    b"mlx5_core 0000:98:00.0 enp152s0np0: Link up, speed %d",
    b"NVRM: Xid (PCI:0000:3b:00): 79, pid=%d, GPU has fallen off the bus.",
    b"EXT4-fs (nvme0n1p1): mounted filesystem with ordered data mode. Opts: (null) %d",
]


class DmesgLines:
    """A file-like object producing `n` raw dmesg lines (generated as read)."""

    def __init__(self, n: int):
        self.n, self.i, self.buf = n, 0, b""
        self.size = self._exact_size()

    def _line(self, i: int) -> bytes:
        return b"[%6d.%06d] " % (i // 1000, (i % 1000) * 1000) + MESSAGES[i % len(MESSAGES)] % i + b"\n"

    def _exact_size(self) -> int:
        return sum(len(self._line(i)) for i in range(self.n))

    def read(self, k: int = -1) -> bytes:
        k = self.size if k < 0 else k
        while len(self.buf) < k and self.i < self.n:
            end = min(self.n, self.i + 20000)
            self.buf += b"".join(self._line(i) for i in range(self.i, end))
            self.i = end
        out, self.buf = self.buf[:k], self.buf[k:]
        return out


def make_bundle(path: Path, lines: int) -> Path:
    import zstandard

    sys.path.insert(0, str(ROOT))
    from forensics.simulate import SimConfig, Simulation

    sim = Simulation(SimConfig("xid_79", nodes=2, gpus_per_node=2, duration_s=60, interval_s=5, seed=3))
    members = {k: v for k, v in sim.members() if not k.startswith(("tables/", "truth/"))}
    big = "hosts/node01/raw/dmesg/dmesg.txt"
    members.pop(big)
    tmp = path.with_suffix(".partial")
    with open(tmp, "wb") as raw, zstandard.ZstdCompressor(level=3).stream_writer(raw, closefd=False) as zw, \
            tarfile.open(fileobj=zw, mode="w|") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        src = DmesgLines(lines)
        info = tarfile.TarInfo(big)
        info.size = src.size
        tf.addfile(info, src)
    os.replace(tmp, path)
    return path


class TreeRss:
    """Samples the resident memory of a process and all its descendants (the CLI plus its ingest or
    redaction workers) every `every` seconds from /proc; `peak` is the largest sum seen (MiB).

    A sum of RSS counts the pages that the processes share (the interpreter, polars' library) once
    per process, so it is an upper bound of what the tree holds; /usr/bin/time's figure (wait4's
    ru_maxrss) is the largest single process only."""

    def __init__(self, pid: int, every: float = 0.1):
        import threading

        self.pid, self.every, self.peak, self.procs = pid, every, 0.0, 0
        self.stop = threading.Event()
        self.page = os.sysconf("SC_PAGE_SIZE")
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _tree(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat", "rb") as fh:
                        ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                children.setdefault(ppid, []).append(int(d))
        out, todo = [], [self.pid]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(children.get(p, ()))
        return out

    def _run(self) -> None:
        while not self.stop.is_set():
            total, n = 0, 0
            for p in self._tree():
                try:
                    with open(f"/proc/{p}/statm", "rb") as fh:
                        total += int(fh.read().split()[1]) * self.page
                        n += 1
                except (OSError, IndexError, ValueError):
                    pass
            if total / 2**20 > self.peak:
                self.peak, self.procs = total / 2**20, n
            self.stop.wait(self.every)

    def close(self) -> float:
        self.stop.set()
        self.thread.join()
        return self.peak


def timed(argv: list[str], env: dict) -> tuple[int, float, float, str, float, float, float]:
    """(exit, wall s, peak RSS MiB of the largest single process, error lines, CPU s (user + system,
    children included), 1-min load average at the end, peak RSS MiB of the whole process tree)."""
    os.sync()
    time.sleep(1)
    proc = subprocess.Popen(["/usr/bin/time", "-v", FORENSICS, *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env)
    tree = TreeRss(proc.pid)
    try:
        _, stderr = proc.communicate()
    finally:
        tree_peak = tree.close()
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", stderr)
    h, m, s = wall.groups()
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", stderr))
    err = "\n".join(ln for ln in stderr.splitlines() if ln.startswith(("forensics", "error")))
    return (proc.returncode, int(h or 0) * 3600 + int(m) * 60 + float(s), int(rss.group(1)) / 1024, err, cpu,
            os.getloadavg()[0], tree_peak)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=10_000_000)
    ap.add_argument("--bundle", type=Path, help="measure this bundle instead of generating one")
    ap.add_argument("--work", type=Path, help="folder for the cache and outputs (default: a new one under "
                    "benchmarks/data/); removed at the end")
    ap.add_argument("--cache", type=Path, help="use this parsed-table cache (kept) instead of a new one in the work folder")
    ap.add_argument("--max-memory", help="the commands' --max-memory (through $FORENSICS_MAX_MEMORY; default: theirs)")
    ap.add_argument("--tag", default="", help="results go to benchmarks/results/peak-rss-<date>[-TAG].md")
    ap.add_argument("--only", action="append", default=[], metavar="STEP",
                    help="run only the steps whose name starts with STEP (repeatable; the parse runs first anyway)")
    ap.add_argument("--alone", action="store_true", help="with --only: no parse first (the step parses into its own "
                    "cache if it needs to)")
    args = ap.parse_args(argv)
    data = ROOT / "benchmarks" / "data"
    data.mkdir(parents=True, exist_ok=True)
    if args.bundle:
        bundle, what = args.bundle, f"`{args.bundle.name}`"
    else:
        bundle = data / f"kernel-log-{args.lines}.tar.zst"
        if not bundle.exists():
            t0 = time.monotonic()
            make_bundle(bundle, args.lines)
            print(f"generated {bundle} ({bundle.stat().st_size / 1e6:.1f} MB) in {time.monotonic() - t0:.0f} s")
        what = f"{args.lines:,} generated dmesg lines on node01 of a 2-node simulated bundle ({bundle.stat().st_size / 1e6:.1f} MB .tar.zst)"
    if args.work:
        args.work.mkdir(parents=True, exist_ok=False)
        work = args.work
    else:
        work = Path(tempfile.mkdtemp(prefix="peak-rss-", dir=data))
    env = dict(os.environ, TZ="UTC", LC_ALL="C", FORENSICS_CACHE_DIR=str(args.cache or work / "cache"),
               FORENSICS_REDACT_KEY_FILE=str(work / "redact.key"))
    if args.max_memory:
        env["FORENSICS_MAX_MEMORY"] = args.max_memory
    steps = [
        ("analyze (from raw: parse + detect)", ["analyze", str(bundle), "--quiet", "--format", "json"]),
        ("analyze (parsed)", ["analyze", str(bundle), "--quiet", "--format", "json"]),
        ("query count(*) kernel_log", ["query", str(bundle), "SELECT count(*) FROM kernel_log"]),
        ("report --out", ["report", str(bundle), "--out", str(work / "r.html"), "--quiet"]),
        ("export --perfetto", ["export", str(bundle), "--perfetto", str(work / "t.json"), "--quiet"]),
        ("redact", ["redact", str(bundle), "--out", str(work / "red.tar.zst"), "--key-file", str(work / "redact.key")]),
    ]
    if args.only:
        steps = [s for s in steps if (s is steps[0] and not args.alone) or any(s[0].startswith(o) for o in args.only)]
    rows = []
    try:
        for name, a in steps:
            rc, wall, rss, err, cpu, load, tree = timed(a, env)
            rows.append((name, rc, wall, rss, err, cpu, load, tree))
            print(f"{name:<36} rc={rc} {wall:7.1f} s {cpu:7.1f} CPU s {rss:8.0f} MiB (largest process) "
                  f"{tree:8.0f} MiB (tree) load {load:.1f} {err}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    today = dt.date.today().isoformat()
    out = ROOT / "benchmarks" / "results" / f"peak-rss-{today}{'-' + args.tag if args.tag else ''}.md"
    lines = [] if out.exists() else [f"# Peak memory per command ({today})", ""]
    lines += [f"## {what}", "", f"Commit {rev}, {os.cpu_count()} CPUs, --max-memory {args.max_memory or 'default'} ("
              f"{os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.0f} GiB of RAM); one run each. CPU s and the "
              "largest process's peak RSS from /usr/bin/time -v (user + system, workers included); the tree's peak is the "
              "largest sum of the RSS of the command and all its descendants, sampled from /proc every 0.1 s.", "",
              "| command | exit | wall s | CPU s | load avg (1 min, at end) | peak RSS MiB, largest process | "
              "peak RSS MiB, process tree | under 2 GB (2000 MiB) |",
              "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {n} | {rc} | {w:.1f} | {c:.1f} | {ld:.1f} | {r:.0f} | {t:.0f} | {'yes' if max(r, t) < 2000 else 'NO'} |"
              + (f" {e}" if e else "") for n, rc, w, r, e, c, ld, t in rows]
    with open(out, "a") as fh:
        fh.write("\n".join(lines) + "\n\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
