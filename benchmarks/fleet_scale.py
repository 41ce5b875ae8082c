"""Fleet scale: the local and Ray engines on simulated incidents of 64, 256 and 1,024 nodes.

    nice -n 15 python benchmarks/fleet_scale.py                       # 64, 256, 1024 nodes x 60 s at 2 s, 2 GPUs
    nice -n 15 python benchmarks/fleet_scale.py --nodes 64 --repeat 2   # A B B A: local, ray, ray, local
    nice -n 15 python benchmarks/fleet_scale.py --report run1.log run2.log --duration 30s --interval 5s --gpus 1

For each size: a raw-only simulated bundle (pfc_storm, `forensics simulate`, under benchmarks/data/),
then each engine analyses it from raw in a fresh cache, in a child process of its own
(`--one ENGINE BUNDLE`), the engines alternating (local, ray, ray, local with --repeat 2). Measured:

- CPU seconds of the child's whole process tree (the ingest's worker processes, Ray's GCS, raylet
  and workers), by role (driver, Ray workers, Ray's own processes, other), sampled from /proc every 0.2 s (a process is counted at its last sample: the
  shortest-lived ones are under-counted by at most 0.2 s each); wall seconds; the machine's load
  average (the machine is shared: CPU seconds are the figure to compare, wall times are noisy);
- node-hours analysed per core-minute = nodes x duration / CPU minutes;
- on Ray, its fixed start (its daemons, `import ray` and `ray.init` in the driver, a worker process per
  CPU started by a trivial task), the tree's CPU and wall seconds before the analysis begins, so that
  the overhead is reported with and without it (a running cluster has paid it already);
- on Ray, the steps' wall seconds (parse map, detect map, reduce), the reduce's CPU seconds (the
  driver process, DuckDB's threads included), the rows of the window tables the reduce reads, and
  the driver's peak RSS (it runs the reduce);
- that both engines' findings are identical (a digest of the JSON analysis).

Writes benchmarks/results/fleet_scale-<date>.md (or --out; appended) with the overhead of Ray per size,
a linear fit of each engine's CPU seconds and of the reduce step (seconds, window rows and memory per
node). `--report LOG...` writes that report for runs printed by earlier invocations (one JSON line each).
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"


def one(engine: str, bundle: str, cache: str) -> dict:
    """In the child: analyse `bundle` on `engine`; print a JSON line of what was measured."""
    from forensics.analysis import analyze_paths

    t0 = time.perf_counter()
    started = _tree_now(os.getpid())  # the interpreter and forensics imported: the local engine pays it too
    runner = None
    timed = {"driver_start_cpu_s": started}
    if engine == "ray":
        from forensics.engine import MapReduce
        from forensics.engine.executors import RayExecutor

        ex = RayExecutor()
        # Ray's fixed start: its daemons, the driver's import and ray.init, and one worker process per
        # CPU started (a trivial task each, no forensics import): what a running cluster has paid
        # before an analysis comes; measured here as the process tree's CPU seconds at this point
        ex.map(_warm, [(0.5,)] * ex.slots)
        roles: dict[str, float] = {}
        fixed = _tree_now(os.getpid(), roles) - started
        roles["driver"] = roles.get("driver", 0.0) - started
        timed.update(fixed_cpu_s=fixed, fixed_wall_s=time.perf_counter() - t0, fixed_by_role=roles)
        runner = MapReduce(ex)
    if runner is not None:  # the reduce's CPU: the driver's, around the reduce only
        from forensics.engine import reduce as red

        inner = red.reduce_findings
        phases = timed["driver_phase_peak_mb"] = {}
        _phase_mark(phases, None)
        parse, detect = runner.parse, runner.detect

        def parse_marked(*a, **kw):  # the parse map and the merge of its tables
            out = parse(*a, **kw)
            _phase_mark(phases, "parse")
            return out

        def detect_marked(*a, **kw):  # entered with the bundle open
            _phase_mark(phases, "open")
            out = detect(*a, **kw)
            _phase_mark(phases, "reduce")
            return out

        runner.parse, runner.detect = parse_marked, detect_marked

        def reduce_timed(bundle, outputs, **kw):
            _phase_mark(phases, "detect map")  # the footers handed to the map, its tasks
            c0, w0 = time.process_time(), time.perf_counter()
            out = inner(bundle, outputs, **kw)
            timed.update(reduce_cpu_s=time.process_time() - c0, reduce_wall_s=time.perf_counter() - w0,
                         window_rows=int(bundle.con.execute("SELECT count(*) FROM det_host_windows").fetchall()[0][0]))
            return out

        red.reduce_findings = reduce_timed
    a = analyze_paths([bundle], cache_dir=cache, engine=runner)
    wall = time.perf_counter() - t0
    if runner is not None:
        _phase_mark(phases, "findings")  # the analysis' last steps after the reduce
    j = a.to_json()
    j.pop("bundles")
    text = json.dumps(j, default=str, sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    Path(cache + ".json").write_text(text)  # kept (run_child removes the cache only): two digests that differ can be diffed
    f = a.findings
    kinds = {k: n for k, n in f.group_by("kind").len().sort("len", descending=True).iter_rows()} if f.height else {}
    top = [[r["kind"], r["hosts"][:3], r["subject"], r["caused_by"]] for r in f.head(5).iter_rows(named=True)]
    out = {"engine": engine, "wall_s": wall, "findings": f.height, "digest": digest, "analysis": cache + ".json", "errors": a.errors,
           "niceness": os.nice(0),  # this process's, as it ran (a child inherits its parent's: `nice -n 15 python ...`)
           "kinds": kinds, "top": top, "roots": int(f["caused_by"].is_null().sum()) if f.height else 0,
           "driver_peak_rss_mb": max([resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # (phases reset it)
                                      *timed.get("driver_phase_peak_mb", {}).values()])}
    if runner is not None:
        out["steps"] = runner.timings
        out.update(timed)
        # Ray's background: what its daemons and idle workers spend per second of wall time whatever
        # runs (heartbeats, polling), measured idle after the analysis under the same load; the
        # parent takes this probe's CPU off the run's
        c0, w0 = _tree_now(os.getpid()), time.perf_counter()
        time.sleep(IDLE_PROBE_S)
        out["idle_probe_cpu_s"] = _tree_now(os.getpid()) - c0
        out["idle_cpu_per_s"] = out["idle_probe_cpu_s"] / (time.perf_counter() - w0)
        runner.executor.close()
    return out


IDLE_PROBE_S = 30.0


def _phase_mark(phases: dict, name: str | None) -> None:
    """The driver's peak RSS (MB) since the last mark, under `name`, then the peak reset (Linux:
    /proc/self/clear_refs 5 resets VmHWM to the current RSS): each phase's own peak."""
    if name is not None:
        phases[name] = round(_hwm_mb(os.getpid()))
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


