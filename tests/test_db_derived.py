"""Cached derived relations (tables/_derived/) give exactly what the SQL definitions give."""
from __future__ import annotations

import json
import os
import shutil

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import forensics
from forensics import nic_intervals
from forensics.db import derived
from test_db_kit import at, bundle_dir, sample_tables, write_table

VIEWS = {
    "nic_rates": "host, iface, counter, queue, raw_name, ts, line_no",
    "nic_counter_summary": "host, iface, counter, queue, raw_name",
    "gpu_episodes": "host, gpu, reason, start",
    "nccl_log": "host, file, line_no",
    "events": "ts_aligned, host, kind, subject, message, file, line_no",
}


def _tables():
    t = sample_tables()
    # a counter reset, a counter that appears late, two samples at one time stamp, a sample without time
    t["nic_counters"] += [
        {"host": "n1", "iface": "eth9", "counter": "rx_bytes", "raw_name": "rx_bytes", "ts": at(s), "value": v,
         "ts_quality": "sampled", "line_no": 1000 + k}
        for k, (s, v) in enumerate([(0, 10), (1, 30), (2, 5), (3, 25), (3, 40)])
    ] + [{"host": "n1", "iface": "eth9", "counter": "rx_bytes", "raw_name": "rx_bytes", "ts": None, "value": 1}] + [
        # a name the parser could not split (no counter): class "other"
        {"host": "n1", "iface": "eth8", "counter": None, "raw_name": "???", "ts": at(s), "value": 7 * s,
         "ts_quality": "sampled", "line_no": 1100 + s} for s in range(3)]
    t["nccl_log"] += [{"host": "n2", "file": "nccl/n2.log", "line_no": 3, "ts": None, "ts_quality": "none",
                       "level": "INFO", "kind": "net", "message": "NET/IB : Using [0]mlx5_0:1/RoCE"},
                      {"host": "n2", "file": "nccl/n2.log", "line_no": 4, "ts": at(14), "ts_quality": "local",
                       "level": "WARN", "kind": "other", "message": "some warning"}]
    return t


def _dump(b):
    return {v: b.sql(f"SELECT * FROM {v} ORDER BY {order}") for v, order in VIEWS.items()}


def test_cached_relations_equal_the_sql_definitions(tmp_path):
    root = bundle_dir(tmp_path, _tables())
    plain = forensics.open_bundle(root, derive="never")
    assert plain.cached == []
    expected = _dump(plain)
    cached = forensics.open_bundle(root, derive="always")
    assert cached.cached == [i.name for i in derived.ITEMS]
    for v, df in _dump(cached).items():
        assert_frame_equal(df, expected[v], check_exact=True), v
    assert expected["nic_rates"].filter(pl.col("iface") == "eth9")["delta"].to_list() == [20, 5, 20, 15]
    assert expected["nic_rates"].filter(pl.col("iface") == "eth8")["class"].to_list() == ["other", "other"]
    # the next open reuses the cache, also in auto mode and for a small bundle
    again = forensics.open_bundle(root)
    assert again.cached == cached.cached
    assert json.loads((root / "tables" / "_derived" / "nic" / "_key.json").read_text())["parts"] == ["hot", "rest"]


