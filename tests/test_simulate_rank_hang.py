"""The simulator's rank_hang scenario at 8, 32 and 64 nodes (issue 19): one rank stops before its next
all-reduce, every other rank's PyTorch watchdog times out in it. hang_origin must name the stuck
rank and its host, rank first (above the timeouts, which it causes), with the sequence numbers per
rank group. Only the job's logs are parsed (the torchrun logs the detector reads), so 64 nodes stay
quick."""
from __future__ import annotations

import json
import tarfile

import polars as pl
import pytest

from forensics.db import open_bundle
from forensics.detect.engine import run_all
from forensics.simulate import SimConfig, write_bundle
from forensics.sources import ParseContext, get
from table_bundles import job_outputs, write_tables


def _run(tmp_path, nodes: int, seed: int, extras=(None,)):
    """(findings, labels) of the simulated job; with `extras`, a list of findings per extra (a function
    of the labels giving more tables), the job simulated and parsed once."""
    path = tmp_path / f"hang{nodes}.tar"
    write_bundle(SimConfig(scenario="rank_hang", nodes=nodes, gpus_per_node=8, duration_s=120.0, interval_s=5.0,
                           seed=seed, confounders=False), path, tables=False)
    frames: dict = {}
    logs = 0
    with tarfile.open(path) as tf:
        labels = json.load(tf.extractfile("truth/labels.json"))
        for m in tf.getmembers():
            parts = m.name.split("/")
            if m.isfile() and parts[0] == "hosts" and parts[-1].startswith("torchrun-"):
                logs += 1
                res = get("nccl").parse(tf.extractfile(m).read(), ParseContext(host=parts[1], file=parts[-1],
                                                                               tz="UTC", year=2026))
                assert res.unparsed.height == 0
                for t, df in res.tables.items():
                    frames.setdefault(t, []).append(df)
    assert logs == nodes  # every host's ranks wrote their watchdog or dump-signal lines
    out = []
    for k, extra in enumerate(extras):
        more = {t: [*frames.get(t, []), df] for t, df in (extra(labels) if extra else {}).items()}
        findings, errors = run_all(open_bundle(write_tables(tmp_path / f"t{k}", {**frames, **more})),
                                   only={"hang_origin", "collective_timeout"}, anomaly=False)
        assert errors == []
        out.append([dict(r, evidence=json.loads(r["evidence"])) for r in findings.to_dicts()])
    return (out[0] if extras == (None,) else out), labels


@pytest.mark.parametrize("nodes,seed", [(8, 3), (32, 11), pytest.param(64, 7, marks=pytest.mark.slow)])
def test_hang_origin_names_the_stuck_rank_and_host(tmp_path, nodes, seed):
    findings, labels = _run(tmp_path, nodes, seed)
    (truth,) = [t for t in labels["faults"] if t["kind"] == "hang_origin"]
    assert [f["kind"] for f in findings] == ["hang_origin", "collective_timeout"]
    origin, timeouts = findings
    assert origin["hosts"] == truth["hosts"] and origin["subject"] == truth["subject"]
    assert timeouts["caused_by"] == origin["id"] and origin["caused_by"] is None
    ev = origin["evidence"]
    stuck = int(truth["subject"].split()[1])
    assert ev["origin_ranks"] == [stuck] and ev["never_entered"] and ev["reporting_ranks"] == nodes * 8
    # the sequence numbers per rank group: the stuck rank one behind, everyone else at the whole step
    (behind, rest) = ev["seq_groups"]
    assert behind["ranks"] == [stuck] and behind["last_enqueued"] == behind["last_completed"] == ev["target_seq"] - 1
    assert rest["n_ranks"] == nodes * 8 - 1 and rest["last_completed"] == ev["target_seq"] - 1
    assert rest["last_enqueued"] > ev["target_seq"] and ev["timed_out_ranks"] == nodes * 8 - 1


