"""`forensics collect`: capture a node's raw outputs into a bundle (standard library only, Python 3.8).

Runs every spec of :mod:`forensics.collect.specs` (missing or failing commands are recorded in
commands.jsonl and never stop the rest), samples the snapshot and stream specs for ``--duration``
seconds every ``--interval`` seconds, copies NCCL logs, records GPU processes
(:mod:`forensics.collect.job`: command line, affinity, NCCL_/CUDA_/TORCH_NCCL_/OMP_NUM_THREADS, SLURM_JOB_ID, RANK, ...
variables only), the NIC inventory and the clock reference, and writes a bundle atomically. On
SIGINT/SIGTERM/SIGHUP it stops its commands, writes a valid bundle with what it has and exits
non-zero (130/143/129). When the parsing dependencies are importable, the bundle also gets its
Parquet tables.

Time: with ``--duration N`` the sampling commands end by N + SAMPLE_GRACE_S seconds and the final
ones (dmesg, NCCL log copies) by N + END_SLACK_S, whatever hangs (each command's timeout is bounded
by what is left; a program that timed out once gets HUNG_RETRY_S from then on), plus the kill grace
of a command that ignores SIGTERM. Parsing into tables comes after that (``--raw-only`` skips it).
Children: see :mod:`forensics.collect.proc` (process groups, and a per-run marker for those that
leave them); whatever of the run is left at its end is killed.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

from forensics.collect import job, node, output, proc
from forensics.collect.job import NCCL_COPY, NCCL_NAME, NCCL_SOURCE  # noqa: F401 (used as cmain.*)
from forensics.collect.records import SKIPPED_TIME, command_record, commands_text, host_json_text, host_record, version  # noqa: F401 (used as cmain.*)
from forensics.collect.specs import SPECS
from forensics.collect.tarball import compression_for
from forensics.layout import format_marker

STREAM_GRACE_S = 10.0
SAMPLE_GRACE_S = 5.0  # sampling commands end by --duration + this
END_SLACK_S = 10.0  # the final commands (dmesg, NCCL copies) by --duration + this
ONESHOT_BUDGET_S = 60.0  # with --duration 0: what the snapshot of every command may take
HUNG_RETRY_S = 5.0  # timeout of a program that already timed out once in this run
MIN_LEFT_S = 0.5
EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}
# how NCCL log copies are recorded in commands.jsonl: name, source, argv ["copy", <path>]
def fill(argv, **values):
    """argv with its {placeholders} filled in."""
    return [a.format(**values) if "{" in a else a for a in argv]


def expand_items(spec, ifaces, ib_ports, ib_ports_ib=()):
    """Placeholder values of each run of a spec: one per interface (``iface``), one per RDMA port
    (``ibport``: ``{ibdev}`` and ``{port}``), one per InfiniBand link-layer port (``ibport_ib``: the ports
    in `ib_ports_ib`: a RoCE port has no LID for perfquery to address), else one run."""
    if spec.expand == "iface":
        return [{"iface": i} for i in ifaces]
    if spec.expand == "ibport":
        return [{"ibdev": d, "port": p} for d, p in ib_ports]
    if spec.expand == "ibport_ib":
        return [{"ibdev": d, "port": p} for d, p in ib_ports_ib]
    return [{}]


def samples(duration, interval):
    """Sampling intervals in `duration` seconds (what --count of a stream counts)."""
    return max(1, int(round(duration / interval)))


def stream_values(spec, interval, n):
    """Placeholder values of a stream spec sampling every `interval` seconds `n` times."""
    return {"interval": str(max(1, int(round(interval)))), "count": str(n + 1 if spec.source == "iostat" else n),
            "interval_ms": str(max(100, int(interval * 1000)))}


class _Either(object):
    """is_set() of any of several events (what proc.run polls)."""

    def __init__(self, *events):
        self.events = events

    def is_set(self):
        return any(e.is_set() for e in self.events)


class Collector(object):
    def __init__(self, duration, interval, out=None, nccl_logs=(), pids=(), host=None, quiet=False, argv=None,
                 raw_only=False, parse_tables=None):
        self.duration = max(0.0, float(duration))
        self.interval = max(0.1, float(interval))
        short, self.hostname = node.host_name()
        self.host = host or short
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self.out = os.path.abspath(out or "%s-%s.tar.gz" % (self.host, stamp))
        compression_for(self.out)  # ValueError for an unknown suffix
        folder = os.path.dirname(self.out)
        if not os.path.isdir(folder):
            raise ValueError("output folder does not exist: %s" % folder)
        self.nccl_globs = node.nccl_globs(list(nccl_logs), hostname=self.hostname)
        self.pids = [int(p) for p in pids]
        self.quiet = quiet
        self.raw_only = raw_only
        self.parse_tables = parse_tables
        self.argv = list(argv if argv is not None else sys.argv)
        self.stage = tempfile.mkdtemp(prefix=".forensics-collect-", dir=folder)
        self.hdir = os.path.join(self.stage, "hosts", self.host)
        os.makedirs(os.path.join(self.hdir, "raw"))
        self.entries = []
        self.lock = threading.Lock()
        self.stop = threading.Event()  # interrupt
        self.end_streams = threading.Event()  # normal end of sampling (for streams that run until told)
        self.interrupted = None
        self.env = proc.command_env()
        self.token = proc.run_token()  # marks every command's descendants (proc.MARK)
        self.seq = 0
        self.started = proc.utcnow()
        self.capped = set()
        self.hung = set()  # programs that timed out once
        self.ib_ports = []  # (RDMA device, port) pairs, listed when the collection starts
        self.ib_ports_ib = []  # those of them with the InfiniBand link layer
        self.process_uids = set()  # owners of the recorded GPU processes (job users)
        self.process_jobs = set()  # their SLURM_JOB_ID (None: not in a Slurm job)
        t0 = time.monotonic()
        self.sample_end = t0 + (self.duration + SAMPLE_GRACE_S if self.duration > 0 else ONESHOT_BUDGET_S)
        self.end = self.sample_end - SAMPLE_GRACE_S + END_SLACK_S if self.duration > 0 else t0 + ONESHOT_BUDGET_S + END_SLACK_S

    # ------------------------------------------------------------------ helpers

    def say(self, msg):
        if not self.quiet:
            try:
                sys.stderr.write("forensics collect: %s: %s\n" % (self.host, msg))
                sys.stderr.flush()
            except (OSError, ValueError):  # the terminal is gone (ssh dropped): carry on silently
                self.quiet = True

    def raw(self, source, name):
        d = os.path.join(self.hdir, "raw", source)
        os.makedirs(d, exist_ok=True)  # several sampler threads may create it at once
        rel = "hosts/%s/raw/%s/%s" % (self.host, source, name)
        return os.path.join(d, name), rel

    def record(self, name, source, res, rel, **extra):
        entry = command_record(name, res.argv, source, proc.iso(res.start), proc.iso(res.end) if res.end else None,
                               res.exit_code, res.bytes, res.truncated, res.timed_out, res.error, res.stderr_tail, rel,
                               **extra)
        with self.lock:
            self.entries.append(entry)

    def skipped(self, name, source, argv, why):
        res = proc.Result(argv)
        res.end = res.start
        res.error = why
        self.record(name, source, res, None)

    def _fill(self, argv, **values):
        return fill(argv, **values)

    def _n(self):
        return samples(self.duration, self.interval)

    def _run(self, argv, out, timeout, end, stop=None, expected_stop=False):
        """proc.run with the timeout bounded by what is left until `end` and for programs seen hanging."""
        left = end - time.monotonic()
        if argv[0] in self.hung:
            timeout = min(timeout, HUNG_RETRY_S)
        if left < MIN_LEFT_S:
            out.close()
            res = proc.Result(argv)
            res.end = res.start
            res.error = SKIPPED_TIME
            return res
        with self.lock:
            self.seq += 1
            marker = "%s.%d" % (self.token, self.seq)
        res = proc.run(argv, out, min(timeout, left), stop=stop or self.stop, expected_stop=expected_stop,
                       env=self.env, marker=marker)
        if res.timed_out:
            self.hung.add(argv[0])
        return res

    # ------------------------------------------------------------------ running specs

    def run_once(self, spec, argvs, timeout=None, expected_stop=False, stop=None, end=None):
        """Run the first argv that works (fallbacks after it); output kept from the last one tried."""
        path, rel = self.raw(spec.source, spec.raw)
        res = None
        todo = [list(a) for a in argvs]
        while todo:
            argv = todo.pop(0)
            if self.stop.is_set():
                self.skipped(spec.name, spec.source, argv, "skipped (collection interrupted)")
                return None
            res = self._run(argv, proc.CappedFile(path, spec.cap, append=False), timeout or spec.timeout,
                            end or self.sample_end, stop=stop, expected_stop=expected_stop)
            if res.error == SKIPPED_TIME:
                todo = []
            if res.error == "not found" or res.timed_out:  # the same program again would not help
                todo = [a for a in todo if a[0] != argv[0]]
            good = res.ok() or (expected_stop and res.error is None and res.bytes > 0)
            self.record(spec.name, spec.source, res, rel if (good or not todo) else None)
            if good or res.stopped:
                break
        if res is not None and not (res.ok() or res.bytes) and os.path.exists(path) and os.path.getsize(path) == 0:
            os.unlink(path)
            with self.lock:
                for e in self.entries:
                    if e.get("raw_file") == rel and e["name"] == spec.name:
                        e["raw_file"] = None
        return res

    def once_argvs(self, spec):
        """The argv and fallbacks of a one-shot spec with its job placeholders filled (``{slurm_job_id}``:
        $SLURM_JOB_ID of the collector's environment, else the one job of the GPU processes recorded, for
        a collector started outside the job: over ssh); None, recorded as skipped, when none is known."""
        argvs = [list(spec.argv)] + [list(f) for f in spec.fallbacks]
        if not any("{slurm_job_id}" in a for a in spec.argv):
            return argvs
        jobs = sorted(j for j in self.process_jobs if j)
        job_id = os.environ.get("SLURM_JOB_ID") or (jobs[0] if len(jobs) == 1 else "")
        if not job_id.isdigit():  # (a number: never an option or a path handed to the command)
            self.skipped(spec.name, spec.source, list(spec.argv),
                         "skipped (no SLURM_JOB_ID in the collector's environment nor one job among the GPU processes'"
                         " (%d found): not run inside a Slurm job)" % len(jobs))
            return None
        return [self._fill(a, slurm_job_id=job_id) for a in argvs]

    def run_snapshot(self, spec, sample, ifaces):
        """One sample of a snapshot spec: each output preceded by a marker line, appended to its raw file."""
        items = expand_items(spec, ifaces, self.ib_ports, self.ib_ports_ib)
        for values in items:
            if self.stop.is_set():
                return
            argv = self._fill(spec.argv, **values)
            path, rel = self.raw(spec.source, spec.raw.format(**values))
            size = os.path.getsize(path) if os.path.exists(path) else 0
            if size >= spec.cap:
                if rel not in self.capped:
                    self.capped.add(rel)
                    self.skipped(spec.name, spec.source, argv, "byte cap of %d reached: later samples not kept" % spec.cap)
                continue
            part = path + ".part"
            res = self._run(argv, proc.CappedFile(part, max(1 << 20, spec.cap - size), append=False), spec.timeout,
                            self.sample_end)
            kept = None
            if res.bytes:  # the marker (time of this sample) and the output, appended to the series
                with open(path, "ab") as fh, open(part, "rb") as src:
                    fh.write((format_marker(res.start, argv) + "\n").encode())
                    shutil.copyfileobj(src, fh, 1 << 20)
                kept = rel
            if os.path.exists(part):
                os.unlink(part)
            self.record(spec.name, spec.source, res, kept, sample=sample)

    def stream(self, spec):
        """Thread body of a stream spec (one long-running sampler, or one run when duration is 0)."""
        try:
            if self.duration <= 0:
                argvs = [list(spec.argv_once or spec.argv)]
                argvs += [[a for a in fb if a not in ("-lms", "{interval_ms}")] for fb in spec.fallbacks]
                argvs = [self._fill(a, interval="1", count="1", interval_ms="1000") for a in argvs]
                self.run_once(spec, argvs)
                return
            n = self._n()
            iv = self.interval
            values = stream_values(spec, iv, n)
            argvs = [self._fill(spec.argv, **values)] + [self._fill(fb, **values) for fb in spec.fallbacks]
            if spec.until_stopped:
                self.run_once(spec, argvs, timeout=self.duration + STREAM_GRACE_S, expected_stop=True,
                              stop=_Either(self.stop, self.end_streams))
            else:
                self.run_once(spec, argvs, timeout=(n + 2) * max(1, int(round(iv))) + STREAM_GRACE_S)
        except Exception as exc:  # noqa: BLE001 - one spec must never take the collection down
            self.skipped(spec.name, spec.source, list(spec.argv), "collector error: %s" % exc)

    # ------------------------------------------------------------------ the collection

    def collect(self):
        t0 = time.monotonic()
        inventory = node.nics()
        ifaces = node.ethtool_ifaces(inventory)
        self.ib_ports = node.ib_ports()
        self.ib_ports_ib = [(d, p) for d, p in self.ib_ports if node.ib_link_layer(d, p) == "InfiniBand"]
        self.say("collecting for %gs every %gs; %d interface(s) to sample%s" % (
            self.duration, self.interval, len(ifaces), "" if not self.nccl_globs else "; NCCL logs " + ", ".join(self.nccl_globs)))
        streams = [s for s in SPECS if s.mode == "stream"]
        threads = []
        for spec in streams:
            t = threading.Thread(target=self.stream, args=(spec,), name=spec.name, daemon=True)
            t.start()
            threads.append(t)
        oneshots = threading.Thread(target=self.start_specs, name="one-shots", daemon=True)
        oneshots.start()
        snaps = [s for s in SPECS if s.mode == "snapshot"]
        n = self._n() if self.duration > 0 else 0
        last_run = {}
        k = 0
        while k <= n and not self.stop.is_set() and time.monotonic() < self.sample_end - MIN_LEFT_S:
            todo = [s for s in snaps if k == 0 or time.monotonic() - last_run.get(s.name, 0) >= s.min_interval - 0.01]
            workers = []
            for spec in todo:
                last_run[spec.name] = time.monotonic()
                w = threading.Thread(target=self.run_snapshot, args=(spec, k, ifaces), daemon=True)
                w.start()
                workers.append(w)
            for w in workers:
                w.join()
            self.say("sample %d/%d at %.0fs: %s" % (k + 1, n + 1, time.monotonic() - t0,
                                                    ", ".join(s.name for s in todo) or "streams only"))
            k += 1
            while k < n and t0 + (k + 1) * self.interval <= time.monotonic():
                k += 1  # a sample took longer than an interval: skip the ticks already missed
            due = t0 + k * self.interval
            if k > n or self.stop.wait(max(0.0, due - time.monotonic())):
                break
        self.end_streams.set()
        oneshots.join()
        for t in threads:
            t.join(timeout=max(0.0, self.sample_end - time.monotonic()) + STREAM_GRACE_S)
        for spec in SPECS:
            if spec.mode == "once" and spec.when == "end":
                if self.stop.is_set():
                    self.skipped(spec.name, spec.source, list(spec.argv), "skipped (collection interrupted)")
                else:
                    argvs = self.once_argvs(spec)
                    if argvs:
                        self.run_once(spec, argvs, end=self.end)
        for spec in SPECS:
            if spec.mode == "copy":
                job.copy_declared(self, spec)
        job.copy_nccl_logs(self)
        return inventory

    def start_specs(self):
        """One-shot commands of the start (alongside the first samples), then the GPU processes."""
        try:
            for spec in SPECS:
                if spec.mode == "once" and spec.when == "start":
                    argvs = self.once_argvs(spec)
                    if argvs:
                        self.run_once(spec, argvs)
            job.record_processes(self)
        except Exception as exc:  # noqa: BLE001
            self.say("collector error in one-shot commands: %s" % exc)

    # ------------------------------------------------------------------ writing the bundle

    def write(self, inventory):
        output.write_bundle(self, inventory)

    def cleanup(self):
        shutil.rmtree(self.stage, ignore_errors=True)


def _quiet_dead_terminal():
    """After a hangup, a terminal on stderr is gone: point fd 2 at /dev/null so that writing to it
    (and flushing it at exit, which would turn the exit status into 120) cannot fail."""
    try:
        if os.isatty(2):
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, 2)
            os.close(fd)
    except OSError:
        pass


def build_parser():
    p = argparse.ArgumentParser(prog="forensics collect", description="Capture this node's GPU/NIC/CPU/NCCL evidence into a bundle.")
    p.add_argument("--duration", type=float, default=60.0, help="seconds to sample (0: one snapshot of each)")
    p.add_argument("--interval", type=float, default=5.0, help="seconds between samples")
    p.add_argument("--out", help="bundle to write (.tar, .tar.gz, .tar.zst); default <host>-<UTC time>.tar.gz")
    p.add_argument("--nccl-log", action="append", default=[], metavar="GLOB", help="NCCL log files to include (repeatable); default: $NCCL_DEBUG_FILE")
    p.add_argument("--pid", action="append", default=[], type=int, metavar="PID", help="also record this process (repeatable)")
    p.add_argument("--host", help="host name to use in the bundle (default: short hostname)")
    p.add_argument("--raw-only", action="store_true", help="do not parse into tables here (bundle/analyze do it later)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


def run(duration=60.0, interval=5.0, out=None, nccl_logs=(), pids=(), host=None, quiet=False, argv=None,
        raw_only=False, parse_tables=None):
    """Collect and write the bundle; returns the exit status (0, 2 for bad options, 130/143 when interrupted).

    `parse_tables(stage_dir)`: builds the bundle's tables/ before it is written (`forensics collect`
    passes :func:`forensics.ingest.ingest_bundle`; the zipapp has none)."""
    if host is not None:
        import re

        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$", host):
            sys.stderr.write("forensics: error: --host must be letters, digits, '.', '_', '-'\n")
            return 2
    if interval <= 0 or duration < 0:
        sys.stderr.write("forensics: error: --interval must be > 0 and --duration >= 0\n")
        return 2
    try:
        c = Collector(duration, interval, out, nccl_logs, pids, host, quiet, argv, raw_only, parse_tables)
    except (ValueError, OSError) as exc:
        sys.stderr.write("forensics: error: %s\n" % exc)
        return 2

    def on_signal(signum, frame):
        name = signal.Signals(signum).name
        if signum == signal.SIGHUP:
            _quiet_dead_terminal()
        if c.interrupted is None:
            c.interrupted = name
            c.say("%s received: stopping, writing what was collected" % name)
        c.stop.set()

    old = {}
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            if s == signal.SIGHUP and signal.getsignal(s) == signal.SIG_IGN:
                continue  # under nohup: stay immune to the hangup
            old[s] = signal.signal(s, on_signal)
    try:
        inventory = []
        try:
            inventory = c.collect()
        except Exception as exc:  # noqa: BLE001 - still write what we have
            c.say("collection error: %s" % exc)
            c.interrupted = c.interrupted or "error"
        try:
            c.write(inventory)
        except (OSError, ValueError) as exc:
            sys.stderr.write("forensics: error: cannot write %s: %s\n" % (c.out, exc))
            return 2
    finally:
        left = proc.end_run(c.token)  # descendants that left their group and outlived their command
        if left:
            c.say("killed %d leftover process(es) of the collected commands" % left)
        c.cleanup()
        for s, h in old.items():
            signal.signal(s, h)
    failed = sum(1 for e in c.entries if e.get("error"))
    if c.interrupted:
        try:
            sys.stderr.write("forensics collect: interrupted (%s): partial bundle written to %s (%d commands, %d failed)\n"
                             % (c.interrupted, c.out, len(c.entries), failed))
        except (OSError, ValueError):
            pass
        return EXIT_CODES.get(c.interrupted, 1)
    c.say("wrote %s (%d commands, %d failed or missing)" % (c.out, len(c.entries), failed))
    return 0


def main(argv=None, parse_tables=None):
    args = build_parser().parse_args(argv)
    return run(args.duration, args.interval, args.out, args.nccl_log, args.pid, args.host, args.quiet,
               argv=["forensics-collect"] + list(sys.argv[1:] if argv is None else argv), raw_only=args.raw_only,
               parse_tables=parse_tables)


if __name__ == "__main__":
    sys.exit(main())