_TICK = os.sysconf("SC_CLK_TCK")


def _warm(seconds: float) -> int:
    """A task that only holds its worker a moment (so each CPU's worker process is started)."""
    time.sleep(seconds)
    return os.getpid()


def _tree_now(root: int, roles: dict | None = None) -> float:
    """CPU seconds so far of process `root` and its live descendants (`roles`: filled by role)."""
    st = _stats()
    total = 0.0
    for pid in _descendants(st, root):
        if pid in st:
            total += st[pid][2]
            if roles is not None:
                r = _role(pid, root)
                roles[r] = roles.get(r, 0.0) + st[pid][2]
    return total


def _stats() -> dict[int, tuple[int, int, float]]:
    """{pid: (ppid, start time, CPU seconds)} of every process, from /proc (Linux)."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                f = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields after "(comm)": state ppid ... utime(12) stime(13) ... starttime(20)
        out[int(d)] = (int(f[1]), int(f[19]), (int(f[11]) + int(f[12])) / _TICK)
    return out


def _descendants(st: dict, root: int) -> set[int]:
    """`root` and every descendant of it in `st` (:func:`_stats`)."""
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in st.items():
        kids.setdefault(ppid, []).append(pid)
    tree, frontier = {root}, [root]
    while frontier:
        for c in kids.get(frontier.pop(), []):
            if c not in tree:
                tree.add(c)
                frontier.append(c)
    return tree


def _role(pid: int, root: int) -> str:
    """What a process of the tree is: the driver (the child itself), a Ray worker (it runs the map
    tasks), one of Ray's own processes (GCS, raylet, agents, log monitor) or another child (the
    local engine's ingest workers)."""
    if pid == root:
        return "driver"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    if cmd.startswith("ray::") and cmd.split(" ", 1)[0].endswith("Agent"):  # ray::DashboardAgent, RuntimeEnvAgent
        return "ray runtime"
    if cmd.startswith("ray::") or "default_worker.py" in cmd:
        return "ray worker"
    if "site-packages/ray/" in cmd or "/ray/core/src/" in cmd:  # (Ray's own files: not any path naming "ray")
        return "ray runtime"
    return "other"


