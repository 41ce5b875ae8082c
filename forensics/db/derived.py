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

``raw.nic_interval_rows`` is built with numpy/pyarrow, one host file per thread: strings stay
dictionary codes, and each raw file's snapshots x counters matrix is reordered block-wise instead
of sorted (a sort on integer codes when that shortcut does not apply); much faster than DuckDB's
window here; ``raw.nic_summary`` is reduced from the same rows segment by segment, while they are
in memory. Both are kept in ``_derived/nic/`` in two parts: "hot", the counter classes that
detection, the events timeline and the reports read (:data:`NIC_HOT`), and "rest" (:data:`NIC_REST`:
packet counts and the many driver counters no rule names, 60 % of the rows). Mode ``"lazy"``
(`forensics analyze`) builds only the hot part and leaves the rest to the SQL definition, one
branch per class with its class as a literal, so that a filter on the hot classes drops those
branches unread; the next ``"auto"`` or ``"always"`` open builds the rest.
A test checks every mode equals the SQL definitions row for row.
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
import numpy as np
import polars as pl  # noqa: F401  (re-exported types in tests)
import pyarrow as pa
import pyarrow.parquet as pq

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


ITEMS = (
    Item("nic_interval_rows", ("nic_counters",), 1_000_000),
    Item("nic_summary", ("nic_counters",), 1_000_000),
    Item("nccl_log_placed", ("nccl_log",), 300_000),
    Item("gpu_episode_rows", ("gpu_samples",), 300_000),
    Item("events_local", ("*",), 1_000_000),
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
        if mode in ("auto", "lazy") and _rows(item, files) < item.min_rows:
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
    infos = files.get("nic_counters", [])
    names = sorted({n for info in infos for n in _names(info.path)})
    cls = counter_classes(con, names) if names else {}
    unknown = set(cls.values()) - set(NIC_HOT) - set(NIC_REST)
    if unknown:
        raise AssertionError(f"nic_counter_class() gives classes neither hot nor rest: {sorted(unknown)}")
    types = [r[0] for r in con.execute("DESCRIBE SELECT * FROM raw.nic_interval_rows").fetchall()]
    stypes = [r[0] for r in con.execute("DESCRIBE SELECT * FROM raw.nic_summary").fetchall()]
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".nic.", dir=target.parent))
    try:
        classes = {"hot": NIC_HOT, "rest": NIC_REST}
        picked = {p: [n for n, c in cls.items() if c in classes[p]] for p in due}

        def one(job):
            n, info = job
            # one part due: only its counters' rows are read on (the others are dropped while reading)
            table = read_nic_counters(info.path, picked[due[0]], nulls=due[0] == "rest") if len(due) == 1 else \
                read_nic_counters(info.path)
            for part in due:
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


INTERVAL_DICT_COLUMNS = ["host", "iface", "class", "counter", "raw_name", "ts_quality", "file"]
SUMMARY_KEYS = ("host", "iface", "class", "counter", "raw_name", "queue")
SUMMARY_INPUT = list(SUMMARY_KEYS) + ["ts", "dt_s", "value", "delta", "reset", "line_no"]


