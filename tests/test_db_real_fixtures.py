"""Views over what the real parsers make of real captured outputs (tests/fixtures)."""
from __future__ import annotations

from pathlib import Path

import pytest

import forensics
from forensics import sources
from test_db_kit import write_table

FIX = Path(__file__).parent / "fixtures"
CASES = {
    "dmesg": "dmesg/dmesg--gpud-sxid-readme-raw-xid79-sxid20034.txt",
    "nccl": "nccl/nccl--nccl-issue1814-ib-completion-status12-vendor129-roce.txt",
}


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    root = tmp_path_factory.mktemp("real")
    for source, rel in CASES.items():
        if source not in sources.registry() or not (FIX / rel).is_file():
            pytest.skip(f"{source} parser or fixture not there")
        _, res = sources.parse_bytes((FIX / rel).read_bytes(), source,
                                     sources.ParseContext(host="node07", file=f"hosts/node07/raw/{rel}"))
        for table, df in res.tables.items():
            if df.height:
                write_table(root, table, df)
    return forensics.open_bundle(root)


def test_xid_79_from_a_real_kernel_log(real):
    ev = real.sql("SELECT kind, severity, subject, message FROM events WHERE kind = 'xid'").rows(named=True)
    assert ev and all(e["severity"] == "critical" for e in ev)
    assert any("79" in e["message"] and "fallen off the bus" in e["message"] for e in ev)
    assert real.query("xid_history")["xid"].to_list().count(79) >= 1


def test_ib_completion_errors_from_a_real_nccl_log(real):
    w = real.query("nccl_warnings").rows(named=True)
    ib = [r for r in w if r["kind"] == "nccl_ib_completion_error"]
    assert [(r["ib_status"], r["vendor_err"]) for r in ib][:2] == [(12, 129), (5, 249)]
    chain = [r for r in w if r["kind"] == "nccl_error_chain"]
    assert chain and all(r["retcode"] == 6 for r in chain)
