"""Bundle ingest (raw files -> tables/) and the load() cache."""
from __future__ import annotations

import datetime as dt
import json
import types
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import forensics.sources as sources
from fixture_cases import cases, context_for
from forensics import schema
from forensics.bundle.write import write_tree
from forensics.ingest import load
from forensics.ingest.run import ingest_bundle, tables_current
from forensics.sources import _base
from stand_ins.kit import iso, make_tree


def _fake_module(name, version=1, fail=False, foreign_host=None):
    """A minimal source used to test the ingest plumbing independently of the real parsers."""
    mod = types.ModuleType(f"fake_{name}")
    mod.NAME, mod.VERSION, mod.TABLES, mod.DESCRIPTION = name, version, ("kernel_log",), "test source"
    mod.sniff = lambda head: head.startswith(b"FAKE")

    def parse(data, ctx):
        if fail:
            raise RuntimeError("parser exploded")
        lines = _base.split_lines(data)
        bad = pl.col("text").str.contains("BAD")
        df = lines.filter(~bad).select(
            "line_no", pl.col("text").alias("message"),
            pl.lit(ctx.capture_time, dtype=pl.Datetime("us", "UTC")).alias("ts"),
            pl.lit(ctx.hints.get("iface")).alias("iface"), pl.lit(ctx.tz).alias("raw_time"))
        if foreign_host:
            df = df.with_columns(pl.when(pl.col("message").str.contains(foreign_host)).then(pl.lit(foreign_host))
                                 .otherwise(pl.lit(ctx.host)).alias("host"))
        return _base.result(name, ctx, lines.height, {"kernel_log": df},
                            _base.unparsed_frame(lines.filter(bad), "bad line", ctx, name))

    mod.parse = parse
    return mod


@pytest.fixture
def fake_registry(monkeypatch):
    reg = {"dmesg": _fake_module("dmesg"), "ethtool": _fake_module("ethtool", foreign_host="node99"),
           "sar": _fake_module("sar", fail=True)}
    monkeypatch.setattr(sources, "registry", lambda: reg)
    return reg


T0 = dt.datetime(2026, 11, 30, 10, 15, 2, tzinfo=dt.timezone.utc)


def _tree(tmp_path):
    proc = {"pid": 4242, "cmdline": ["torchrun", "--nproc_per_node=8", "train.py"], "gpus": [0, 1],
            "gpu_uuids": ["GPU-1", "GPU-2"], "cpus_allowed_list": "0-3,8", "mems_allowed_list": "0",
            "env": {"NCCL_IB_HCA": "mlx5_0", "CUDA_VISIBLE_DEVICES": "0,1", "AWS_SECRET_ACCESS_KEY": "hunter2"}}
    hosts = {
        "node01": {
            "info": {"timezone": "Europe/Berlin", "boot_time": iso(T0 - dt.timedelta(days=1)), "kernel": "5.15.0-112-generic",
                     "clock": {"wall": iso(T0), "monotonic_s": 86400.5, "ntp_offset_s": 0.0012, "ntp_source": "chronyc"},
                     "nics": [{"iface": "ens1f0np0", "pci_addr": "0000:18:00.0", "numa_node": 0, "driver": "mlx5_core",
                               "rdma_dev": "mlx5_0", "mtu": 9000, "speed_mbps": 400000, "operstate": "up"},
                              {"iface": "lo", "numa_node": -1, "speed_mbps": -1}]},
            "raw": {"dmesg/dmesg.txt": b"FAKE one\nBAD two\nthree\n",
                    "ethtool/ens1f0np0.txt": b"FAKE a\nnode99 says hi\n",
                    "sar/sar-u.txt": b"FAKE\n",
                    "iostat/iostat.txt": b"no parser registered for this one\n",
                    "collector/processes.jsonl": (json.dumps(proc) + "\n{broken\n").encode(),
                    "collector/chronyc-tracking.txt": b"Reference ID    : A9FEA97B (169.254.169.123)\n"},
            "commands": [{"name": "dmesg", "argv": ["dmesg", "--time-format", "iso"], "source": "dmesg",
                          "start": iso(T0), "end": iso(T0), "exit_code": 0, "bytes": 24, "truncated": False,
                          "timed_out": False, "error": None, "stderr_tail": "", "raw_file": "hosts/node01/raw/dmesg/dmesg.txt"},
                         {"name": "iostat", "argv": ["iostat"], "source": "iostat", "start": iso(T0), "end": None,
                          "exit_code": None, "bytes": 0, "truncated": True, "timed_out": True, "error": "timed out",
                          "raw_file": "hosts/node01/raw/iostat/iostat.txt"}],
        },
        "node02": {"raw": {"dmesg/dmesg.txt": b"FAKE node02\n"}},
    }
    return make_tree(tmp_path / "b", hosts)


