"""PyTorch Lightning's progress bars in a job's output -> ``train_steps`` rows.

Read by :mod:`forensics.sources.train_log`. Lightning prints no step log of its own: what a job's
stdout holds is its progress bar, redrawn after every batch.

- **TQDMProgressBar** (the default; lightning/pytorch/callbacks/progress/tqdm_progress.py): tqdm's
  default format with the description ``Epoch N`` and Lightning's metrics as the postfix::

    Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=9.926, v_num=193315]
    Epoch 0:  97% 1651/1702 [13:00<00:24,  2.11it/s, loss=0.158, v_num=0, train_loss=0.149]
    Epoch 0: |          | 3/? [00:52<00:00,  0.06it/s, v_num=0, train_loss=14.80]
    Epoch 32: 100%|██████████| 331/331 [00:05<00:00, 88.73batch/s, batch_idx=17, loss=1.148, ..., v_num=0, ...]

  (1.x adds the running ``loss=``; 2.x shows only what the module logged, ``train_loss=`` /
  ``train_loss_step=``; Colab's capture drops the bar glyphs; an unknown length prints ``n/?``; before
  0.8 the unit was ``batch`` and the epoch counted from 1; a Colab notebook's saved output puts the
  description and percentage on one line and the rest on the next: read as one bar). tqdm prints ``s/it`` when the rate is
  below 1/s; dynamic_ncols cuts the postfix at the terminal width (sometimes the closing ``]``). When
  stdout is a file tqdm separates its redraws with carriage returns, not newlines: one physical line
  holds many updates (and a paste that lost the ``\\r`` runs them together). Every update is read:
  several rows may share a line_no, in the order ``seq``.
- **RichProgressBar**: ``Epoch 0/23 ━━━━━━━━ 98/98 0:00:22 • 0:00:00 4.44it/s v_num: 0 train/loss: 1.559``
  (epoch/last epoch; metrics that do not fit wrap onto indented lines: unparsed, with their own reason).

What a row holds: ``epoch`` as printed, ``step`` = batches done in that epoch (the bar's count: it
restarts every epoch; no global step is derived, since the bar's total counts validation batches too
in Lightning 1.x and optimizer steps differ from batches under gradient accumulation),
``steps_total`` = the bar's total (null for ``?``), ``elapsed_s`` = the bar's elapsed time (since the
epoch's bar started), ``iters_per_s`` = the rate as printed (``s/it`` inverted): Lightning's training
bar runs tqdm with smoothing=0, so this is the mean since the epoch began, not the current rate.
``loss`` is the postfix's ``loss``, else ``train_loss``, ``train/loss``, ``train_loss_step`` or
``train/loss_step``, when printed whole.

**Time.** A bar carries no clock time: ``ts`` is null (ts_quality none), except on a line holding a
single update behind a timestamp a collector put before it (``2023-10-06 22:52:09.677 [...] Epoch 5:
...``): that line's time. Nothing else is inferred.

**Step time.** ``step_time_s`` is derived from the bar's own counts: across consecutive updates of one
epoch's training bar at least ``WINDOW_S`` (20 s) of elapsed time apart, elapsed difference / batches
done in between, on the update that closes each window (null on the others). Elapsed is printed in
whole seconds, so the figure is within 1/19 (5%) of the truth, well inside throughput_drop's 20%
margin. After a validation bar within an epoch no window is formed until the next epoch (Lightning
1.x counts validation batches on the training bar; 2.x's bar waits, with its clock running, while
validation runs): a window never mixes the two.

**Recognised as Lightning's** only in an output that shows Lightning's marks: a ``v_num`` in a bar's
metrics (the logger's version, which Lightning adds) or one of its own bars (``Validation DataLoader
N``, ``Sanity Checking``, ``Validating``, ``Predicting``/``Testing DataLoader N``). A tqdm ``Epoch N:``
bar without them is some other training loop's: left unparsed with that reason, as are Lightning's
validation/sanity/test/predict bars (not training steps) and training bars before their first batch.
The ``Validation sanity check`` bar of Lightning 1.0-1.4 is its own too, a closing postfix's value is
read only when a ``,`` or ``]`` ends it (a cut ``loss=1.5`` of ``loss=1.537`` is no value).

**How** (vectorised, polars): a carriage return is put before every bar description in the candidate
lines, which are split there and exploded, so that each piece holds at most one redraw at its start;
one regex per form extracts the fields. Only the window walk (a running anchor) is a Python loop, over
plain columns.

>>> import polars as pl
>>> lines = pl.DataFrame({"line_no": [1], "text": ["Epoch 0:   0%|          | 0/18 [00:00<?, ?it/s]\\r"
...     "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=9.926, v_num=193315]"]})
>>> rows = updates(lines)
>>> rows.select("line_no", "kind", "epoch", "step", "steps_total", "elapsed_s", "loss").rows()
[(1, 'start', 0.0, 0, 18, 0.0, None), (1, 'step', 0.0, 4, 18, 17.0, 9.926)]
>>> round(rows["iters_per_s"][1], 4), marked(rows)
(0.2237, True)

"""
from __future__ import annotations

