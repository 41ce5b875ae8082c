"""Hostile bundles and full disks (issue 15, items 11 and 12): garbage Parquet given to `redact`,
`export --duckdb`/`--parquet` and the cache on a full disk (a file-size limit in the child: its
writes past the limit fail with EFBIG as on a full disk), the cache's own list of archive members
with wrong types or shipped by a bundle, and counters above 2^63. Each case: exit 2 with one line
that blames the right thing, or success with a stated warning; nothing left behind. Each runs through
:func:`hostile_kit.hostile` (the suite's five properties; see the map in tests/test_hostile_inputs.py)."""
from __future__ import annotations

import json
import os

import polars as pl
import pytest

from forensics.bundle.cache import DIGESTS
from hostile_kit import hostile, small_bundle_members, write_tar_zst
from test_db_kit import bundle_dir

GARBAGE = b"PAR1garbage, not a footerPAR1"


@pytest.fixture(scope="module")
def members():
    return small_bundle_members()


def _tree(root, members):
    for rel, data in members.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def _claim_current_tables(root):
    from forensics.ingest import parser_versions

    part = root / "tables" / "kernel_log" / "host=node01" / "part-0.parquet"
    part.parent.mkdir(parents=True)
    part.write_bytes(GARBAGE)
    (root / "tables" / "_meta.json").write_text(json.dumps({"parser_versions": parser_versions()}))


def test_garbage_parquet_given_to_redact_is_parsed_again_with_a_warning(tmp_path, members):
    """Tables claiming current parsers, one of them garbage: redaction would rewrite them value by
    value; it says so and parses the redacted raw files into tables instead."""
    src = _tree(tmp_path / "b", members)
    _claim_current_tables(src)
    out = tmp_path / "red.tar.zst"
    r = hostile(["redact", src, "--out", out, "--quiet", "--format", "json"], tmp_path, max_mb=600,
                warns="not a readable Parquet table", writes=[out])
    assert "parsed again from the redacted raw files" in r.err
    assert json.loads(r.out)["tables"] == "reparsed"
    q = hostile(["query", out, "SELECT count(*) AS n FROM kernel_log", "--format", "json"], tmp_path, max_mb=500)
    assert json.loads(q.out)[0]["n"] > 0


def test_garbage_parquet_with_nothing_to_parse_again_is_one_line(tmp_path, members):
    src = _tree(tmp_path / "b", {k: v for k, v in members.items() if "/raw/" not in k})
    _claim_current_tables(src)
    out = tmp_path / "red.tar.zst"
    hostile(["redact", src, "--out", out, "--quiet"], tmp_path, max_mb=500,
            fails="tables/kernel_log/host=node01/part-0.parquet: not a readable Parquet table")
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".forensics")] == []


@pytest.mark.parametrize("what", ["duckdb", "parquet"])
def test_export_onto_a_full_disk_is_one_line_that_blames_the_disk(tmp_path, what):
    root = bundle_dir(tmp_path, {"kernel_log": [{"host": "n1", "message": os.urandom(100).hex()} for _ in range(3000)]})
    hostile(["query", root, "SELECT 1"], tmp_path, max_mb=500)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / ("x.duckdb" if what == "duckdb" else "ds")
    r = hostile(["export", root, f"--{what}", target], tmp_path, fails=f"{target}: cannot write: File too large",
                max_mb=600, max_file_bytes=64 << 10)
    assert "not a fault of the input" in r.err
    assert list(out_dir.iterdir()) == []  # no partial database, no half dataset (the kit: nothing else written)


def test_a_full_cache_disk_is_not_blamed_on_the_archive(tmp_path, members):
    """Extracting into the cache on a full disk: the line names the cache file that could not be
    written (never "unreadable archive"), and no partial entry stays in the cache."""
    tar = write_tar_zst(tmp_path / "b.tar.zst", members)
    cache = tmp_path / "cache"
    r = hostile(["analyze", tar, "--quiet"], tmp_path, fails="cannot write: File too large", max_mb=500,
                max_file_bytes=2000)
    assert str(cache) in r.err and "unreadable" not in r.err
    # (the archive digest's memo is no entry: a dot folder the digest was written to before extraction)
    assert [p for p in cache.iterdir() if p.is_dir() and p.name != DIGESTS] == []
    again = hostile(["analyze", tar, "--quiet", "--format", "json"], tmp_path, max_mb=500, rc_ok=(0, 1))
    assert json.loads(again.out)["findings"]  # the Xid 79 of the simulated bundle, now that the disk has room


BAD_LISTS = {
    "members_an_object": {"prefix": "", "members": {"hosts/node01/raw/dmesg/dmesg.txt": 5}},
    "size_a_string": {"prefix": "", "members": [["hosts/node01/raw/dmesg/dmesg.txt", "5"]]},
    "name_a_number": {"prefix": "", "members": [[7, 5]]},
    "negative_size": {"prefix": "", "members": [["hosts/node01/raw/dmesg/dmesg.txt", -1]]},
    "prefix_a_list": {"prefix": ["x"], "members": []},
    "a_list": [1, 2, 3],
}


