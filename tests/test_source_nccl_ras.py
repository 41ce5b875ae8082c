"""nccl_ras: NCCL RAS client reports (issue 19), from the real samples of NVIDIA/nccl's RAS guide
(tests/fixtures/nccl_ras/, provenance in tests/fixtures/README.md), and the hang_origin variant that
names the process RAS could not reach."""
from __future__ import annotations

import json
from pathlib import Path

from forensics.db import open_bundle
from forensics.detect.engine import run_all
from forensics.sources import ParseContext, get, recognise
from table_bundles import write_tables

FIX = Path(__file__).parent / "fixtures" / "nccl_ras"
INCOMPLETE = FIX / "nccl_ras--docs-2.24-incomplete-process-missing-rank-timeout.txt"
MISMATCH = FIX / "nccl_ras--docs-mismatch-operation-counts-outlier-ranks.txt"
JSON = FIX / "nccl_ras--docs-2.29.1-json-missing-rank.json"


def _rows(path: Path, cols=("problem", "comm", "rank", "gpu", "pid", "node", "ops_launched", "status")):
    res = get("nccl_ras").parse(path.read_bytes(), ParseContext(host="node01", file=path.name, tz="UTC"))
    assert res.unparsed.height == 0
    return res.tables["nccl_ras"].select(cols).rows()


def test_text_report_names_the_missing_process_and_rank():
    assert recognise(INCOMPLETE.read_bytes())[0] == "nccl_ras"
    assert _rows(INCOMPLETE) == [("INCOMPLETE", None, None, 5, 3487984, "172.16.64.213", None, None),
                                 ("INCOMPLETE", "#0-0", 21, None, None, None, None, None)]


def test_operation_count_outliers_carry_their_count():
    rows = _rows(MISMATCH)
    assert [r[2] for r in rows] == [0, 2, 3, 4, 5, 7]
    assert {(r[0], r[1], r[5], r[6]) for r in rows} == {("MISMATCH", "#0-0", "172.16.64.210", 6649)}


def test_json_report_ranks_and_missing_ranks():
    assert recognise(JSON.read_bytes())[0] == "nccl_ras"
    assert _rows(JSON) == [("present", None, 0, 0, 1524344, "172.16.64.245", 0, "ok"),
                           ("missing", None, 1, 1, 1524345, "172.16.64.245", None, "unresponsive")]


def test_a_json_file_that_is_not_a_report_is_unparsed_whole():
    res = get("nccl_ras").parse(b'{"communicators": 3,\n "x": 1}\n', ParseContext(host="n1", file="x.json"))
    assert res.tables["nccl_ras"].height == 0 and res.unparsed.height == res.lines == 2


def test_hang_origin_names_the_process_ras_could_not_reach(tmp_path):
    """The report taken on node01 names a process on 172.16.64.213: node03 bootstrapped NCCL there."""
    frames: dict = {}
    nccl = b"node03:1:1 [5] NCCL INFO Bootstrap : Using eth0:172.16.64.213<0>\n" \
           b"node02:1:1 [0] NCCL INFO Bootstrap : Using eth0:172.16.64.212<0>\n"
    for source, host, data in (("nccl_ras", "node01", INCOMPLETE.read_bytes()), ("nccl", "node03", nccl)):
        res = get(source).parse(data, ParseContext(host=host, file="report.txt", tz="UTC"))
        for t, df in res.tables.items():
            frames.setdefault(t, []).append(df)
    findings, errors = run_all(open_bundle(write_tables(tmp_path, frames)), only={"hang_origin"}, anomaly=False)
    assert errors == []
    (f,) = findings.to_dicts()
    ev = json.loads(f["evidence"])
    assert f["detector"] == "hang_origin_ras" and f["hosts"] == ["node03"] and f["subject"] == "rank 21"
    assert ev["pid"] == 3487984 and ev["gpu"] == 5 and ev["comm_hash"] == "cf264af53edbe986" and ev["taken_on"] == "node01"


def test_no_origin_from_a_healthy_or_mismatch_only_report(tmp_path):
    res = get("nccl_ras").parse(MISMATCH.read_bytes(), ParseContext(host="node01", file="r.txt"))
    findings, errors = run_all(open_bundle(write_tables(tmp_path, {t: [df] for t, df in res.tables.items()})),
                               only={"hang_origin"}, anomaly=False)
    assert errors == [] and findings.height == 0
