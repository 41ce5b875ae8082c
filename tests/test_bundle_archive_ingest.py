"""Archives opened through the cache keep their raw files in the archive: ingest reads them from it.

The tables must be exactly those of the ingest from an extracted directory, whatever the member
order, top folder, worker count or memory bound; a link that needs a raw file makes the cache
extract the archive whole; a cached tree without its archive is refused with one line.
"""
from __future__ import annotations

import io
import json
import random
import tarfile

import polars as pl
import pytest

import forensics.ingest.archive as archive_mod
import forensics.ingest.pool as pool_mod
from forensics.bundle import BundleError
from forensics.ingest import load
from forensics.ingest.run import ingest_bundle
from forensics.layout import ARCHIVE_MEMBERS


@pytest.fixture(scope="module")
def members():
    from forensics.simulate import SimConfig, Simulation

    sim = Simulation(SimConfig("packet_drops", nodes=3, gpus_per_node=2, duration_s=60, interval_s=3, seed=2))
    out = dict(sim.members())
    node02_log = next(v for k, v in sorted(out.items()) if k.startswith("hosts/node02/raw/nccl/"))
    out["hosts/node01/raw/nccl/job-all-ranks.log"] = node02_log  # lines of node02, captured on node01
    return out


@pytest.fixture(scope="module")
def disk_tables(members, tmp_path_factory):
    root = tmp_path_factory.mktemp("disk")
    for rel, data in members.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    ingest_bundle(root, processes=1)
    return _tables(root)


def _tables(root) -> dict[str, pl.DataFrame]:
    return {p.relative_to(root / "tables").as_posix(): pl.read_parquet(p)
            for p in sorted((root / "tables").rglob("*.parquet"))}


def _same(a: dict, b: dict) -> None:
    assert sorted(a) == sorted(b)
    for rel in a:
        assert a[rel].equals(b[rel]), rel


def _tar(path, items, links=()):
    """A .tar.gz of (name, bytes) in the given order, plus (name, target) symbolic links."""
    with tarfile.open(path, "w:gz") as tf:
        for name, data in items:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        for name, target in links:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tf.addfile(info)
    return path


def _raw_on_disk(root) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in (root / "hosts").glob("*/raw/**/*") if p.is_file())


@pytest.mark.parametrize("workers", ["1", "2"])
def test_tables_equal_the_ingest_from_disk(tmp_path, monkeypatch, members, disk_tables, workers):
    monkeypatch.setenv("FORENSICS_INGEST_PROCESSES", workers)
    monkeypatch.setattr(pool_mod, "PARALLEL_MIN_BYTES", 0)
    order = ["manifest.json"] + sorted(k for k in members if k != "manifest.json")
    archive = _tar(tmp_path / "b.tar.gz", [(k, members[k]) for k in order])
    root = load(archive, cache_dir=tmp_path / "cache")
    assert _raw_on_disk(root) == [], "raw files stay in the archive"
    listed = json.loads((root / ARCHIVE_MEMBERS).read_text())
    raw = {k: len(v) for k, v in members.items() if "/raw/" in k}
    assert listed["prefix"] == "" and {rel: size for rel, size in listed["members"]} == raw
    assert (root / "hosts/node01/host.json").is_file() and (root / "hosts/node01/raw/nccl").is_dir()
    _same(_tables(root), disk_tables)


def test_any_member_order_top_folder_and_memory_bound(tmp_path, monkeypatch, members, disk_tables):
    """Hosts' raw files interleaved in the archive, under one top folder, and every raw file
    passed through a temporary file (the memory bound) still give the same tables."""
    monkeypatch.setenv("FORENSICS_INGEST_PROCESSES", "1")
    monkeypatch.setattr(archive_mod, "SPILL_BYTES", 1)
    names = sorted(members)
    random.Random(7).shuffle(names)
    archive = _tar(tmp_path / "b.tar.gz", [(f"top/{k}", members[k]) for k in names])
    root = load(archive, cache_dir=tmp_path / "cache")
    assert root.name == "top" and _raw_on_disk(root) == []
    assert json.loads((root / ARCHIVE_MEMBERS).read_text())["prefix"] == "top/"
    _same(_tables(root), disk_tables)
    assert not list(root.rglob(".spill-*")) and not list(root.glob(".hosts-*"))


def test_a_link_to_a_raw_file_extracts_the_archive_whole(tmp_path, members):
    items = [(k, members[k]) for k in sorted(members)]
    target = next(k for k in members if k.startswith("hosts/node02/raw/nccl/"))
    link = ("hosts/node02/raw/nccl/copy.log", target.rsplit("/", 1)[1])
    archive = _tar(tmp_path / "b.tar.gz", items, links=[link])
    root = load(archive, cache_dir=tmp_path / "cache")
    assert not (root / ARCHIVE_MEMBERS).exists()
    assert (root / link[0]).read_bytes() == members[target]
    cov = pl.read_parquet(root / "tables/coverage/host=node02/part-0.parquet")
    assert link[0] in cov["file"].to_list()


def test_a_cached_tree_needs_its_archive(tmp_path, members):
    archive = _tar(tmp_path / "b.tar.gz", [(k, members[k]) for k in sorted(members)])
    root = load(archive, cache_dir=tmp_path / "cache")
    with pytest.raises(BundleError, match="raw files left in a bundle archive"):
        ingest_bundle(root)


def test_an_archive_that_changed_is_refused(tmp_path, members):
    archive = _tar(tmp_path / "b.tar.gz", [(k, members[k]) for k in sorted(members)])
    prefix, by_host = "", {"node01": [("hosts/node01/raw/dmesg/dmesg.txt", 1, None)]}
    with pytest.raises(BundleError, match="changed since it was extracted"):
        list(archive_mod.stream_hosts(archive, prefix, by_host, lambda h: True, tmp_path))
    by_host = {"node01": [("hosts/node01/raw/dmesg/gone.txt", 5, None)]}
    with pytest.raises(BundleError, match="changed since it was extracted"):
        list(archive_mod.stream_hosts(archive, prefix, by_host, lambda h: True, tmp_path))


def test_an_archive_damaged_since_it_was_read_is_refused(tmp_path, members):
    from forensics.bundle.write import write_items

    name = "hosts/node01/raw/sar/big.txt"
    data = random.Random(3).randbytes(1 << 20)  # incompressible: the cut falls in its data
    full = write_items(tmp_path / "b.tar.zst", [("manifest.json", b"{}"), (name, data)])
    cut = tmp_path / "cut.tar.zst"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    with pytest.raises(BundleError, match="truncated|unreadable"):
        list(archive_mod.stream_hosts(cut, "", {"node01": [(name, len(data), None)]}, lambda h: True, tmp_path))