def test_confirm_names_the_origin_pid_when_the_bundle_gives_it(tmp_path):
    """hang_origin's confirm command (py-spy dump --pid <pid>) gets the stuck rank's pid where the bundle
    names it: the GPU process on its host whose RANK is that rank (collect's process_env) first, else a
    torchrun failure record of that rank; without either the placeholder stays."""
    def truth(labels):
        (t,) = [t for t in labels["faults"] if t["kind"] == "hang_origin"]
        return int(t["subject"].split()[1]), t["hosts"][0]

    def record(labels):
        stuck, host = truth(labels)
        return {"rank_hosts": pl.DataFrame({"host": [host], "source": ["train_log"], "file": ["x.log"], "line_no": [1],
                                            "how": ["torchrun_failure"], "rank": [stuck], "local_rank": [stuck % 8],
                                            "node": [host], "pid": [4242], "exitcode": [-6]})}

    def env(labels):
        stuck, host = truth(labels)
        return {**record(labels), "process_env": pl.DataFrame({
            "host": [host, host], "source": ["collector"] * 2, "file": ["processes.jsonl"] * 2, "line_no": [1, 2],
            "pid": [5151, 5152], "key": ["RANK", "RANK"], "value": [str(stuck), str(stuck + 1)]})}
    runs, _ = _run(tmp_path, 2, 3, extras=(env, record, None))
    for findings, want in zip(runs, (5151, 4242, None)):
        assert findings[0]["kind"] == "hang_origin" and findings[0]["evidence"]["pid"] == want
        assert f"py-spy dump --pid {want if want else '<pid>'} on its host" in findings[0]["confirm"]


def test_flight_recorder_dumps_alone_name_the_stuck_rank(tmp_path):
    """Every rank of a hung job dumps its Flight Recorder ring (TORCH_NCCL_DUMP_ON_TIMEOUT=1); the
    simulated bundle holds one JSON dump per rank where `collect --nccl-log '/tmp/nccl_trace_rank_*'`
    puts it (raw/nccl), read as flight_recorder there. From the dumps alone hang_origin names the stuck
    rank and its host (its entries stop at the collective before the one every other rank enqueued);
    with the torchrun logs too, the same origin, its first evidence a dump."""
    path = tmp_path / "hang2.tar"
    write_bundle(SimConfig(scenario="rank_hang", nodes=2, gpus_per_node=8, duration_s=120.0, interval_s=5.0,
                           seed=3, confounders=False), path, tables=False)
    fr: dict = {}
    logs: dict = {}
    with tarfile.open(path) as tf:
        labels = json.load(tf.extractfile("truth/labels.json"))
    for fname, src, _, res in job_outputs(path):
        if fname.startswith("nccl_trace_rank_"):
            assert src == "flight_recorder"
            assert res.unparsed.height == 0 and not res.meta.get("warning")
            for t, df in res.tables.items():
                fr.setdefault(t, []).append(df)
        elif fname.startswith("torchrun-"):
            for t, df in res.tables.items():
                logs.setdefault(t, []).append(df)
    (truth,) = [t for t in labels["faults"] if t["kind"] == "hang_origin"]
    stuck = int(truth["subject"].split()[1])
    pg = pl.concat(fr["flight_recorder_pg"])
    assert sorted(pg["rank"].to_list()) == list(range(16))  # one dump per rank
    behind = pg.filter(pl.col("rank") == stuck)
    assert behind["last_enqueued"].to_list() == behind["last_completed"].to_list()
    assert (pg.filter(pl.col("rank") != stuck)["last_completed"] == behind["last_completed"][0]).all()
    assert (pg.filter(pl.col("rank") != stuck)["last_enqueued"] > behind["last_enqueued"][0] + 1).all()
    for k, frames in enumerate((fr, {**logs, **fr})):
        findings, errors = run_all(open_bundle(write_tables(tmp_path / f"t{k}", frames)), only={"hang_origin"},
                                   anomaly=False)
        assert errors == []
        (origin,) = findings.to_dicts()
        ev = json.loads(origin["evidence"])
        assert origin["hosts"] == truth["hosts"] and origin["subject"] == truth["subject"]
        assert ev["origin_ranks"] == [stuck] and ev["never_entered"] and ev["reporting_ranks"] == 16
        assert ev["first"]["file"] == f"raw/nccl/nccl_trace_rank_{stuck}"