def _read(root, table, host):
    return pl.read_parquet(root / "tables" / table / f"host={host}" / "part-0.parquet")


def test_ingest_plumbing(tmp_path, fake_registry):
    root = _tree(tmp_path)
    summary = ingest_bundle(root)
    assert summary["hosts"] == ["node01", "node02"]
    errors = {e["file"]: e["error"] for e in summary["errors"]}
    assert errors["hosts/node01/raw/iostat/iostat.txt"] == "no parser for source 'iostat'"
    assert errors["hosts/node01/raw/sar/sar-u.txt"].startswith("RuntimeError: parser exploded")

    kl = _read(root, "kernel_log", "node01")
    dmesg = kl.filter(pl.col("source") == "dmesg")
    assert dmesg["message"].to_list() == ["FAKE one", "three"] and dmesg["line_no"].to_list() == [1, 3]
    assert dmesg["ts"].to_list() == [T0, T0]  # capture time from commands.jsonl
    assert dmesg["raw_time"].to_list() == ["Europe/Berlin"] * 2  # tz from host.json
    assert kl.filter(pl.col("source") == "ethtool")["iface"].to_list() == ["ens1f0np0"]  # hint from the file name
    # rows naming another host go to that host's partition
    assert _read(root, "kernel_log", "node99")["message"].to_list() == ["node99 says hi"]

    up = _read(root, "unparsed", "node01")
    assert ("hosts/node01/raw/dmesg/dmesg.txt", 2, "BAD two") in up.select("file", "line_no", "text").rows()
    assert "hunter2" not in str(up.to_dicts())
    procs = _read(root, "processes", "node01")
    assert procs.select("pid", "command", "cpus_allowed", "mems_allowed").row(0) == (
        4242, "torchrun --nproc_per_node=8 train.py", [0, 1, 2, 3, 8], [0])
    env = _read(root, "process_env", "node01")
    assert sorted(env["key"]) == ["CUDA_VISIBLE_DEVICES", "NCCL_IB_HCA"]

    cov = _read(root, "coverage", "node01")
    by_file = {r["file"]: r for r in cov.to_dicts()}
    d = by_file["hosts/node01/raw/dmesg/dmesg.txt"]
    assert (d["lines"], d["unparsed"], json.loads(d["rows"]), d["parser_version"]) == (3, 1, {"kernel_log": 2}, 1)
    assert by_file["hosts/node01/raw/collector/processes.jsonl"]["unparsed"] == 2  # broken line + dropped variable
    assert not any("chronyc" in f for f in by_file)

    cmds = _read(root, "commands", "node01")
    assert cmds.filter(pl.col("timed_out"))["name"].to_list() == ["iostat"]
    nics = _read(root, "nics", "node01")
    assert nics.filter(pl.col("iface") == "lo")["numa_node"].to_list() == [None]
    hosts = _read(root, "hosts", "node01").row(0, named=True)
    assert hosts["kernel"] == "5.15.0-112-generic" and hosts["ntp_offset_s"] == 0.0012
    assert hosts["boot_time"] == T0 - dt.timedelta(days=1)
    for table in ("coverage", "unparsed", "commands", "nics", "hosts", "processes"):
        assert (root / "tables" / table / "host=node02" / "part-0.parquet").is_file()
        assert _read(root, table, "node02").schema == schema.polars_schema(table)
    meta = json.loads((root / "tables" / "_meta.json").read_text())
    # the tables carry each (fake) parser's VERSION and the current versions of what every parse goes through:
    # the collector tables, the paste layer (prefixes) and the quoted-printable decoder (a stale one there
    # would leave tables parsed by an older paste layer standing)
    from forensics.ingest import collector_tables
    from forensics.sources import _mail_qp, _quote

    assert meta["parser_versions"] == {
        **{name: mod.VERSION for name, mod in fake_registry.items()}, collector_tables.SOURCE: collector_tables.VERSION,
        _quote.VERSION_KEY: _quote.VERSION, _mail_qp.VERSION_KEY: _mail_qp.VERSION}
    assert set(meta["parser_versions"]) == {"dmesg", "ethtool", "sar", "collector", "paste_prefix", "mail_qp"}
    assert tables_current(root)


