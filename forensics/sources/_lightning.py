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

>>> rows, why = read_line("Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=9.926, v_num=193315]")
>>> [(r["epoch"], r["step"], r["steps_total"], r["elapsed_s"], round(r["iters_per_s"], 4), r["loss"]) for r in rows], why
([(0.0, 4, 18, 17.0, 0.2237, 9.926)], None)
"""
from __future__ import annotations

import re

WINDOW_S = 20.0

_DESC_OTHER = (r"Validation DataLoader [0-9]{1,4}|Validation sanity check|Validation|Validating|Sanity Checking DataLoader [0-9]{1,4}|Sanity Checking|"
               r"Training|Testing DataLoader [0-9]{1,4}|Testing|Predicting DataLoader [0-9]{1,4}|Predicting")
_NEXT = r"Epoch [0-9]|Validation|Validating|Sanity Checking|Training:|Testing|Predicting"
_HMS = r"[0-9]{1,6}(?::[0-9]{2}){1,2}"
_TQDM = re.compile(
    r"(?P<desc>Epoch (?P<epoch>[0-9]{1,9})|" + _DESC_OTHER + r"): *(?:[0-9]{1,3}%)? *(?:\|[^|\r\n]{0,400}\|)? *"
    r"(?P<n>[0-9]{1,12})(?:/(?P<total>[0-9]{1,12}|\?)|it|batch)? *"
    r"\[(?P<el>" + _HMS + r")(?:<(?:\?|" + _HMS + r"))?, *"
    r"(?P<rate>\?|[0-9]{1,9}(?:\.[0-9]{1,6})?)(?P<unit>it/s|s/it|batch/s|s/batch)"
    r"(?P<post>(?:(?!" + _NEXT + r")[^\]\r\n]){0,2000})")
_RICH = re.compile(
    r"(?P<desc>Epoch (?P<epoch>[0-9]{1,9})/-?[0-9]{1,9}|" + _DESC_OTHER + r") +[━╸╺╴╶─ ]*"
    r"(?P<n>[0-9]{1,12})/(?P<total>[0-9]{1,12}|--) +(?P<el>[0-9]{1,6}:[0-9]{2}:[0-9]{2}) +• +(?:-:--:--|" + _HMS + r") +"
    r"(?P<rate>[0-9]{1,9}(?:\.[0-9]{1,6})?)(?P<unit>it/s)(?P<post>[^\r\n]{0,2000})")
_SPLIT_HEAD = re.compile(r"\s*(?:Epoch [0-9]{1,9}|" + _DESC_OTHER + r"): *[0-9]{1,3}%\s*")
SPLIT_TAIL = r"^\s*[0-9]{1,12}/(?:[0-9]{1,12}|\?) \[[0-9]"
_PAIR_TQDM = re.compile(r"(?:^|, )([A-Za-z_][\w/.-]{0,80})=([^,\]]*)(?=,|\]|$)")
_PAIR_RICH = re.compile(r"(?:^|\s)([A-Za-z_][\w/.-]{0,80}): (\S+)(?=\s|$)")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|nan|inf")
_LOSS_KEYS = ("loss", "train_loss", "train/loss", "train_loss_step", "train/loss_step")
_MARKS = ("DataLoader", "Sanity Checking", "Validating")

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


def _seconds(hms: str) -> float:
    s = 0
    for part in hms.split(":"):
        s = s * 60 + int(part)
    return float(s)


def _bars(text: str) -> list[re.Match]:
    """Every progress-bar update in a physical line, in order (tqdm's and Rich's forms)."""
    found = list(_TQDM.finditer(text))
    if "it/s" in text and ("━" in text or "•" in text):
        found += _RICH.finditer(text)
        found.sort(key=lambda m: m.start())
    return found


def marked(text: str) -> bool:
    """Does this text show one of Lightning's marks (v_num, its DataLoader / sanity bars)?"""
    if "v_num" not in text and not any(k in text for k in _MARKS):
        return False
    bars = _bars(text)
    return (any("v_num" in m.group("post") for m in bars)
            or any(k in text for k in _MARKS) and any(not m.group("epoch") and m.group("desc") != "Training" for m in bars))


