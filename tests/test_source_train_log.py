"""Training logs (forensics/sources/train_log.py): the figures each framework prints land in the
right columns, with the right scale, and every other line is accounted for."""
from __future__ import annotations

from pathlib import Path

import pytest

from forensics.sources import ParseContext, detect, recognise
from forensics.sources import train_log

FIX = Path(__file__).parent / "fixtures" / "train_log"


def _parse(data: bytes, tz: str | None = None):
    return train_log.parse(data, ParseContext(host="n1", file="train.log", tz=tz))


def test_megatron_fields_and_scale():
    res = _parse((FIX / "train_log--megatron-issue756-mixtral-h100-timestamped.txt").read_bytes(), tz="Europe/Berlin")
    df = res.tables["train_steps"]
    assert df["step"].to_list() == [43, 44, 45] and df["steps_total"].to_list() == [100, 100, 100]
    assert df["step_time_s"].to_list() == pytest.approx([5.4449, 5.5338, 5.7186])  # ms -> s
    assert df["tflops_per_gpu"].to_list() == [239.8, 236.0, 228.4]
    assert df["loss"].to_list() == pytest.approx([1.825991, 1.875063, 1.834162])  # lm loss, not load_balancing_loss
    # the logger prints local time: 02:59:36 CEST is 00:59:36 UTC
    assert str(df["ts"][0]) == "2024-04-06 00:59:36+00:00" and set(df["ts_quality"]) == {"local"}
    assert res.unparsed.height == 0


def test_megatron_deepspeed_and_deepspeed_timer():
    res = _parse((FIX / "train_log--deepspeed-issue3742-megatron-deepspeed-samples-sec.txt").read_bytes())
    df = res.tables["train_steps"].sort("line_no")
    assert df.select("framework", "step", "samples_per_s").rows() == [
        ("deepspeed", 34, pytest.approx(8.00912418308922)), ("megatron", 34, 7.799)]
    mega = df.row(1, named=True)
    assert mega["tflops_per_gpu"] == 112.9 and mega["step_time_s"] == pytest.approx(4.1031)
    assert mega["loss"] == pytest.approx(11.18665)
    assert res.unparsed["line_no"].to_list() == [2, 3, 5, 6]
    assert set(res.unparsed["reason"]) == {train_log._DS_SKIP}


def test_torchtitan_rank_prefix_thousands_separator_and_mfu():
    df = _parse((FIX / "train_log--torchtitan-pr3393-rank0-prefix.txt").read_bytes()).tables["train_steps"]
    assert df.height == 8 and set(df["rank"]) == {0} and df["step"].to_list() == list(range(14, 22))
    assert df["tokens_per_s"][0] == 7282.0 and df["tflops_per_gpu"][0] == 0.52 and df["mfu_pct"][0] == 0.17


def test_hf_trainer_summary_and_eval_dicts():
    res = _parse((FIX / "train_log--hf-trainer-distilbert-eval-and-summary.txt").read_bytes())
    df = res.tables["train_steps"]
    row = df.row(0, named=True)
    assert df.height == 1 and row["record"] == "summary" and row["step"] is None
    assert row["step_time_s"] == pytest.approx(1 / 0.147) and row["samples_per_s"] == 1.176
    assert row["loss"] == pytest.approx(0.12877427736918132) and row["epoch"] == 3.0
    evals = res.unparsed.filter(res.unparsed["reason"] == train_log._HF_EVAL)
    assert evals["line_no"].to_list() == [3, 4, 5, 7]


def test_hf_trainer_string_values_and_step():
    data = (b"{'loss': '76.31', 'grad_norm': '2175', 'learning_rate': '6.667e-06', 'epoch': '1.5'}\n"
            b"[INFO|trainer_tf.py:398] 2021-01-15 10:28:50,371 >> {'loss': 0.6347228, 'learning_rate': 4.891304e-05, "
            b"'epoch': 0.08695652173913043, 'step': 10}\n")
    df = _parse(data).tables["train_steps"]
    assert df.select("step", "loss", "epoch").rows() == [(None, 76.31, 1.5), (10, 0.6347228, 0.08695652173913043)]
    assert df["ts_quality"].to_list() == ["none", "local"]


def test_every_line_accounted_crlf_and_blank():
    data = (FIX / "train_log--torchtitan-pr3393-rank0-prefix.txt").read_bytes().replace(b"\n", b"\r\n")
    data = b"starting job\r\n\r\n" + data + b"Traceback (most recent call last):\r\n"
    res = _parse(data)
    assert res.lines == 11 and res.tables["train_steps"].height == 8
    assert res.unparsed["line_no"].to_list() == [1, 11]  # the blank line is structure, not unparsed


def test_sniff_confidence_and_rejection():
    got = train_log.sniff((FIX / "train_log--torchtitan-pr3393-rank0-prefix.txt").read_bytes())
    assert got and got.confidence == 1.0
    assert not train_log.sniff(b"step: 1 loss: 2.0\nhello\n")  # no tps: not torchtitan's metrics line
    assert not train_log.sniff(b"{'eval_loss': 0.1, 'epoch': 1.0}\n")  # an eval dict alone is no training log
    assert train_log.sniff(b"").confidence == 0.0


@pytest.mark.parametrize("f", sorted(p for p in FIX.iterdir() if p.suffix == ".txt"), ids=lambda p: p.name)
def test_fixtures_detected_as_train_log(f):
    assert detect(f.read_bytes()) == "train_log"
    assert recognise(f.read_bytes())[1].confidence >= 0.6