def test_lazy_mode_caches_the_hot_classes_and_the_next_open_the_rest(tmp_path, monkeypatch):
    """`forensics analyze` opens in "lazy" mode: only the NIC counter classes detection reads are
    cached; the rest come from the SQL definition (their branches skipped by a hot-class filter)
    until an "auto" open caches them. Every step gives what the SQL definitions give."""
    root = bundle_dir(tmp_path, _tables())
    expected = _dump(forensics.open_bundle(root, derive="never"))
    classes = set(expected["nic_rates"]["class"].to_list())
    assert classes & set(derived.NIC_HOT) and classes & set(derived.NIC_REST), classes
    key = root / "tables" / "_derived" / "nic" / "_key.json"
    assert "nic_interval_rows" not in forensics.open_bundle(root, derive="lazy").cached  # small: not built
    assert not key.exists()
    monkeypatch.setattr(derived, "ITEMS", tuple(derived.Item(i.name, i.sources, 0) if i.name in derived.NIC_ITEMS
                                                else i for i in derived.ITEMS))
    calls = []
    orig = derived._build_nic
    monkeypatch.setattr(derived, "_build_nic", lambda *a: calls.append(a[-1]) or orig(*a))
    lazy = forensics.open_bundle(root, derive="lazy")
    assert calls == [["hot"]] and json.loads(key.read_text())["parts"] == ["hot"]
    assert not list(key.parent.glob("*-rest-*")) and "nic_summary" in lazy.cached
    for v, df in _dump(lazy).items():
        assert_frame_equal(df, expected[v], check_exact=True), v
    def plan(where):
        return lazy.sql(f"EXPLAIN SELECT * FROM nic_rates WHERE {where}")["explain_value"][0].upper()

    assert "WINDOW" in plan("class = 'other'") and "WINDOW" not in plan("class IN ('pause', 'drop')"), \
        "a hot-class filter must not compute the SQL branches"
    again = forensics.open_bundle(root)
    assert calls == [["hot"], ["rest"]] and json.loads(key.read_text())["parts"] == ["hot", "rest"]
    for v, df in _dump(again).items():
        assert_frame_equal(df, expected[v], check_exact=True), v
    forensics.open_bundle(root, derive="lazy")
    assert len(calls) == 2, "a complete cache is used as it is"


def test_lazy_mode_leaves_the_events_timeline_to_a_later_open_and_no_detector_reads_it(tmp_path, monkeypatch):
    """"lazy" (`forensics analyze`) does not build raw.events_local, which no detector reads (a sample
    bundle's analysis with the relation made to fail when read gives no error), and uses it where an earlier
    open cached it; "auto" builds it. Every mode's events equal the SQL definition's."""
    import re

    from forensics.analysis import analyze_bundle

    root = bundle_dir(tmp_path, _tables())
    expected = _dump(forensics.open_bundle(root, derive="never"))["events"]
    assert expected.height > 0
    monkeypatch.setattr(derived, "ITEMS", tuple(derived.Item(i.name, i.sources, 0, i.lazy) for i in derived.ITEMS))
    lazy = forensics.open_bundle(root, derive="lazy")
    assert "events_local" not in lazy.cached and "gpu_episode_rows" in lazy.cached
    assert not (root / "tables" / "_derived" / "events_local").exists()
    assert_frame_equal(_dump(lazy)["events"], expected, check_exact=True)
    sql = lazy.con.execute("SELECT sql FROM duckdb_views() WHERE schema_name = 'raw' AND view_name = 'events_local'")
    body = re.sub(r"^CREATE VIEW \S+ AS ", "", sql.fetchone()[0], count=1, flags=re.S).rstrip().rstrip(";")
    lazy.con.execute(f"CREATE OR REPLACE VIEW raw.events_local AS SELECT * FROM ({body}) "
                     "WHERE error('a detector read raw.events_local') IS NULL")
    with pytest.raises(Exception, match="a detector read raw.events_local"):  # (the trap is sprung by a read)
        lazy.con.execute("SELECT count(*) FROM events").fetchall()
    got = analyze_bundle(lazy)
    assert got.errors == [], got.errors
    auto = forensics.open_bundle(root)
    assert "events_local" in auto.cached
    assert_frame_equal(_dump(auto)["events"], expected, check_exact=True)
    again = forensics.open_bundle(root, derive="lazy")
    assert "events_local" in again.cached, "a cache an earlier open built is used"


def test_the_cache_follows_the_tables(tmp_path):
    root = bundle_dir(tmp_path, _tables())
    b = forensics.open_bundle(root, derive="always")
    n = b.sql("SELECT count(*) FROM nic_rates").item()
    write_table(root, "nic_counters", [{"host": "n1", "iface": "eth0", "counter": "x", "raw_name": "x",
                                        "ts": at(s), "value": s, "ts_quality": "sampled"} for s in range(3)])
    b2 = forensics.open_bundle(root, derive="auto")  # n1's file changed: its cache is stale and not rebuilt (small)
    assert "nic_interval_rows" not in b2.cached
    assert b2.sql("SELECT count(*) FROM nic_rates").item() < n
    b3 = forensics.open_bundle(root, derive="always")
    assert "nic_interval_rows" in b3.cached
    assert b3.sql("SELECT count(*) FROM nic_rates").item() == b2.sql("SELECT count(*) FROM nic_rates").item()