def is_step(text: str) -> bool:
    """A line with at least one update of Lightning's training bar past its first batch (for the sniffer)."""
    return any(m.group("epoch") and int(m.group("n")) > 0 and m.group("rate") != "?" for m in _bars(text))


def _loss(post: str, rich: bool) -> float | None:
    pairs = dict((_PAIR_RICH if rich else _PAIR_TQDM).findall(post.strip() if rich else post.lstrip(", ")))
    for key in _LOSS_KEYS:
        value = pairs.get(key, "").strip()
        if value and _FLOAT.fullmatch(value):
            return float(value)
    return None


def read_line(text: str) -> tuple[list[dict], str | None]:
    """The progress-bar updates of one physical line, in order: a row per training-bar update past its
    first batch (epoch, step, steps_total, elapsed_s, iters_per_s, loss; ``start_at``, where it begins in
    the line; ``rich``) and marker rows for the other updates (``eval``: a validation/sanity/test/predict
    bar; ``start``: the epoch's bar before its first batch), which derive_step_times reads; and the
    reason the line gives no training row (None when it gives some, or holds no bar at all)."""
    rows: list[dict] = []
    evals = starts = 0
    for m in _bars(text):
        if not m.group("epoch"):
            if m.group("desc") == "Training":  # the fit loop's bar before the epoch's description is set
                starts += 1
            else:
                evals += 1
                rows.append({"eval": True})
            continue
        n = int(m.group("n"))
        if n == 0 or m.group("rate") == "?":
            starts += 1
            rows.append({"start": True, "epoch": float(m.group("epoch")), "elapsed_s": _seconds(m.group("el"))})
            continue
        rate = float(m.group("rate"))
        per_s = rate if m.group("unit").endswith("/s") else (1.0 / rate if rate > 0 else None)
        total = m.group("total")
        rows.append({"epoch": float(m.group("epoch")), "step": n,
                     "steps_total": int(total) if total and total[0].isdigit() else None,
                     "elapsed_s": _seconds(m.group("el")), "iters_per_s": per_s,
                     "loss": _loss(m.group("post"), rich=m.re is _RICH), "start_at": m.start(), "rich": m.re is _RICH})
    steps = [r for r in rows if "step" in r]
    if steps:
        return rows, None
    if evals:
        return rows, EVAL
    if starts:
        return rows, START
    return [], None


def derive_step_times(rows: list[dict]) -> None:
    """Fill ``step_time_s`` on the rows that close a window of at least WINDOW_S of the bar's elapsed
    time (see the module text), walking the updates of one output in order; marker rows (``eval``,
    ``start``) take part in the walk and are dropped by the caller."""
    anchor: tuple[float, int, float] | None = None  # (epoch, n, elapsed)
    held = False  # a validation bar came since the anchor, within this epoch
    last: tuple[float, int, float] | None = None
    for r in rows:
        if r.get("eval"):
            held = True
            continue
        epoch, el = r["epoch"], r["elapsed_s"]
        n = r.get("step", 0)
        new_bar = last is None or epoch != last[0] or n < last[1] or el < last[2]
        last = (epoch, n, el)
        if new_bar:
            anchor, held = (epoch, n, el), False
            continue
        if held or anchor is None:
            continue
        if el - anchor[2] >= WINDOW_S and n > anchor[1]:
            r["step_time_s"] = (el - anchor[2]) / (n - anchor[1])
            anchor = (epoch, n, el)


def continuations(lines: dict[int, str], rich_lines: list[int]) -> list[int]:
    """Line numbers of the wrapped metric lines under Rich bars: the indented lines right after one."""
    out = []
    for at in rich_lines:
        nxt = at + 1
        while nxt in lines and lines[nxt].startswith(" " * 20) and lines[nxt].strip():
            out.append(nxt)
            nxt += 1
    return out