def test_load_caches_by_content(tmp_path, fake_registry, monkeypatch):
    root = _tree(tmp_path)
    tar = write_tree(root, tmp_path / "b.tar.zst")
    cache = tmp_path / "cache"
    calls = []
    import forensics.ingest.run as ingest_mod

    real = ingest_mod.ingest_bundle
    monkeypatch.setattr(ingest_mod, "ingest_bundle", lambda r, progress=None, **kw: calls.append(r) or real(r, **kw))
    r1 = load(tar, cache_dir=cache)
    assert (r1 / "tables/kernel_log/host=node01/part-0.parquet").is_file() and len(calls) == 1
    r2 = load(tar, cache_dir=cache)
    assert r2 == r1 and len(calls) == 1, "second load must not re-parse"
    monkeypatch.setenv("FORENSICS_CACHE_DIR", str(cache))
    assert load(tar) == r1 and len(calls) == 1
    fake_registry["dmesg"].VERSION = 2  # a newer parser: tables are rebuilt once
    load(tar, cache_dir=cache)
    load(tar, cache_dir=cache)
    assert len(calls) == 2
    assert json.loads((r1 / "tables/_meta.json").read_text())["parser_versions"]["dmesg"] == 2
    # a directory bundle is ingested in place
    d = load(root)
    assert d == root and (root / "tables/_meta.json").is_file()