def _hwm_mb(pid: int) -> float:
    """The peak resident memory of process `pid` so far (VmHWM), MB."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def tree_cpu(proc, roles: dict | None = None) -> tuple[float, str]:
    """Run until `proc` (a Popen) exits, summing the CPU seconds of it and every descendant, each
    at its last sample (every 0.2 s), with what the child reaped of its own children afterwards.
    `roles`: filled with {role: CPU seconds} (see :func:`_role`) and the peak RSS of each role's
    biggest process ("peak MB <role>")."""
    import threading

    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
    reader.start()
    seen: dict[tuple[int, int], float] = {}
    role_of: dict[tuple[int, int], str] = {}
    hwm: dict[tuple[int, int], float] = {}
    while proc.poll() is None:
        st = _stats()
        for pid in _descendants(st, proc.pid):
            if pid in st:
                key = (pid, st[pid][1])
                if key not in role_of:
                    role_of[key] = _role(pid, proc.pid)
                seen[key] = st[pid][2]
                hwm[key] = max(hwm.get(key, 0.0), _hwm_mb(pid))
        time.sleep(0.2)
    reader.join()
    if roles is not None:
        for key, cpu in seen.items():
            roles[role_of[key]] = roles.get(role_of[key], 0.0) + cpu
            peak = f"peak MB {role_of[key]}"  # the biggest process of the role, at its own peak
            roles[peak] = max(roles.get(peak, 0.0), hwm.get(key, 0.0))
    return sum(seen.values()), out[0] if out else ""


def run_child(engine: str, bundle: Path, work: Path) -> dict:
    cache = work / f"cache-{engine}-{time.time_ns()}"
    load0 = os.getloadavg()[0]
    proc = subprocess.Popen([sys.executable, __file__, "--one", engine, str(bundle), str(cache)],
                            stdout=subprocess.PIPE, text=True)
    roles: dict[str, float] = {}
    cpu, out = tree_cpu(proc, roles)
    if proc.returncode != 0:
        raise SystemExit(f"{engine} on {bundle} failed (exit {proc.returncode})")
    res = json.loads(out.strip().splitlines()[-1])
    res.update(cpu_s=cpu - res.get("idle_probe_cpu_s", 0.0), load_before=load0, load_after=os.getloadavg()[0], cpu_by_role=roles)
    subprocess.run(["rm", "-rf", str(cache)], check=False)
    return res


def bundle_for(nodes: int, duration: str, interval: str, gpus: int) -> Path:
    """The raw-only bundle of this size, made by today's simulator (benchmarks/simcache.py: a cached one made by
    another simulator or with other arguments is made again)."""
    from simcache import cached_bundle

    DATA.mkdir(parents=True, exist_ok=True)
    sim_args = ["--scenario", "pfc_storm", "--nodes", str(nodes), "--gpus-per-node", str(gpus), "--duration", duration,
                "--interval", interval, "--raw-only"]
    exe = Path(sys.executable).with_name("forensics")
    path, note = cached_bundle(DATA / f"fleet-{nodes}x{duration}-{interval}-{gpus}gpu.tar", sim_args, lambda out: (
        subprocess.run([str(exe), "simulate", *sim_args, "--out", str(out)], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)))
    print(f"bundle: {note}", file=sys.stderr)
    return path


def seconds(text: str) -> float:
    unit = {"s": 1, "m": 60, "h": 3600}[text[-1]]
    return float(text[:-1]) * unit


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares y = a + b x."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / max(1e-12, sum((x - mx) ** 2 for x in xs))
    return my - b * mx, b


def niceness_text(rows: list[dict]) -> str:
    """What the runs' niceness was, as each analysis process read it (os.nice(0)) while it ran.

    >>> niceness_text([{"niceness": 15}, {"niceness": 15}])
    'run under `nice` (niceness 15)'
    >>> niceness_text([{"niceness": 0}])
    'not run under `nice` (niceness 0)'
    >>> niceness_text([{"niceness": 15}, {"niceness": 0}, {}])
    'niceness per run: 15 (1 run), 0 (1 run), not recorded (1 run)'
    """
    seen: dict[str, int] = {}
    for r in rows:
        n = r.get("niceness")
        key = "not recorded" if n is None else str(n)
        seen[key] = seen.get(key, 0) + 1
    if len(seen) == 1:
        n = rows[0].get("niceness") if rows else None
        if n is None:
            return "niceness not recorded (runs of an earlier version of this script)"
        if n > 0:
            return f"run under `nice` (niceness {n})"
        return f"not run under `nice` (niceness {n})" if n == 0 else f"run at a raised priority (niceness {n})"
    return "niceness per run: " + ", ".join(f"{k} ({v} run{'s' if v > 1 else ''})" for k, v in seen.items())


def report(rows: list[dict], args) -> str:
    dur_h = seconds(args.duration) / 3600
    lines = [f"## {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {_commit()}", "",
             f"Simulated pfc_storm incidents, {args.gpus} GPUs per node, {args.duration} at {args.interval} "
             f"(short durations: the per-node cost is what scales), analysed from raw in a fresh cache. "
             f"Machine: {os.cpu_count()} cores shared with other work (load average recorded); "
             f"{niceness_text(rows)}. CPU = seconds of the whole process tree.", "",
             "Ray start: Ray's fixed start-up (its daemons, the driver's `import ray` and `ray.init`, one worker "
             "process per CPU), the process tree's CPU seconds once a trivial task has run on every CPU, before "
             "the analysis, less the driver's own start (the interpreter and forensics imported, which the local "
             "engine pays too); a running cluster has paid it before an analysis comes. \"Without\" figures subtract it "
             "(Ray's daemons' CPU during the analysis stays counted).", "",
             "| nodes | engine | CPU s | Ray start CPU s | CPU s without Ray start | wall s | Ray start wall s "
             "| node-hours / core-minute | same, without Ray start | load before-after | findings | digest |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    for r in rows:
        nh = r["nodes"] * dur_h
        fixed = r.get("fixed_cpu_s", 0.0)
        lines.append(f"| {r['nodes']} | {r['engine']} | {r['cpu_s']:.1f} | {fixed:.1f} | {r['cpu_s'] - fixed:.1f} "
                     f"| {r['wall_s']:.1f} | {r.get('fixed_wall_s', 0.0):.1f} | {nh / (r['cpu_s'] / 60):.2f} "
                     f"| {nh / ((r['cpu_s'] - fixed) / 60):.2f} "
                     f"| {r['load_before']:.1f}-{r['load_after']:.1f} | {r['findings']} | {r['digest']} |")
    lines += ["", "Ray steps (wall s), the detect map's CPU s summed over its groups by step (the group's catalog; "
                  "setup: its window tables; detectors; write), and the reduce:", "",
              "| nodes | engine | parse map | detect map | map catalog | map setup | map detectors | map write "
              "| reduce wall s | reduce CPU s | window rows | driver peak RSS MB |",
              "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    ray = [r for r in rows if r["engine"] == "ray"]
    for r in ray:
        st = r["steps"]
        lines.append(f"| {r['nodes']} | {r['engine']} | {st.get('parse', 0):.1f} | {st.get('detect_map', 0):.1f} | "
                     + " | ".join(f"{st.get('detect_map_cpu_' + k, 0):.2f}" for k in ("catalog", "setup", "detectors", "write"))
                     + f" | {r['reduce_wall_s']:.2f} | {r['reduce_cpu_s']:.2f} | {r['window_rows']} | {r['driver_peak_rss_mb']:.0f} |")
    phased = [r for r in ray if r.get("driver_phase_peak_mb")]
    if phased:
        names = list(phased[0]["driver_phase_peak_mb"])
        lines += ["", "The Ray driver's peak RSS MB by phase (each phase's own peak: parse = the parse map and the "
                      "merge of its tables; open = the bundle's catalog; detect map = the footers handed to the "
                      "map and its tasks; reduce; findings = the analysis' last steps):", "",
                  "| nodes | " + " | ".join(names) + " |", "|---:|" + "---:|" * len(names)]
        for r in phased:
            lines.append(f"| {r['nodes']} | " + " | ".join(str(r["driver_phase_peak_mb"].get(k, "")) for k in names) + " |")
    roles = sorted({k for r in rows for k in r.get("cpu_by_role", {}) if not k.startswith("peak")})
    lines += ["", "CPU seconds by process (driver: the analysing process, which also runs the reduce; ray worker: the "
                  "map tasks; ray runtime: GCS, raylet, agents; other: the local ingest's workers), and each role's "
                  "biggest process's peak RSS MB:", "",
              "| nodes | engine | " + " | ".join(roles) + " | " + " | ".join(f"peak MB {k}" for k in roles) + " |",
              "|---:|---|" + "---:|" * (2 * len(roles))]
    for r in rows:
        cr = r.get("cpu_by_role", {})
        lines.append(f"| {r['nodes']} | {r['engine']} | " + " | ".join(f"{cr.get(k, 0):.1f}" for k in roles) + " | "
                     + " | ".join(f"{cr.get('peak MB ' + k, 0):.0f}" for k in roles) + " |")
    same, engines = {}, {}
    for r in rows:
        same.setdefault(r["nodes"], set()).add(r["digest"])
        engines.setdefault(r["nodes"], set()).add(r["engine"])

    def verdict(n: int) -> str:
        if len(same[n]) > 1:
            return "NO"
        return "yes" if len(engines[n]) > 1 else f"not compared (only {', '.join(sorted(engines[n]))} ran)"

    lines += ["", "Identical analyses on both engines (JSON digest): " +
              ", ".join(f"{n} nodes {verdict(n)}" for n in sorted(same))]
    by = {}
    for r in rows:
        by.setdefault((r["nodes"], r["engine"]), []).append(r)
    def mean(xs):
        return sum(xs) / len(xs)

    both = sorted(n for n, e in by if e == "ray" and (n, "local") in by)
    for n in both:
        loc, ry = by[(n, "local")], by[(n, "ray")]
        lc, rc = mean([x["cpu_s"] for x in loc]), mean([x["cpu_s"] for x in ry])
        fc, fw = mean([x["fixed_cpu_s"] for x in ry]), mean([x["fixed_wall_s"] for x in ry])
        lw, rw = mean([x["wall_s"] for x in loc]), mean([x["wall_s"] for x in ry])
        fr = {}
        for x in ry:
            for k, v in x.get("fixed_by_role", {}).items():
                fr[k] = fr.get(k, 0.0) + v / len(ry)
        daemons = mean([x["cpu_by_role"].get("ray runtime", 0.0) - x.get("fixed_by_role", {}).get("ray runtime", 0.0)
                        for x in ry])
        rates = [x.get("idle_cpu_per_s", args.idle_rate) for x in ry]
        if all(v is not None for v in rates):
            bg = mean([v * (x["wall_s"] - x["fixed_wall_s"]) for v, x in zip(rates, ry)])
            background = (f" Ray's background (daemons and workers, {mean(rates):.4f} CPU s per wall second measured idle"
                          f"{'' if all('idle_cpu_per_s' in x for x in ry) else ' apart, --idle-rate'}) over the analysis' "
                          f"{rw - fw:.0f} wall s: {bg:.1f} CPU s; the rest, {rc - fc - bg:.1f} CPU s, is the split's own "
                          f"work: {100 * ((rc - fc - bg) / lc - 1):+.1f}% against local.")
        else:
            background = ""
        lines += ["", f"Ray overhead at {n} nodes (means of {len(loc)} local and {len(ry)} Ray runs): "
                      f"with Ray's start CPU {100 * (rc / lc - 1):+.1f}% ({rc:.1f} vs {lc:.1f} s), wall "
                      f"{100 * (rw / lw - 1):+.1f}% ({rw:.1f} vs {lw:.1f} s); without it (Ray already running: "
                      f"{rc - fc:.1f} CPU s, of which its daemons' {daemons:.1f} while the analysis runs, {rw - fw:.1f} wall s) CPU {100 * ((rc - fc) / lc - 1):+.1f}%, wall "
                      f"{100 * ((rw - fw) / lw - 1):+.1f}%; target < 15%. Ray's start: {fc:.1f} CPU s ("
                      + ", ".join(f"{k} {v:.1f}" for k, v in sorted(fr.items())) + f"), {fw:.1f} s wall." + background]
    if len(both) >= 2:
        a_l, b_l = fit(both, [mean([x["cpu_s"] for x in by[(n, "local")]]) for n in both])
        a_r, b_r = fit(both, [mean([x["cpu_s"] - x["fixed_cpu_s"] for x in by[(n, "ray")]]) for n in both])
        lines += ["", f"CPU s against nodes over {both}: local = {a_l:.1f} + {b_l:.3f} x nodes; Ray without its "
                      f"start = {a_r:.1f} + {b_r:.3f} x nodes: per node Ray {100 * (b_r / b_l - 1):+.1f}% of local."]
    if len({r["nodes"] for r in ray}) >= 2:
        xs = [r["nodes"] for r in ray]
        a_s, b_s = fit(xs, [r["reduce_cpu_s"] for r in ray])
        a_r, b_r = fit(xs, [r["window_rows"] for r in ray])
        a_m, b_m = fit(xs, [r["driver_peak_rss_mb"] for r in ray])
        per = {n: min(x["cpu_s"] for x in by[(n, "ray")]) / n for n, e in by if e == "ray"}
        lines += ["", f"Reduce fit over {sorted(set(xs))} nodes: CPU s = {a_s:.2f} + {b_s * 1000:.2f} ms x nodes; "
                      f"window rows = {a_r:.0f} + {b_r:.1f} x nodes; driver peak RSS MB = {a_m:.0f} + {b_m:.3f} x nodes. "
                      "Per node (reduce CPU s / nodes): " + ", ".join(
                          f"{r['nodes']}: {1000 * r['reduce_cpu_s'] / r['nodes']:.2f} ms" for r in ray) + ".",
                  "", "Ray CPU s per node (all steps): " + ", ".join(f"{n}: {v:.3f}" for n, v in sorted(per.items())) + "."]
    return "\n".join(lines) + "\n"


def _commit() -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "?"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", default="64,256,1024")
    ap.add_argument("--duration", default="60s")
    ap.add_argument("--interval", default="2s")
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1, help="runs per engine and size (alternating engines)")
    ap.add_argument("--engines", default="local,ray")
    ap.add_argument("--one", nargs=3, metavar=("ENGINE", "BUNDLE", "CACHE"), help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--report", nargs="+", type=Path, metavar="LOG",
                    help="report the runs these earlier invocations printed (their stdout) together; run nothing")
    ap.add_argument("--idle-rate", type=float, default=None, metavar="CPU_S_PER_S",
                    help="with --report: Ray's background CPU per wall second for runs that did not measure it")
    ap.add_argument("--driver-start", type=float, default=None, metavar="CPU_S",
                    help="with --report: the driver's own start (interpreter and forensics imported, measured apart) "
                         "to take off the Ray start of runs that did not record it")
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(*args.one), default=str))
        return 0
    rows = []
    if args.report:  # the runs printed by earlier invocations (one JSON line each), reported together
        for log in args.report:
            rows += [json.loads(line) for line in log.read_text().splitlines() if line.startswith('{"engine"')]
        for r in rows:  # runs of a version that counted the driver's own start as Ray's: take it off
            if "fixed_cpu_s" in r and "driver_start_cpu_s" not in r and args.driver_start is not None:
                r["fixed_cpu_s"] -= args.driver_start
                r["fixed_by_role"]["driver"] -= args.driver_start
        rows.sort(key=lambda r: r["nodes"])
        return _write(report(rows, args), args)
    work = ROOT / "benchmarks" / "tmp"
    work.mkdir(parents=True, exist_ok=True)
    engines = args.engines.split(",")
    for n in [int(x) for x in args.nodes.split(",")]:
        bundle = bundle_for(n, args.duration, args.interval, args.gpus)
        order = []
        for k in range(args.repeat):
            order += engines if k % 2 == 0 else engines[::-1]
        for engine in order:
            r = run_child(engine, bundle, work)
            r["nodes"] = n
            rows.append(r)
            print(json.dumps(r, default=str), flush=True)
    return _write(report(rows, args), args)


def _write(text: str, args) -> int:
    out = args.out or ROOT / "benchmarks" / "results" / f"fleet_scale-{dt.date.today():%Y-%m-%d}.md"
    with open(out, "a") as fh:
        if out.stat().st_size == 0:
            fh.write("# Fleet scale: local vs Ray engine (benchmarks/fleet_scale.py)\n\n")
        fh.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
