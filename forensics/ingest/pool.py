"""Hosts parsed in worker processes, their results merged in manifest order (so the tables are
those of the serial ingest).

From disk, each worker parses one host. From the archive (see :mod:`forensics.ingest.archive`), each
worker streams the archive, claims the next host nobody has claimed (a shared array), parses it
once its raw files are read, and skips past the others.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from forensics.bundle import scratch
from forensics.ingest import nic_derived
from forensics.ingest.archive import stream_hosts
from forensics.ingest.host import host_job, raw_files
from forensics.ingest.hostfacts import HostFacts, merge_facts
from forensics.ingest.sink import TableSink, move_tables
from forensics.layout import HOSTS_DIR


PARALLEL_MIN_BYTES = 32 << 20  # below this much raw data, starting worker processes costs more than it saves
MAX_PROCESSES = 8


_CLAIMS = None  # in worker processes: shared arrays (one byte per host) set by _init_worker
_DONE = None


def _init_worker(claims, done) -> None:
    global _CLAIMS, _DONE
    _CLAIMS, _DONE = claims, done


def _claim(index: int) -> bool:
    if _CLAIMS is None:  # parsing in this process: every host is ours
        return True
    with _CLAIMS.get_lock():
        if _CLAIMS[index]:
            return False
        _CLAIMS[index] = 1
        return True


def archive_job(archive: str, root: str, prefix: str, by_host: dict, hosts: list[str], work: str,
                 progress=None) -> list[tuple[int, list[dict], dict, dict]]:
    """Stream `archive`, parsing each host claimed on the way into ``<work>/<host index>``."""
    index = {h: i for i, h in enumerate(hosts)}
    out = []
    spill = Path(tempfile.mkdtemp(prefix=".spill-", dir=work))
    try:
        for host, files in stream_hosts(Path(archive), prefix, by_host, lambda h: _claim(index[h]), spill):
            i = index[host]
            out.append((i, *host_job(root, host, str(Path(work) / str(i)), raw=files, progress=progress)))
            del files
            if _DONE is not None:
                _DONE[i] = 1
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    return out


def _die_with_parent(parent: int) -> None:
    """Linux: this worker is sent SIGTERM when the process that started it ends, however it ends (a
    SIGTERM or SIGKILL to `forensics analyze` reaches only that process), so no orphaned worker goes
    on parsing and writing into the cache entry a later run rebuilds. Elsewhere: nothing."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, int(signal.SIGTERM), 0, 0, 0) != 0:  # PR_SET_PDEATHSIG
            return
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent ended before the call took effect
        os._exit(1)


def _start_worker(parent: int, initializer, initargs) -> None:
    _die_with_parent(parent)
    if initializer is not None:
        initializer(*initargs)


#: polars' allocator (jemalloc) options for the workers, read when a worker imports polars, which puts its own
#: defaults (dirty_decay_ms:500,muzzy_decay_ms:1000) before the variable's value: later options win. A worker keeps
#: the pages it freed for 30 s instead of returning them to the system within a second and faulting them in again
#: for the next file's frames: a host-hour's ingest took 0.21-0.30 CPU s of system time and 71-118 k page faults,
#: 0.09-0.13 s and 13-15 k with this (user + system 1.94-2.26 -> 1.85-2.12 CPU s, 4 runs each), for 40-70 MB more
#: peak memory a worker (benchmarks/results/parse-speed-2026-12-07-issue21-b.md)
WORKER_MALLOC_CONF = "dirty_decay_ms:30000,muzzy_decay_ms:30000"
MALLOC_CONF_VAR = "_RJEM_MALLOC_CONF"


