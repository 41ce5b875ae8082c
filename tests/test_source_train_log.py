"""Training logs (forensics/sources/train_log.py): the figures each framework prints land in the
right columns, with the right scale, and every other line is accounted for."""
from __future__ import annotations

from pathlib import Path

import pytest

from forensics.sources import ParseContext, detect, recognise
from forensics.sources import _lightning as lightning
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


# --- PyTorch Lightning's progress bars (forensics/sources/_lightning.py) ---

def _bar_rows(name: str):
    res = _parse((FIX / name).read_bytes())
    return res, res.tables["train_steps"]


def test_lightning_tqdm_s_per_it_loss_and_window_step_time():
    res, df = _bar_rows("train_log--lightning-issue4225-tqdm-s-per-it-loss-vnum.txt")
    assert set(df["framework"]) == {"lightning"} and df.height == 10
    assert df["step"].to_list() == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5] and set(df["steps_total"]) == {18}
    assert df["iters_per_s"][0] == pytest.approx(1 / 8.77)  # 's/it' inverted
    assert df["elapsed_s"].to_list()[::2] == [8.0, 11.0, 14.0, 17.0, 20.0]
    assert df["loss"].to_list()[:3] == [None, 10.473, 10.473]  # the first redraw has no postfix yet
    # no clock time in a bar: never invented
    assert df["ts"].null_count() == df.height and set(df["ts_quality"]) == {"none"}
    # the window from the epoch's 0/18 redraw (00:00) closes at the first update 20 s on: 20 s / 5 batches
    assert df["step_time_s"].drop_nulls().to_list() == [4.0]
    assert df.filter(df["step_time_s"].is_not_null())["line_no"].to_list() == [12]
    # 'Training: 0it', 'Training: 0/18' and 'Epoch 0: 0/18' have no batch done yet
    assert res.unparsed["line_no"].to_list() == [1, 2, 3] and set(res.unparsed["reason"]) == {lightning.START}


def test_lightning_windows_over_unknown_total():
    res, df = _bar_rows("train_log--lightning-ray-train-unknown-total-vnum.txt")
    assert df["step"].to_list() == [1, 2, 3, 4, 5] and df["steps_total"].null_count() == 5  # '1/?'
    assert df["loss"].to_list() == [14.6, 13.9, 14.8, 14.1, 14.9]  # train_loss
    # windows of >= 20 s of the bar's elapsed time: 0->20 s (1 batch), 20->52 s (2), 52->87 s (2)
    assert df["step_time_s"].to_list() == [20.0, None, 16.0, None, 17.5]
    assert res.unparsed["reason"].to_list() == [lightning.START]


def test_lightning_1x_validation_on_the_training_bar_forms_no_window():
    res, df = _bar_rows("train_log--lightning-issue3866-colab-validating-on-main-bar.txt")
    # Colab's capture drops the bar glyphs: '90% 1531/1702 [12:41<01:25,  2.01it/s, ...]'
    assert df["step"].to_list()[:4] == [1531, 1532, 1533, 1534] and df["elapsed_s"][0] == 761.0
    assert df["loss"][0] == 0.158  # 1.x's running 'loss', not the module's train_loss
    # after 'Validating:' Lightning 1.x counts validation batches on the same bar: no step time from them
    assert df["step_time_s"].null_count() == df.height
    assert res.unparsed.filter(res.unparsed["line_no"] == 12)["reason"].to_list() == [lightning.EVAL]


def test_lightning_joined_updates_in_one_line_keep_their_order():
    res, df = _bar_rows("train_log--lightning-2x-knitr-joined-updates-sanity-validation-predict.txt")
    line1 = df.filter(df["line_no"] == 1)
    assert line1["seq"].to_list() == list(range(29))  # 29 training updates run together in line 1
    assert line1["epoch"].to_list() == [0.0] * 3 + [float(e) for e in range(1, 10) for _ in range(3)][:26]
    assert line1["loss"].to_list()[:3] == [None, 1.86, 1.86]  # train_loss_step
    # the sanity-check and training bars before 'Epoch 0' give no rows; Validation and Predicting bars are kept apart
    assert res.unparsed["line_no"].to_list() == [2, 3, 4, 5, 7] and set(res.unparsed["reason"]) == {lightning.EVAL}
    assert df.filter(df["line_no"] == 6).height == 3  # the training bar redrawn after validation


