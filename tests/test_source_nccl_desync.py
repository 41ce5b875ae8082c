"""PyTorch's NCCL desync report (TORCH_NCCL_DESYNC_DEBUG) in NCCL logs -> nccl_desync, and the
hang_origin variant naming the rank it blames (issue 19). Real report: pytorch/pytorch issue 152623
(tests/fixtures/nccl/nccl--pytorch-issue152623-*.txt); wording of torch/csrc/distributed/c10d/TraceUtils.h."""
from __future__ import annotations

import json
from pathlib import Path

from forensics.db import open_bundle
from forensics.detect.engine import run_all
from forensics.sources import ParseContext, get
from table_bundles import write_tables

REAL = Path(__file__).parent / "fixtures" / "nccl" / "nccl--pytorch-issue152623-desync-report-rank7-didnt-join.txt"
RECORDS = Path(__file__).parent / "fixtures" / "train_log" / "train_log--slrt-issue66-torchrun-childfailederror-records.txt"


def _parse(source: str, data: bytes, host: str = "node01"):
    return get(source).parse(data, ParseContext(host=host, file="stdout.log", tz="UTC", year=2025))


def test_the_report_is_read_and_no_line_of_it_is_left():
    res = _parse("nccl", REAL.read_bytes())
    assert res.unparsed.height == 0
    rows = res.tables["nccl_desync"].select("line_no", "state", "rank", "seq", "op_type").rows()
    assert rows[:3] == [(3, "timed_out", 0, 315, "ALLREDUCE"), (5, "finished_not_joined", 7, 183, None),
                        (8, "finished", 7, 182, "ALLREDUCE")]
    assert [r[2] for r in rows if r[0] == 12] == [3, 4, 5, 6] and {r[4] for r in rows if r[0] == 12} == {"_ALLGATHER_BASE"}


def test_other_wordings_of_the_report():
    text = ("\t - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:\n"
            "\t   - [4, 5] joined but didn't finish collective #41207 (count from 1)\n"
            "\t - To our best knowledge, ranks [9, 11] are the lagging ranks that caused this timeout. They never joined any collectives\n"
            "[1] finished collective #1155873, but didn't join collective #1155874\n")
    res = _parse("nccl", text.encode())
    assert res.unparsed.height == 0
    assert res.tables["nccl_desync"].select("state", "rank", "seq").rows() == [
        ("joined_not_finished", 4, 41207), ("joined_not_finished", 5, 41207), ("never_joined", 9, None),
        ("never_joined", 11, None), ("finished_not_joined", 1, 1155874)]


def _findings(tmp_path, inputs):
    frames: dict = {}
    for source, host, data in inputs:
        for t, df in _parse(source, data, host).tables.items():
            frames.setdefault(t, []).append(df)
    findings, errors = run_all(open_bundle(write_tables(tmp_path, frames)), only={"hang_origin"}, anomaly=False)
    assert errors == []
    return [dict(r, evidence=json.loads(r["evidence"])) for r in findings.to_dicts()]


def test_hang_origin_names_the_blamed_rank(tmp_path):
    (f,) = _findings(tmp_path, [("nccl", "node01", REAL.read_bytes())])
    assert f["detector"] == "hang_origin_desync" and f["subject"] == "rank 7" and f["hosts"] == []
    assert "rank 7 finished collective #182 but never joined #183" in f["summary"]
    assert "its host is not known (report taken on node01)" in f["summary"]


def test_the_launcher_places_the_blamed_rank(tmp_path):
    record = RECORDS.read_text().splitlines()[:7]
    placed = "\n".join(["Failures:"] + [x.replace("server", "node04").replace("rank      : 4 (local_rank: 4)",
                                                                               "rank      : 7 (local_rank: 3)") for x in record])
    (f,) = _findings(tmp_path, [("nccl", "node01", REAL.read_bytes()), ("train_log", "node01", placed.encode() + b"\n")])
    assert f["hosts"] == ["node04"] and f["evidence"]["host_from"] == "torchrun_failure"


MISMATCH = Path(__file__).parent / "fixtures" / "nccl"


def test_detail_mismatch_lines_are_read(tmp_path):
    """TORCH_DISTRIBUTED_DEBUG=DETAIL's "Detected mismatch between collectives" (real lines: ms-swift PR 9443,
    SimpleTuner issue 2712): the reporting rank and the rank it names, with sequence number and op."""
    res = _parse("nccl", (MISMATCH / "nccl--pytorch-detail-mismatch-simpletuner-2712-seq-op.txt").read_bytes())
    assert res.tables["nccl_desync"].select("line_no", "state", "rank", "seq", "op_type").rows() == [
        (1, "mismatch_reporter", 1, 101, "ALLGATHER"), (1, "mismatch_named", 7, 0, "REDUCE")]
    old = _parse("nccl", b"RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running inconsistent "
                         b"collective: CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[34112], TensorDtypes=Float)\n")
    assert old.tables["nccl_desync"].select("state", "rank", "seq", "op_type").rows() == [("mismatch_reporter", 0, None, "BROADCAST")]


