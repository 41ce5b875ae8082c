"""Derived relations cached as Parquet beside the parsed tables, so big bundles open and query fast.

Some views need window functions over every row of a big table (per-interval NIC rates over all
``ethtool -S`` counters, GPU clock-event episodes over every sample, NCCL line placement, the
events timeline built from all of them). Their SQL definitions live in ``queries/views/`` as
relations of schema ``raw`` (``raw.nic_interval_rows``, ``raw.gpu_episode_rows``,
``raw.nccl_log_placed``, ``raw.events_local``, ``raw.nic_summary``); this module materialises them once into
``tables/_derived/<name>/`` and then points the relation at those files. The user-facing views on
top (``nic_rates``, ``gpu_episodes``, ``nccl_log``, ``events``) are the same either way, and add
what depends on the clock offsets (``ts_aligned``) at query time.

A cached relation is valid while its key matches: a hash of the files it is derived from (path,
size, modification time), of the view definitions and of :data:`DERIVED_VERSION`. Re-parsing a
bundle replaces ``tables/`` (and with it ``_derived/``). Building happens only for big inputs
(``mode="auto"``: a source above :attr:`Item.min_rows` rows), always (``"always"``) or never
(``"never"``); a bundle directory that cannot be written keeps the plain SQL views.

``raw.nic_interval_rows`` and ``raw.nic_summary`` are built with numpy/pyarrow
(:mod:`forensics.nic_intervals`), one host file per thread. Both are kept in ``_derived/nic/`` in
two parts: "hot", the counter classes that detection, the events timeline and the reports read
(:data:`NIC_HOT`), and "rest" (:data:`NIC_REST`: packet counts and the many driver counters no rule
names, 60 % of the rows). Mode ``"lazy"`` (`forensics analyze`) builds only the hot part and leaves
the rest to the SQL definition, one branch per class with its class as a literal, so that a filter
on the hot classes drops those branches unread; the next ``"auto"`` or ``"always"`` open builds the
rest. Likewise ``"lazy"`` leaves the relations no detector reads (:attr:`Item.lazy` false:
``raw.events_local``) to their SQL definitions, and uses them cached where an earlier open built them.
A test checks every mode equals the SQL definitions row for row.

A freshly parsed bundle's hot parts are mostly built already: each parse worker builds its host's
from the rows it held in memory (:mod:`forensics.ingest.nic_derived`), stamped with the file and the
definitions they follow; the open links those in where the stamp still holds and builds the others.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl  # noqa: F401  (re-exported types in tests)
import pyarrow.parquet as pq

from forensics.nic_intervals import (
    INTERVAL_DICT_COLUMNS,
    SUMMARY_INPUT,
    counter_classes,
    counter_names,
    nic_intervals,
    nic_summary,
    read_nic_counters,
)
from forensics.layout import TABLES_DIR

DERIVED_VERSION = 2
DIR = "_derived"
MODES = ("auto", "always", "never", "lazy")
# nic_counter_class() classes: those detection, events and reports read, and the others
NIC_HOT = ("bytes", "drop", "error", "link", "pause", "storm")
NIC_REST = ("other", "packets")
NIC_ITEMS = ("nic_interval_rows", "nic_summary")  # cached together, in _derived/nic/


@dataclass(frozen=True)
class Item:
    name: str                 # relation raw.<name>
    sources: tuple[str, ...]  # tables it is derived from ("*": all of them)
    min_rows: int             # "auto" builds it only when its sources hold at least this many rows
    lazy: bool = True         # "lazy" builds it too (False: no detector reads it; a later "auto" open builds it)


ITEMS = (
    Item("nic_interval_rows", ("nic_counters",), 1_000_000),
    Item("nic_summary", ("nic_counters",), 1_000_000),
    Item("nccl_log_placed", ("nccl_log",), 300_000),
    Item("gpu_episode_rows", ("gpu_samples",), 300_000),
    # the events timeline: read by report, export --perfetto and query, by no detector (on the simulated 64 x 8 GPU
    # x 1 h bundle its build cost `forensics analyze` 3.2 CPU s of 261 from raw, for nothing)
    Item("events_local", ("*",), 1_000_000, lazy=False),
)


def _views_hash() -> str:
    from forensics.db._build import view_files

    h = hashlib.sha1()
    for _, p in view_files():
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _key(item: Item, files: dict[str, list], root: Path, views_hash: str) -> str:
    h = hashlib.sha1(f"{DERIVED_VERSION}|{item.name}|{views_hash}".encode())
    tables = sorted(files) if item.sources == ("*",) else item.sources
    for t in tables:
        for info in files.get(t, []):
            st = info.path.stat()
            h.update(f"{info.path.relative_to(root)}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _rows(item: Item, files: dict[str, list]) -> int:
    tables = files if item.sources == ("*",) else item.sources
    return sum(i.rows for t in tables for i in files.get(t, []))


def attach(con: duckdb.DuckDBPyConnection, root: Path, files: dict[str, list], mode: str = "auto",
           store: Path | None = None) -> list[str]:
    """Point raw.<item> at its cached Parquet (building it when due); returns the cached names.
    ``"lazy"`` is ``"auto"`` except that it builds only the hot part of the NIC relations. `store`:
    where the cache lives instead of ``tables/_derived/`` (a catalog of some hosts only keeps its own)."""
    if mode not in MODES:
        raise ValueError(f"derive mode must be one of {MODES}")
    if mode == "never":
        return []
    base = store if store is not None else root / TABLES_DIR / DIR
    vh = _views_hash()
    used = []
    for item in ITEMS:
        if item.name in NIC_ITEMS:
            if item.name == NIC_ITEMS[0]:
                used += _attach_nic(con, root, files, mode, vh, base)
            continue
        key = _key(item, files, root, vh)
        target = base / item.name
        if _valid(target, key):
            _swap(con, item, target)
            used.append(item.name)
            continue
        if mode in ("auto", "lazy") and _rows(item, files) < item.min_rows or mode == "lazy" and not item.lazy:
            continue
        try:
            _build(con, root, item, files, target, key)
        except (OSError, duckdb.IOException, duckdb.PermissionException):
            if not _valid(target, key):  # (a concurrent open may have built it meanwhile)
                continue  # read-only bundle: the SQL definition stays in place
        _swap(con, item, target)
        used.append(item.name)
    return used


def _attach_nic(con: duckdb.DuckDBPyConnection, root: Path, files: dict[str, list], mode: str, vh: str,
                base: Path) -> list[str]:
    """raw.nic_interval_rows and raw.nic_summary from ``_derived/nic/`` (building the parts due)."""
    item = next(i for i in ITEMS if i.name == NIC_ITEMS[0])
    key = _key(item, files, root, vh)
    target = base / "nic"
    have = _nic_parts(target, key)
    due = [p for p in (("hot",) if mode == "lazy" else ("hot", "rest")) if p not in have]
    if due and (mode == "always" or _rows(item, files) >= item.min_rows):
        try:
            have = _build_nic(con, files, target, key, have, due)
        except (OSError, duckdb.IOException, duckdb.PermissionException):
            have = _nic_parts(target, key)  # read-only bundle (or a concurrent open built them)
    if "hot" not in have or not _swap_nic(con, target, have):
        return []
    return list(NIC_ITEMS)


def _nic_parts(target: Path, key: str) -> list[str]:
    """The parts ("hot", "rest") of ``_derived/nic/`` built for `key` (none when stale)."""
    try:
        meta = json.loads((target / "_key.json").read_text())
    except (OSError, ValueError):
        return []
    parts = meta.get("parts") if meta.get("key") == key else None
    return [p for p in ("hot", "rest") if isinstance(parts, list) and p in parts]


def _build_nic(con, files: dict[str, list], target: Path, key: str, have: list[str], due: list[str]) -> list[str]:
    """Write the `due` parts: per nic_counters file, its interval rows of those classes, sorted
    (``intervals-<part>-<n>.parquet``), and their summary (``summary-<part>-<n>.parquet``)."""
    from forensics.ingest import nic_derived

    infos = files.get("nic_counters", [])
    types = [r[0] for r in con.execute("DESCRIBE SELECT * FROM raw.nic_interval_rows").fetchall()]
    stypes = [r[0] for r in con.execute("DESCRIBE SELECT * FROM raw.nic_summary").fetchall()]
    # the hot parts the parse workers built, where they still match the files and definitions
    hot_done = {}
    if "hot" in due:
        definitions = nic_derived.definitions()
        for n, info in enumerate(infos):
            found = nic_derived.prebuilt(info.path, definitions)
            if found and pq.read_schema(found[0]).names == types and pq.read_schema(found[1]).names == stypes:
                hot_done[n] = found
    names = sorted({n for k, info in enumerate(infos) if "rest" in due or k not in hot_done
                    for n in counter_names(info.path)})
    cls = counter_classes(con, names) if names else {}
    unknown = set(cls.values()) - set(NIC_HOT) - set(NIC_REST)
    if unknown:
        raise AssertionError(f"nic_counter_class() gives classes neither hot nor rest: {sorted(unknown)}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".nic.", dir=target.parent))
    try:
        classes = {"hot": NIC_HOT, "rest": NIC_REST}
        picked = {p: [n for n, c in cls.items() if c in classes[p]] for p in due}

        def one(job):
            n, info = job
            parts = due
            if n in hot_done:  # built by the parse worker: linked in as it is
                for prefix, f in zip(("intervals", "summary"), hot_done[n]):
                    _link(f, tmp / f"{prefix}-hot-{n:05d}.parquet")
                parts = [p for p in due if p != "hot"]
                if not parts:
                    return
            # one part due: only its counters' rows are read on (the others are dropped while reading)
            table = read_nic_counters(info.path, picked[parts[0]], nulls=parts[0] == "rest") if len(parts) == 1 else \
                read_nic_counters(info.path)
            for part in parts:
                out = nic_intervals(table, classes=lambda _names: cls, only=classes[part])
                assert out.column_names == types, (out.column_names, types)
                pq.write_table(out, tmp / f"intervals-{part}-{n:05d}.parquet", compression="zstd",
                               row_group_size=128 * 1024, use_dictionary=INTERVAL_DICT_COLUMNS)
                summary = nic_summary(out.select(SUMMARY_INPUT))
                assert summary.column_names == stypes, (summary.column_names, stypes)
                pq.write_table(summary, tmp / f"summary-{part}-{n:05d}.parquet", compression="zstd")

        with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
            list(pool.map(one, enumerate(infos)))
        parts = sorted(set(have) | set(due), key=("hot", "rest").index)
        (tmp / "_key.json").write_text(json.dumps({"key": key, "version": DERIVED_VERSION, "parts": parts}))
        if have:  # add the new part's files to the valid folder, then its key
            for f in sorted(tmp.glob("*.parquet")):
                os.replace(f, target / f.name)
            os.replace(tmp / "_key.json", target / "_key.json")
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            _replace_dir(tmp, target)
            for legacy in NIC_ITEMS:  # where DERIVED_VERSION 1 kept them
                shutil.rmtree(target.parent / legacy, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return parts


def _link(src: Path, dest: Path) -> None:
    """`dest` the same file as `src` (a hard link; a copy where the file system has none)."""
    try:
        os.link(src, dest)
    except OSError:
        shutil.copyfile(src, dest)


def _replace_dir(tmp: Path, target: Path) -> None:
    """Put the folder `tmp` in place of `target` (the old one moved aside first, then removed)."""
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
        os.replace(target, old / "x")
        shutil.rmtree(old, ignore_errors=True)
    os.replace(tmp, target)


def _sql_copy(con, name: str) -> str:
    """Keep the SQL definition of view raw.<name> as raw.<name>_sql (before a swap replaces it)."""
    sql = con.execute("SELECT sql FROM duckdb_views() WHERE schema_name = 'raw' AND view_name = $n", {"n": name}).fetchone()
    body = re.sub(r"^CREATE VIEW \S+ AS ", "", sql[0], count=1, flags=re.S)
    con.execute(f"CREATE OR REPLACE VIEW raw.{name}_sql AS {body}")
    return f"raw.{name}_sql"


def _swap_nic(con, target: Path, parts: list[str]) -> bool:
    """Point the NIC relations at the files of `parts` (False, changing nothing, when there are none)."""
    from forensics.db._build import quote_str

    if not any(target.glob("intervals-*.parquet")):
        return False
    for name, prefix in zip(NIC_ITEMS, ("intervals", "summary")):
        files = sorted(f for p in parts for f in target.glob(f"{prefix}-{p}-*.parquet"))
        flist = "[" + ", ".join(quote_str(str(f)) for f in files) + "]"
        sql = f"SELECT * FROM read_parquet({flist}, hive_partitioning = false)"
        if "rest" not in parts:  # the other classes from the SQL definition, one branch per class
            definition = _sql_copy(con, name)
            sql += "".join(f" UNION ALL BY NAME SELECT * REPLACE ('{c}' AS class) FROM {definition} "
                           f"WHERE coalesce(class, 'other') = '{c}'" for c in NIC_REST)
        con.execute(f"CREATE OR REPLACE VIEW raw.{name} AS {sql}")
    return True


def _valid(target: Path, key: str) -> bool:
    try:
        return json.loads((target / "_key.json").read_text()).get("key") == key
    except (OSError, ValueError):
        return False


def _parquet_files(target: Path) -> list[Path]:
    return sorted(target.rglob("*.parquet"))


def _swap(con: duckdb.DuckDBPyConnection, item: Item, target: Path) -> None:
    from forensics.db._build import quote_str

    files = _parquet_files(target)
    if not files:
        return
    flist = "[" + ", ".join(quote_str(str(f)) for f in files) + "]"
    con.execute(f"CREATE OR REPLACE VIEW raw.{item.name} AS "
                f"SELECT * FROM read_parquet({flist}, hive_partitioning = false)")


def _build(con, root: Path, item: Item, files: dict[str, list], target: Path, key: str) -> None:
    from forensics.db._build import quote_str

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{item.name}.", dir=target.parent))
    try:
        con.execute(f"COPY (SELECT * FROM raw.{item.name}) TO {quote_str(str(tmp / 'part-00000.parquet'))} "
                    "(FORMAT parquet, COMPRESSION zstd)")
        (tmp / "_key.json").write_text(json.dumps({"key": key, "version": DERIVED_VERSION}))
        _replace_dir(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def clear(root: Path) -> None:
    """Remove every cached derived relation of a bundle directory."""
    shutil.rmtree(Path(root) / TABLES_DIR / DIR, ignore_errors=True)


__all__ = ["ITEMS", "Item", "attach", "clear"]
