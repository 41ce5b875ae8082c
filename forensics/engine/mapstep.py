"""The map step, per group of hosts: parse, then host-local detection (see :mod:`forensics.engine`).

Both functions take and return plain values (paths, lists, frames), so any executor can run them
in another process or on another machine that sees the same paths.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from forensics import schema
from forensics.detect.rules import WINDOW_TABLES, rules

FINDINGS_FILE = "findings.parquet"


def parse_group(root: str, hosts: list[str], indices: list[int], source, work: str) -> dict[int, tuple]:
    """Parse the hosts ``hosts[i]`` for i in `indices` of the bundle tree at `root` into
    ``<work>/<i>/`` (the tables' layout); returns {i: :func:`forensics.ingest.host.host_job`'s
    result}. `source`: None (raw files on disk under `root`) or (archive, (prefix, {host: members}))
    when the cache left them in the bundle archive: the archive is streamed and only this group's
    hosts are read from it."""
    from forensics.ingest.host import host_job
    from forensics.ingest.pool import archive_job

    Path(work).mkdir(parents=True, exist_ok=True)
    if source is None:
        return {i: host_job(root, hosts[i], str(Path(work) / str(i))) for i in indices}
    archive, (prefix, by_host) = source
    mine = {hosts[i]: by_host[hosts[i]] for i in indices if hosts[i] in by_host}
    if not mine:
        return {}
    return {r[0]: r[1:] for r in archive_job(archive, root, prefix, mine, hosts, work)}


class _Con:
    """What :func:`forensics.detect.engine.run_rule` needs of a bundle: its connection."""

    def __init__(self, con):
        self.con = con


def host_rules(only: set[str] | None = None) -> list:
    return [r for r in rules() if r.locality == "host" and (not only or r.kind in only)]


def detect_group(root: str, hosts: list[str], clock: pl.DataFrame, out: str, only: set[str] | None = None,
                 since=None, until=None, memory: int | None = None, threads: int = 1, derive: str = "lazy",
                 params: dict | None = None, known: dict | None = None) -> dict:
    """Host-local detection over the parsed tables of `hosts` (a group of the bundle at `root`).

    One DuckDB over these hosts' partitions only, aligned with `clock` (the offsets of the whole
    bundle), restricted to [since, until), runs the detectors' setup scripts and every
    ``-- locality: host`` detector (`only`: these kinds; `params`: detector parameters by name, as
    :func:`forensics.detect.engine.run_all`'s `overrides`; `known`: the footer facts of the group's
    table files its driver read, :func:`forensics.db._build.footers`); the group's derived relations (NIC rates
    of big inputs, `derive`: see :mod:`forensics.db.derived`) are cached for its hosts. Writes ``<out>/findings.parquet`` and
    ``<out>/<table>.parquet`` for each of :data:`WINDOW_TABLES`; returns {"findings": path,
    "windows": {table: path}, "errors": [...], "hosts": hosts, "cpu_s": {step: CPU seconds of this
    process}} (steps: catalog, setup, detectors, write)."""
    from forensics.db import connect, guard, safety
    from forensics.db.window import restrict
    from forensics.detect.engine import _interrupted, run_rule
    from forensics.detect.rules import prepare
    from forensics.layout import TABLES_DIR

    import time

    cpu = {"start": time.process_time()}
    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    con, info = connect(Path(root), derive=derive, hosts=frozenset(hosts), clock=clock, memory=memory,
                        known=known)
    try:
        con.execute(f"SET threads = {max(1, int(threads))}")
        safety.lock_down(con, Path(root) / TABLES_DIR)
        restrict(con, since, until)
        cpu["catalog"] = time.process_time()
        prepare(con, info["cached"])
        cpu["setup"] = time.process_time()
        frames, errors = [], []
        bundle = _Con(con)
        for rule in host_rules(only):
            try:
                frames.append(run_rule(bundle, rule, params))
            except Exception as exc:  # as run_all: one broken detector must not hide the others
                if _interrupted(exc):
                    raise KeyboardInterrupt from None
                errors.append(f"detector {rule.name}: {str(exc).splitlines()[0]}")
        findings = pl.concat(frames) if frames else schema.empty("findings")
        cpu["detectors"] = time.process_time()
        findings.write_parquet(outdir / FINDINGS_FILE)
        windows = {}
        for table in WINDOW_TABLES:
            arrow = con.sql(f"SELECT * FROM {table}").arrow()
            if isinstance(arrow, pa.RecordBatchReader):
                arrow = arrow.read_all()
            pq.write_table(arrow, outdir / f"{table}.parquet")
            windows[table] = str(outdir / f"{table}.parquet")
    finally:
        guard.release(con)
    cpu["write"] = time.process_time()
    marks = list(cpu.items())
    spent = {k: round(t - marks[i][1], 3) for i, (k, t) in enumerate(marks[1:])}
    return {"findings": str(outdir / FINDINGS_FILE), "windows": windows, "errors": errors, "hosts": list(hosts),
            "cpu_s": spent}