def test_lightning_carriage_return_joined_file():
    """tqdm writing to a file separates its redraws with '\\r': one physical line holds them all."""
    data = (FIX / "train_log--lightning-ray-train-unknown-total-vnum.txt").read_bytes()
    joined = b"\r".join(data.rstrip(b"\n").split(b"\n")) + b"\n"
    res = _parse(joined)
    df = res.tables["train_steps"]
    assert res.lines == 1 and df["seq"].to_list() == [0, 1, 2, 3, 4]
    assert df["step_time_s"].to_list() == [20.0, None, 16.0, None, 17.5] and res.unparsed.height == 0
    assert train_log.sniff(joined).confidence >= 0.6


def test_lightning_rich_bar_and_wrapped_metrics():
    res, df = _bar_rows("train_log--lightning-rich-progress-bar-wrapped-metrics.txt")
    assert df["epoch"].to_list() == [0.0, 1.0, 2.0, 3.0, 4.0] and set(df["step"]) == {98}
    assert df["elapsed_s"].to_list() == [22.0, 25.0, 23.0, 22.0, 23.0] and df["iters_per_s"][0] == 4.44
    assert df["loss"].to_list() == [1.559, 1.2, 1.027, 0.819, 0.66]  # train/loss
    assert set(res.unparsed["reason"]) == {lightning.RICH_MORE} and res.unparsed.height == 7


def test_lightning_0_6_batch_unit():
    res, df = _bar_rows("train_log--lightning-issue675-0.6-batch-per-s.txt")
    assert df.select("epoch", "step", "steps_total", "iters_per_s", "loss").rows() == [
        (32.0, 331, 331, 88.73, 1.148), (33.0, 18, 331, 61.06, 1.073)]
    assert res.unparsed.filter(res.unparsed["line_no"] == 4)["reason"].to_list() == [train_log._HF_EVAL]


def test_lightning_needs_its_marks_and_malformed_bars_go_unparsed():
    # a tqdm 'Epoch N:' bar with none of Lightning's marks is some other loop's
    plain = b"Epoch 9: 100%|\xe2\x96\x88\xe2\x96\x88| 391/391 [01:19<00:00,  4.94it/s, loss=0.752, accuracy=73.73%]\n"
    res = _parse(plain)
    assert res.tables["train_steps"].height == 0 and res.unparsed["reason"].to_list() == [lightning.NO_MARK]
    assert not train_log.sniff(plain)
    # a bar cut before its rate, beside a good one: the good one is read, the cut line is counted unparsed
    data = (b"Epoch 0:  10%|#         | 5/50 [00:20<03:00,  4.00s/it, loss=1.5, v_num=0]\n"
            b"Epoch 0:  12%|#         | 6/50 [00:2\n")
    res = _parse(data)
    assert res.tables["train_steps"]["step"].to_list() == [5]
    assert res.unparsed["line_no"].to_list() == [2] and res.unparsed["reason"][0] == train_log._NOT


def test_lightning_timestamp_only_from_a_collector_prefix_of_a_single_update():
    one = b"2024-05-01 10:00:05 Epoch 0:  10%|#  | 5/50 [00:20<03:00,  4.00s/it, v_num=0]\n"
    df = _parse(one).tables["train_steps"]
    assert str(df["ts"][0]) == "2024-05-01 10:00:05+00:00" and df["ts_quality"][0] == "local"
    two = one.rstrip(b"\n") + b"\rEpoch 0:  12%|#  | 6/50 [00:24<02:56,  4.00s/it, v_num=0]\n"
    df = _parse(two).tables["train_steps"]
    assert df.height == 2 and set(df["ts_quality"]) == {"none"}  # which redraw the stamp belongs to is unknown


def test_lightning_bar_split_over_two_lines_by_colab():
    res, df = _bar_rows("train_log--lightning-colab-collie-split-bar-lines.txt")
    # 'Epoch 9: 100%' then '55/55 [00:05<00:00, 10.37it/s, loss=1.74, v_num=0]': one bar, on its second line
    assert df.select("line_no", "epoch", "step", "steps_total", "elapsed_s", "iters_per_s", "loss").rows() == [
        (19, 9.0, 55, 55, 5.0, 10.37, 1.74)]
    # 'Validation sanity check: 0%' / '0/2 [...]' is a sanity-check bar; each first half is read with its second
    assert res.unparsed.filter(res.unparsed["line_no"] == 16)["reason"].to_list() == [lightning.EVAL]
    assert not {15, 18} & set(res.unparsed["line_no"].to_list())
    assert res.unparsed.height == res.lines - 4  # every other line is counted unparsed
