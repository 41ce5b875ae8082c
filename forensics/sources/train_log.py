"""Training logs -> ``train_steps``: the throughput the job itself printed, step by step.

Lines read (each as its framework prints it; any prefix a launcher adds before the timestamp, such
as torchrun's ``[rank0]:``, is allowed):

- **Megatron-LM** ``training_log`` (and Megatron-DeepSpeed's)::

    [2024-04-06 02:59:36] iteration   43/   100 | consumed samples: 5504 | elapsed time per iteration (ms): 5444.9 |
    throughput per GPU (TFLOP/s/GPU): 239.8 | learning rate: 8.6E-06 | global batch size: 128 | lm loss: 1.825991E+00 | ...

  (one line in the log), also without the timestamp or the throughput field, and Megatron-DeepSpeed's
  `` samples/sec: 7.799 | iteration 34/ 10000 | ... | approx flops per GPU: 112.9TFLOPS | lm_loss: ...``.
  ``step_time_s`` is the elapsed time per iteration (Megatron averages it over its log interval).
- **torchtitan** ``[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  grad_norm: ...
  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%`` (``tps`` is tokens/s per device).
- **DeepSpeed** ThroughputTimer lines: ``[timer.py:215:stop] epoch=0/micro_step=34/global_step=34,
  RunningAvgSamplesPerSec=7.86, CurrSamplesPerSec=8.01, ...`` (samples_per_s = the current figure) and
  the older ``[timer.py:189:stop] 0/40, SamplesPerSec=83.48, ...`` (epoch/step, running average).
- **HuggingFace Trainer** log dicts: ``{'loss': 0.0024, 'grad_norm': 0.117, 'learning_rate': 1.7e-06,
  'epoch': 18.1}`` (values also as strings, as newer releases print them; TF Trainer adds ``'step'``) and
  the end-of-run ``{'train_runtime': 204.08, 'train_samples_per_second': 1.176, 'train_steps_per_second':
  0.147, 'train_loss': 0.128, 'epoch': 3.0}`` (a ``summary`` row, step_time_s = 1 / steps per second).
- **PyTorch Lightning** progress bars, tqdm's ``Epoch 0:  22%|██▏  | 4/18 [00:17<01:02,  4.47s/it, loss=9.926,
  v_num=193315]`` and Rich's ``Epoch 0/23 ━━━━ 98/98 0:00:22 • 0:00:00 4.44it/s v_num: 0 ...``, every
  update of a carriage-return-joined line (:mod:`._lightning`: epoch, batches done, the bar's elapsed time
  and rate; no clock time; step time derived over windows of the bar's own counts).

The same output's torchrun failure records (``ChildFailedError``: ``host :``, ``rank : N (local_rank:
M)``, ...) become ``rank_hosts`` rows: which host each failed rank ran on (:mod:`._rank_places`), and the
log records of the programs that run the job (vLLM, Ray, torchrun/torchelastic, PyTorch's glog and Python
logging: program, worker, pid, rank, level, time, source line, message) become ``runtime_log`` rows
(:mod:`._runtime_log`). PyTorch's desync report and ``TORCH_DISTRIBUTED_DEBUG=DETAIL``'s ``Detected
mismatch between collectives`` errors in the same output become ``nccl_desync`` rows, read by the nccl
source's reader (:mod:`forensics.sources.nccl.desync`), so ``hang_origin_desync`` sees them whichever
source took the file.

Everything else (evaluation dicts, DeepSpeed's ``step=N, skipped=`` and ``time (ms) |`` breakdowns,
other progress bars, warnings) goes to ``unparsed`` with a reason, so the count of lines not read is exact.
Timestamps printed by these loggers are local time without a zone: converted with ctx.tz
(ts_quality "local"); lines without one get ts null ("none").

>>> from forensics.sources._base import ParseContext
>>> sample = (b"[rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  grad_norm:  0.8319"
...           b"  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%\\n"
...           b"WARNING: something else\\n")
>>> res = parse(sample, ParseContext(host="node01"))
>>> res.tables["train_steps"].select("framework", "rank", "step", "tokens_per_s", "tflops_per_gpu", "mfu_pct", "loss").rows()
[('torchtitan', 0, 14, 7282.0, 0.52, 0.17, 3.24405)]
>>> res.lines, res.unparsed.select("line_no", "reason").rows()
(2, [(2, 'not a training step line of Megatron-LM, torchtitan, DeepSpeed, the HF Trainer or PyTorch Lightning')])
"""
from __future__ import annotations