@pytest.mark.parametrize("case", sorted(BAD_LISTS))
def test_a_cache_entry_whose_member_list_has_wrong_types_is_rebuilt(tmp_path, members, case):
    tar = write_tar_zst(tmp_path / "b.tar.zst", members)
    cache = tmp_path / "cache"
    sql = ["SELECT count(*) AS n FROM kernel_log", "--format", "json"]
    first = hostile(["query", tar, *sql], tmp_path, max_mb=500)
    (listed,) = cache.glob("*/.archive-members.json")
    listed.write_text(json.dumps(BAD_LISTS[case]))
    r = hostile(["query", tar, *sql], tmp_path, max_mb=500)
    assert r.out == first.out
    rebuilt = json.loads(listed.read_text())  # the entry was rebuilt, not used as it was
    assert isinstance(rebuilt, dict) and rebuilt["prefix"] == "" and all(isinstance(s, int) for _, s in rebuilt["members"])


def test_a_member_list_shipped_by_a_bundle_is_not_believed(tmp_path, members):
    """The cache's own file name, shipped inside an archive (listing raw files the archive does not
    hold) or inside a directory bundle: the archive's is dropped; the folder's is one line."""
    forged = {"prefix": "", "members": [["hosts/node01/raw/dmesg/none.txt", 5]]}
    m = dict(members, **{".archive-members.json": json.dumps(forged).encode()})
    tar = write_tar_zst(tmp_path / "b.tar.zst", m)
    r = hostile(["query", tar, "SELECT count(*) AS n FROM kernel_log", "--format", "json"], tmp_path, max_mb=500)
    assert json.loads(r.out)[0]["n"] > 0
    folder = _tree(tmp_path / "dir", {**members, ".archive-members.json": json.dumps({"members": 5}).encode()})
    hostile(["query", folder, "SELECT count(*) FROM kernel_log"], tmp_path, max_mb=500,
            fails=".archive-members.json, the cache's list of raw files left in a bundle archive")


NVLINK = ("GPU 0: A100-PCIE-40GB (UUID: GPU-f41a1a93-42ec-1dc1-e936-03c617b58fd4)\n"
          "         Link 0: Data Tx: 9223372036854775808 KiB\n"
          "         Link 0: Data Rx: 9223372036854775807 KiB\n"
          "         Link 1: Data Tx: 18446744073709551615 KiB\n"
          "         Link 1: Data Rx: 5 KiB\n")
ETHTOOL = ("NIC statistics:\n     rx_bytes: 9223372036854775808\n     tx_bytes: 18446744073709551615\n"
           "     rx_packets: 9223372036854775807\n")


@pytest.mark.parametrize("name,text,table", [("nvlink.txt", NVLINK, "nvlink_counters"),
                                             ("ethtool-S-eth0.txt", ETHTOOL, "nic_counters")])
def test_counters_above_2_63_are_kept_in_unparsed_never_wrapped(tmp_path, name, text, table):
    """A u64 counter above the int64 columns' range: the line is kept whole in ``unparsed`` with its
    reason and counted; 2^63-1 is kept exactly; no value wraps to a negative or smaller one."""
    f = tmp_path / name
    f.write_text(text)
    r = hostile(["parse", f, "--out", tmp_path / "o"], tmp_path, max_mb=400, writes=[tmp_path / "o"])
    assert "unparsed=2" in r.out + r.err
    rows = pl.read_parquet(tmp_path / "o" / f"{table}.parquet")
    assert rows["value"].min() >= 0 and (2**63 - 1) in rows["value"].to_list()
    unparsed = pl.read_parquet(tmp_path / "o" / "unparsed.parquet")
    assert unparsed.height == 2
    assert all("2^63" in why or "int64" in why for why in unparsed["reason"].to_list()), unparsed["reason"].to_list()
    assert any("18446744073709551615" in t for t in unparsed["text"].to_list())
    assert not os.path.exists(tmp_path / "cache") or not any((tmp_path / "cache").rglob("*.parquet"))


def test_the_collector_on_a_full_disk_is_one_line_and_leaves_nothing(tmp_path):
    """`collect` whose output cannot be written (every tool missing: a quick run): one line naming
    the bundle, exit 2, no partial archive and no staging folder left."""
    (tmp_path / "bin").mkdir()
    out = tmp_path / "out"
    out.mkdir()
    r = hostile(["collect", "--duration", "0", "--host", "n1", "--quiet", "--out", out / "b.tar.gz"], tmp_path,
                fails="File too large", max_mb=200, max_file_bytes=3000, PATH=str(tmp_path / "bin"))
    assert str(out / "b.tar.gz") in r.err
    assert list(out.iterdir()) == []  # (and nothing else written: the kit)
