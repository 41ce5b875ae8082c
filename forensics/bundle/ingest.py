"""Bundle-level ingest: every raw file of every host -> ``tables/<table>/host=<host>/part-0.parquet``.

For each host listed in the manifest, each file under ``hosts/<host>/raw/<source>/`` is parsed by
the registered source of that name, with a ParseContext built from host.json (time zone, boot
time) and commands.jsonl (capture time = start of the command that wrote the file), plus
``{"iface": <name>}`` for ``ethtool/<iface>.txt``. Raw files that did not come from the collector
(loose files, sosreports, bug reports) are listed in host.json ``files`` (``{"<path in bundle>":
{"origin": ..., "original": ..., "hints": {...}, "capture_time": ...}}``), whose hints replace the
file-name rule. Files under ``raw/collector/`` are the
collector's own (``processes.jsonl`` -> ``processes``/``process_env``; the clock reference files
are provenance for host.json). host.json and commands.jsonl give ``hosts``, ``nics`` and
``commands``. Every parsed file gets one ``coverage`` row; a file that cannot be parsed at all
(no parser of that name yet, a parser exception) is recorded in ``coverage.error`` and never stops
the rest. Lines no parser could use land in ``unparsed``.

Partitions follow the ``host`` column of the rows (DuckDB's Hive partitioning takes the host
from the directory name, so the directory must match what the rows say): a job log captured on
node01 holding NCCL lines of node02 yields rows under ``host=node02``. One file per table per host.

The tables are written to a temporary folder and renamed to ``tables/`` at the end, with
``tables/_meta.json`` = ``{"parser_versions": {...}, "created_by": ..., "created_at": ...}``.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
import tempfile
import traceback
from pathlib import Path, PurePosixPath
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from forensics import schema
from forensics.bundle import collector_tables as ct
from forensics.bundle.errors import BundleError
from forensics.bundle.read import iter_members, read_errors, read_manifest, read_member, read_member_into
from forensics.ingest import arrow_rows, table_writer
from forensics.layout import ARCHIVE_MEMBERS, HOSTS_DIR, TABLES_DIR
from forensics import sources
from forensics.sources import ParseContext

META = "_meta.json"
COLLECTOR_FILES = {"processes.jsonl": ct.parse_processes}
CLOCK_FILES = ("chronyc-tracking.txt", "timedatectl.txt")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def parser_versions() -> dict[str, int]:
    """Versions that tables built now carry: every registered source, plus the collector tables."""
    out = {name: int(mod.VERSION) for name, mod in sources.registry().items()}
    out[ct.SOURCE] = ct.VERSION
    return out


def partition_name(host: str | None, fallback: str) -> str:
    h = host if host else fallback
    safe = _UNSAFE.sub("_", h)
    return "_" if safe in ("", ".", "..") else safe


class TableSink:
    """Streams frames into ``<out>/<table>/host=<host>/part-0.parquet``, split by the rows' host."""

    def __init__(self, out: Path):
        self.out = out
        self.writers: dict[tuple[str, str], pq.ParquetWriter] = {}
        self.rows: dict[tuple[str, str], int] = {}
        self.listeners: list = []

    def _writer(self, table: str, part: str) -> pq.ParquetWriter:
        key = (table, part)
        w = self.writers.get(key)
        if w is None:
            d = self.out / table / f"host={part}"
            d.mkdir(parents=True, exist_ok=True)
            w = self.writers[key] = table_writer(d / "part-0.parquet", table)
            self.rows[key] = 0
        return w

    def write(self, table: str, df: pl.DataFrame, default_host: str) -> None:
        for fn in self.listeners:
            fn(table, df)
        if "host" in df.columns:
            df = df.with_columns(pl.col("host").fill_null(default_host))
            parts = df.partition_by("host", as_dict=True, maintain_order=True) if df.height else {(default_host,): df}
        else:
            parts = {(default_host,): df}
        for (host,), part in parts.items():
            w = self._writer(table, partition_name(host, default_host))
            if part.height:
                w.write_table(arrow_rows(part, table))
                self.rows[(table, partition_name(host, default_host))] += part.height

    def ensure(self, table: str, host: str) -> None:
        """Make sure an (empty) file exists for `table` of `host`."""
        self._writer(table, partition_name(host, host))

    def close(self) -> None:
        for w in self.writers.values():
            w.close()

    def table_rows(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for (t, _), n in self.rows.items():
            out[t] = out.get(t, 0) + n
        return dict(sorted(out.items()))


def _read_json(path: Path) -> tuple[dict, str | None]:
    if not path.is_file():
        return {}, f"{path.name} missing"
    try:
        obj = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        return {}, f"{path.name}: not valid JSON ({exc.msg})"
    if not isinstance(obj, dict):
        return {}, f"{path.name}: not a JSON object"
    return obj, None


class _Derived:
    """Facts for the hosts table gathered from frames as they stream past."""

    def __init__(self):
        self.by_host: dict[str, dict[str, Any]] = {}

    def __call__(self, table: str, df: pl.DataFrame) -> None:
        if not df.height or "host" not in df.columns:
            return
        if table == "gpus":
            for host, part in df.partition_by("host", as_dict=True).items():
                d = self.by_host.setdefault(host[0], {})
                d.setdefault("gpus", set()).update(x for x in part["gpu"].to_list() if x is not None)
                for col in ("driver_version", "cuda_version"):
                    vals = [v for v in part[col].to_list() if v]
                    if vals and not d.get(col):
                        d[col] = vals[0]
        elif table == "numa_nodes":
            for host, part in df.partition_by("host", as_dict=True).items():
                d = self.by_host.setdefault(host[0], {})
                d.setdefault("nodes", set()).update(x for x in part["node"].to_list() if x is not None)
        elif table == "nccl_config":
            ver = df.filter(pl.col("key").is_in(["version", "nccl_version"]) & pl.col("value").is_not_null())
            for host, value in ver.select("host", "value").unique(subset="host", keep="first").iter_rows():
                self.by_host.setdefault(host, {}).setdefault("nccl_version", value)

    def for_host(self, host: str) -> dict:
        d = self.by_host.get(host, {})
        return {
            "driver_version": d.get("driver_version"), "cuda_version": d.get("cuda_version"),
            "nccl_version": d.get("nccl_version"),
            "gpu_count": len(d["gpus"]) if d.get("gpus") else None,
            "numa_nodes": len(d["nodes"]) if d.get("nodes") else None,
        }


def _coverage(host: str, source: str, file: str, version: int | None, lines: int | None, unparsed: int | None,
              rows: dict | None, error: str | None) -> dict:
    return {"host": host, "source": source, "file": file, "parser_version": version, "lines": lines,
            "unparsed": unparsed, "rows": None if rows is None else json.dumps(rows, sort_keys=True), "error": error}


def _raw_files(raw: Path) -> list[tuple[str, Path]]:
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


def _walk_key(rel: str) -> tuple:
    """Sort key putting a host's raw member names (``hosts/<h>/raw/<source>/...``) in the order
    :func:`_raw_files` walks them on disk: sources by name, then in each folder its files by name
    before its subfolders by name."""
    parts = rel.split("/")[3:]
    return tuple((1, p) for p in parts[:-1]) + ((0, parts[-1]),)


def _context(host: str, rel: str, source: str, path: PurePosixPath | Path, info: dict, starts: dict[str, dt.datetime]) -> ParseContext:
    capture = starts.get(rel)
    boot = ct.parse_time(info.get("boot_time"))
    tz = info.get("timezone") if isinstance(info.get("timezone"), str) and info.get("timezone") else None
    if tz:
        try:
            from forensics.timeutil import check_zone

            check_zone(tz)
        except ValueError:
            tz = None
    wall = ct.parse_time((info.get("clock") or {}).get("wall")) if isinstance(info.get("clock"), dict) else None
    ref = capture or wall or boot
    hints: dict[str, Any] = {}
    files = info.get("files") if isinstance(info.get("files"), dict) else {}
    extra = files.get(rel) if isinstance(files.get(rel), dict) else None
    if extra is None:
        extra = {}
        if source == "ethtool":  # collector layout: raw/ethtool/<iface>.txt
            name = path.name
            hints["iface"] = name[: -len(".txt")] if name.endswith(".txt") else name
    if isinstance(extra.get("hints"), dict):
        hints.update(extra["hints"])
    if extra.get("capture_time") and capture is None:
        capture = ct.parse_time(extra.get("capture_time"))
    return ParseContext(host=host, file=rel, tz=tz, boot_time=boot, capture_time=capture,
                        year=ref.year if ref else None, hints=hints)


def _capture_starts(host: str, entries: list[dict]) -> dict[str, dt.datetime]:
    starts: dict[str, dt.datetime] = {}
    for e in entries:
        rf, start = e.get("raw_file"), ct.parse_time(e.get("start"))
        if isinstance(rf, str) and start is not None:
            if rf not in starts or start < starts[rf]:
                starts[rf] = start
    return starts


def _parse_raw(sink: TableSink, host: str, source: str, data: Path | bytes, rel: str, ctx: ParseContext) -> dict:
    """One raw file (on disk, or its bytes read from the archive) into `sink`; its coverage row."""
    from forensics.ingest import parse_path

    if source == ct.SOURCE:
        fn = COLLECTOR_FILES.get(rel.rsplit("/", 1)[-1])
        if fn is None:
            return {}
        try:
            res = fn(data if isinstance(data, bytes) else data.read_bytes(), ctx)
        except Exception as exc:  # noqa: BLE001 - recorded, never stops the ingest
            return _coverage(host, source, rel, ct.VERSION, None, None, None, f"{type(exc).__name__}: {exc}")
        for t, df in res.tables.items():
            sink.write(t, df, host)
        sink.write("unparsed", res.unparsed, host)
        return _coverage(host, source, rel, ct.VERSION, res.lines, res.unparsed.height, res.rows(), None)
    mod = sources.registry().get(source)
    if mod is None:
        return _coverage(host, source, rel, None, None, None, None, f"no parser for source {source!r}")
    counts: dict[str, int] = {}

    def to_sink(table: str, df: pl.DataFrame) -> None:
        counts[table] = counts.get(table, 0) + df.height
        sink.write(table, df, host)

    try:
        _, res = parse_path(data, source, ctx, sink=to_sink)
    except Exception as exc:  # noqa: BLE001 - a broken parser or file must not stop the rest
        last = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" at {Path(last[0].filename).name}:{last[0].lineno}" if last else ""
        return _coverage(host, source, rel, int(mod.VERSION), None, None, counts or None,
                         f"{type(exc).__name__}: {str(exc)[:300]}{where}")
    sink.write("unparsed", res.unparsed, host)
    for t in mod.TABLES:
        counts.setdefault(t, 0)
    return _coverage(host, source, rel, int(mod.VERSION), res.lines, res.unparsed.height, dict(sorted(counts.items())), None)


def _ingest_host(root: Path, host: str, sink: TableSink, derived: _Derived, coverage: list[dict], progress=None,
                 raw: list[tuple[str, str, Path | bytes]] | None = None) -> None:
    """Every raw file of one host into `sink` (its coverage rows appended to `coverage`): the files
    under ``hosts/<host>/raw/``, or `raw` = [(source, rel, bytes or path)] read from the archive."""
    hdir = root / HOSTS_DIR / host
    info, info_err = _read_json(hdir / "host.json")
    ctx0 = ParseContext(host=host, file=f"{HOSTS_DIR}/{host}/commands.jsonl")
    entries: list[dict] = []
    cmd_path = hdir / "commands.jsonl"
    if cmd_path.is_file() and cmd_path.stat().st_size:
        data = cmd_path.read_bytes()
        cmds, bad, entries = ct.parse_commands(data, ctx0)
        sink.write("commands", cmds, host)
        sink.write("unparsed", bad, host)
        coverage.append(_coverage(host, ct.SOURCE, ctx0.file, ct.VERSION, ct.count_lines(data), bad.height,
                                  {"commands": cmds.height}, None))
    if info_err and info_err != "host.json missing":
        coverage.append(_coverage(host, ct.SOURCE, f"{HOSTS_DIR}/{host}/host.json", ct.VERSION, None, None, None, info_err))
    sink.write("nics", ct.nics_frame(host, info), host)
    starts = _capture_starts(host, entries)
    files = [(source, path.relative_to(root).as_posix(), path) for source, path in _raw_files(hdir / "raw")] \
        if raw is None else raw
    for source, rel, data in files:
        path = PurePosixPath(rel)
        if source == ct.SOURCE and path.name in CLOCK_FILES:
            continue
        ctx = _context(host, rel, source, path, info, starts)
        if progress:
            progress(f"parsing {rel}")
        cov = _parse_raw(sink, host, source, data, rel, ctx)
        if cov:
            coverage.append(cov)
    for t in HOST_TABLES:
        sink.ensure(t, host)
    derived.by_host.setdefault(host, {})["_info"] = info


HOST_TABLES = ("unparsed", "commands", "nics", "processes", "process_env")  # a file for every host, rows or not
PARALLEL_MIN_BYTES = 32 << 20  # below this much raw data, starting worker processes costs more than it saves
MAX_PROCESSES = 8


def _host_job(root: str, host: str, out: str, raw: list | None = None, progress=None) -> tuple[list[dict], dict, dict]:
    """One host's tables into `out` (same layout as tables/); in a worker process or in this one."""
    sink = TableSink(Path(out))
    derived = _Derived()
    sink.listeners.append(derived)
    coverage: list[dict] = []
    try:
        _ingest_host(Path(root), host, sink, derived, coverage, progress, raw=raw)
    finally:
        sink.close()
    return coverage, derived.by_host, sink.rows


# ---------------------------------------------------------------- raw files read from the archive
#
# A bundle archive opened through the cache is extracted without its raw files (see
# forensics.bundle.cache): writing GBs of them to disk cost more than parsing them. Their names and
# sizes are kept in ARCHIVE_MEMBERS, and ingest reads them from the archive: each worker process
# streams the archive, claims the next host nobody has claimed (a shared array), holds that host's
# raw files in memory (a big one goes to a temporary file, which keeps memory bounded) and parses
# them once they are all read; the other workers skip past it meanwhile.

SPILL_BYTES = 64 << 20         # a raw file above this is parsed from a temporary file ...
HOST_BUFFER_BYTES = 256 << 20  # ... as are a host's further files once this much of it is in memory

_CLAIMS = None  # in worker processes: shared arrays (one byte per host) set by _init_worker
_DONE = None


def read_plan(root: Path, hosts: list[str]) -> tuple[str, dict[str, list[tuple[str, int]]]] | None:
    """(member-name prefix of the bundle root, {host: [(rel, size), ...]}) of the raw files that a
    cached bundle left in its archive, hosts in manifest order; None when they are all on disk."""
    path = root / ARCHIVE_MEMBERS
    if not path.exists():
        return None
    try:
        obj = json.loads(path.read_text())
        prefix, members = obj["prefix"], obj["members"]
    except (OSError, ValueError, KeyError, TypeError):
        raise BundleError(f"{path}: unreadable list of archive members (clear the cache folder)") from None
    wanted = set(hosts)
    by_host: dict[str, list[tuple[str, int]]] = {}
    for rel, size in members:
        parts = rel.split("/")
        if len(parts) >= 5 and parts[0] == HOSTS_DIR and parts[2] == "raw" and parts[1] in wanted:
            by_host.setdefault(parts[1], []).append((rel, int(size)))
    return prefix, {h: by_host[h] for h in hosts if h in by_host}


def _stream_hosts(archive: Path, prefix: str, by_host: dict[str, list[tuple[str, int]]], claim, spill: Path):
    """(host, [(source, rel, bytes or path)] in walk order) for each host `claim(host)` accepts,
    as soon as all its raw files have been read from `archive`."""
    want = {prefix + rel: (host, size) for host, members in by_host.items() for rel, size in members}
    held: dict[str, list] = {}
    held_bytes: dict[str, int] = {}
    skipped: set[str] = set()
    seen: set[str] = set()
    spilled = 0
    errors = tuple(e for e in read_errors() if e is not OSError)  # (a full disk while spilling is not the archive's fault)
    for member, name, tar in iter_members(archive):
        hit = want.get(name)
        if hit is None or hit[0] in skipped:
            continue
        host, size = hit
        if not member.isreg() or member.size != size:
            raise BundleError(f"{archive}: changed since it was extracted ({name!r})")
        if host not in held:
            if host in seen or not claim(host):
                skipped.add(host)
                continue
            seen.add(host)
            held[host], held_bytes[host] = [], 0
        rel = name[len(prefix):]
        try:
            if size > SPILL_BYTES or held_bytes[host] + size > HOST_BUFFER_BYTES:
                data: Path | bytes = spill / str(spilled)
                spilled += 1
                with open(data, "wb") as out:
                    read_member_into(tar, member, name, out.write)
            else:
                data = read_member(tar, member, name)
                held_bytes[host] += size
        except errors as exc:
            raise BundleError(f"{archive}: unreadable archive: {exc}") from None
        held[host].append((rel.split("/")[3], rel, data))
        if len(held[host]) == len(by_host[host]):
            files = sorted(held.pop(host), key=lambda f: _walk_key(f[1]))
            yield host, files
            for _, _, d in files:
                if isinstance(d, Path):
                    d.unlink(missing_ok=True)
            del files  # (not held while the next host is read)
    missing = sorted(held) + sorted(set(by_host) - seen - skipped)
    if missing:
        raise BundleError(f"{archive}: changed since it was extracted (raw files of {missing[0]} missing)")


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


def _archive_job(archive: str, root: str, prefix: str, by_host: dict, hosts: list[str], work: str,
                 progress=None) -> list[tuple[int, list[dict], dict, dict]]:
    """Stream `archive`, parsing each host claimed on the way into ``<work>/<host index>``."""
    index = {h: i for i, h in enumerate(hosts)}
    out = []
    spill = Path(tempfile.mkdtemp(prefix=".spill-", dir=work))
    try:
        for host, files in _stream_hosts(Path(archive), prefix, by_host, lambda h: _claim(index[h]), spill):
            i = index[host]
            out.append((i, *_host_job(root, host, str(Path(work) / str(i)), raw=files, progress=progress)))
            del files
            if _DONE is not None:
                _DONE[i] = 1
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    return out


@contextlib.contextmanager
def _worker_pool(n: int, **kw):
    """A pool of `n` spawned worker processes (polars must not be forked), each with its share of
    the CPUs for polars."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    saved = os.environ.get("POLARS_MAX_THREADS")
    os.environ["POLARS_MAX_THREADS"] = str(max(1, (os.cpu_count() or 1) // n))  # inherited by the workers
    try:
        with ProcessPoolExecutor(max_workers=n, mp_context=get_context("spawn"), **kw) as pool:
            yield pool
    finally:
        if saved is None:
            os.environ.pop("POLARS_MAX_THREADS", None)
        else:
            os.environ["POLARS_MAX_THREADS"] = saved


def _merge_host(result: tuple[list[dict], dict, dict], part: Path, tmp: Path, sink: TableSink, derived: _Derived,
                coverage: list[dict]) -> None:
    """One host's job result and its table files (under `part`) into the bundle's (hosts in manifest order)."""
    cov, by_host, rows = result
    coverage.extend(cov)
    _merge_derived(derived, by_host)
    for key, v in rows.items():
        sink.rows[key] = sink.rows.get(key, 0) + v
    _move_tables(part, tmp)


def _ingest_archive(root: Path, hosts: list[str], archive: Path, plan: tuple[str, dict], tmp: Path, sink: TableSink,
                    derived: _Derived, coverage: list[dict], n: int, progress=None) -> None:
    """Every host's raw files read from `archive` (see above), in `n` worker processes or in this
    one; results merged in manifest order, as by the ingest from disk."""
    from concurrent.futures import FIRST_EXCEPTION, wait
    from multiprocessing import get_context

    prefix, by_host = plan
    work = Path(tempfile.mkdtemp(prefix=".hosts-", dir=root))
    results: dict[int, tuple] = {}
    try:
        jobs = min(n, len(by_host))
        if jobs > 1:
            mp = get_context("spawn")
            claims, done = mp.Array("b", len(hosts)), mp.Array("b", len(hosts))
            with _worker_pool(jobs, initializer=_init_worker, initargs=(claims, done)) as pool:
                futures = [pool.submit(_archive_job, str(archive), str(root), prefix, by_host, hosts, str(work))
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
            for r in _archive_job(str(archive), str(root), prefix, by_host, hosts, str(work), progress):
                results[r[0]] = r[1:]
        for i, host in enumerate(hosts):
            if i not in results:  # a host without raw files
                results[i] = _host_job(str(root), host, str(work / str(i)), raw=[])
            _merge_host(results[i], work / str(i), tmp, sink, derived, coverage)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _merge_derived(into: _Derived, by_host: dict) -> None:
    for host, d in by_host.items():
        cur = into.by_host.setdefault(host, {})
        for k, v in d.items():
            if isinstance(v, set):
                cur.setdefault(k, set()).update(v)
            else:
                cur.setdefault(k, v)


def _move_tables(src: Path, dest: Path) -> None:
    """Move a worker's table files into the final folder; a (table, host) file that exists already
    (rows of another host found in this host's files) gets this one's rows appended."""
    for f in sorted(src.glob("*/host=*/part-0.parquet")):
        target = dest / f.relative_to(src)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(f, target)
            continue
        merged = pa.concat_tables([pq.read_table(target), pq.read_table(f)])
        pq.write_table(merged, target, compression="zstd")


def _raw_bytes(root: Path, hosts: list[str]) -> int:
    total = 0
    for host in hosts:
        for _, p in _raw_files(root / HOSTS_DIR / host / "raw"):
            try:
                total += p.stat().st_size
            except OSError:
                pass
    return total


def _processes(root: Path, hosts: list[str], plan: tuple[str, dict] | None = None) -> int:
    """How many worker processes to parse `hosts` with (1: in this process)."""
    env = os.environ.get("FORENSICS_INGEST_PROCESSES")
    if env is not None:
        try:
            return max(1, min(int(env), len(hosts), MAX_PROCESSES))
        except ValueError:
            pass
    n = min(os.cpu_count() or 1, len(hosts), MAX_PROCESSES)
    raw = sum(size for members in plan[1].values() for _, size in members) if plan else _raw_bytes(root, hosts)
    if n < 2 or raw < PARALLEL_MIN_BYTES:
        return 1
    return n


def _ingest_parallel(root: Path, hosts: list[str], tmp: Path, sink: TableSink, derived: _Derived,
                     coverage: list[dict], n: int, progress=None) -> None:
    """Hosts parsed in `n` worker processes, results merged in manifest order, so the tables are
    those of the serial ingest."""
    work = Path(tempfile.mkdtemp(prefix=".hosts-", dir=root))
    try:
        with _worker_pool(n) as pool:
            futures = [pool.submit(_host_job, str(root), host, str(work / str(i))) for i, host in enumerate(hosts)]
            for i, (host, fut) in enumerate(zip(hosts, futures)):
                _merge_host(fut.result(), work / str(i), tmp, sink, derived, coverage)
                if progress:
                    progress(f"parsing {HOSTS_DIR}/{host}/raw/ (host {i + 1} of {len(hosts)} done)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ingest_bundle(root_dir: Path | str, progress=None, processes: int | None = None,
                  archive: Path | str | None = None) -> dict:
    """Parse every raw file of the bundle tree at `root_dir` into its ``tables/`` folder.

    Hosts are parsed in worker processes when the bundle is big and there are several CPUs
    (`processes`, or ``$FORENSICS_INGEST_PROCESSES``, overrides the choice; 1 = in this process).
    A tree the cache extracted without its raw files (an ARCHIVE_MEMBERS list) needs its `archive`.
    Returns a summary: {"hosts": [...], "files": n, "errors": [{file, error}], "rows": {table: n}}.
    """
    root = Path(root_dir)
    manifest = read_manifest(root)
    hosts = list(manifest["hosts"])
    plan = read_plan(root, hosts)
    if plan is not None and archive is None:
        raise BundleError(f"{root}: its raw files were left in the bundle archive; open the archive instead")
    tables_dir = root / TABLES_DIR
    tmp = Path(tempfile.mkdtemp(prefix=".tables-", dir=root))
    sink = TableSink(tmp)
    derived = _Derived()
    sink.listeners.append(derived)
    coverage: list[dict] = []
    try:
        from concurrent.futures.process import BrokenProcessPool

        n = processes if processes is not None else _processes(root, hosts, plan)
        for attempt in (n, 1):
            try:
                if plan is not None:
                    _ingest_archive(root, hosts, Path(archive), plan, tmp, sink, derived, coverage, attempt, progress)
                elif attempt > 1:
                    _ingest_parallel(root, hosts, tmp, sink, derived, coverage, attempt, progress)
                else:
                    for host in hosts:
                        _ingest_host(root, host, sink, derived, coverage, progress)
                break
            except BrokenProcessPool:  # a worker died (memory, or a main module without a __main__ guard):
                sink.close()           # once more in this process
                shutil.rmtree(tmp, ignore_errors=True)
                tmp = Path(tempfile.mkdtemp(prefix=".tables-", dir=root))
                sink, derived, coverage = TableSink(tmp), _Derived(), []
                sink.listeners.append(derived)
        for host in hosts:
            info = derived.by_host.get(host, {}).get("_info", {})
            sink.write("hosts", ct.hosts_frame(host, info, derived.for_host(host)), host)
        cov_df = pl.DataFrame(coverage, schema=schema.polars_schema("coverage"))
        for host in hosts:
            sink.write("coverage", cov_df.filter(pl.col("host") == host), host)
        sink.close()
        meta = {
            "parser_versions": parser_versions(),
            "created_by": _created_by(),
            "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "hosts": hosts,
        }
        (tmp / META).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        old = None
        if tables_dir.exists():
            old = root / f".tables-old-{os.getpid()}"
            os.replace(tables_dir, old)
        os.replace(tmp, tables_dir)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        try:
            sink.close()
        except Exception:  # noqa: BLE001
            pass
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    errors = [{"file": c["file"], "error": c["error"]} for c in coverage if c["error"]]
    return {"hosts": hosts, "files": len(coverage), "errors": errors, "rows": sink.table_rows()}


def _created_by() -> str:
    import forensics

    return f"forensics {forensics.__version__}"


def tables_current(root: Path | str) -> bool:
    """Whether ``tables/`` exists and was built by parsers at least as new as the registered ones."""
    meta_path = Path(root) / TABLES_DIR / META
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        return False
    have = meta.get("parser_versions") if isinstance(meta, dict) else None
    if not isinstance(have, dict):
        return False
    for name, version in parser_versions().items():
        v = have.get(name)
        if not isinstance(v, int) or v < version:
            return False
    return True


__all__ = ["ingest_bundle", "tables_current", "parser_versions"]