import datetime as dt
import re

import polars as pl

from forensics.sources import _lightning as lightning
from forensics.sources import _rank_places as rank_places
from forensics.sources import _runtime_log as runtime_log
from forensics.sources._base import (ParseContext, ParseResult, Sniff, head_text, local_to_utc, result, split_lines,
                                     unparsed_frame, unparsed_rows)
from forensics.sources._bounded import float_or_none
from forensics.sources.nccl.desync import desync_rows

NAME = "train_log"
VERSION = 5  # 5: a number past a double's range (a run of hundreds of digits: loss, epoch, step time, samples/s, TFLOP/s, MFU) is null, not inf; a printed nan/inf loss keeps its value
TABLES = ("train_steps", "rank_hosts", "runtime_log", "nccl_desync")
DESCRIPTION = ("training logs (Megatron-LM, torchtitan, DeepSpeed, HF Trainer, PyTorch Lightning's progress bars): step time, tokens/samples per s, TFLOP/s, "
               "MFU, loss; torchrun failure records: the host of each failed rank; the vLLM/Ray/torchrun/PyTorch "
               "log records of the job; PyTorch desync reports and DETAIL collective mismatches")

# literals one of which every line read here holds: lines without any go to unparsed without a regex
_GATE = ("iteration", "step:", "SamplesPerSec=", "{'", "step=", "time (ms)", *lightning.GATE)
_NUM = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"

_MEGATRON = re.compile(r"(?:^|[|\]])\s*iteration\s+([0-9]{1,12})\s*/\s*([0-9]{1,12})\s*\|")
_MEGATRON_TIME = re.compile(r"elapsed time per iteration \(ms\):\s*" + _NUM)
_TITAN = re.compile(r"\bstep:\s*([0-9]{1,12})\s+loss:\s*(" + _NUM + r"|nan|inf|-inf)\s")
_TITAN_TPS = re.compile(r"\btps:\s*([0-9][0-9,]{0,20})(?:\s|$)")
_TITAN_TFLOPS = re.compile(r"\btflops:\s*(" + _NUM + r")(?:\s|$)")
_TITAN_MFU = re.compile(r"\bmfu:\s*(" + _NUM + r")%")
_DS_NEW = re.compile(r"\bepoch=([0-9]{1,9})/micro_step=[0-9]{1,12}/global_step=([0-9]{1,12}), "
                     r"RunningAvgSamplesPerSec=(" + _NUM + r"|nan|inf), CurrSamplesPerSec=(" + _NUM + r"|nan|inf)")
_DS_OLD = re.compile(r"(?:^|[\]\s])([0-9]{1,9})/([0-9]{1,12}), SamplesPerSec=(" + _NUM + r"|nan|inf)")
_DS_OTHER = re.compile(r"(?:\[Rank [0-9]+\] step=[0-9]+, skipped=|(?:^|\] )(?:rank=[0-9]+ )?time \(ms\) \|)")
_HF_DICT = re.compile(r"\{'[A-Za-z_]+': .*\}\s*$")
_HF_PAIR = re.compile(r"'([A-Za-z_]+)':\s*'?(" + _NUM + r"|nan|inf|-inf)'?(?=[,}])")
_RANK = re.compile(r"^\s*\[rank([0-9]{1,7})\]:|\[Rank ([0-9]{1,7})\]")
_TS = re.compile(r"(?:^|[\[\s])([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:[,.]([0-9]{1,6}))?(?=[\]\s])")

_RUNTIME = re.compile(runtime_log.PATTERN)
_SPLIT_TAIL = re.compile(lightning.SPLIT_TAIL)
_NOT = "not a training step line of Megatron-LM, torchtitan, DeepSpeed, the HF Trainer or PyTorch Lightning"
_DS_SKIP = "DeepSpeed optimizer-step or timer-breakdown line (no throughput; not read)"
_HF_EVAL = ("dict without the HF Trainer's training-step keys ('loss' with 'learning_rate' or 'epoch') or run summary "
            "(evaluation or other metrics; not read)")
_HF_BAD = "HF Trainer-like dict whose values do not read as numbers"

