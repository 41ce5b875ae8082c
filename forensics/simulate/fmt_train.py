"""The job's own training log: rank 0's torchtitan metrics line every LOG_FREQ steps.

The wording is torchtitan's ``MetricsProcessor`` line as a real run printed it under torchrun
(tests/fixtures/train_log/train_log--torchtitan-pr3393-rank0-prefix.txt)::

    [rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  grad_norm:  0.8319  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%

``tps`` is tokens per second per device over the logging interval (torchtitan divides the
interval's tokens by its wall time), so it carries every slowdown of the simulated steps.
TOKENS_PER_STEP is sized so that the healthy job logs the reference of seed 000 (~3,200
tokens/s/GPU at its ~1.35 s step); tflops = tps x FLOPS_PER_TOKEN, mfu against the H100's dense
BF16 peak. The timestamps are the host's local time, as Python's logging prints them.
"""
from __future__ import annotations

import numpy as np

from forensics.simulate import textfmt as tf
from forensics.simulate.config import rng
from forensics.simulate.fmt_nccl import copied_at
from forensics.simulate.job import OPT

LOG_FREQ = 10                 # torchtitan's default metrics.log_freq
TOKENS_PER_STEP = 4_320       # tokens per GPU per step: ~3,200 tokens/s/GPU at the healthy ~1.35 s step
FLOPS_PER_TOKEN = 6.1e10      # an 8B Llama-3 by torchtitan's 6N + 12*l*h*q*t at sequence length 8192
PEAK_TFLOPS = 989.0           # H100 SXM dense BF16 (NVIDIA H100 datasheet)


def train_log(cluster, plan, model, h: int) -> bytes | None:
    """Rank 0's log on its host (host 0); None elsewhere or when no step was logged."""
    if h != 0 or not getattr(plan, "train_log", False) or len(model.s) == 0:
        return None
    host = cluster.hosts[h]
    done = np.isfinite(model.sync)
    ends = (model.s + np.where(done, model.sync, 0.0) + model.e + OPT)[done]
    start = model.s[0]
    r = rng(cluster.cfg.seed, "train_log")
    lines, times = [], []
    for k in range(LOG_FREQ, len(ends) + 1, LOG_FREQ):
        t = float(ends[k - 1])
        if t > copied_at(cluster, host):
            break
        t_prev = float(ends[k - 1 - LOG_FREQ]) if k > LOG_FREQ else start
        tps = LOG_FREQ * TOKENS_PER_STEP / (t - t_prev)
        tflops = tps * FLOPS_PER_TOKEN / 1e12
        loss = 1.72 + 1.6 * np.exp(-k / 4000.0) + float(r.normal(0, 0.02))
        lines.append(f"step: {k}  loss: {loss:8.5f}  grad_norm: {0.41 + float(r.normal(0, 0.03)):7.4f}  "
                     f"memory: 61.23GiB(77.41%)  tps: {int(round(tps)):,}  tflops: {tflops:.2f}  "
                     f"mfu: {100 * tflops / PEAK_TFLOPS:.2f}%")
        times.append(t + 0.0004)
    if not lines:
        return None
    stamps = tf.times(host.wall(np.array(times)), host.tz, "%Y-%m-%d %H:%M:%S,%3f").to_list()
    return tf.lines_bytes([f"[rank0]:[titan] {s} - root - INFO - {m}" for s, m in zip(stamps, lines)])
