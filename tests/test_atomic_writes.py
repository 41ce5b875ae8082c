"""The one temp-file-and-rename writer (forensics/atomic.py) and each writer built on it: a failure
in the middle of a write leaves neither a partial target nor a temporary file, and an older target
is left as it was; a write that ends normally replaces the target whole."""
from __future__ import annotations

import errno
import json
import os
import pathlib
import tarfile

import polars as pl
import pytest

from forensics.atomic import atomic_path

OLD = b"the old file, whole\n"


class DiskFull(OSError):
    def __init__(self):
        super().__init__(errno.ENOSPC, "No space left on device")


def _left(folder, keep=()):
    """Everything in `folder` but the names in `keep` (after a failed write: nothing)."""
    return sorted(p.name for p in pathlib.Path(folder).iterdir() if p.name not in keep)


def test_a_write_that_ends_normally_replaces_the_target_whole(tmp_path):
    out = tmp_path / "t.bin"
    out.write_bytes(OLD)
    with atomic_path(out) as tmp:
        assert os.path.dirname(tmp) == str(tmp_path) and os.path.getsize(tmp) == 0
        assert oct(os.stat(tmp).st_mode & 0o777) == oct(0o600)
        pathlib.Path(tmp).write_bytes(b"new")
        assert out.read_bytes() == OLD  # not yet: a reader sees the old file until the end
    assert out.read_bytes() == b"new" and _left(tmp_path) == ["t.bin"]


@pytest.mark.parametrize("error", [DiskFull, KeyboardInterrupt])
def test_a_failure_mid_write_leaves_the_old_target_and_no_temporary_file(tmp_path, error):
    out = tmp_path / "t.bin"
    out.write_bytes(OLD)
    with pytest.raises(error):
        with atomic_path(out, leftovers=(".wal",)) as tmp:
            with open(tmp, "wb") as fh:
                fh.write(b"half of the new")
            pathlib.Path(tmp + ".wal").write_bytes(b"a writer's side file")
            raise error()
    assert out.read_bytes() == OLD and _left(tmp_path) == ["t.bin"]


def test_a_failure_mid_write_leaves_no_target_where_there_was_none(tmp_path):
    with pytest.raises(DiskFull):
        with atomic_path(tmp_path / "t.bin") as tmp:
            pathlib.Path(tmp).write_bytes(b"half")
            raise DiskFull()
    assert _left(tmp_path) == []


def test_a_failed_flush_to_disk_leaves_nothing(tmp_path, monkeypatch):
    """The failure may come after the body, while the file is flushed (a full disk at fsync)."""
    def fsync(fd):
        raise DiskFull()

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(DiskFull):
        with atomic_path(tmp_path / "t.bin") as tmp:
            pathlib.Path(tmp).write_bytes(b"all of it")
    assert _left(tmp_path) == []


