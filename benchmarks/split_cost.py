"""Where the Ray engine's extra CPU goes at 64 nodes: its parse map against the local ingest's worker
processes, and its detect step (one or two map groups) against the local engine's, each in a fresh
process, A B B A by calling this once per mode (CPU seconds; the machine is shared: state the load).

    python benchmarks/split_cost.py parse-pool BUNDLE.tar CACHE   # the local ingest: 2 spawned workers claiming hosts
    python benchmarks/split_cost.py parse-ray BUNDLE.tar CACHE    # the Ray parse map: 2 groups on a local Ray
    python benchmarks/split_cost.py detect-local BUNDLE.tar CACHE # open + every detector (tables parsed once in CACHE)
    python benchmarks/split_cost.py detect-split-64 BUNDLE.tar CACHE  # open + detect map (min 64 hosts a group) + reduce

parse-*: only the workers' CPU (the pool's includes its workers' start and imports, which Ray's
workers paid before: Ray's start), and for Ray by thread. detect-*: this process's CPU, the map run
serially here on an executor of 2 slots (no Ray), the bundle's derived relations cached by the first
run (run one of each first and drop it). Each prints one line; both give the analysis' digest (detect).
"""
from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import sys
import tempfile
import time


def _cpu(pid="self") -> float:
    with open(f"/proc/{pid}/stat") as fh:
        f = fh.read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def _threads(pid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as fh:
                s = fh.read()
        except OSError:
            continue
        f = s.rsplit(")", 1)[1].split()
        comm = s[s.index("(") + 1:s.rindex(")")]
        out[comm] = out.get(comm, 0.0) + (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    return out


def _pid(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def parse(mode: str, tar: str, cache: str) -> str:
    from multiprocessing import get_context

    from forensics.bundle.cache import bundle_root
    from forensics.bundle.manifest import read_manifest
    from forensics.engine.run import groups_of
    from forensics.ingest import pool as P
    from forensics.ingest.archive import read_plan

    root, archive = bundle_root(tar, cache)
    hosts = list(read_manifest(root)["hosts"])
    plan = read_plan(root, hosts)
    work = tempfile.mkdtemp(prefix=".split-cost-", dir=cache)
    try:
        w0 = time.perf_counter()
        if mode == "parse-pool":
            mp = get_context("spawn")
            claims, done = mp.Array("b", len(hosts)), mp.Array("b", len(hosts))
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            with P.worker_pool(2, initializer=P._init_worker, initargs=(claims, done)) as pool:
                futs = [pool.submit(P.archive_job, str(archive), str(root), plan[0], plan[1], hosts, work) for _ in range(2)]
                n = sum(len(f.result()) for f in futs)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            return (f"{mode}: workers {r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime:.2f} CPU s, {n} hosts, "
                    f"{time.perf_counter() - w0:.1f} s wall")
        from forensics.engine.executors import RayExecutor
        from forensics.engine.mapstep import parse_group

        ex = RayExecutor(num_cpus=2)
        try:
            pids = ex.map(_pid, [(0.5,)] * ex.slots)  # the workers started (Ray's start)
            c0, t0 = {p: _cpu(p) for p in pids}, {p: _threads(p) for p in pids}
            w0 = time.perf_counter()
            items = [(str(root), hosts, g, (str(archive), plan), f"{work}/{k}")
                     for k, g in enumerate(groups_of(len(hosts), 2, 1))]
            n = sum(len(r) for r in ex.map(parse_group, items))
            c1, t1 = {p: _cpu(p) for p in pids}, {p: _threads(p) for p in pids}
        finally:
            ex.close()
        by: dict[str, float] = {}
        for p in pids:
            for k, v in t1[p].items():
                by[k] = by.get(k, 0.0) + v - t0[p].get(k, 0.0)
        return (f"{mode}: workers {sum(c1[p] - c0[p] for p in pids):.2f} CPU s, {n} hosts, "
                f"{time.perf_counter() - w0:.1f} s wall; by thread "
                + ", ".join(f"{k} {v:.2f}" for k, v in sorted(by.items(), key=lambda kv: -kv[1]) if v >= 0.01))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def detect(mode: str, tar: str, cache: str) -> str:
    os.environ["POLARS_MAX_THREADS"] = "1"
    from forensics.analysis import analyze_paths
    from forensics.engine import MapReduce
    from forensics.engine.executors import SerialExecutor

    class Two(SerialExecutor):
        slots = 2

    c0 = time.process_time()
    engine = None if mode == "detect-local" else MapReduce(Two(), min_group_hosts=int(mode.rsplit("-", 1)[1]))
    a = analyze_paths([tar], cache_dir=cache, engine=engine)
    cpu = time.process_time() - c0
    j = a.to_json()
    j.pop("bundles")
    digest = hashlib.sha256(json.dumps(j, default=str, sort_keys=True).encode()).hexdigest()[:16]
    steps = {k: round(v, 2) for k, v in (engine.timings if engine else {}).items() if "cpu" in k}
    return f"{mode}: {cpu:.2f} CPU s, digest {digest}, {a.findings.height} findings" + (f"; map {steps}" if steps else "")


def main(argv=None) -> int:
    mode, tar, cache = (argv or sys.argv[1:])[:3]
    os.makedirs(cache, exist_ok=True)
    print(parse(mode, tar, cache) if mode.startswith("parse-") else detect(mode, tar, cache), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