def nic_summary(table: pa.Table) -> pa.Table:
    """``raw.nic_summary`` of cached nic_interval_rows (sorted by series, then time, as
    :func:`nic_intervals` writes them): one row per series, by segment reductions."""
    n = table.num_rows
    if n == 0:
        return _empty_summary()
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for col in SUMMARY_KEYS:
        codes = _index_codes(table.column(col)) if col != "queue" else np.where(
            table.column("queue").combine_chunks().is_valid().to_numpy(zero_copy_only=False),
            table.column("queue").combine_chunks().fill_null(0).to_numpy(zero_copy_only=False), -1).astype(np.int64)
        change[1:] |= codes[1:] != codes[:-1]
    starts = np.flatnonzero(change)
    ends = np.concatenate((starts[1:], [n])) - 1
    ts = table.column("ts").combine_chunks().cast(pa.int64()).to_numpy(zero_copy_only=False)
    dt_s = table.column("dt_s").combine_chunks().to_numpy(zero_copy_only=False)
    t0 = ts - np.round(dt_s * 1e6).astype(np.int64)
    delta = table.column("delta").combine_chunks().to_numpy(zero_copy_only=False)
    value = table.column("value").combine_chunks().to_numpy(zero_copy_only=False)
    reset = table.column("reset").combine_chunks().to_numpy(zero_copy_only=False).astype(np.int64)
    ln = table.column("line_no").combine_chunks().fill_null(0).to_numpy(zero_copy_only=False)
    if ((np.diff(ts) < 0) & ~change[1:]).any():
        raise ValueError("nic_interval_rows are not in series/time order")
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(dt_s > 0, delta / np.where(dt_s > 0, dt_s, 1.0), np.nan)
    total = np.add.reduceat(delta, starts)
    first, last = t0[starts], ts[ends]
    span = (last - first) / 1e6
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(span != 0, total / np.where(span != 0, span, 1.0), np.nan)
    peak = np.fmax.reduceat(rate, starts)
    active = delta > 0
    big = np.iinfo(np.int64)
    first_active = np.minimum.reduceat(np.where(active, ts, big.max), starts)
    last_active = np.maximum.reduceat(np.where(active, ts, big.min), starts)
    # the value at the latest (ts, line_no) of each series
    last_idx = ends.copy()
    tie = ts[ends] == ts[np.maximum(ends - 1, 0)]
    if tie.any():  # equal stamps at a series' end: the larger line number wins, as in the SQL
        for j in np.flatnonzero(tie):
            seg = np.arange(starts[j], ends[j] + 1)
            seg = seg[ts[seg] == ts[ends[j]]]
            last_idx[j] = seg[np.argmax(ln[seg])]
    ts_type = pa.timestamp("us", tz="UTC")
    take = pa.array(starts, type=pa.int64())
    out = {c: table.column(c).take(take) for c in ("host", "iface", "class", "counter", "queue", "raw_name")}
    out.update({
        "intervals": pa.array(ends - starts + 1, type=pa.int64()),
        "total": pa.array(total, type=pa.int64()),
        "mean_per_s": pa.array(mean, type=pa.float64(), from_pandas=True),
        "peak_per_s": pa.array(peak, type=pa.float64(), from_pandas=True),
        "resets": pa.array(np.add.reduceat(reset, starts), type=pa.int64()),
        "active_intervals": pa.array(np.add.reduceat(active.astype(np.int64), starts), type=pa.int64()),
        "first_sample": pa.array(first, type=pa.int64()).cast(ts_type),
        "last_sample": pa.array(last, type=pa.int64()).cast(ts_type),
        "first_active": pa.array(first_active, type=pa.int64(), mask=first_active == big.max).cast(ts_type),
        "last_active": pa.array(last_active, type=pa.int64(), mask=last_active == big.min).cast(ts_type),
        "last_value": pa.array(value[last_idx], type=pa.int64()),
    })
    return pa.table(out)


def _empty_summary() -> pa.Table:
    ts = pa.timestamp("us", tz="UTC")
    fields = [("host", pa.string()), ("iface", pa.string()), ("class", pa.string()), ("counter", pa.string()),
              ("queue", pa.int32()), ("raw_name", pa.string()), ("intervals", pa.int64()), ("total", pa.int64()),
              ("mean_per_s", pa.float64()), ("peak_per_s", pa.float64()), ("resets", pa.int64()),
              ("active_intervals", pa.int64()), ("first_sample", ts), ("last_sample", ts), ("first_active", ts),
              ("last_active", ts), ("last_value", pa.int64())]
    return pa.schema(fields).empty_table()


def _names(path: Path) -> list[str]:
    """Distinct counter names of one nic_counters file (its dictionary pages, not every row)."""
    col = pq.read_table(path, columns=["counter"], read_dictionary=["counter"]).column("counter")
    return sorted({v for chunk in col.chunks for v in chunk.dictionary.to_pylist() if v is not None})


NIC_COLUMNS = ["host", "file", "line_no", "ts", "ts_quality", "iface", "counter", "queue", "raw_name", "value"]


def counter_classes(con: duckdb.DuckDBPyConnection, names: list[str]) -> dict[str, str]:
    """nic_counter_class() of each counter name, evaluated by the SQL macro itself."""
    rows = con.execute("SELECT c, nic_counter_class(c) FROM (SELECT unnest($n::VARCHAR[]) AS c)", {"n": names}).fetchall()
    return dict(rows)


STRING_COLUMNS = ("host", "iface", "counter", "raw_name", "file", "ts_quality")


def read_nic_counters(path: Path, counters: list[str] | None = None, nulls: bool = False) -> pa.Table:
    """The nic_counters columns :func:`nic_intervals` needs, strings kept dictionary-encoded; with
    `counters`, only their rows (and those without a counter name when `nulls`)."""
    where = None
    if counters is not None:
        import pyarrow.compute as pc

        where = pc.field("counter").isin(counters)
        if nulls:
            where = where | pc.field("counter").is_null()
    return pq.read_table(path, columns=NIC_COLUMNS, read_dictionary=list(STRING_COLUMNS), filters=where).unify_dictionaries()


