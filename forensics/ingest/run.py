"""Bundle-level ingest: every raw file of every host -> ``tables/<table>/host=<host>/part-0.parquet``.

For each host listed in the manifest, each file under ``hosts/<host>/raw/<source>/`` is parsed by
the registered source of that name, with a ParseContext built from host.json (time zone, boot
time) and commands.jsonl (capture time = start of the command that wrote the file), plus the
hints the file's name gives (declared by the source: ``{"iface": <name>}`` for
``ethtool/<iface>.txt``). Raw files that did not come from the collector
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

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import polars as pl

from forensics import schema, sources
from forensics.bundle import footers, scratch, trust
from forensics.bundle.errors import BundleError
from forensics.bundle.manifest import read_manifest
from forensics.ingest import collector_tables as ct
from forensics.ingest.archive import read_plan
from forensics.ingest.host import ingest_host
from forensics.ingest.hostfacts import HostFacts
from forensics.ingest.pool import ingest_archive, ingest_parallel, processes_for
from forensics.ingest.sink import TableSink
from forensics.layout import ARCHIVE_MEMBERS, TABLES_DIR, WORK_PREFIXES


META = "_meta.json"


def parser_versions() -> dict[str, int]:
    """Versions that tables built now carry: every registered source, the collector tables, and the
    reading of pastes without their quote or indent prefix (forensics.sources._quote), and of mail
    bodies stored quoted-printable (forensics.sources._mail_qp)."""
    from forensics.sources import _mail_qp, _quote

    out = {name: int(mod.VERSION) for name, mod in sources.registry().items()}
    out[ct.SOURCE] = ct.VERSION
    out[_quote.VERSION_KEY] = _quote.VERSION
    out[_mail_qp.VERSION_KEY] = _mail_qp.VERSION
    return out


def ingest_bundle(root_dir: Path | str, progress=None, processes: int | None = None,
                  archive: Path | str | None = None, map_hosts=None) -> dict:
    """Parse every raw file of the bundle tree at `root_dir` into its ``tables/`` folder.

    Hosts are parsed in worker processes when the bundle is big and there are several CPUs
    (`processes`, or ``$FORENSICS_INGEST_PROCESSES``, overrides the choice; 1 = in this process).
    A tree the cache extracted without its raw files (an ARCHIVE_MEMBERS list) needs its `archive`.
    `map_hosts(root, hosts, source, work)` (an engine's map step, :mod:`forensics.engine.parse`)
    instead parses the hosts elsewhere: it returns {host index: :func:`host_job`'s result} with
    each host's tables under ``<work>/<index>``; `source` is None (raw files on disk) or
    (archive path, its member plan). The results merge here in manifest order as the pool's do.
    Returns a summary: {"hosts": [...], "files": n, "errors": [{file, error}], "rows": {table: n}}.
    """
    root = Path(root_dir)
    raw_digest = trust.raw_digest(root)  # before parsing: a file changed meanwhile means parse again
    manifest = read_manifest(root)
    hosts = list(manifest["hosts"])
    if archive is None and (root / ARCHIVE_MEMBERS).exists():  # (whatever it holds: a folder's is not ours)
        raise BundleError(f"{root}: has {ARCHIVE_MEMBERS}, the cache's list of raw files left in a bundle archive; "
                          "open that archive instead, or remove the file")
    plan = read_plan(root, hosts)
    tables_dir = root / TABLES_DIR
    scratch.sweep(root, WORK_PREFIXES)  # what killed runs left here (never a folder of a run in progress)
    tmp = scratch.make(root, ".tables-")
    sink = TableSink(tmp)
    derived = HostFacts()
    sink.listeners.append(derived)
    coverage: list[dict] = []
    try:
        from concurrent.futures.process import BrokenProcessPool

        n = processes if processes is not None else processes_for(root, hosts, plan)
        if map_hosts is not None:
            _merge_mapped(root, hosts, map_hosts(str(root), hosts, None if plan is None else (str(archive), plan),
                                                 str(tmp / ".hosts")), tmp, sink, derived, coverage,
                          on_disk=plan is None)
        for attempt in (() if map_hosts is not None else (n, 1)):
            try:
                if plan is not None:
                    ingest_archive(root, hosts, Path(archive), plan, tmp, sink, derived, coverage, attempt, progress)
                elif attempt > 1:
                    ingest_parallel(root, hosts, tmp, sink, derived, coverage, attempt, progress)
                else:
                    for host in hosts:
                        ingest_host(root, host, sink, derived, coverage, progress)
                break
            except BrokenProcessPool:  # a worker died (memory, or a main module without a __main__ guard):
                sink.close()           # once more in this process
                scratch.remove(tmp)
                tmp = scratch.make(root, ".tables-")
                sink, derived, coverage = TableSink(tmp), HostFacts(), []
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
        meta[trust.FOOTERS] = footers.record(tmp)  # sealed with the rest: opening reads no footer
        meta = trust.seal(meta, tmp, raw_digest)  # only tables built here, from these raw files, are reused
        (tmp / META).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        old = None
        if tables_dir.exists():
            old = scratch.make(root, ".tables-old-", create=False)
            os.replace(tables_dir, old)
        os.replace(tmp, tables_dir)
        scratch.release(tmp)
        if old is not None:
            scratch.remove(old)
    except BaseException:
        try:
            sink.close()
        except Exception:  # noqa: BLE001
            pass
        scratch.remove(tmp)
        raise
    errors = [{"file": c["file"], "error": c["error"]} for c in coverage if c["error"]]
    return {"hosts": hosts, "files": len(coverage), "errors": errors, "rows": sink.table_rows()}


def _merge_mapped(root: Path, hosts: list[str], results: dict, tmp: Path, sink: TableSink, derived: HostFacts,
                  coverage: list[dict], on_disk: bool) -> None:
    """The results of an engine's map step merged in manifest order (a host it returned nothing for
    is parsed here: from disk, or with no raw files when they were left in the archive, whose
    stream then found none of it)."""
    from forensics.ingest.host import host_job
    from forensics.ingest.pool import merge_host

    work = tmp / ".hosts"
    try:
        for i, host in enumerate(hosts):
            result = results.get(i)
            if result is None:
                result = host_job(str(root), host, str(work / str(i)), raw=None if on_disk else [])
            merge_host(result, work / str(i), tmp, sink, derived, coverage)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _created_by() -> str:
    import forensics

    return f"forensics {forensics.__version__}"


def tables_current(root: Path | str) -> bool:
    """Whether ``tables/`` was built on this machine by parsers at least as new as the registered
    ones, from the raw files as they are now, and is whole (see :mod:`forensics.bundle.trust`):
    a ``tables/`` folder shipped inside a bundle is never used as it is."""
    return trust.current(Path(root), parser_versions())