_MEGATRON_KEYS = {
    "elapsed time per iteration (ms)": ("step_time_s", 1e-3),
    "throughput per GPU (TFLOP/s/GPU)": ("tflops_per_gpu", 1.0),
    "approx flops per GPU": ("tflops_per_gpu", 1.0),
    "samples/sec": ("samples_per_s", 1.0),
    "lm loss": ("loss", 1.0),
    "lm_loss": ("loss", 1.0),
}


def sniff(head: bytes) -> Sniff:
    """A training log: at least one step line of a known framework (Megatron's ``iteration N/ M | ...
    elapsed time per iteration``, torchtitan's ``step: N  loss: ... tps:``, DeepSpeed's
    ``SamplesPerSec=``, the Trainer's ``{'loss': ..., 'learning_rate'`` / ``'train_steps_per_second'``,
    Lightning's training progress bar past its first batch in an output that shows Lightning's marks).
    Confidence 0.6 plus 0.4 x the share of non-blank lines that are step lines; without step lines,
    0.7 for torchrun failure records (a ``host :`` line followed by ``rank : N (local_rank: M)``)."""
    lines = [ln for ln in head_text(head).splitlines() if ln.strip()]
    if not lines:
        return Sniff(0.0, "no training step line (Megatron, torchtitan, DeepSpeed, HF Trainer)")
    hits = 0
    for ln in lines[:2000]:
        if _is_step(ln):
            hits += 1
    barred, prev = [], ""
    for ln in lines[:2000]:
        if any(g in ln for g in lightning.GATE):  # (a bar split over two lines read as one)
            barred.append((lightning.rejoin(prev, ln) if _SPLIT_TAIL.match(ln) else None) or ln)
        prev = ln
    if barred:
        ups = lightning.updates(pl.DataFrame({"line_no": range(len(barred)), "text": barred},
                                             schema={"line_no": pl.Int64, "text": pl.String}))
        if lightning.marked(ups):  # Lightning's bars, in an output that shows its marks
            hits += ups.filter(pl.col("kind") == "step")["line_no"].n_unique()
    if not hits:
        records = rank_places.count_records(lines[:2000])
        if records:  # torchrun's failure summary (a job's stdout that died before any step line)
            return Sniff(0.7, f"{records} torchrun failure record(s) (host, rank, local_rank)")
        logged = sum(1 for ln in lines[:2000] if _RUNTIME.match(ln))
        if logged >= 2:  # a job's output before its first step line: the launcher's and server's log records
            n = min(len(lines), 2000)
            return Sniff(round(0.6 + 0.3 * logged / n, 3),
                         f"{logged} of {n} lines are log records of vLLM, Ray, torchrun or PyTorch (a job's output)")
        return Sniff(0.0, "no training step line (Megatron, torchtitan, DeepSpeed, HF Trainer)")
    n = min(len(lines), 2000)
    return Sniff(round(0.6 + 0.4 * hits / n, 3), f"{hits} of {n} lines are training step lines")


def _is_step(ln: str) -> bool:
    if "iteration" in ln and _MEGATRON.search(ln) and _MEGATRON_TIME.search(ln):
        return True
    if "step:" in ln and "tps:" in ln and _TITAN.search(ln):
        return True
    if "SamplesPerSec=" in ln and (_DS_NEW.search(ln) or _DS_OLD.search(ln)):
        return True
    if "{'" in ln and _HF_DICT.search(ln):
        return ("'loss':" in ln and ("'learning_rate':" in ln or "'epoch':" in ln)) or "'train_steps_per_second':" in ln
    return False


def _num(s: str) -> float | None:
    """A printed number (thousands commas dropped); past a double's range (a run of hundreds of digits) none,
    not inf; a printed 'nan'/'inf' (a diverged loss) keeps its value."""
    return float_or_none(s.replace(",", ""))


def _common(text: str) -> dict:
    """rank and local timestamp a line carries, whatever its framework."""
    row: dict = {}
    m = _RANK.search(text)
    if m:
        row["rank"] = int(m.group(1) or m.group(2))
    m = _TS.search(text)
    if m:
        frac = (m.group(3) or "0").ljust(6, "0")
        try:
            row["naive"] = dt.datetime.fromisoformat(f"{m.group(1)} {m.group(2)}.{frac}")
        except ValueError:
            pass
    return row


