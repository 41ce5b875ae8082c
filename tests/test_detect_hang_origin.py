"""hang_origin: the rank whose collective sequence numbers are behind its process group's (issue 19).

Built from the real PyTorch 2.7 lines of tests/fixtures/nccl/nccl--openrlhf-issue1126-*.txt (OpenRLHF
issue 1126): the timed-out rank's watchdog and ``PG status`` lines and a peer's flight-recorder
dump-signal line, repeated per rank with the numbers changed."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from forensics.db import open_bundle
from forensics.detect.engine import run_all
from forensics.sources import ParseContext, get
from table_bundles import write_tables

FIX = Path(__file__).parent / "fixtures" / "nccl"
REAL = FIX / "nccl--openrlhf-issue1126-dump-signal-pg-status-2.7.txt"
PRIME = FIX / "nccl--primerl-pr3186-pg-guid-hash-group-rank-pg-status.txt"
S = 460631  # the SeqNum the real ranks timed out in


def _lines():
    real = REAL.read_text().splitlines()
    return real[0], real[2], real[3]  # dump signal (rank 2), watchdog timeout (rank 7), PG status (rank 7)


def _timed_out(rank: int) -> list[str]:
    _, wd, status = _lines()
    return [x.replace("[rank7]", f"[rank{rank}]").replace("Rank 7]", f"Rank {rank}]") for x in (wd, status)]


def _signalled(rank: int, enq: int, comp: int) -> list[str]:
    dump = _lines()[0]
    return [dump.replace("[rank2]", f"[rank{rank}]").replace("Rank 2]", f"Rank {rank}]")
            .replace(f"Last enqueued NCCL work: {S}, last completed NCCL work: {S - 1}",
                     f"Last enqueued NCCL work: {enq}, last completed NCCL work: {comp}")]


def _findings(tmp_path, per_host: dict[str, list[str]], kind: str | None = "hang_origin"):
    frames: dict = {}
    for host, lines in per_host.items():
        res = get("nccl").parse(("\n".join(lines) + "\n").encode(),
                                ParseContext(host=host, file="stderr.log", tz="UTC", year=2025))
        for t, df in res.tables.items():
            frames.setdefault(t, []).append(df)
    findings, errors = run_all(open_bundle(write_tables(tmp_path, frames)), only={"hang_origin", "collective_timeout"},
                               anomaly=False)
    assert errors == []
    return [dict(r, evidence=json.loads(r["evidence"])) for r in findings.to_dicts() if kind in (None, r["kind"])]


def test_the_rank_that_never_entered_is_named_with_the_sequence_numbers(tmp_path):
    hosts = {"node01": _timed_out(0) + _timed_out(1), "node02": _timed_out(2) + _signalled(3, S - 1, S - 1),
             "node03": _timed_out(4) + _timed_out(5)}
    got = _findings(tmp_path, hosts)
    assert len(got) == 1
    f, ev = got[0], got[0]["evidence"]
    assert f["hosts"] == ["node02"] and f["subject"] == "rank 3" and f["severity"] == "critical"
    assert ev["pg"] == "0" and ev["pg_desc"] == "default_pg" and ev["op_type"] == "ALLREDUCE"
    assert ev["origin_ranks"] == [3] and ev["never_entered"] and ev["target_seq"] == S
    assert ev["reporting_ranks"] == 6 and ev["timed_out_ranks"] == 5
    groups = [(g["last_enqueued"], g["last_completed"], g["ranks"]) for g in ev["seq_groups"]]
    assert groups == [(S - 1, S - 1, [3]), (S, S - 1, [0, 1, 2, 4, 5])]
    assert f"rank 3 on node02 (last enqueued {S - 1}, last completed {S - 1}) never entered collective {S} (ALLREDUCE)" \
        in f["summary"]
    # it is ranked above the downstream timeouts, which name it as their cause
    both = _findings(tmp_path / "b", hosts, kind=None)
    assert [r["kind"] for r in both] == ["hang_origin", "collective_timeout"]
    assert both[1]["caused_by"] == both[0]["id"]


def test_no_origin_when_every_rank_stands_at_the_same_collective(tmp_path):
    # the real log as posted: rank 2 (signalled) and rank 7 (timed out) both enqueued 460631 and completed 460630
    assert _findings(tmp_path, {"node01": REAL.read_text().splitlines()}) == []
    # ranks of different process groups are never compared (prime-rl: rank 0 in PG 0, rank 13 in PG 3)
    assert _findings(tmp_path / "b", {"node01": PRIME.read_text().splitlines()}) == []


def test_a_rank_behind_in_completed_work_when_all_entered(tmp_path):
    # every rank entered S; rank 5 alone has not completed S - 1 (its GPU stopped earlier)
    hosts = {"node01": _signalled(0, S + 2, S - 1) + _signalled(1, S + 2, S - 1),
             "node02": _signalled(4, S + 1, S - 1) + _signalled(5, S, S - 2)}
    got = _findings(tmp_path, hosts)
    assert [(f["subject"], f["hosts"], f["evidence"]["never_entered"]) for f in got] == [("rank 5", ["node02"], False)]


RECORDS = Path(__file__).parent / "fixtures" / "train_log" / "train_log--slrt-issue66-torchrun-childfailederror-records.txt"


def _torchrun_records(placement: dict[int, str]) -> list[str]:
    """torchrun's failure records (the real SLRT issue 66 record [4], host and ranks changed) placing each rank."""
    record = RECORDS.read_text().splitlines()[:7]
    out = ["Failures:"]
    for i, (rank, host) in enumerate(sorted(placement.items()), 1):
        out += [x.replace("[4]:", f"[{i}]:").replace("server", host).replace("rank      : 4 (local_rank: 4)",
                                                                              f"rank      : {rank} (local_rank: {rank % 2})")
                for x in record]
    return out