import re

import polars as pl

from forensics.sources._bounded import to_float

WINDOW_S = 20.0

_OTHER = (r"Validation DataLoader [0-9]{1,4}|Validation sanity check|Validation|Validating|Sanity Checking DataLoader "
          r"[0-9]{1,4}|Sanity Checking|Training|Testing DataLoader [0-9]{1,4}|Testing|Predicting DataLoader [0-9]{1,4}|Predicting")
# where a redraw begins: a carriage return is put before each, then the lines are split there
_CUT = r"(Epoch [0-9]{1,9}(?::|/-?[0-9])|Validation|Validating|Sanity Checking|Training:|Testing|Predicting)"
_HMS = r"[0-9]{1,6}(?::[0-9]{2}){1,2}"
_TQDM = (r"^(?P<desc>Epoch (?P<epoch>[0-9]{1,9})|" + _OTHER + r"): *(?:[0-9]{1,3}%)? *(?:\|[^|\r\n]*\|)? *"
         r"(?P<n>[0-9]{1,12})(?:/(?P<total>[0-9]{1,12}|\?)|it|batch)? *"
         r"\[(?P<el>" + _HMS + r")(?:<(?:\?|" + _HMS + r"))?, *"
         r"(?P<rate>\?|[0-9]{1,9}(?:\.[0-9]{1,6})?)(?P<unit>it/s|s/it|batch/s|s/batch)(?P<post>[^\]\r\n]*\]?)")
_RICH = (r"^(?P<desc>Epoch (?P<epoch>[0-9]{1,9})/-?[0-9]{1,9}|" + _OTHER + r") +[━╸╺╴╶─ ]*"
         r"(?P<n>[0-9]{1,12})/(?P<total>[0-9]{1,12}|--) +(?P<el>[0-9]{1,6}:[0-9]{2}:[0-9]{2}) +• +(?:-:--:--|" + _HMS
         + r") +(?P<rate>[0-9]{1,9}(?:\.[0-9]{1,6})?)(?P<unit>it/s)(?P<post>[^\r\n]*)")
_FIELDS = ("desc", "epoch", "n", "total", "el", "rate", "unit", "post")
_FLOAT = r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$"
_LOSS_KEYS = ("loss", "train_loss", "train/loss", "train_loss_step", "train/loss_step")
_MARKS = r"DataLoader|Sanity Checking|Validating|Validation sanity check"
_SPLIT_HEAD = re.compile(r"\s*(?:Epoch [0-9]{1,9}|" + _OTHER + r"): *[0-9]{1,3}%\s*")
SPLIT_TAIL = r"^\s*[0-9]{1,12}/(?:[0-9]{1,12}|\?) \[[0-9]"

GATE = ("it/s", "s/it", "batch/s")
RICH_MORE = "continuation of a PyTorch Lightning Rich progress bar's metrics (wrapped; not read)"
EVAL = "PyTorch Lightning validation, sanity-check, test or predict progress bar (not training steps; not read)"
START = "PyTorch Lightning training progress bar before its first batch (no rate yet; not a step)"
NO_MARK = ("tqdm 'Epoch N:' progress bar in an output without PyTorch Lightning's marks (a v_num metric, its "
           "DataLoader/Sanity Checking bars): another training loop's, not read")


def rejoin(head: str, tail: str) -> str | None:
    """A bar split over two lines, as a Colab notebook's saved output has it (``Epoch 9: 100%`` then
    ``55/55 [00:05<00:00, 10.37it/s, loss=1.74, v_num=0]``), as one line; None when `head` is no
    bar's description and percentage (`tail` matches SPLIT_TAIL)."""
    return f"{head.strip()} {tail.strip()}" if _SPLIT_HEAD.fullmatch(head) else None


def _loss(post: pl.Expr, rich: pl.Expr) -> pl.Expr:
    """The first loss metric printed whole: tqdm's ``key=value`` closed by ``,`` or ``]``; Rich's ``key: value``."""
    got = []
    for key in _LOSS_KEYS:
        k = re.escape(key)
        value = pl.when(rich).then(post.str.extract(r"(?:^|\s)" + k + r": (\S+)(?:\s|$)", 1)) \
            .otherwise(post.str.extract(r"(?:^|, )" + k + r"=([^,\]]*)[,\]]", 1)).str.strip_chars()
        got.append(pl.when(value.str.contains(_FLOAT)).then(to_float(value)))  # (past a double's range: null, not inf)
    return pl.coalesce(got)


