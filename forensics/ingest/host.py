"""One host's raw files into a sink: the collector's own files (commands.jsonl, processes.jsonl,
host.json's NICs), then every file under ``hosts/<host>/raw/<source>/`` through its source's
parser, each with one ``coverage`` row."""
from __future__ import annotations

import json
import os
import traceback
from pathlib import Path, PurePosixPath

import polars as pl

from forensics import sources
from forensics.ingest import collector_tables as ct
from forensics.ingest import nic_derived
from forensics.ingest.files import parse_path
from forensics.ingest.hostfacts import HostFacts, capture_argvs, capture_starts, parse_context, read_json
from forensics.ingest.sink import TableSink
from forensics.layout import HOSTS_DIR
from forensics.sources import ParseContext
from forensics.sources._base import Truncation, cap_lines, read_capped


COLLECTOR_FILES = {"processes.jsonl": ct.parse_processes}
CLOCK_FILES = ("chronyc-tracking.txt", "timedatectl.txt")
HOST_TABLES = ("unparsed", "commands", "nics", "processes", "process_env")  # a file for every host, rows or not


def coverage_row(host: str, source: str, file: str, version: int | None, lines: int | None, unparsed: int | None,
              rows: dict | None, error: str | None, truncated: int | None = None, skipped: int | None = None) -> dict:
    return {"host": host, "source": source, "file": file, "parser_version": version, "lines": lines,
            "unparsed": unparsed, "truncated_lines": truncated if lines is not None else None,
            "skipped_lines": (skipped or 0) if lines is not None else None,
            "rows": None if rows is None else json.dumps(rows, sort_keys=True), "error": error}


def skipped_lines(meta: dict) -> int:
    """How many lines a parse result's meta says were skipped on purpose (``skipped``: reason -> lines)."""
    got = meta.get("skipped")
    return sum(int(n) for n in got.values()) if isinstance(got, dict) else 0


def raw_files(raw: Path) -> list[tuple[str, Path]]:
    out = []
    if not raw.is_dir():
        return out
    for src_dir in sorted(raw.iterdir()):
        if not src_dir.is_dir() or src_dir.is_symlink():
            continue
        for dirpath, dirnames, filenames in os.walk(src_dir, followlinks=False):
            dirnames.sort()
            for name in sorted(filenames):
                p = Path(dirpath) / name
                if p.is_file() and not p.is_symlink():
                    out.append((src_dir.name, p))
    return out


#: sources whose collected files may be another source's output: a glob of `collect --nccl-log`
#: (raw/nccl) also matches the job's training log (its stdout, a torchrun summary) and its Flight
#: Recorder dumps (`--nccl-log '/tmp/nccl_trace_rank_*'`)
_ROUTED = {"nccl": ("train_log", "flight_recorder")}


def routed_source(source: str, data: Path | bytes) -> str:
    """The source that reads a raw file of `source`'s folder: another source of :data:`_ROUTED`
    when its sniffer is surer of the file's head (read through the paste layer) than `source`'s own (a training log copied into
    raw/nccl is read as one, not left unparsed line by line); else `source`."""
    others = _ROUTED.get(source)
    if not others:
        return source
    if isinstance(data, bytes):
        head = data[:sources.SNIFF_BYTES]
    else:
        try:
            with open(data, "rb") as fh:
                head = fh.read(sources.SNIFF_BYTES)
        except OSError:
            return source
    # (each read as the parse will read it: through the paste layer, sources.sniff_pasted; a training log
    # pasted with a quote prefix or list mark copied into raw/nccl was left to nccl, its lines unparsed)
    best, conf = source, sources.sniff_pasted(source, head).confidence
    for other in others:
        c = sources.sniff_pasted(other, head).confidence
        if c > conf and c >= sources.SNIFF_ACCEPT:
            best, conf = other, c
    return best


