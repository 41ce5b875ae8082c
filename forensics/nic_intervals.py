"""``raw.nic_interval_rows`` and ``raw.nic_summary`` computed with numpy/pyarrow (the job of
:mod:`forensics.db.derived` is caching them; this module only computes them from one nic_counters
file).

Strings stay dictionary codes, and each raw file's snapshots x counters matrix is reordered
block-wise instead of sorted (a sort on integer codes when that shortcut does not apply), much
faster than DuckDB's window here; the summary is reduced from the same rows segment by segment while
they are in memory. A test checks the result equals the SQL definitions of ``queries/views/`` row
for row.
"""
from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

INTERVAL_DICT_COLUMNS = ["host", "iface", "class", "counter", "raw_name", "ts_quality", "file"]
SUMMARY_KEYS = ("host", "iface", "class", "counter", "raw_name", "queue")
SUMMARY_INPUT = list(SUMMARY_KEYS) + ["ts", "dt_s", "value", "delta", "reset", "line_no"]


TOTAL = pa.decimal128(38, 0)  # raw.nic_summary.total: the SQL's sum of BIGINT deltas as HUGEINT, read back as DECIMAL(38,0)


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
    # a sum past int64 wraps in numpy without a word (only an untrusted bundle's counters get there): the
    # column is DECIMAL(38,0) as the SQL's HUGEINT sum reads (raw.nic_summary), and where the float sum says a
    # series may have passed 2^62, its exact sum from Python's integers
    exact: list | np.ndarray = total
    near = np.flatnonzero(np.abs(np.add.reduceat(delta.astype(np.float64), starts)) >= 2.0 ** 62)
    if near.size:
        exact = total.tolist()
        for j in near:
            exact[j] = sum(int(x) for x in delta[starts[j]:ends[j] + 1])
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
        "total": pa.array(exact, type=pa.int64()).cast(TOTAL) if not near.size else pa.array(exact, type=TOTAL),
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
              ("queue", pa.int32()), ("raw_name", pa.string()), ("intervals", pa.int64()), ("total", TOTAL),
              ("mean_per_s", pa.float64()), ("peak_per_s", pa.float64()), ("resets", pa.int64()),
              ("active_intervals", pa.int64()), ("first_sample", ts), ("last_sample", ts), ("first_active", ts),
              ("last_active", ts), ("last_value", pa.int64())]
    return pa.schema(fields).empty_table()


def counter_names(path: Path) -> list[str]:
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
    `counters`, only their rows (and those without a counter name when `nulls`).

    The rows are picked a row group at a time (memory: one row group and the rows kept) by their counter's
    dictionary entry: each distinct name is looked up once, not each row, as a dataset filter does
    (a host-hour's 1.29 M rows, the 0.50 M of the hot classes kept: 113 -> 43 CPU ms, the same table;
    benchmarks/results/from-raw-phases-2026-12-07-8x1h.md)."""
    if counters is None:
        return pq.read_table(path, columns=NIC_COLUMNS, read_dictionary=list(STRING_COLUMNS)).unify_dictionaries()
    import pyarrow.compute as pc

    wanted = pa.array(counters, type=pa.string())
    pf = pq.ParquetFile(path, read_dictionary=list(STRING_COLUMNS))
    parts = []
    for group in range(pf.metadata.num_row_groups):
        table = pf.read_row_group(group, columns=NIC_COLUMNS)
        keep = [pc.fill_null(pc.take(pc.is_in(chunk.dictionary, value_set=wanted), chunk.indices), nulls)
                for chunk in table.column("counter").chunks]  # (a null counter: kept with `nulls`)
        parts.append(table.filter(pa.chunked_array(keep, type=pa.bool_())))
    if not parts:
        return pf.read(columns=NIC_COLUMNS).unify_dictionaries()
    return pa.concat_tables(parts).unify_dictionaries()


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
    if arr.null_count == 0:  # (the usual case: no mask to build)
        codes = rank[arr.indices.to_numpy(zero_copy_only=False)]
        return dictionary.take(pa.array(order, type=pa.int64())), codes
    idx = arr.indices.fill_null(0).to_numpy(zero_copy_only=False)
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    codes = np.where(valid, rank[np.where(valid, idx, 0)] if len(rank) else 0, -1).astype(np.int64)
    return dictionary.take(pa.array(order, type=pa.int64())), codes


def _index_codes(col: pa.ChunkedArray) -> np.ndarray:
    """Dictionary indices of a (unified) dictionary column as int64, nulls -1 (any order)."""
    arr = col.combine_chunks()
    if not pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_encode()
    if arr.null_count == 0:  # (the usual case: the indices as they are, no mask to build)
        return arr.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    return np.where(valid, arr.indices.fill_null(0).to_numpy(zero_copy_only=False), -1).astype(np.int64)


def _decode(dictionary: pa.Array, codes: np.ndarray) -> pa.DictionaryArray:
    """Dictionary array of `codes` (indices into the sorted `dictionary`; -1 = null)."""
    mask = codes < 0
    if not mask.any():  # (no null: no mask to build)
        return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), dictionary)
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