def test_a_read_only_bundle_keeps_the_sql_views(tmp_path):
    root = bundle_dir(tmp_path, _tables())
    os.chmod(root / "tables", 0o555)
    try:
        if os.access(root / "tables", os.W_OK):  # running as root: permissions do not bind
            return
        b = forensics.open_bundle(root, derive="always")
        assert b.cached == []
        assert b.sql("SELECT count(*) FROM events").item() > 0
    finally:
        os.chmod(root / "tables", 0o755)


def test_nic_intervals_builder_on_empty_and_null_rows():
    empty = forensics.schema.empty("nic_counters").select(nic_intervals.NIC_COLUMNS).to_arrow()
    assert nic_intervals.nic_intervals(empty, classes=lambda names: {}).num_rows == 0
    rows = pl.DataFrame({"host": ["h", "h", "h"], "iface": [None, None, None], "counter": ["c", "c", "c"],
                         "raw_name": ["c", "c", "c"], "ts": [at(0), None, at(2)], "value": [1, 5, None],
                         "line_no": [1, 2, 3]})
    rows = forensics.schema.conform(rows, "nic_counters").select(nic_intervals.NIC_COLUMNS).to_arrow()
    assert nic_intervals.nic_intervals(rows, classes=lambda names: {"c": "bytes"}).num_rows == 0


def test_a_bundle_without_nic_counters_keeps_the_sql_views(tmp_path):
    tables = {k: v for k, v in _tables().items() if k != "nic_counters"}
    root = bundle_dir(tmp_path, tables)
    for mode in ("always", "lazy"):
        b = forensics.open_bundle(root, derive=mode)
        assert "nic_interval_rows" not in b.cached
        assert b.sql("SELECT count(*) FROM nic_rates").item() == 0
        assert b.sql("SELECT count(*) FROM nic_counter_summary").item() == 0