def _line(me: int, other: int, my_op: str, other_op: str) -> str:
    fp = "CollectiveFingerPrint(SequenceNumber=21, OpType={}, TensorShape=[1], TensorDtypes=Long)"
    return (f"[rank{me}]: RuntimeError: Detected mismatch between collectives on ranks. Rank {me} is running collective: "
            f"{fp.format(my_op)}, but Rank {other} is running collective: {fp.format(other_op)}.\n")


def test_hang_origin_names_the_rank_every_other_rank_names(tmp_path):
    logs = "".join(_line(r, 3, "ALLREDUCE", "BROADCAST") for r in (0, 1, 2)) + _line(3, 0, "BROADCAST", "ALLREDUCE")
    (f,) = _findings(tmp_path, [("nccl", "node01", logs.encode())])
    assert f["subject"] == "rank 3" and f["evidence"]["state"] == "mismatch" and f["evidence"]["reports"] == 3
    assert f["summary"].startswith("TORCH_DISTRIBUTED_DEBUG=DETAIL: rank 3 runs BROADCAST (sequence number 21) where rank(s) "
                                   "0, 1, 2 run ALLREDUCE (sequence number 21) (named by 3 reporting ranks)")


def test_a_lone_pair_names_both_and_says_it_cannot_tell(tmp_path):
    (a, b) = _findings(tmp_path, [("nccl", "node01", (MISMATCH / "nccl--pytorch-detail-mismatch-ms-swift-9443-shape.txt").read_bytes())])
    assert [a["subject"], b["subject"]] == ["rank 0", "rank 1"]
    assert all("which of the two runs the wrong one is not known" in f["summary"] for f in (a, b))


def test_the_collectors_process_record_places_the_blamed_rank(tmp_path):
    """rank_nodes' process_env rows: the GPU process on node05 whose RANK is 7 (collect's processes.jsonl)."""
    from forensics.ingest.collector_tables import parse_processes

    frames: dict = {}
    procs = parse_processes(b'{"pid": 4321, "env": {"RANK": "7", "LOCAL_RANK": "3", "HOME": "/root"}}\n',
                            ParseContext(host="node05", file="hosts/node05/raw/collector/processes.jsonl"))
    for res in (_parse("nccl", REAL.read_bytes()), procs):
        for t, df in res.tables.items():
            frames.setdefault(t, []).append(df)
    findings, errors = run_all(open_bundle(write_tables(tmp_path, frames)), only={"hang_origin"}, anomaly=False)
    assert errors == []
    (f,) = [dict(r, evidence=json.loads(r["evidence"])) for r in findings.to_dicts()]
    assert f["hosts"] == ["node05"] and f["evidence"]["host_from"] == "process_env"


TITAN = Path(__file__).parent / "fixtures" / "train_log" / "train_log--torchtitan-pr3393-rank0-prefix.txt"


def test_mismatch_lines_in_a_training_log_are_read_as_the_nccl_source_reads_them():
    """A job's stdout with step lines is read by train_log (routed so in raw/nccl too): the real mismatch
    lines (ms-swift PR 9443, SimpleTuner issue 2712) in it become the same nccl_desync rows, not unparsed lines."""
    steps = TITAN.read_bytes()
    n_steps = len(steps.splitlines())
    for name in ("nccl--pytorch-detail-mismatch-simpletuner-2712-seq-op.txt", "nccl--pytorch-detail-mismatch-ms-swift-9443-shape.txt"):
        lines = (MISMATCH / name).read_bytes()
        alone = _parse("nccl", lines).tables["nccl_desync"].select("line_no", "state", "rank", "seq", "op_type").rows()
        assert alone
        res = _parse("train_log", steps + lines)
        got = res.tables["nccl_desync"].select("line_no", "state", "rank", "seq", "op_type").rows()
        assert got == [(ln + n_steps, *rest) for ln, *rest in alone]
        assert set(res.tables["nccl_desync"]["source"].to_list()) == {"train_log"}
        assert not any("Detected mismatch" in t for t in res.unparsed["text"].to_list())
        assert res.tables["train_steps"].height > 0
