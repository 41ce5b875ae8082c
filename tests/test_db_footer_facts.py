"""Opening parsed tables uses the footer facts ingest recorded in its sealed ``_meta.json``
(forensics.bundle.footers.record / sealed) and reads the footers itself when they are
absent (a cache made before they were recorded), not sealed here, or do not fit a file."""
from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from forensics.bundle import trust
from forensics.bundle import footers
from forensics.db import connect
from forensics.ingest.run import ingest_bundle, tables_current
from test_bundle_ingest import _tree, fake_registry  # noqa: F401  (the fixture)


def _opened(root):
    con, info = connect(root, derive="never")
    try:
        facts = {t: [(str(i.path), i.rows, sorted(i.hosts), i.schema) for i in infos] for t, infos in info["infos"].items()}
        counts = {t: con.execute(f"SELECT count(*) FROM raw.{t}").fetchone()[0] for t in info["present"]}
        return facts, counts, info["hosts"], info["views"]
    finally:
        con.close()


@pytest.fixture
def footers_read(monkeypatch):
    """The files whose footer create_base read (FileInfo opening them)."""
    seen = []
    real = pq.ParquetFile

    def spy(path, *a, **kw):
        seen.append(str(path))
        return real(path, *a, **kw)

    monkeypatch.setattr(footers.pq, "ParquetFile", spy)
    return seen


def _rewrite_meta(root, change, reseal=True):
    p = root / "tables" / trust.META
    meta = json.loads(p.read_text())
    change(meta)
    if reseal:
        meta.pop("seal")
        meta["seal"] = trust._mac(meta)
    p.write_text(json.dumps(meta))


def test_an_ingested_bundle_opens_without_reading_a_footer(tmp_path, fake_registry, footers_read):  # noqa: F811
    root = _tree(tmp_path)
    ingest_bundle(root)
    assert tables_current(root)
    footers_read.clear()
    facts, counts, hosts, _ = _opened(root)
    assert footers_read == []
    assert hosts == ["node01", "node02", "node99"] and counts["kernel_log"] == 5


def test_a_cache_without_the_facts_opens_identically(tmp_path, fake_registry, footers_read):  # noqa: F811
    root = _tree(tmp_path)
    ingest_bundle(root)
    with_facts = _opened(root)
    _rewrite_meta(root, lambda m: m.pop(trust.FOOTERS))  # as ingest sealed it before the facts were recorded
    assert tables_current(root)
    footers_read.clear()
    without = _opened(root)
    assert len(footers_read) == sum(len(v) for v in without[0].values()) > 0
    assert without == with_facts


def test_facts_not_sealed_here_or_not_fitting_a_file_are_not_believed(tmp_path, fake_registry, footers_read):  # noqa: F811
    root = _tree(tmp_path)
    ingest_bundle(root)
    truth = _opened(root)

    def lie(meta):
        for _, rows in meta[trust.FOOTERS].values():
            for r in rows:
                r[1] += 1000  # rows
                r[2] = ["forged"]  # hosts

    _rewrite_meta(root, lie, reseal=False)  # edited after the seal (or shipped by a bundle): none believed
    footers_read.clear()
    assert _opened(root) == truth and footers_read
    _rewrite_meta(root, lambda m: None)  # sealed here again, but one file is no longer the size sealed
    f = root / "tables" / "kernel_log" / "host=node99" / "part-0.parquet"
    data = f.read_bytes()
    f.write_bytes(data + b"\0")  # (a Parquet reader finds the footer at the end: the file now fails to open)
    footers_read.clear()
    with pytest.raises(ValueError, match="not a valid kernel_log table"):
        _opened(root)
    assert footers_read == [str(f)]


def test_facts_are_not_shipped_in_an_unsealed_meta():
    assert trust.FOOTERS not in trust.unsealed({"parser_versions": {}, trust.FOOTERS: {}, "seal": "x", "raw": "y"})