def test_the_launcher_names_the_host_of_a_rank_whose_log_was_taken_elsewhere(tmp_path):
    """Every rank's lines in one stdout taken on the login node (a Slurm job's output file): the
    origin's host comes from torchrun's failure records, and the finding says so."""
    merged = _timed_out(0) + _timed_out(1) + _timed_out(2) + _signalled(3, S - 1, S - 1) + _timed_out(4) + _timed_out(5)
    frames: dict = {}
    inputs = [("nccl", "login01", "slurm-1234.out", merged),
              ("train_log", "login01", "torchrun.log", _torchrun_records({0: "node01", 1: "node01", 2: "node02", 3: "node02",
                                                                         4: "node03", 5: "node03"}))]
    for source, host, name, lines in inputs:
        res = get(source).parse(("\n".join(lines) + "\n").encode(), ParseContext(host=host, file=name, tz="UTC", year=2025))
        for t, df in res.tables.items():
            frames.setdefault(t, []).append(df)
        if source == "train_log":
            assert res.tables["rank_hosts"].height == 6 and res.unparsed.height == 0
    findings, errors = run_all(open_bundle(write_tables(tmp_path, frames)), only={"hang_origin"}, anomaly=False)
    assert errors == []
    (f,) = findings.to_dicts()
    ev = json.loads(f["evidence"])
    assert f["hosts"] == ["node02"] and f["subject"] == "rank 3"
    assert "rank 3 on node02 (last enqueued 460630, last completed 460630; host from torchrun_failure, log taken on login01)" \
        in f["summary"]
    assert ev["hosts_from_launcher"] == [{"rank": 3, "host": "node02", "from": "torchrun_failure", "log_taken_on": "login01"}]
    # without the launcher's records the rank stays on the host its log was taken on
    alone = _findings(tmp_path / "b", {"login01": merged})
    assert len(alone) == 1 and alone[0]["hosts"] == ["login01"] and alone[0]["evidence"]["hosts_from_launcher"] is None


def test_torchrun_records_at_the_end_of_a_stdout_read_as_an_nccl_log():
    """A job stdout that is mostly PyTorch/NCCL lines is an NCCL log; torchrun's summary at its end
    still gives rank_hosts rows (and its record lines are not left unparsed)."""
    lines = REAL.read_text().splitlines() + RECORDS.read_text().splitlines()
    res = get("nccl").parse(("\n".join(lines) + "\n").encode(), ParseContext(host="login01", file="slurm-1.out", tz="UTC",
                                                                            year=2025))
    assert res.tables["rank_hosts"].select("rank", "node").rows() == [(4, "server"), (5, "server"), (6, "server"),
                                                                       (7, "server"), (0, "server")]
    assert not res.unparsed["text"].str.contains(r"^\s*(?:host|rank|exitcode)\s*:").any()


def test_collective_timeout_names_the_launchers_hosts_too(tmp_path):
    merged = _timed_out(0) + _timed_out(1) + _timed_out(2) + _signalled(3, S - 1, S - 1) + _timed_out(4) + _timed_out(5)
    placement = {0: "node01", 1: "node01", 2: "node02", 3: "node02", 4: "node03", 5: "node03"}
    frames: dict = {}
    for source, name, lines in (("nccl", "slurm-1234.out", merged), ("train_log", "torchrun.log", _torchrun_records(placement))):
        res = get(source).parse(("\n".join(lines) + "\n").encode(), ParseContext(host="login01", file=name, tz="UTC", year=2025))
        for t, df in res.tables.items():
            frames.setdefault(t, []).append(df)
    findings, errors = run_all(open_bundle(write_tables(tmp_path, frames)), only={"collective_timeout"}, anomaly=False)
    assert errors == []
    (f,) = findings.to_dicts()
    ev = json.loads(f["evidence"])
    assert f["hosts"] == ["node01", "node02", "node03"]
    # every rank's last completed work is S - 1 here (a tie, reported as one): each on its launcher's host
    assert {(x["rank"], x["host"]) for x in ev["lowest_ranks"]} == set(placement.items())