def _dict_codes(col: pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """(sorted dictionary, int64 codes = lexical rank, nulls -1) of a (dictionary) string column."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if not pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_encode()
    dictionary = arr.dictionary.cast(pa.string())
    order = np.argsort(np.array(dictionary.to_pylist(), dtype=object), kind="stable") if len(dictionary) else \
        np.zeros(0, dtype=np.int64)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    idx = arr.indices.fill_null(0).to_numpy(zero_copy_only=False)
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    codes = np.where(valid, rank[np.where(valid, idx, 0)] if len(rank) else 0, -1).astype(np.int64)
    return dictionary.take(pa.array(order, type=pa.int64())), codes


def _index_codes(col: pa.ChunkedArray) -> np.ndarray:
    """Dictionary indices of a (unified) dictionary column as int64, nulls -1 (any order)."""
    arr = col.combine_chunks()
    if not pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_encode()
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    return np.where(valid, arr.indices.fill_null(0).to_numpy(zero_copy_only=False), -1).astype(np.int64)


def _decode(dictionary: pa.Array, codes: np.ndarray) -> pa.DictionaryArray:
    """Dictionary array of `codes` (indices into the sorted `dictionary`; -1 = null)."""
    mask = codes < 0
    return pa.DictionaryArray.from_arrays(pa.array(np.where(mask, 0, codes).astype(np.int32), mask=mask), dictionary)


def _snapshot_order(key: np.ndarray, ts: np.ndarray, ln: np.ndarray, f: np.ndarray) -> np.ndarray | None:
    """The sort order by (key, ts, line_no) without sorting the rows, or None when the shortcut fails.

    ``ethtool -S`` snapshots of one raw file print the same counters in the same order each time,
    and ingest keeps each file's rows together in line order. Such a file is a snapshots x counters
    matrix: each counter's series is a strided block of it, so ordering the few blocks (not the
    rows) gives the order. Anything else (a counter appearing late, files interleaved, equal keys
    in one snapshot) returns None and the caller sorts.
    """
    n = len(key)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    cut = np.flatnonzero(f[1:] != f[:-1]) + 1
    bounds = np.concatenate(([0], cut, [n]))
    if len(bounds) - 1 != len(np.unique(f)):
        return None  # a file's rows are not contiguous
    starts, strides, lengths, keys, first_ts = [], [], [], [], []
    for o, e in zip(bounds[:-1], bounds[1:]):
        seg_ts = ts[o:e]
        step = np.diff(seg_ts)
        if (step < 0).any() or (np.diff(ln[o:e]) <= 0).any():
            return None
        snap = np.flatnonzero(step != 0) + 1
        width = snap[0] if len(snap) else e - o
        if (e - o) % width or (len(snap) and (np.diff(np.concatenate((snap, [e - o]))) != width).any()):
            return None
        if len(snap) and snap[0] != width:
            return None
        m = key[o:e].reshape(-1, width)
        if (m != m[0]).any() or len(np.unique(m[0])) != width:
            return None
        starts.append(o + np.arange(width))
        strides.append(np.full(width, width))
        lengths.append(np.full(width, m.shape[0]))
        keys.append(m[0])
        first_ts.append(np.full(width, seg_ts[0]))
    bstart, bstride, blen = np.concatenate(starts), np.concatenate(strides), np.concatenate(lengths)
    bkey, bts = np.concatenate(keys), np.concatenate(first_ts)
    bo = np.lexsort((bts, bkey))
    bstart, bstride, blen = bstart[bo], bstride[bo], blen[bo]
    offs = np.cumsum(blen) - blen
    pos = np.arange(n) - np.repeat(offs, blen)
    order = np.repeat(bstart, blen) + np.repeat(bstride, blen) * pos
    ko, to = key[order], ts[order]
    dk = np.diff(ko)
    if (dk < 0).any() or ((dk == 0) & (np.diff(to) < 0)).any() or ((dk == 0) & (np.diff(to) == 0)).any():
        return None  # one series spread over several files out of time order, or duplicate stamps
    return order


def nic_intervals(table: pa.Table, classes, only: tuple[str, ...] | None = None) -> pa.Table:
    """``raw.nic_interval_rows`` of some nic_counters rows: consecutive samples per (host, iface,
    counter, queue, raw_name) in time order and the increase, counter resets handled (the view
    ``raw.nic_intervals`` adds ts_start and rate_per_s from ts, dt_s and delta).

    `classes(names) -> {counter: class}` classifies counter names (:func:`counter_classes`). Rows
    come out sorted by (class, counter, queue, raw_name, host, iface, ts), so that Parquet row
    groups hold few counters and filters on class or counter skip the others. Strings stay
    dictionary codes throughout (sorting, comparing and gathering integers, never strings).
    `only`: keep only the counters of these classes.
    """
    ts_all = table.column("ts").combine_chunks()
    val_all = table.column("value").combine_chunks()
    ok = np.logical_and(ts_all.is_valid().to_numpy(zero_copy_only=False),
                        val_all.is_valid().to_numpy(zero_copy_only=False))
    if not ok.all():
        table = table.filter(pa.array(ok))
    if only is not None:
        dictionary, names_code = _dict_codes(table.column("counter"))
        names = dictionary.to_pylist()
        cmap = classes(names) if names else {}
        wanted = np.array([cmap.get(n, "other") in only for n in names] + ["other" in only], dtype=bool)
        mask = wanted[names_code]  # a null counter (-1) takes the last entry: "other"
        if not mask.all():
            table = table.filter(pa.array(mask))
    dicts, codes = {}, {}
    for col in ("host", "iface", "counter", "raw_name"):
        dicts[col], codes[col] = _dict_codes(table.column(col))
    counters = dicts["counter"].to_pylist()
    cls = classes(counters) if counters else {}
    class_names = sorted(set(cls.values()) | {"other"})
    cls_code = np.array([class_names.index(cls.get(c, "other")) for c in counters] + [class_names.index("other")],
                        dtype=np.int64)
    c = codes["counter"]
    k = cls_code[c]  # a null counter (-1) takes the last entry: "other"
    r, h, i = codes["raw_name"], codes["host"], codes["iface"]
    q_col = table.column("queue").combine_chunks()
    q_raw = np.where(q_col.is_valid().to_numpy(zero_copy_only=False),
                     q_col.fill_null(0).to_numpy(zero_copy_only=False), -1).astype(np.int64)
    q = q_raw - q_raw.min() if len(q_raw) else q_raw  # queue numbers are small: use them as codes
    sizes = [len(class_names), len(counters) + 1, int(q.max()) + 1 if len(q) else 1, len(dicts["raw_name"]) + 1,
             len(dicts["host"]) + 1, len(dicts["iface"]) + 1]
    ts = table.column("ts").combine_chunks().cast(pa.int64()).to_numpy(zero_copy_only=False)
    ln_col = table.column("line_no").combine_chunks()
    ln = ln_col.fill_null(0).to_numpy(zero_copy_only=False)
    if float(np.prod([float(x) for x in sizes])) < 2.0 ** 62:
        key = np.zeros(len(c), dtype=np.int64)
        for part, size in zip((k, c + 1, q, r + 1, h + 1, i + 1), sizes):
            key = key * size + part
        order = _snapshot_order(key, ts, ln, _index_codes(table.column("file")))
        if order is None:
            order = np.lexsort((ln, ts, key))
        key = key[order]
        same = np.zeros(len(order), dtype=bool)
        same[1:] = key[1:] == key[:-1]
    else:  # too many distinct names for one integer key
        order = np.lexsort((ln, ts, i, h, r, q, c, k))
        parts = [x[order] for x in (c, q, r, h, i)]
        same = np.zeros(len(order), dtype=bool)
        same[1:] = np.logical_and.reduce([x[1:] == x[:-1] for x in parts])
    ts = ts[order]
    keep = np.flatnonzero(same)
    v = table.column("value").combine_chunks().to_numpy(zero_copy_only=False)[order]
    cur, prev = v[keep], v[keep - 1]
    t1, t0 = ts[keep], ts[keep - 1]
    delta = np.where(cur >= prev, cur - prev, cur)
    dt_s = (t1 - t0) / 1e6
    rows = order[keep]
    take = pa.array(rows, type=pa.int64())
    ts_type = pa.timestamp("us", tz="UTC")
    cols = {
        "host": _decode(dicts["host"], codes["host"][rows]),
        "iface": _decode(dicts["iface"], codes["iface"][rows]),
        "class": _decode(pa.array(class_names, type=pa.string()), k[rows]),
        "counter": _decode(dicts["counter"], c[rows]),
        "queue": q_col.take(take),
        "raw_name": _decode(dicts["raw_name"], r[rows]),
        "ts": pa.array(t1, type=pa.int64()).cast(ts_type),
        "dt_s": pa.array(dt_s, type=pa.float64()),
        "value": pa.array(cur, type=pa.int64()),
        "delta": pa.array(delta, type=pa.int64()),
        "reset": pa.array(cur < prev, type=pa.bool_()),
        "ts_quality": table.column("ts_quality").take(take),
        "file": table.column("file").take(take),
        "line_no": ln_col.take(take),
    }
    return pa.table(cols)


def clear(root: Path) -> None:
    """Remove every cached derived relation of a bundle directory."""
    shutil.rmtree(Path(root) / TABLES_DIR / DIR, ignore_errors=True)


__all__ = ["ITEMS", "Item", "attach", "clear", "nic_intervals"]