@contextlib.contextmanager
def worker_pool(n: int, initializer=None, initargs=(), **kw):
    """A pool of `n` spawned worker processes (polars must not be forked), each with its share of
    the CPUs for polars, that end when this process ends (:func:`_die_with_parent`). The pool must
    be made and used by one thread that outlives it (Linux ties the signal to the creating thread)."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    saved = {k: os.environ.get(k) for k in ("POLARS_MAX_THREADS", MALLOC_CONF_VAR)}
    # inherited by the workers
    os.environ["POLARS_MAX_THREADS"] = str(max(1, (os.cpu_count() or 1) // n))
    os.environ[MALLOC_CONF_VAR] = ",".join(c for c in (saved[MALLOC_CONF_VAR], WORKER_MALLOC_CONF) if c)
    try:
        with ProcessPoolExecutor(max_workers=n, mp_context=get_context("spawn"), initializer=_start_worker,
                                 initargs=(os.getpid(), initializer, initargs), **kw) as pool:
            yield pool
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def merge_host(result: tuple[list[dict], dict, dict], part: Path, tmp: Path, sink: TableSink, derived: HostFacts,
                coverage: list[dict]) -> None:
    """One host's job result and its table files (under `part`) into the bundle's (hosts in manifest order)."""
    cov, by_host, rows = result
    coverage.extend(cov)
    merge_facts(derived, by_host)
    for key, v in rows.items():
        sink.rows[key] = sink.rows.get(key, 0) + v
    move_tables(part, tmp)
    nic_derived.move(part, tmp)


def ingest_archive(root: Path, hosts: list[str], archive: Path, plan: tuple[str, dict], tmp: Path, sink: TableSink,
                    derived: HostFacts, coverage: list[dict], n: int, progress=None) -> None:
    """Every host's raw files read from `archive` (see the module's docstring), in `n` worker processes or in this
    one; results merged in manifest order, as by the ingest from disk."""
    from concurrent.futures import FIRST_EXCEPTION, wait
    from multiprocessing import get_context

    prefix, by_host = plan
    work = scratch.make(root, ".hosts-")
    results: dict[int, tuple] = {}
    try:
        jobs = min(n, len(by_host))
        if jobs > 1:
            mp = get_context("spawn")
            claims, done = mp.Array("b", len(hosts)), mp.Array("b", len(hosts))
            with worker_pool(jobs, initializer=_init_worker, initargs=(claims, done)) as pool:
                futures = [pool.submit(archive_job, str(archive), str(root), prefix, by_host, hosts, str(work))
                           for _ in range(jobs)]
                told: set[int] = set()
                while True:
                    finished, pending = wait(futures, timeout=0.5, return_when=FIRST_EXCEPTION)
                    for i, flag in enumerate(done[:]):
                        if flag and i not in told:
                            told.add(i)
                            if progress:
                                progress(f"parsing {HOSTS_DIR}/{hosts[i]}/raw/ (host {len(told)} of {len(hosts)} done)")
                    if not pending or any(f.exception() for f in finished):
                        break
                for fut in futures:
                    for r in fut.result():
                        results[r[0]] = r[1:]
        elif by_host:
            for r in archive_job(str(archive), str(root), prefix, by_host, hosts, str(work), progress):
                results[r[0]] = r[1:]
        for i, host in enumerate(hosts):
            if i not in results:  # a host without raw files
                results[i] = host_job(str(root), host, str(work / str(i)), raw=[])
            merge_host(results[i], work / str(i), tmp, sink, derived, coverage)
    finally:
        scratch.remove(work)


def raw_bytes(root: Path, hosts: list[str]) -> int:
    total = 0
    for host in hosts:
        for _, p in raw_files(root / HOSTS_DIR / host / "raw"):
            try:
                total += p.stat().st_size
            except OSError:
                pass
    return total


def input_bytes(root: Path, hosts: list[str], plan: tuple[str, dict] | None = None) -> int:
    """The raw bytes of `hosts`: on disk under `root`, or as the archive's member `plan` lists them
    (:func:`forensics.ingest.archive.read_plan`)."""
    if plan:
        return sum(size for members in plan[1].values() for _, size, _ in members)
    return raw_bytes(root, hosts)


def processes_for(root: Path, hosts: list[str], plan: tuple[str, dict] | None = None) -> int:
    """How many worker processes to parse `hosts` with (1: in this process)."""
    env = os.environ.get("FORENSICS_INGEST_PROCESSES")
    if env is not None:
        try:
            return max(1, min(int(env), len(hosts), MAX_PROCESSES))
        except ValueError:
            pass
    n = min(os.cpu_count() or 1, len(hosts), MAX_PROCESSES)
    if n < 2 or input_bytes(root, hosts, plan) < PARALLEL_MIN_BYTES:
        return 1
    return n


def ingest_parallel(root: Path, hosts: list[str], tmp: Path, sink: TableSink, derived: HostFacts,
                     coverage: list[dict], n: int, progress=None) -> None:
    """Hosts parsed in `n` worker processes, results merged in manifest order, so the tables are
    those of the serial ingest."""
    work = scratch.make(root, ".hosts-")
    try:
        with worker_pool(n) as pool:
            futures = [pool.submit(host_job, str(root), host, str(work / str(i))) for i, host in enumerate(hosts)]
            for i, (host, fut) in enumerate(zip(hosts, futures)):
                merge_host(fut.result(), work / str(i), tmp, sink, derived, coverage)
                if progress:
                    progress(f"parsing {HOSTS_DIR}/{host}/raw/ (host {i + 1} of {len(hosts)} done)")
    finally:
        scratch.remove(work)
