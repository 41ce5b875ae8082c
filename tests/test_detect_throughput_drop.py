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


LIGHTNING = Path(__file__).parent / "fixtures" / "train_log" / "train_log--lightning-ray-train-unknown-total-vnum.txt"


def _lightning_log(step_s: list[float], epochs: int = 1) -> bytes:
    """The real Lightning bar lines of the fixture (``Epoch 0: |  | 0/? [00:00<?, ?it/s]``, then ``... 1/?
    [00:20<00:00,  0.05it/s, v_num=0, train_loss=14.60]``), redrawn after every batch of the given durations, each epoch's bar restarting;
    all redraws joined by carriage returns in one physical line, as tqdm writes them to a file."""
    first, line = LIGHTNING.read_text().splitlines()[:2]
    first = first[: first.index("]") + 1]  # 'Epoch 0: |          | 0/? [00:00<?, ?it/s]': the bar's reset
    out = []
    for epoch in range(epochs):
        out.append(first.replace("Epoch 0:", f"Epoch {epoch}:"))
        elapsed = 0.0
        for n, s in enumerate(step_s, start=1):
            elapsed += s
            t = line.replace("Epoch 0:", f"Epoch {epoch}:").replace(" 1/?", f" {n}/?")
            t = t.replace("[00:20<", f"[{int(elapsed) // 60:02d}:{int(elapsed) % 60:02d}<").replace("0.05it/s", f"{n / elapsed:.2f}it/s")
            out.append(t)
    return ("\r".join(out) + "\n").encode()


def test_lightning_bar_slowdown_reaches_the_detector(tmp_path):
    # 2 s a batch, then 4 s a batch for 200 s, then 2 s again: the windows of the bar's own counts halve
    got = _findings(tmp_path, _lightning_log([2.0] * 150 + [4.0] * 50 + [2.0] * 50))
    assert len(got) == 1
    ev = got[0]["evidence"]
    assert ev["framework"] == "lightning" and ev["metric"] == "steps/s" and ev["first"]["line_no"] == 1
    assert ev["best_sustained"] == 0.5 and round(ev["drop_pct"]) == 50 and ev["steps"] >= 3
    assert 151 <= ev["first_step"] and ev["last_step"] <= 202  # batches of the slow stretch, in the bar's count
    assert got[0]["start"] is None  # a progress bar has no clock time: none is invented


def test_lightning_epoch_start_and_printed_average_are_no_drop(tmp_path):
    # each epoch's first batch takes 12 s (workers starting): the printed it/s, an average since the epoch
    # began, stays below 80% of the steady rate for 19 batches every epoch; the 20 s windows of the bar's
    # counts see one slow window an epoch (0->20 s: 5 batches), fewer than min_steps
    assert _findings(tmp_path, _lightning_log([12.0] + [2.0] * 149, epochs=3)) == []


MEGATRON = Path(__file__).parent / "fixtures" / "train_log" / "train_log--megatron-issue756-mixtral-h100-timestamped.txt"


def test_a_step_time_too_small_for_its_inverse_is_no_rate(tmp_path):
    # the real Megatron line, its elapsed time per iteration written with 305 zeros after the point (a hostile or
    # broken log): a finite step_time_s of 1e-309 s whose inverse is inf; those steps were the job's "best
    # sustained" rate and every real step "100% below" it
    line = MEGATRON.read_text().splitlines()[0]
    tiny = "0." + "0" * 305 + "1"  # (1e-306 ms: 1e-309 s, whose inverse is past a double)
    out = []
    for i in range(13):
        t = re.sub(r"iteration +43/", f"iteration {43 + i:>8}/", line).replace("02:59:36", f"03:00:{10 + i:02d}")
        out.append(t.replace("(ms): 5444.9", f"(ms): {tiny}") if i < 8 else t)
    data = ("\n".join(out) + "\n").encode()
    steps = train_log.parse(data, ParseContext(host="node07", file="train.log", tz="UTC")).tables["train_steps"]
    assert steps.height == 13 and steps["step_time_s"].min() > 0  # (finite, positive: the parser's number)
    assert _findings(tmp_path, data) == []
