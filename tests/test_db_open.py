"""open_bundle: every schema table is a view with the schema's columns and types, present or not."""
from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import forensics
from forensics import schema
from forensics.db import BundleError, QueryError
from test_db_kit import at, bundle_dir, write_table


def test_every_table_is_queryable_with_schema_types_in_an_empty_bundle(tmp_path):
    (tmp_path / "tables").mkdir()
    b = forensics.open_bundle(tmp_path)
    assert b.tables == [] and b.hosts == []
    for table in schema.table_names():
        df = b.sql(f"SELECT * FROM {table}")
        assert df.height == 0
        if table not in ("hosts", "gpus"):  # enriched views add columns
            assert dict(df.schema) == schema.polars_schema(table), table
    assert {"events", "nic_rates", "gpu_episodes", "disk_episodes", "iowait_episodes"} <= set(b.names)


def test_partitioned_parquet_keeps_host_from_the_file_not_the_directory(tmp_path):
    root = bundle_dir(tmp_path, {"kernel_log": [
        {"host": "node01", "ts": at(0), "message": "a"},
        {"host": "node02", "ts": at(1), "message": "b"},
        {"host": "node02", "ts": at(2), "message": "c"},
    ]})
    b = forensics.open_bundle(root)
    assert b.tables == ["kernel_log"]
    assert b.hosts == ["node01", "node02"]
    df = b.sql("SELECT * FROM kernel_log ORDER BY ts")
    assert df.columns == list(schema.polars_schema("kernel_log"))  # no extra hive 'host' column
    assert df["host"].to_list() == ["node01", "node02", "node02"]
    assert df["ts"].dtype == pl.Datetime("us", "UTC")
    assert b.sql("SELECT host, count(*) AS n FROM kernel_log GROUP BY host ORDER BY host").rows() == [
        ("node01", 1), ("node02", 2)]


def test_files_from_an_older_parser_lacking_a_column_read_as_null(tmp_path):
    root = tmp_path / "b"
    write_table(root, "kernel_log", [{"host": "n1", "message": "new", "xid": 79}])
    old = schema.conform(pl.DataFrame({"host": ["n2"], "message": ["old"]}), "kernel_log").drop("xid", "xid_text")
    d = root / "tables" / "kernel_log" / "host=n2"
    d.mkdir(parents=True)
    pq.write_table(old.to_arrow(), d / "part-0.parquet")
    b = forensics.open_bundle(root)
    rows = b.sql("SELECT host, message, xid FROM kernel_log ORDER BY host").rows()
    assert rows == [("n1", "new", 79), ("n2", "old", None)]


def test_a_table_missing_a_column_everywhere_still_has_it(tmp_path):
    d = tmp_path / "tables" / "nics" / "host=n1"
    d.mkdir(parents=True)
    pq.write_table(pa.table({"host": ["n1"], "iface": ["eth0"]}), d / "part-0.parquet")
    b = forensics.open_bundle(tmp_path)
    df = b.sql("SELECT * FROM nics")
    assert dict(df.schema) == schema.polars_schema("nics")
    assert df.row(0, named=True)["iface"] == "eth0" and df.row(0, named=True)["numa_node"] is None


def test_named_parameters_and_errors(tmp_path):
    root = bundle_dir(tmp_path, {"kernel_log": [{"host": "n1", "message": "x", "xid": 79},
                                                {"host": "n2", "message": "y", "xid": 13}]})
    b = forensics.open_bundle(root)
    assert b.sql("SELECT host FROM kernel_log WHERE xid = $x", x=79)["host"].to_list() == ["n1"]
    with pytest.raises(QueryError, match=r"missing value for parameter \$x"):
        b.sql("SELECT host FROM kernel_log WHERE xid = $x")
    with pytest.raises(QueryError, match="unknown parameter y"):
        b.sql("SELECT host FROM kernel_log WHERE xid = $x", x=1, y=2)
    with pytest.raises(QueryError, match="no_such_table"):
        b.sql("SELECT * FROM no_such_table")


def test_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(BundleError, match="no such file"):
        forensics.open_bundle(tmp_path / "nope.tar")