def test_reading_some_counters_equals_the_dataset_filter(tmp_path):
    """read_nic_counters picks rows by their counter's dictionary entry, a row group at a time: the same table
    as pyarrow's dataset filter (`isin`, with `nulls` also the rows without a counter), whatever the row groups
    (several, one without a wanted counter, a dictionary fallen back to plain pages) and on a file of no rows."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from forensics.ingest.sink import table_writer

    names = ["rx_bytes", "tx_bytes", "rx_prio3_pause", None, "rx_discards_phy"]
    rows = [{"host": "n1", "iface": f"eth{i % 3}", "counter": names[i % 5], "raw_name": f"r{i % 7}",
             "ts": at(i // 5), "value": i, "ts_quality": "sampled", "line_no": i, "file": "ethtool/eth0.txt"}
            for i in range(500)]
    df = pl.DataFrame(rows, schema_overrides={"ts": pl.Datetime("us", "UTC")})
    from forensics import schema

    df = schema.conform(df, "nic_counters")
    path = tmp_path / "part-0.parquet"
    w = table_writer(path, "nic_counters")
    for a, b in ((0, 200), (200, 210), (210, 500)):
        w.write_table(df.slice(a, b - a).to_arrow(compat_level=pl.CompatLevel.newest()))
    w.write_table(df.slice(0, 40).with_columns(pl.lit("tx_bytes").alias("counter")).to_arrow(
        compat_level=pl.CompatLevel.newest()))  # a row group holding none of the first pick
    w.close()
    # many distinct counter names: the writer's dictionary overflows into plain pages
    big = tmp_path / "big.parquet"
    w = table_writer(big, "nic_counters")
    w.write_table(df.with_columns((pl.col("counter") + pl.col("line_no").cast(pl.String) + "x" * 3000)
                                  .alias("counter")).to_arrow(compat_level=pl.CompatLevel.newest()))
    w.close()
    empty = tmp_path / "empty.parquet"
    table_writer(empty, "nic_counters").close()
    assert pq.ParquetFile(path).metadata.num_row_groups == 4

    def reference(p, counters, nulls):
        where = pc.field("counter").isin(counters)
        if nulls:
            where = where | pc.field("counter").is_null()
        return pq.read_table(p, columns=nic_intervals.NIC_COLUMNS, read_dictionary=list(nic_intervals.STRING_COLUMNS),
                             filters=where).unify_dictionaries()

    big_names = pq.read_table(big, columns=["counter"]).column("counter").drop_null().unique().to_pylist()
    for p, picks in ((path, [["rx_bytes", "rx_prio3_pause"], ["rx_discards_phy"], ["no_such"]]),
                     (big, [big_names[::3], big_names[:1]]), (empty, [["rx_bytes"]])):
        for counters in picks:
            for nulls in (False, True):
                got = nic_intervals.read_nic_counters(p, counters, nulls)
                want = reference(p, counters, nulls)
                assert got.schema.equals(want.schema) and got.equals(want), (p.name, counters[:2], nulls)
    assert nic_intervals.read_nic_counters(path, ["rx_bytes"]).num_rows == 100
    assert nic_intervals.read_nic_counters(path, ["tx_bytes"], nulls=True).num_rows == 100 + 40 + 100
    assert nic_intervals.read_nic_counters(path, [], nulls=True).num_rows == 100


def test_cached_summary_total_past_int64_is_exact():
    # the numpy path of raw.nic_summary (big bundles): a series' deltas summing past int64 wrapped silently
    # (np.add.reduceat) where the SQL's HUGEINT sum is exact; both now give DECIMAL(38,0) totals
    import datetime as dt

    import pyarrow as pa

    from forensics.nic_intervals import SUMMARY_INPUT, nic_summary

    huge = 9 * 10**18
    t0 = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)
    rows = {"host": ["n1"] * 4, "iface": ["eth2"] * 4, "class": ["pause"] * 4, "counter": ["a", "a", "b", "b"],
            "queue": [None] * 4, "raw_name": ["a", "a", "b", "b"],
            "ts": [t0 + dt.timedelta(seconds=k) for k in (1, 2, 1, 2)], "dt_s": [1.0] * 4,
            "value": [huge, huge, 5, 7], "delta": [huge, huge, 5, 2], "reset": [True, True, False, False],
            "line_no": [1, 2, 3, 4]}
    types = {"queue": pa.int32(), "ts": pa.timestamp("us", tz="UTC")}
    table = pa.table({k: pa.array(rows[k], type=types.get(k)) for k in SUMMARY_INPUT})
    out = nic_summary(table)
    assert out.column("total").type == pa.decimal128(38, 0)
    assert [int(x) for x in out.column("total").to_pylist()] == [2 * huge, 7]


def _nic_items_always(monkeypatch):
    monkeypatch.setattr(derived, "ITEMS", tuple(derived.Item(i.name, i.sources, 0) if i.name in derived.NIC_ITEMS
                                                else i for i in derived.ITEMS))


def test_the_hot_nic_part_built_in_the_parse_worker_is_what_the_open_builds(tmp_path, monkeypatch):
    """Ingest builds each host's hot NIC part from the rows it kept in memory (forensics.ingest.nic_derived);
    the first open links it in instead of reading the file, and gets the SQL definitions' rows; a file
    changed since (or other definitions) is built by the open as before."""
    from forensics.ingest import nic_derived
    from forensics.simulate import SimConfig, write_bundle

    assert nic_derived.HOT == derived.NIC_HOT
    monkeypatch.setattr(nic_derived, "MIN_ROWS", 0)
    _nic_items_always(monkeypatch)
    tar = tmp_path / "b.tar"
    write_bundle(SimConfig("pfc_storm", nodes=2, gpus_per_node=1, duration_s=120, interval_s=2, seed=3), tar,
                 tables=False)
    plain = forensics.open_bundle(tar, cache_dir=tmp_path / "cache", derive="never")
    root = plain.root
    expected = _dump(plain)
    assert expected["nic_rates"].filter(pl.col("class") == "pause")["delta"].sum() > 0
    built = sorted(root.glob("tables/_derived/nic-host/host=*/intervals-hot.parquet"))
    assert len(built) == 2, built
    reads = []
    orig = derived.read_nic_counters
    monkeypatch.setattr(derived, "read_nic_counters", lambda *a, **k: reads.append(a[0]) or orig(*a, **k))
    lazy = forensics.open_bundle(root, derive="lazy")
    assert reads == [] and "nic_interval_rows" in lazy.cached
    linked = sorted((root / "tables" / "_derived" / "nic").glob("intervals-hot-*.parquet"))
    assert [os.path.samefile(a, b) for a, b in zip(linked, built)] == [True, True]
    for v, df in _dump(lazy).items():
        assert_frame_equal(df, expected[v], check_exact=True), v
    # a changed file (its time stamp here) is built by the open; the next open's rest part too
    shutil.rmtree(root / "tables" / "_derived" / "nic")
    nic_files = sorted(root.glob("tables/nic_counters/host=*/part-0.parquet"))
    nic = nic_files[0]
    st = nic.stat()
    os.utime(nic, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    again = forensics.open_bundle(root, derive="auto")
    assert sorted(reads) == nic_files, reads  # (the rest part: every file)
    linked = sorted((root / "tables" / "_derived" / "nic").glob("intervals-hot-*.parquet"))
    assert [os.path.samefile(a, b) for a, b in zip(linked, built)] == [False, True]
    for v, df in _dump(again).items():
        assert_frame_equal(df, expected[v], check_exact=True), v


def test_hot_rows_of_a_host_under_min_rows_open_no_duckdb(monkeypatch):
    """A host with fewer than MIN_ROWS nic_counters rows (every pasted ethtool -S) is left to the open, so its
    rows are not classified: classifying opens a DuckDB in the process, whose threads made analyze of a single
    ethtool paste fail under a 3 GB address-space limit ('can't start new thread', empty coverage). Once the host
    reaches MIN_ROWS, the rows kept before are classified with the rest, in sink order."""
    from forensics import schema
    from forensics.ingest import nic_derived
    from forensics.nic_intervals import NIC_COLUMNS

    monkeypatch.setattr(nic_derived, "_con", None)
    monkeypatch.setattr(nic_derived, "_classes", {})
    monkeypatch.setattr(nic_derived, "MIN_ROWS", 5)

    def frame(counters, first):
        n = len(counters)
        return schema.conform(pl.DataFrame({
            "host": ["n1"] * n, "source": ["ethtool"] * n, "file": ["f"] * n, "line_no": list(range(first, first + n)),
            "sample_no": [0] * n, "ts": [None] * n, "ts_quality": ["none"] * n, "iface": ["eth0"] * n,
            "counter": counters, "queue": [None] * n, "raw_name": counters, "value": [1] * n}), "nic_counters")

    kept = nic_derived.HotRows("n1")
    kept("nic_counters", frame(["rx_bytes", "rx_csum_complete", "rx_pause_ctrl_phy"], 1))
    assert nic_derived._con is None and kept.frames == []
    kept("nic_counters", frame(["tx_bytes", "rx_csum_none", "rx_discards_phy"], 4))
    assert nic_derived._con.execute("SELECT current_setting('threads')").fetchone()[0] == 1
    classes = nic_derived._classify([f"{c}" for c in ("rx_bytes", "rx_csum_complete", "rx_pause_ctrl_phy",
                                                      "tx_bytes", "rx_csum_none", "rx_discards_phy")])
    got = pl.concat(kept.frames)
    assert got.columns == list(NIC_COLUMNS)
    assert got["line_no"].to_list() == [i + 1 for i, c in enumerate(classes) if classes[c] in nic_derived.HOT]
    assert 0 < got.height < 6
