"""throughput_shortfall: the job's own logged tokens/s per GPU against the rate expected of it (issue 19,
seed 000: 1,840 tokens/s/GPU against ~3,200). Logs are the real torchtitan line of
tests/fixtures/train_log/train_log--torchtitan-pr3393-rank0-prefix.txt with its tps changed; the
seed 000 case is the simulator's seed000_case_study, analysed as `forensics analyze --expect-tokens-per-s` does."""
from __future__ import annotations

import json
import tarfile

import polars as pl

from forensics.analysis import analyze_paths
from forensics.db import open_bundle
from forensics.detect.engine import run_all
from forensics.simulate import SimConfig, write_bundle
from forensics.sources import ParseContext, train_log
from table_bundles import write_tables
from test_detect_throughput_drop import FIX, _log


def _findings(tmp_path, data: bytes, expect: float | None):
    res = train_log.parse(data, ParseContext(host="node07", file="train.log", tz="UTC"))
    frames = {t: [df] for t, df in res.tables.items()}
    findings, errors = run_all(open_bundle(write_tables(tmp_path, frames)), only={"throughput_shortfall"}, anomaly=False,
                               overrides={"expect_tokens_per_s": expect} if expect else None)
    assert errors == []
    return [dict(r, evidence=json.loads(r["evidence"])) for r in findings.to_dicts()]


def test_below_the_expected_rate(tmp_path):
    got = _findings(tmp_path, _log([1840, 1850, 1830, 1845, 1838]), 3200)
    assert len(got) == 1
    f, ev = got[0], got[0]["evidence"]
    assert f["kind"] == "throughput_shortfall" and f["hosts"] == ["node07"] and f["severity"] == "warning"
    assert ev["median"] == 1840 and ev["expected"] == 3200 and abs(ev["shortfall_pct"] - 42.5) < 1e-6 and ev["steps"] == 5
    assert "1840 tokens/s per GPU (median of 5 logged step(s), steps 14-18), 43% below the expected 3200" in f["summary"]


def test_nothing_without_an_expectation_or_at_it(tmp_path):
    assert _findings(tmp_path, _log([1840] * 5), None) == []
    assert _findings(tmp_path / "b", FIX.read_bytes(), 7300) == []  # the real log runs at ~7,300 tps


def test_seed000_case_study_states_the_shortfall(tmp_path):
    path = tmp_path / "seed000.tar"
    write_bundle(SimConfig(scenario="seed000_case_study", nodes=4, gpus_per_node=4, duration_s=240.0, interval_s=2.0,
                           seed=5, confounders=False), path)
    with tarfile.open(path) as tf:
        assert any(m.name.endswith("raw/nccl/train-rank0.log") for m in tf.getmembers())  # as --nccl-log copies it
    analysis = analyze_paths([path], cache_dir=tmp_path / "cache", params={"expect_tokens_per_s": 3200})
    rows = analysis.findings.filter(pl.col("kind") == "throughput_shortfall").to_dicts()
    assert len(rows) == 1
    ev = json.loads(rows[0]["evidence"])
    assert 30 <= ev["shortfall_pct"] <= 45  # the simulated job: ~2,040 tokens/s/GPU
    assert rows[0]["caused_by"] is not None  # a consequence of the misconfiguration, not a root cause
    plain = analyze_paths([path], cache_dir=tmp_path / "cache")
    assert plain.findings.filter(pl.col("kind") == "throughput_shortfall").height == 0