def _megatron(text: str, m: re.Match) -> dict:
    row = {"framework": "megatron", "record": "step", "step": int(m.group(1)), "steps_total": int(m.group(2))}
    for seg in text.split("|"):
        key, sep, value = seg.partition(":")
        key = key.strip()
        if key.startswith("[") and "]" in key:  # "[2024-04-06 02:59:36] iteration ..." has no ':' key of ours
            continue
        hit = _MEGATRON_KEYS.get(key)
        if not sep or hit is None:
            continue
        value = value.strip()
        if key == "approx flops per GPU":
            if not value.endswith("TFLOPS"):
                continue  # another unit would need its own scale: not guessed
            value = value[: -len("TFLOPS")]
        v = _num(value)
        if v is not None:
            row[hit[0]] = v * hit[1]
    return row


def _titan(text: str, m: re.Match) -> dict:
    row = {"framework": "torchtitan", "record": "step", "step": int(m.group(1)), "loss": _num(m.group(2))}
    for rx, col in ((_TITAN_TPS, "tokens_per_s"), (_TITAN_TFLOPS, "tflops_per_gpu"), (_TITAN_MFU, "mfu_pct")):
        got = rx.search(text)
        if got:
            row[col] = _num(got.group(1))
    return row


def _hf(text: str) -> dict | str:
    pairs = {k: v for k, v in _HF_PAIR.findall(text)}
    if "loss" in pairs and ("learning_rate" in pairs or "epoch" in pairs):
        row = {"framework": "hf_trainer", "record": "step", "loss": _num(pairs["loss"])}
    elif "train_steps_per_second" in pairs or "train_runtime" in pairs:
        row = {"framework": "hf_trainer", "record": "summary",
               "loss": _num(pairs["train_loss"]) if "train_loss" in pairs else None}
        sps = _num(pairs["train_steps_per_second"]) if "train_steps_per_second" in pairs else None
        row["step_time_s"] = 1.0 / sps if sps else None
        if "train_samples_per_second" in pairs:
            row["samples_per_s"] = _num(pairs["train_samples_per_second"])
    elif ("'loss':" in text and "loss" not in pairs) or ("'train_steps_per_second':" in text
                                                          and "train_steps_per_second" not in pairs):
        return _HF_BAD
    else:
        return _HF_EVAL
    if "epoch" in pairs:
        row["epoch"] = _num(pairs["epoch"])
    if "step" in pairs:
        v = _num(pairs["step"])
        row["step"] = int(v) if v is not None and v == v and abs(v) < 2**62 and v == int(v) else None
    return row


def _read(text: str) -> dict | str:
    """The row a line gives, or the reason it gives none."""
    if "iteration" in text:
        m = _MEGATRON.search(text)
        if m:
            return _megatron(text, m)
    if "step:" in text:
        m = _TITAN.search(text)
        if m:
            return _titan(text, m)
    if "SamplesPerSec=" in text:
        m = _DS_NEW.search(text)
        if m:
            return {"framework": "deepspeed", "record": "step", "epoch": _num(m.group(1)), "step": int(m.group(2)),
                    "samples_per_s": _num(m.group(4))}
        m = _DS_OLD.search(text)
        if m:
            return {"framework": "deepspeed", "record": "step", "epoch": _num(m.group(1)), "step": int(m.group(2)),
                    "samples_per_s": _num(m.group(3))}
    if "{'" in text and _HF_DICT.search(text):
        return _hf(text)
    if _DS_OTHER.search(text):
        return _DS_SKIP
    return _NOT


_FLOATS = ("epoch", "step_time_s", "tokens_per_s", "samples_per_s", "tflops_per_gpu", "mfu_pct", "loss", "elapsed_s",
           "iters_per_s")


def _split_bars(lines: pl.DataFrame, cand: pl.DataFrame, rest: pl.DataFrame) -> tuple[dict[int, str], pl.DataFrame]:
    """Progress bars split over two lines (a Colab notebook's saved output): the joined text by the line
    number of their second half, and `rest` without their first halves (read with the second)."""
    tails = cand.filter(pl.col("text").str.contains(lightning.SPLIT_TAIL))
    if not tails.height:
        return {}, rest
    heads = lines.filter(pl.col("line_no").is_in((tails["line_no"] - 1).to_list()))
    head_of = dict(zip(heads["line_no"].to_list(), heads["text"].to_list()))
    joined = {}
    for line_no, t in zip(tails["line_no"].to_list(), tails["text"].to_list()):
        both = lightning.rejoin(head_of.get(line_no - 1, ""), t)
        if both is not None:
            joined[line_no] = both
    used = [n - 1 for n in joined]
    return joined, rest.filter(~pl.col("line_no").is_in(used)) if used else rest