def test_a_cache_copied_with_its_times_is_reused_and_a_rewrite_is_not(tmp_path, fake_registry, monkeypatch):
    """A cache folder copied as `cp -a` copies it (modification times kept; change times and inodes new) is
    current as it is: no re-parse. A small file under hosts/ rewritten with the same size and its old
    modification time put back is not."""
    import os
    import shutil

    root = _tree(tmp_path)
    tar = write_tree(root, tmp_path / "b.tar.zst")
    calls = []
    import forensics.ingest.run as ingest_mod

    real = ingest_mod.ingest_bundle
    monkeypatch.setattr(ingest_mod, "ingest_bundle", lambda r, progress=None, **kw: calls.append(r) or real(r, **kw))
    r1 = load(tar, cache_dir=tmp_path / "cache")
    assert len(calls) == 1
    shutil.copytree(tmp_path / "cache", tmp_path / "copy", symlinks=True)  # (copy2: times kept, as cp -a)
    r2 = load(tar, cache_dir=tmp_path / "copy")
    assert r2 != r1 and len(calls) == 1, "a copy with the same times and bytes must not re-parse"
    info = r2 / "hosts" / "node01" / "host.json"
    st = info.stat()
    text = info.read_bytes()
    info.write_bytes(text.replace(b"Europe/Berlin", b"Europe/Bxrlin"))
    os.utime(info, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert info.stat().st_size == st.st_size and info.read_bytes() != text
    load(tar, cache_dir=tmp_path / "copy")
    assert len(calls) == 2, "a rewrite with the old size and modification time must re-parse"


REAL = [(s, f) for s, f in cases() if s in sources.registry()]


@pytest.mark.skipif(not REAL, reason="no registered source has fixtures yet")
@pytest.mark.parametrize("source,fixture", REAL, ids=[f.name for _, f in REAL])
def test_ingest_matches_parsers(tmp_path, source, fixture):
    """Tables written by ingest equal what the parser gives on the raw file with the same context."""
    ref = context_for(fixture)
    name = fixture.name
    info = {"timezone": ref.tz or "UTC", "boot_time": iso(ref.boot_time)}
    if ref.year and not ref.capture_time:
        info["clock"] = {"wall": f"{ref.year}-06-01T00:00:00+00:00"}
    rel = f"hosts/node01/raw/{source}/{name}"
    cmds = [{"name": source, "argv": [source], "start": iso(ref.capture_time), "raw_file": rel}] if ref.capture_time else []
    info["files"] = {rel: {"origin": "loose", "hints": dict(ref.hints)}}  # no iface hint from the file name
    root = make_tree(tmp_path / "b", {"node01": {"info": info, "raw": {f"{source}/{name}": fixture.read_bytes()},
                                                 "commands": cmds}})
    ingest_bundle(root)
    ctx = _base.ParseContext(host="node01", file=rel, tz=info["timezone"], boot_time=ref.boot_time,
                             capture_time=ref.capture_time, year=ref.year or (ref.capture_time.year if ref.capture_time else
                             (ref.boot_time.year if ref.boot_time else None)), hints=dict(ref.hints))
    _, expected = sources.parse_bytes(fixture.read_bytes(), source, ctx)  # as the library reads a file (a paste without its prefix)
    for table, df in expected.tables.items():
        parts = sorted((root / "tables" / table).glob("host=*/part-0.parquet"))
        got = pl.concat([pl.read_parquet(p) for p in parts]) if parts else schema.empty(table)
        key = [c for c in ("host", "line_no", "sample_no") if c in df.columns]
        assert_frame_equal(got.sort(key, maintain_order=True), df.sort(key, maintain_order=True), check_row_order=False)
    cov = pl.concat([pl.read_parquet(p) for p in (root / "tables/coverage").glob("*/part-0.parquet")])
    row = cov.filter(pl.col("file") == rel).row(0, named=True)
    assert row["error"] is None and row["lines"] == expected.lines and row["unparsed"] == expected.unparsed.height
    # lines skipped on purpose are counted apart: used + unparsed + skipped = lines
    assert row["skipped_lines"] == sum(expected.meta.get("skipped", {}).values())


def test_parallel_ingest_equals_serial(tmp_path):
    """Hosts parsed in worker processes give the very tables of the serial ingest, rows of one host
    found in another host's files (a job log naming every rank) included, merged in manifest order."""
    from forensics.simulate import SimConfig, Simulation

    sim = Simulation(SimConfig("packet_drops", nodes=3, gpus_per_node=2, duration_s=60, interval_s=3, seed=2))
    members = dict(sim.members())
    node02_log = next(v for k, v in sorted(members.items()) if k.startswith("hosts/node02/raw/nccl/"))
    members["hosts/node01/raw/nccl/job-all-ranks.log"] = node02_log  # lines of node02, captured on node01
    trees = []
    for name in ("serial", "parallel"):
        root = tmp_path / name
        for rel, data in members.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        trees.append(root)
    ingest_bundle(trees[0], processes=1)
    summary = ingest_bundle(trees[1], processes=2)
    assert not summary["errors"]
    files = [sorted(p.relative_to(t / "tables").as_posix() for p in (t / "tables").rglob("*.parquet")) for t in trees]
    assert files[0] == files[1] and "nccl_log/host=node02/part-0.parquet" in files[0]
    for rel in files[0]:
        a, b = (pl.read_parquet(t / "tables" / rel) for t in trees)
        assert a.equals(b), rel
    node02 = _read(trees[1], "nccl_log", "node02")
    assert node02["file"].str.contains("hosts/node01/").any() and node02["file"].str.contains("hosts/node02/").any()


def test_move_tables_renames_new_partitions_and_appends_to_existing_ones(tmp_path):
    """move_tables: a partition the destination lacks moves there whole (its folder renamed, also onto an
    empty folder); one it has gets the worker's rows appended after its own."""
    from forensics.ingest.sink import move_tables

    def put(root, table, host, values):
        d = root / table / f"host={host}"
        d.mkdir(parents=True, exist_ok=True)
        pl.DataFrame({"host": [host] * len(values), "line_no": values}).write_parquet(d / "part-0.parquet")

    src, dest = tmp_path / "src", tmp_path / "dest"
    put(src, "kernel_log", "n1", [1, 2])
    put(src, "kernel_log", "n2", [3])
    put(src, "unparsed", "n1", [4])
    put(dest, "kernel_log", "n2", [9])
    (dest / "unparsed" / "host=n1").mkdir(parents=True)
    move_tables(src, dest)
    got = {p.relative_to(dest).as_posix(): pl.read_parquet(p)["line_no"].to_list() for p in sorted(dest.rglob("*.parquet"))}
    assert got == {"kernel_log/host=n1/part-0.parquet": [1, 2], "kernel_log/host=n2/part-0.parquet": [9, 3],
                   "unparsed/host=n1/part-0.parquet": [4]}
    assert [p.relative_to(src).as_posix() for p in src.rglob("*.parquet")] == ["kernel_log/host=n2/part-0.parquet"]


def test_a_training_log_collected_as_an_nccl_log_is_read_as_one(tmp_path):
    """`collect --nccl-log` globs can copy the job's training log into raw/nccl: its step lines and
    torchrun records go to train_steps and rank_hosts (coverage says train_log), not line by line
    to unparsed; an NCCL log beside it stays nccl."""
    fix = Path(__file__).parent / "fixtures"
    titan = (fix / "train_log" / "train_log--torchtitan-pr3393-rank0-prefix.txt").read_bytes()
    records = (fix / "train_log" / "train_log--slrt-issue66-torchrun-childfailederror-records.txt").read_bytes()
    nccl = (fix / "nccl" / "nccl--openrlhf-issue1126-dump-signal-pg-status-2.7.txt").read_bytes()
    root = make_tree(tmp_path / "b", {"node01": {"info": {"timezone": "UTC"},
                                                 "raw": {"nccl/train.log": titan, "nccl/torchrun.out": records,
                                                         "nccl/nccl-rank0.log": nccl}}})
    ingest_bundle(root)
    cov = pl.concat([pl.read_parquet(p) for p in (root / "tables/coverage").glob("*/part-0.parquet")])
    by_file = {r["file"].rsplit("/", 1)[-1]: r for r in cov.to_dicts()}
    assert by_file["train.log"]["source"] == "train_log" and by_file["train.log"]["unparsed"] == 0
    assert by_file["torchrun.out"]["source"] == "train_log"
    assert by_file["nccl-rank0.log"]["source"] == "nccl"
    assert _read(root, "train_steps", "node01").height == 8
    assert _read(root, "rank_hosts", "node01")["rank"].to_list() == [4, 5, 6, 7, 0]


def test_a_pasted_training_log_in_raw_nccl_is_routed_as_the_parse_reads_it():
    # routed_source sniffed the raw head: a training log quoted ("> ") or bulleted ("* ") was not recognised
    # there (the paste layer takes the prefix off only when parsing) and stayed nccl, every line unparsed;
    # a pasted NCCL log stays nccl
    from forensics.ingest.host import routed_source

    fix = Path(__file__).parent / "fixtures"
    titan = (fix / "train_log" / "train_log--lightning-colab-collie-split-bar-lines.txt").read_bytes()
    nccl = (fix / "nccl" / "nccl--openrlhf-issue1126-dump-signal-pg-status-2.7.txt").read_bytes()
    for prefix in (b"", b"> ", b"> > ", b"* ", b"| "):
        pasted = lambda data: b"".join(prefix + ln for ln in data.splitlines(keepends=True))  # noqa: E731
        assert routed_source("nccl", pasted(titan)) == "train_log", prefix
        assert routed_source("nccl", pasted(nccl)) == "nccl", prefix


def test_table_sink_splits_rows_by_host(tmp_path):
    """TableSink: a frame of one host (the fast path) and frames naming other hosts or none (the split,
    null hosts filled with the file's host) land in the same partitions, rows in order."""
    import pyarrow.parquet as pq

    from forensics.ingest.sink import TableSink

    sink = TableSink(tmp_path)
    rows = lambda hosts, first: pl.DataFrame({"host": hosts, "line_no": list(range(first, first + len(hosts))),  # noqa: E731
                                              "text": ["x"] * len(hosts), "reason": ["r"] * len(hosts)},
                                             schema_overrides={"host": pl.String})
    sink.write("unparsed", rows(["n1", "n1"], 1), "n1")           # one host: written whole
    sink.write("unparsed", rows(["n2", None, "n1"], 3), "n1")     # two hosts and a null (-> n1)
    sink.write("unparsed", rows(["n2", "n2"], 6), "n1")           # one other host: its own partition
    sink.write("unparsed", rows([None, None], 8), "n3")           # all null: the file's host
    sink.close()
    got = {p.parent.name: pq.read_table(p).to_pydict() for p in sorted(tmp_path.glob("unparsed/host=*/part-0.parquet"))}
    assert {k: (v["host"], v["line_no"]) for k, v in got.items()} == {
        "host=n1": (["n1", "n1", "n1", "n1"], [1, 2, 4, 5]),
        "host=n2": (["n2", "n2", "n2"], [3, 6, 7]),
        "host=n3": (["n3", "n3"], [8, 9]),
    }
    assert sink.table_rows() == {"unparsed": 9}


def test_table_sink_writes_a_files_frames_as_few_row_groups(tmp_path, monkeypatch):
    """TableSink gathers a file's frames into row groups of GROUP_ROWS rows (the last one shorter), the
    rows and their order those of the frames; a file closed early (MAX_OPEN) has its rows written first."""
    import pyarrow.parquet as pq

    from forensics.ingest.sink import TableSink

    def frame(host, first, n):
        return pl.DataFrame({"host": [host] * n, "line_no": list(range(first, first + n)), "text": [f"t{first}"] * n,
                             "reason": ["r"] * n})

    sink = TableSink(tmp_path / "a")
    for i in range(8):  # eight small frames (a host's eight NCCL logs): one row group
        sink.write("unparsed", frame("n1", 10 * i, 3), "n1")
    sink.write("unparsed", frame("n1", 100, 0), "n1")
    sink.close()
    f = pq.ParquetFile(tmp_path / "a" / "unparsed" / "host=n1" / "part-0.parquet")
    assert f.metadata.num_row_groups == 1
    assert f.read().column("line_no").to_pylist() == [10 * i + k for i in range(8) for k in range(3)]
    assert sink.table_rows() == {"unparsed": 24}

    monkeypatch.setattr(TableSink, "GROUP_ROWS", 5)
    monkeypatch.setattr(TableSink, "MAX_OPEN", 1)
    sink = TableSink(tmp_path / "b")
    for i in range(6):  # frames of 3 rows: a group once 5 or more rows wait; n2 evicts n1's open file
        sink.write("unparsed", frame("n1" if i != 3 else "n2", 10 * i, 3), "n1")
    sink.close()
    got = {h: pq.ParquetFile(tmp_path / "b" / "unparsed" / f"host={h}" / "part-0.parquet") for h in ("n1", "n2")}
    assert [got["n1"].metadata.row_group(i).num_rows for i in range(got["n1"].metadata.num_row_groups)] == [6, 3, 6]
    assert got["n1"].read().column("line_no").to_pylist() == [10 * i + k for i in (0, 1, 2, 4, 5) for k in range(3)]
    assert got["n2"].read().column("line_no").to_pylist() == [30, 31, 32]


def test_an_archive_is_hashed_once_per_state_of_its_file(tmp_path, fake_registry, monkeypatch):
    """The cache entry's name (the archive's sha256) is read back from the digest memo while the file is
    unchanged; a rewrite of the same size with its modification time put back is hashed again."""
    import os

    import forensics.bundle.cache as cache_mod

    root = _tree(tmp_path)
    tar = write_tree(root, tmp_path / "b.tar")
    cache = tmp_path / "cache"
    hashed = []
    real = cache_mod.file_sha256
    monkeypatch.setattr(cache_mod, "file_sha256", lambda p: hashed.append(p) or real(p))
    r1 = load(tar, cache_dir=cache)
    assert len(hashed) == 1 and r1.relative_to(cache).parts[0] == real(tar)
    assert load(tar, cache_dir=cache) == r1 and len(hashed) == 1, "an unchanged archive is not read again"
    st = tar.stat()
    data = bytearray(tar.read_bytes())
    data[-1] ^= 1  # (tar's zero padding: the same size, other bytes)
    tar.write_bytes(bytes(data))
    os.utime(tar, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime: only the change time tells
    assert tar.stat().st_size == st.st_size and tar.stat().st_mtime_ns == st.st_mtime_ns
    assert cache_mod.archive_digest(tar, cache) == real(tar) != r1.relative_to(cache).parts[0]
    assert len(hashed) == 2
    assert cache_mod.archive_digest(tar, cache) == real(tar) and len(hashed) == 2
