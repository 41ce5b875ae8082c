"""Rewriting and scanning many members, in worker processes when the bundle is big.

The Python part of rewriting (replacing the flagged lines) and the per-file overhead of Parquet
are CPU-bound and independent per member, so big bundles are spread over processes (``spawn``:
polars must not be forked). Each worker builds its own :class:`Rewriter` from the key, the classes
and the known literals; pseudonyms are a pure function of those, so every worker gives every value
the same pseudonym, and what the workers recorded is merged (and checked for collisions) by the
parent.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

from forensics.bundle.errors import BundleError
from forensics.errors import write_error
from forensics.redact.codec import line_blocks, member_kind, reader, writer
from forensics.redact.mapper import Mapper
from forensics.redact.rewrite import Rewriter

PARALLEL_MIN_BYTES = 48 << 20  # below this, starting workers costs more than it saves
MAX_WORKERS = 8

_RW: Rewriter | None = None
_RW_FOR: tuple | None = None


def _rewrite_stream(rw: Rewriter, src: str, dest: Path, kind: str | None) -> None:
    """`src` rewritten into `dest` a block of whole lines at a time, decompressed and compressed
    again as `kind` on the way (never held whole, however much it inflates)."""
    with reader(src, kind) as fi, writer(dest, kind) as fo:
        for piece in line_blocks(fi):
            fo.write(rw.data(piece))


def run_job(rw: Rewriter, job: tuple[str, str, str]) -> None:
    kind, src, dest = job
    d = Path(dest)
    d.parent.mkdir(parents=True, exist_ok=True)
    if kind == "parquet":
        from forensics.redact.tables import rewrite_parquet

        try:
            rewrite_parquet(Path(src), d, rw)
        except Exception as exc:  # noqa: BLE001 - a damaged page past a readable footer
            why = write_error(exc, d)
            raise why or BundleError(f"{src}: unreadable Parquet table ({str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}); "
                                     "nothing written (--reparse builds the tables from the raw files)") from None
        return
    compressed = member_kind(src)
    if compressed is not None:
        try:
            _rewrite_stream(rw, src, d, compressed)
            return
        except Exception:  # noqa: BLE001 - not really compressed (or damaged): rewritten as bytes
            pass
    _rewrite_stream(rw, src, d, None)


def _rewriter(key: bytes, classes: tuple, known) -> Rewriter:
    """This worker's Rewriter for (key, classes, literals), built once per combination."""
    global _RW, _RW_FOR
    ident = (key, classes, known.fingerprint())
    if _RW is None or _RW_FOR != ident:
        _RW, _RW_FOR = Rewriter(Mapper(key), set(classes), known), ident
    return _RW


def _work(args) -> dict:
    key, classes, known, jobs = args
    rw = _rewriter(key, classes, known)
    rw.m.record = {c: {} for c in rw.m.record}  # report only what these jobs mapped
    for job in jobs:
        run_job(rw, job)
    return rw.m.record


def _scan(args) -> list:
    from forensics.redact.verify import scan_files

    root, rels, originals = args
    return scan_files(Path(root), rels, originals)


def _discover(args):
    from forensics.redact.discover import Known, scan_member

    root, rels, names, names_only = args
    known = Known()
    for rel in rels:
        scan_member(Path(root), rel, known, names, names_only)
    return known


def workers_for(total_bytes: int) -> int:
    if total_bytes < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


def _chunks(items: list, sizes: list[int], n: int) -> list[list]:
    """`items` in about 4n chunks of similar total size (largest first, greedy)."""
    k = max(1, min(len(items), 4 * n))
    bins: list[list] = [[] for _ in range(k)]
    load = [0] * k
    for i in sorted(range(len(items)), key=lambda i: -sizes[i]):
        j = load.index(min(load))
        bins[j].append(items[i])
        load[j] += sizes[i] + 4096
    return [b for b in bins if b]


class Runner:
    """Discovery, rewrite jobs and leak scans, in `workers` processes (one pool for all) or in this one."""

    def __init__(self, key: bytes, workers: int = 1):
        self.key = key
        self.workers = workers
        self.pool = None

    def _map(self, fn, chunks: list) -> list | None:
        """fn over chunks in the pool; None when the pool cannot run (then the caller works here)."""
        if self.pool is None:
            self.pool = ProcessPoolExecutor(self.workers, mp_context=get_context("spawn"))
        try:
            return list(self.pool.map(fn, chunks))
        except BrokenProcessPool:  # workers could not start (e.g. a __main__ read from stdin)
            self.close()
            self.workers = 1
            return None

    def _parallel(self, n: int) -> bool:
        return self.workers > 1 and n >= 2 * self.workers

    def discover(self, root: Path, rels: list[str], known, names: list[str], names_only: bool) -> None:
        from forensics.redact.discover import scan_member

        if self._parallel(len(rels)):
            sizes = [os.path.getsize(root / r) for r in rels]
            res = self._map(_discover, [(str(root), c, names, names_only) for c in _chunks(rels, sizes, self.workers)])
            if res is not None:
                for k in res:
                    known.update(k)
                return
        for rel in rels:
            scan_member(root, rel, known, names, names_only)

    def rewrite(self, rw: Rewriter, known, jobs: list[tuple[str, str, str]]) -> None:
        if self._parallel(len(jobs)):
            sizes = [os.path.getsize(src) for _, src, _ in jobs]
            classes = tuple(sorted(rw.classes))
            res = self._map(_work, [(self.key, classes, known, c) for c in _chunks(jobs, sizes, self.workers)])
            if res is not None:
                for record in res:
                    rw.m.merge(record)
                return
        for job in jobs:
            run_job(rw, job)

    def scan(self, root: Path, rels: list[str], originals: dict) -> list:
        from forensics.redact.verify import scan_files

        if self._parallel(len(rels)):
            sizes = [os.path.getsize(root / r) for r in rels]
            res = self._map(_scan, [(str(root), c, originals) for c in _chunks(rels, sizes, self.workers)])
            if res is not None:
                return [leak for leaks in res for leak in leaks]
        return scan_files(root, rels, originals)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None