def parse_raw(sink: TableSink, host: str, source: str, data: Path | bytes, rel: str, ctx: ParseContext) -> dict:
    """One raw file (on disk, or its bytes read from the archive) into `sink`; its coverage row."""

    if source == ct.SOURCE:
        fn = COLLECTOR_FILES.get(rel.rsplit("/", 1)[-1])
        if fn is None:
            return {}
        cut = Truncation()
        try:
            if isinstance(data, bytes):
                data = cap_lines(data, stats=cut)
            else:
                with open(data, "rb") as fh:
                    data = b"".join(read_capped(fh, stats=cut))
            res = fn(data, ctx)
        except Exception as exc:  # noqa: BLE001 - recorded, never stops the ingest
            return coverage_row(host, source, rel, ct.VERSION, None, None, None, f"{type(exc).__name__}: {exc}")
        for t, df in res.tables.items():
            sink.write(t, df, host)
        sink.write("unparsed", res.unparsed, host)
        return coverage_row(host, source, rel, ct.VERSION, res.lines, res.unparsed.height, res.rows(), None, cut.lines)
    mod = sources.registry().get(source)
    if mod is None:
        return coverage_row(host, source, rel, None, None, None, None, f"no parser for source {source!r}")
    counts: dict[str, int] = {}

    def to_sink(table: str, df: pl.DataFrame) -> None:
        counts[table] = counts.get(table, 0) + df.height
        sink.write(table, df, host)

    try:
        _, res = parse_path(data, source, ctx, sink=to_sink)
    except Exception as exc:  # noqa: BLE001 - a broken parser or file must not stop the rest
        last = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" at {Path(last[0].filename).name}:{last[0].lineno}" if last else ""
        return coverage_row(host, source, rel, int(mod.VERSION), None, None, counts or None,
                         f"{type(exc).__name__}: {str(exc)[:300]}{where}")
    sink.write("unparsed", res.unparsed, host)
    for t in mod.TABLES:
        counts.setdefault(t, 0)
    return coverage_row(host, source, rel, int(mod.VERSION), res.lines, res.unparsed.height, dict(sorted(counts.items())), None,
                        int(res.meta.get("truncated_lines", 0)), skipped_lines(res.meta))


def ingest_host(root: Path, host: str, sink: TableSink, derived: HostFacts, coverage: list[dict], progress=None,
                 raw: list[tuple[str, str, Path | bytes]] | None = None) -> None:
    """Every raw file of one host into `sink` (its coverage rows appended to `coverage`): the files
    under ``hosts/<host>/raw/``, or `raw` = [(source, rel, bytes or path)] read from the archive."""
    hdir = root / HOSTS_DIR / host
    info, info_err = read_json(hdir / "host.json")
    ctx0 = ParseContext(host=host, file=f"{HOSTS_DIR}/{host}/commands.jsonl")
    entries: list[dict] = []
    cmd_path = hdir / "commands.jsonl"
    if cmd_path.is_file() and cmd_path.stat().st_size:
        data = cmd_path.read_bytes()
        cmds, bad, entries = ct.parse_commands(data, ctx0)
        sink.write("commands", cmds, host)
        sink.write("unparsed", bad, host)
        coverage.append(coverage_row(host, ct.SOURCE, ctx0.file, ct.VERSION, ct.count_lines(data), bad.height,
                                  {"commands": cmds.height}, None))
    if info_err and info_err != "host.json missing":
        coverage.append(coverage_row(host, ct.SOURCE, f"{HOSTS_DIR}/{host}/host.json", ct.VERSION, None, None, None, info_err))
    sink.write("nics", ct.nics_frame(host, info), host)
    starts = capture_starts(host, entries)
    argvs = capture_argvs(entries)
    files = [(source, path.relative_to(root).as_posix(), path) for source, path in raw_files(hdir / "raw")] \
        if raw is None else raw
    for source, rel, data in files:
        path = PurePosixPath(rel)
        if source == ct.SOURCE and path.name in CLOCK_FILES:
            continue
        source = routed_source(source, data)
        ctx = parse_context(host, rel, source, path, info, starts, argvs)
        if progress:
            progress(f"parsing {rel}")
        cov = parse_raw(sink, host, source, data, rel, ctx)
        if cov:
            coverage.append(cov)
    for t in HOST_TABLES:
        sink.ensure(t, host)
    derived.by_host.setdefault(host, {})["_info"] = info


def host_job(root: str, host: str, out: str, raw: list | None = None, progress=None) -> tuple[list[dict], dict, dict]:
    """One host's tables into `out` (same layout as tables/); in a worker process or in this one."""
    sink = TableSink(Path(out))
    derived = HostFacts()
    hot = nic_derived.HotRows(host)
    sink.listeners += [derived, hot]
    coverage: list[dict] = []
    try:
        ingest_host(Path(root), host, sink, derived, coverage, progress, raw=raw)
    finally:
        sink.close()
    nic_derived.prebuild(Path(out), host, hot)  # the open's NIC intervals of this host, built here
    return coverage, derived.by_host, sink.rows