def _half_then_full(write_bytes_of):
    """A stand-in writer: writes half of what the real one would, to the path it is given, then the disk is full."""
    def writer(path, *args, **kwargs):
        pathlib.Path(path).write_bytes(write_bytes_of[:len(write_bytes_of) // 2])
        raise DiskFull()
    return writer


def test_the_collector_tar_writer(tmp_path):
    from forensics.collect.tarball import AtomicTar

    out = tmp_path / "b.tar.gz"
    with pytest.raises(DiskFull):
        with AtomicTar(out) as tar:
            tar.add_bytes("manifest.json", b"{}" * 10000)
            raise DiskFull()
    assert _left(tmp_path) == []
    with AtomicTar(out) as tar:
        tar.add_bytes("manifest.json", b"{}")
    with tarfile.open(out) as t:
        assert t.getnames() == ["manifest.json"]
    assert _left(tmp_path) == ["b.tar.gz"]


def test_the_zipapp_writer(tmp_path, monkeypatch):
    from forensics.collect import zipapp

    real = list(zipapp._sources())

    def sources():
        yield real[0]
        raise DiskFull()

    monkeypatch.setattr(zipapp, "_sources", sources)
    with pytest.raises(DiskFull):
        zipapp.build(tmp_path / "c.pyz")
    assert _left(tmp_path) == []


def test_the_lake_frame_writer(tmp_path, monkeypatch):
    from forensics.archive.lake import write_frame_atomic

    out = tmp_path / "part-0.parquet"
    out.write_bytes(OLD)
    monkeypatch.setattr(pl.DataFrame, "write_parquet", lambda self, path, **kw: _half_then_full(b"PAR1" * 100)(path))
    with pytest.raises(DiskFull):
        write_frame_atomic(pl.DataFrame({"a": [1]}), out)
    assert out.read_bytes() == OLD and _left(tmp_path) == ["part-0.parquet"]
    monkeypatch.undo()
    write_frame_atomic(pl.DataFrame({"a": [1]}), out)
    assert pl.read_parquet(out)["a"].to_list() == [1] and _left(tmp_path) == ["part-0.parquet"]


def test_the_redaction_map_writer(tmp_path, monkeypatch):
    from forensics.redact.bundle import write_mapping
    from forensics.redact.mapper import Mapper

    out = tmp_path / "map.json"

    def dump(doc, fh, **kw):
        fh.write(json.dumps(doc)[:5])
        fh.flush()
        raise DiskFull()

    mapper = Mapper(b"k" * 32)
    monkeypatch.setattr(json, "dump", dump)
    with pytest.raises(DiskFull):
        write_mapping(out, mapper, tmp_path / "red.tar.gz")
    assert _left(tmp_path) == []
    monkeypatch.undo()
    write_mapping(out, mapper, tmp_path / "red.tar.gz")
    assert json.loads(out.read_text())["bundle"].endswith("red.tar.gz")
    assert oct(out.stat().st_mode & 0o777) == oct(0o600) and _left(tmp_path) == ["map.json"]


def test_the_duckdb_export_writer(tmp_path, monkeypatch):
    """DuckDB writes the file (and its .wal) itself; the disk fills before the end: one WriteError, nothing left."""
    import duckdb

    from forensics.db import export
    from forensics.errors import WriteError

    def connect(root, materialize, database):
        con = duckdb.connect(database)
        con.execute("CREATE TABLE t AS SELECT range AS x FROM range(1000)")
        raise DiskFull()

    monkeypatch.setattr(export, "connect", connect)
    out = tmp_path / "out" / "x.duckdb"
    with pytest.raises(WriteError, match="x.duckdb: cannot write"):
        export.export_duckdb(tmp_path, out)
    assert _left(out.parent) == []


@pytest.mark.parametrize("which", ["html", "perfetto"])
def test_the_report_writers(tmp_path, monkeypatch, which):
    from forensics.report import html, perfetto

    out = tmp_path / f"r.{which}"
    out.write_bytes(OLD)
    full = [True]
    if which == "html":
        monkeypatch.setattr(html, "render_html", lambda bundle, analysis, title: "<html>" + "x" * 1000)
        write = lambda: html.write_html(None, out, bundle=object())  # noqa: E731
        real = pathlib.Path.write_text

        def write_text(self, text, *args, **kwargs):
            if not full[0]:
                return real(self, text, *args, **kwargs)
            real(self, text[:len(text) // 2], *args, **kwargs)
            raise DiskFull()

        monkeypatch.setattr(pathlib.Path, "write_text", write_text)
    else:  # the trace is written as it is made: the disk fills after its first events
        def chunks(bundle, findings, max_points, other):
            yield [{"ph": "i", "name": "e", "ts": 1, "pid": 1, "tid": 1}] * 1000
            if full[0]:
                raise DiskFull()
            yield [{"ph": "i", "name": "f", "ts": 2, "pid": 1, "tid": 1}]

        monkeypatch.setattr(perfetto, "_chunks", chunks)
        write = lambda: perfetto.write_trace(object(), out)  # noqa: E731
    with pytest.raises(DiskFull):
        write()
    assert out.read_bytes() == OLD and _left(tmp_path) == [out.name]
    full[0] = False
    write()
    assert out.read_bytes() != OLD and _left(tmp_path) == [out.name]
    assert oct(out.stat().st_mode & 0o777) == oct(0o666 & ~_umask())  # a report gets the usual mode


def _umask():
    m = os.umask(0o022)
    os.umask(m)
    return m