def updates(lines: pl.DataFrame) -> pl.DataFrame:
    """Every progress-bar redraw of `lines` (line_no, text), in order: line_no, seq (its rank among the
    line's redraws), kind (step: a training bar past its first batch; start: the epoch's bar before it,
    or the fit loop's 'Training' bar; eval: validation, sanity check, test, predict), rich, desc,
    epoch, step, steps_total, elapsed_s, iters_per_s, loss, marked (a v_num in its metrics, or one of
    Lightning's own bars)."""
    piece = pl.col("piece")
    pieces = (lines.select("line_no", pl.col("text").str.replace_all(_CUT, "\r${1}").str.split("\r").alias("piece"))
              .explode("piece").with_row_index("at").filter(piece.str.contains("it/s|s/it|batch/s|s/batch")))
    rich = piece.str.contains("•", literal=True)
    bars = pl.concat([
        pieces.filter(~rich).select("at", "line_no", pl.lit(False).alias("rich"), piece.str.extract_groups(_TQDM).alias("f")),
        pieces.filter(rich).select("at", "line_no", pl.lit(True).alias("rich"), piece.str.extract_groups(_RICH).alias("f")),
    ]).unnest("f").filter(pl.col("n").is_not_null()).sort("at").select("line_no", "rich", *_FIELDS)
    n = pl.col("n").cast(pl.Int64)
    rate = pl.col("rate").cast(pl.Float64, strict=False)
    kind = (pl.when(pl.col("epoch").is_null() & (pl.col("desc") != "Training")).then(pl.lit("eval"))
            .when(pl.col("epoch").is_null() | (n == 0) | rate.is_null()).then(pl.lit("start")).otherwise(pl.lit("step")))
    elapsed = pl.col("el").str.split(":").list.eval(
        pl.element().cast(pl.Float64) * pl.lit(60.0).pow(pl.int_range(pl.len()).reverse())).list.sum()
    return bars.select(
        "line_no", pl.int_range(pl.len()).over("line_no").cast(pl.Int32).alias("seq"), kind.alias("kind"), "rich", "desc",
        pl.col("epoch").cast(pl.Float64), n.alias("step"),
        pl.col("total").cast(pl.Int64, strict=False).alias("steps_total"), elapsed.alias("elapsed_s"),
        pl.when(pl.col("unit").str.starts_with("s/")).then(pl.when(rate > 0).then(1.0 / rate)).otherwise(rate)
        .alias("iters_per_s"),
        _loss(pl.col("post"), pl.col("rich")).alias("loss"),
        (pl.col("post").str.contains("v_num", literal=True)
         | (pl.col("epoch").is_null() & pl.col("desc").str.contains(_MARKS))).alias("marked"))


def marked(rows: pl.DataFrame) -> bool:
    """Does the output show one of Lightning's marks (a v_num metric, its DataLoader / sanity bars)?"""
    return bool(rows["marked"].any())


def step_times(rows: pl.DataFrame) -> pl.Series:
    """``step_time_s`` of `rows` (updates() of one output, in order): set on the updates that close a
    window of at least WINDOW_S of the bar's elapsed time (see the module text), null elsewhere."""
    out: list[float | None] = [None] * rows.height
    anchor: tuple[int, float] | None = None  # (batches done, elapsed) where the open window began
    held = False  # a validation bar came since the anchor, within this epoch
    last: tuple[float, int, float] | None = None
    cols = (rows[c].to_list() for c in ("kind", "epoch", "step", "elapsed_s"))
    for i, (kind, epoch, n, el) in enumerate(zip(*cols)):
        if kind == "eval":
            held = True
            continue
        if epoch is None:  # the fit loop's 'Training' bar
            continue
        new_bar = last is None or epoch != last[0] or n < last[1] or el < last[2]
        last = (epoch, n, el)
        if new_bar:
            anchor, held = (n, el), False
        elif not held and anchor is not None and el - anchor[1] >= WINDOW_S and n > anchor[0]:
            out[i] = (el - anchor[1]) / (n - anchor[0])
            anchor = (n, el)
    return pl.Series("step_time_s", out, dtype=pl.Float64)


def continuations(lines: dict[int, str], rich_lines: list[int]) -> list[int]:
    """Line numbers of the wrapped metric lines under Rich bars: the indented lines right after one."""
    out = []
    for at in rich_lines:
        nxt = at + 1
        while nxt in lines and lines[nxt].startswith(" " * 20) and lines[nxt].strip():
            out.append(nxt)
            nxt += 1
    return out