def test_table_files_are_listed_in_path_order_with_only_the_hosts_asked(tmp_path):
    """The files of a table in the order sorting their Paths gives (partition, then file name; a
    plain text sort would put ``host=n1-x/`` before ``host=n1/``), the same list as before the
    listing used os.scandir; with `hosts`, only those hosts' partitions; not a directory, nor a
    file not ending in .parquet."""
    from forensics.db._build import table_files

    root = bundle_dir(tmp_path, {"kernel_log": [{"host": h, "message": "x"} for h in ("n1-x", "n1", "n10", "n1.b", "a")]})
    d = root / "tables" / "kernel_log"
    (d / "host=n1" / "part-1.parquet").write_bytes((d / "host=n1" / "part-0.parquet").read_bytes())
    (d / "host=n1" / "notes.txt").write_text("not a table")
    (d / "host=n1" / "dir.parquet").mkdir()
    (d / "stray.parquet").write_text("not in a partition")
    want = sorted(p for p in d.glob("*/*.parquet") if p.is_file())
    got = table_files(root, "kernel_log")
    assert got == want and [p.parent.name for p in got][:3] == ["host=a", "host=n1", "host=n1"]
    assert [p.parent.name for p in table_files(root, "kernel_log", frozenset({"n1", "a"}))] == ["host=a", "host=n1", "host=n1"]
    assert table_files(root, "nic_counters") == []


@pytest.mark.parametrize("collecting", [True, False])
def test_the_open_leaves_the_garbage_collector_as_it_found_it(tmp_path, collecting):
    """create_base pauses Python's cyclic collector while it reads footers: after the open (or a
    failed open) it is on again only if it was on."""
    import gc

    good = bundle_dir(tmp_path / "good", {"kernel_log": [{"host": "n1", "message": "x"}]})
    bad = bundle_dir(tmp_path / "bad", {"kernel_log": [{"host": "n1", "message": "x"}]})
    (bad / "tables" / "kernel_log" / "host=n1" / "part-0.parquet").write_bytes(b"not parquet")
    was = gc.isenabled()
    try:
        (gc.enable if collecting else gc.disable)()
        forensics.open_bundle(good).close()
        assert gc.isenabled() is collecting
        with pytest.raises(ValueError, match="not a valid kernel_log table"):
            forensics.open_bundle(bad)
        assert gc.isenabled() is collecting
    finally:
        (gc.enable if was else gc.disable)()


def _rss_kb() -> int:
    with open("/proc/self/statm") as fh:
        import os

        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


@pytest.mark.skipif(not __import__("pathlib").Path("/proc/self/statm").exists(), reason="reads RSS from /proc (Linux)")
def test_footers_read_with_the_collector_paused_are_not_kept(tmp_path):
    """create_base pauses the cyclic collector while it reads footers, so a footer read must leave
    nothing in a reference cycle that holds memory: pyarrow's ``FileMetaData.schema`` is such a cycle
    (the metadata caches its ParquetSchema, which refers back to it), which kept ~40 KB per file of a
    bundle's tables (~80 KB for this one's 41 columns) until the collector ran again: 1,024 hosts' open peaked at
    1,855 MB, 395 MB without (benchmarks/results/fleet_scale-2026-12-07.md, section 2)."""
    import gc

    from forensics.db._build import FileInfo

    path = tmp_path / "wide.parquet"
    pq.write_table(pa.table({f"c{i:02d}": pa.array([i, i + 1], pa.int64()) for i in range(40)}
                            | {"host": pa.array(["n1", "n1"])}), path)
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        warm = [FileInfo(path) for _ in range(100)]
        before = _rss_kb()
        kept = [FileInfo(path) for _ in range(3000)]
        grown = _rss_kb() - before
    finally:
        (gc.enable if was else gc.disable)()
    assert len(kept) == 3000 and kept[0].hosts == {"n1"} and kept[0].schema.equals(warm[0].schema)
    # each FileInfo keeps its own 41-column Arrow schema here (~9 KB measured); with the cycle: ~80 KB each
    assert grown < 3000 * 24, f"{grown} KB kept for 3,000 footer reads"


def test_files_of_one_schema_share_one_schema_object(tmp_path):
    """The open keeps one Arrow schema per distinct schema of a table, not one per file."""
    import duckdb

    from forensics.db._build import create_base

    root = bundle_dir(tmp_path, {"kernel_log": [{"host": h, "message": "x"} for h in ("n1", "n2", "n3")]})
    infos = create_base(duckdb.connect(), root)["kernel_log"]
    assert len(infos) == 3 and all(i.schema is infos[0].schema for i in infos)
