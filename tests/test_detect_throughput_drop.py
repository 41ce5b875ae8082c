"""throughput_drop: the job's own logged throughput against its best sustained level (issue 19)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from forensics.sources import ParseContext, train_log
from forensics.db import open_bundle
from forensics.detect.engine import run_all
from table_bundles import write_tables

FIX = Path(__file__).parent / "fixtures" / "train_log" / "train_log--torchtitan-pr3393-rank0-prefix.txt"


def _log(tps: list[int]) -> bytes:
    """The real torchtitan line of the fixture's first step, repeated with the given tps values."""
    line = FIX.read_text().splitlines()[0]
    out = []
    for i, v in enumerate(tps):
        t = line.replace("step: 14 ", f"step: {14 + i} ").replace("tps: 7,282", f"tps: {v:,}")
        out.append(re.sub(r"16:04:46", f"16:{4 + i // 60:02d}:{i % 60:02d}", t))
    return ("\n".join(out) + "\n").encode()


def _findings(tmp_path, data: bytes):
    res = train_log.parse(data, ParseContext(host="node07", file="train.log", tz="UTC"))
    frames = {t: [df] for t, df in res.tables.items()}
    findings, errors = run_all(open_bundle(write_tables(tmp_path, frames)))
    assert errors == []
    return [dict(r, evidence=json.loads(r["evidence"])) for r in findings.filter(pl.col("kind") == "throughput_drop").to_dicts()]


def test_drop_against_the_jobs_own_best_level(tmp_path):
    got = _findings(tmp_path, _log([7300] * 8 + [4200] * 5 + [7300] * 3))
    assert len(got) == 1
    f = got[0]
    ev = f["evidence"]
    assert f["severity"] == "warning" and f["hosts"] == ["node07"]
    assert ev["metric"] == "tokens/s" and ev["steps"] == 5 and (ev["first_step"], ev["last_step"]) == (22, 26)
    assert ev["best_sustained"] == 7300 and round(ev["drop_pct"]) == 42 and ev["rank"] == 0
    assert "42% below the job's best sustained 7300" in f["summary"]


def test_real_step_spread_is_no_drop(tmp_path):
    assert _findings(tmp_path, FIX.read_bytes()) == []
    assert _findings(tmp_path / "b", _log([7300] * 8 + [4200] * 2 + [7300] * 3)) == []  # 2 slow steps < min_steps