def _lightning_rows(bar_lines: pl.DataFrame, ups: pl.DataFrame) -> tuple[pl.DataFrame | None, list[tuple[int, str, str]]]:
    """Lightning's training-bar redraws as train_steps rows (with ``naive``, the local time a collector's
    stamp gives a line's single redraw) and the unparsed entries of the bar lines that give none
    (:mod:`._lightning`). `bar_lines`: line_no, raw (the line), text (what was read: the line, or a bar
    split over two lines rejoined). Nothing is read as Lightning's unless the output shows its marks."""
    raw = dict(zip(bar_lines["line_no"].to_list(), bar_lines["raw"].to_list()))
    if not lightning.marked(ups):
        return None, [(n, raw[n], lightning.NO_MARK) for n in ups["line_no"].unique().sort().to_list()]
    ups = ups.with_columns(lightning.step_times(ups))
    kind = pl.col("kind")
    per = ups.group_by("line_no").agg((kind == "step").any().alias("steps"), (kind == "eval").any().alias("evals"),
                                      pl.len().alias("n"))
    none = per.filter(~pl.col("steps")).sort("line_no")
    bad = [(n, raw[n], lightning.EVAL if ev else lightning.START)
           for n, ev in zip(none["line_no"].to_list(), none["evals"].to_list())]
    steps = ups.filter(kind == "step").with_columns(pl.int_range(pl.len()).over("line_no").cast(pl.Int32).alias("seq"))
    text = pl.col("text")
    info = bar_lines.select("line_no", pl.coalesce(text.str.extract(r"^\s*\[rank([0-9]{1,7})\]:", 1),
                                                   text.str.extract(r"\[Rank ([0-9]{1,7})\]", 1)).cast(pl.Int32).alias("rank"))
    # a collector's timestamp before a line's single redraw is that redraw's time; none is inferred otherwise
    single = set(per.filter(pl.col("n") == 1)["line_no"].to_list())
    stamped = bar_lines.filter(pl.col("line_no").is_in(list(single)) & text.str.contains(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]"))
    first = dict(zip(steps["line_no"].to_list(), steps["desc"].to_list()))
    naive = {}
    for n, t in zip(stamped["line_no"].to_list(), stamped["text"].to_list()):
        m, at = _TS.search(t), t.find(first.get(n, "\0"))
        if m and 0 <= m.end() <= at:
            naive[n] = _common(t).get("naive")
    rows = steps.join(info, on="line_no", how="left").select(
        "line_no", pl.lit("lightning").alias("framework"), "rank", pl.lit("step").alias("record"), "step", "steps_total",
        pl.col("line_no").replace_strict(naive, default=None, return_dtype=pl.Datetime("us")).alias("naive"), "seq",
        "epoch", "step_time_s", "elapsed_s", "iters_per_s", "loss")
    return rows, bad


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    lines = split_lines(data)
    n = lines.height
    text = pl.col("text")
    gate = pl.lit(False)
    for lit in _GATE:
        gate = gate | text.str.contains(lit, literal=True)
    lines = lines.with_columns(gate.alias("cand"), (text.str.strip_chars() == "").alias("blank"))
    rest = lines.filter(~pl.col("cand") & ~pl.col("blank"))
    # PyTorch's desync report and TORCH_DISTRIBUTED_DEBUG=DETAIL's mismatch error in the job's stdout:
    # read as the nccl source reads them (its reader, forensics.sources.nccl.desync)
    desync, rest = desync_rows(rest.select("line_no", "text")) if rest.height else (None, rest)
    places, used = rank_places.read(rest, ctx)
    if used:
        rest = rest.filter(~pl.col("line_no").is_in(list(used)))
    cand = lines.filter(pl.col("cand"))
    joined, rest = _split_bars(lines, cand, rest)
    rows: list[dict] = []
    bad: list[tuple[int, str, str]] = []
    # Lightning's progress bars, read as a whole (vectorised): every redraw of every line that holds one
    gated = pl.lit(False)
    for lit in lightning.GATE:
        gated = gated | text.str.contains(lit, literal=True)
    bar_lines = cand.filter(gated).select("line_no", text.alias("raw"), text.alias("text"))
    if joined:
        bar_lines = bar_lines.with_columns(pl.col("line_no").replace_strict(joined, default=pl.col("text")).alias("text"))
    ups = lightning.updates(bar_lines.select("line_no", "text")) if bar_lines.height else None
    barred = set(ups["line_no"].to_list()) if ups is not None else set()
    lf = None
    if barred:
        lf, bad = _lightning_rows(bar_lines.filter(pl.col("line_no").is_in(list(barred))), ups)
    for line_no, t in zip(cand["line_no"].to_list(), cand["text"].to_list()):
        if line_no in barred:
            continue
        got = _read(t)
        if isinstance(got, str):
            bad.append((line_no, t, got))
            continue
        got.update(_common(t))
        got["line_no"] = line_no
        rows.append(got)
    if lf is not None:
        rich = ups.filter(pl.col("rich") & (pl.col("kind") == "step"))["line_no"].unique().to_list()
        if rich:  # the Rich bar's wrapped metrics, in the lines that follow it
            near = lines.filter(pl.col("line_no").is_in([at + k for at in rich for k in range(1, 6)]))
            more = lightning.continuations(dict(zip(near["line_no"].to_list(), near["text"].to_list())), rich)
            if more:
                taken = rest.filter(pl.col("line_no").is_in(more))
                bad += [(a, b, lightning.RICH_MORE) for a, b in zip(taken["line_no"].to_list(), taken["text"].to_list())]
                rest = rest.filter(~pl.col("line_no").is_in(more))
    # log records among the lines no framework read (a step-like word inside a launcher's or server's record)
    kept = [b for b in bad if b[2] not in (_NOT, _HF_EVAL)]
    other = [b for b in bad if b[2] in (_NOT, _HF_EVAL)]
    if other:
        rest = pl.concat([rest.select("line_no", "text"),
                          pl.DataFrame({"line_no": [b[0] for b in other], "text": [b[1] for b in other]},
                                       schema={"line_no": pl.Int64, "text": pl.String})]).sort("line_no")
    logged, rest = runtime_log.read(rest.select("line_no", "text"), ctx)
    if other:  # what the records did not take keeps the reason the framework readers gave
        reason = {b[0]: b[2] for b in other}
        left = set(rest["line_no"].to_list()) & set(reason)
        kept += [b for b in other if b[0] in left]
        rest = rest.filter(~pl.col("line_no").is_in(list(left)))
    bad = sorted(kept)
    df = pl.DataFrame({
        "line_no": pl.Series([r["line_no"] for r in rows], dtype=pl.Int64),
        "framework": pl.Series([r["framework"] for r in rows], dtype=pl.String),
        "rank": pl.Series([r.get("rank") for r in rows], dtype=pl.Int32),
        "record": pl.Series([r["record"] for r in rows], dtype=pl.String),
        "step": pl.Series([r.get("step") for r in rows], dtype=pl.Int64),
        "steps_total": pl.Series([r.get("steps_total") for r in rows], dtype=pl.Int64),
        "naive": pl.Series([r.get("naive") for r in rows], dtype=pl.Datetime("us")),
        "seq": pl.Series([r.get("seq", 0) for r in rows], dtype=pl.Int32),
        **{c: pl.Series([r.get(c) for r in rows], dtype=pl.Float64) for c in _FLOATS},
    })
    if lf is not None:
        df = pl.concat([df, lf], how="diagonal")
    df = df.sort("line_no", "seq")
    df = df.with_columns(local_to_utc(pl.col("naive"), ctx.tz).alias("ts"),
                         pl.when(pl.col("naive").is_null()).then(pl.lit("none")).otherwise(pl.lit("local"))
                         .alias("ts_quality")).drop("naive")
    unparsed = [unparsed_frame(rest.select("line_no", "text"), _NOT, ctx, NAME)]
    if bad:
        unparsed.append(unparsed_rows(bad, ctx, NAME))
    frameworks = sorted(set(df["framework"].to_list()))
    tables = {"train_steps": df, "rank_hosts": places, "runtime_log": logged}
    if desync is not None:
        tables["nccl_desync"] = desync
    return result(NAME, ctx, n, tables, unparsed, hosts=[], frameworks=frameworks)
