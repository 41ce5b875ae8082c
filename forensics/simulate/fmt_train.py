"""The job's own training log, in the words of the framework the simulated job runs (chosen per seed).

Every scenario's job writes one, on the host whose rank the framework prints from, and the collector
copies it with the torchrun logs (``/var/log/train/*.log``). Each line's rate is the logging
interval's, computed from the simulated step ends, so it carries every slowdown of the job (a slow
rank, a throttled GPU, a congested fabric) and it stops at the last step completed before a hang or
a crash. The wordings are those of the real logs of tests/fixtures/train_log/:

- **torchtitan** (``MetricsProcessor``, every ``metrics.log_freq`` = 10 steps, rank 0 under torchrun;
  train_log--torchtitan-pr3393-rank0-prefix.txt)::

    [rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  grad_norm:  0.8319  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%

  ``tps`` is tokens per second per device over the interval.
- **Megatron-LM** (``training_log``, every ``--log-interval`` = 10 iterations; printed by
  ``print_rank_last``, so on the host of the last rank; train_log--megatron-issue756-mixtral-h100-timestamped.txt)::

     [2024-04-06 02:59:36] iteration       43/     100 | consumed samples:         5504 | elapsed time per iteration (ms): 5444.9 | throughput per GPU (TFLOP/s/GPU): 239.8 | learning rate: ... |

  ``elapsed time per iteration`` is the interval's mean.
- **DeepSpeed** (``ThroughputTimer.stop``, every ``steps_per_print`` = 10 steps, rank 0;
  train_log--deepspeed-issue3742-megatron-deepspeed-samples-sec.txt)::

    [2023-07-25 21:03:17,269] [INFO] [timer.py:215:stop] epoch=0/micro_step=34/global_step=34, RunningAvgSamplesPerSec=7.86, CurrSamplesPerSec=8.01, MemAllocated=59.65GB, MaxMemAllocated=63.31GB

  ``CurrSamplesPerSec`` is the last step's global batch over its duration (one step, not the
  interval: the noisiest of the three), the running average counts from the timer's start step (2).

TOKENS_PER_STEP is sized so that the healthy job logs the reference of seed 000 (~3,200
tokens/s/GPU at its ~1.35 s step); TFLOP/s = tokens/s x FLOPS_PER_TOKEN, MFU against the H100's dense
BF16 peak. The HF Trainer (its step dicts carry no time or rate; its run summary comes only at the end
of a run) and PyTorch Lightning (no parser, no real fixture) are not written. Timestamps are the
host's local time, as Python's logging and Megatron's ``datetime.now()`` print them.
"""
from __future__ import annotations

import numpy as np

from forensics.simulate import textfmt as tf
from forensics.simulate.config import rng
from forensics.simulate.fmt_nccl import copied_at
from forensics.simulate.job import OPT

FRAMEWORKS = ("torchtitan", "megatron", "deepspeed")
LOG_FREQ = 10                 # torchtitan's metrics.log_freq, Megatron's --log-interval, DeepSpeed's steps_per_print
TOKENS_PER_STEP = 4_320       # tokens per GPU per step: ~3,200 tokens/s/GPU at the healthy ~1.35 s step
SEQ_LEN = 4_320               # one sequence per GPU per step (Megatron's global batch = world size)
FLOPS_PER_TOKEN = 6.1e10      # an 8B Llama-3 by torchtitan's 6N + 12*l*h*q*t at sequence length 8192
PEAK_TFLOPS = 989.0           # H100 SXM dense BF16 (NVIDIA H100 datasheet)
TRAIN_ITERS = 250_000         # Megatron's --train-iters
DS_START_STEP = 2             # DeepSpeed ThroughputTimer's start_step


def framework(cluster, plan) -> str:
    """The framework of this seed's job (a scenario may name one: seed 000's ran torchtitan)."""
    return plan.train_framework or FRAMEWORKS[int(rng(cluster.cfg.seed, "train_framework").integers(len(FRAMEWORKS)))]


def log_host(cluster, plan) -> int:
    """The host whose rank prints the log: Megatron prints on the last rank, the others on rank 0."""
    return cluster.cfg.nodes - 1 if framework(cluster, plan) == "megatron" else 0


def train_log(cluster, plan, model, h: int) -> tuple[str, bytes] | None:
    """(file name, log) on host h when its rank prints the job's log; None elsewhere or with no step logged."""
    if h != log_host(cluster, plan) or len(model.s) == 0:
        return None
    fw = framework(cluster, plan)
    host = cluster.hosts[h]
    done = np.isfinite(model.sync)
    ends = (model.s + np.where(done, model.sync, 0.0) + model.e + OPT)[done]
    starts = model.s[done]
    cut = copied_at(cluster, host)
    r = rng(cluster.cfg.seed, "train_log")
    world = cluster.cfg.nodes * cluster.cfg.gpus_per_node
    rows = []   # (true time, step, interval mean step s, last step s, loss, grad norm)
    for k in range(LOG_FREQ, len(ends) + 1, LOG_FREQ):
        t = float(ends[k - 1])
        if t > cut:
            break
        t_prev = float(ends[k - 1 - LOG_FREQ]) if k > LOG_FREQ else float(model.s[0])
        loss = 1.72 + 1.6 * np.exp(-k / 4000.0) + float(r.normal(0, 0.02))
        grad_norm = 0.41 + float(r.normal(0, 0.03))
        rows.append((t + 0.0004, k, (t - t_prev) / LOG_FREQ, t - float(starts[k - 1]), loss, grad_norm))
    if not rows:
        return None
    times = host.wall(np.array([row[0] for row in rows]))
    if fw == "torchtitan":
        lines = _titan(host, times, rows)
        name = "train-rank0.log"
    elif fw == "megatron":
        lines = _megatron(host, times, rows, world)
        name = f"train-rank{world - 1}.log"
    else:
        lines = _deepspeed(host, times, rows, world, ends, model.s[0])
        name = "train-rank0.log"
    return name, tf.lines_bytes(lines)


def _titan(host, times, rows) -> list[str]:
    stamps = tf.times(times, host.tz, "%Y-%m-%d %H:%M:%S,%3f").to_list()
    out = []
    for s, (_, k, mean, _, loss, gn) in zip(stamps, rows):
        tps = TOKENS_PER_STEP / mean
        tflops = tps * FLOPS_PER_TOKEN / 1e12
        out.append(f"[rank0]:[titan] {s} - root - INFO - step: {k}  loss: {loss:8.5f}  "
                   f"grad_norm: {gn:7.4f}  memory: 61.23GiB(77.41%)  "
                   f"tps: {int(round(tps)):,}  tflops: {tflops:.2f}  mfu: {100 * tflops / PEAK_TFLOPS:.2f}%")
    return out


def _megatron(host, times, rows, world: int) -> list[str]:
    stamps = tf.times(times, host.tz, "%Y-%m-%d %H:%M:%S").to_list()
    out = []
    for s, (_, k, mean, _, loss, gn) in zip(stamps, rows):
        tflops = TOKENS_PER_STEP / mean * FLOPS_PER_TOKEN / 1e12
        lr = 3.0e-4 * min(1.0, k / 2000.0)
        out.append(f" [{s}] iteration {k:>8d}/{TRAIN_ITERS:>8d} | consumed samples: {k * world:>12d} | "
                   f"elapsed time per iteration (ms): {mean * 1000:.1f} | throughput per GPU (TFLOP/s/GPU): {tflops:.1f} | "
                   f"learning rate: {lr:E} | global batch size: {world:>5d} | lm loss: {loss:E} | loss scale: 1.0 | "
                   f"grad norm: {gn:.3f} | number of skipped iterations:   0 | "
                   "number of nan iterations:   0 |")
    return out


def _deepspeed(host, times, rows, world: int, ends, t_first: float) -> list[str]:
    stamps = tf.times(times, host.tz, "%Y-%m-%d %H:%M:%S,%3f").to_list()
    t_timer = float(ends[DS_START_STEP - 1]) if len(ends) >= DS_START_STEP else float(t_first)
    out = []
    for s, (t, k, _, last, _, _) in zip(stamps, rows):
        running = world * (k - DS_START_STEP) / max(t - 0.0004 - t_timer, 1e-9)
        out.append(f"[{s}] [INFO] [timer.py:215:stop] epoch=0/micro_step={k}/global_step={k}, "
                   f"RunningAvgSamplesPerSec={running!r}, CurrSamplesPerSec={world / last!r}, "
                   "MemAllocated=59.65GB, MaxMemAllocated=63.31GB")
    return out


#: kinds of the faults (and effects) that slow every step of the data-parallel job: its slowest rank
#: sets the pace, so the log's rate falls however far the log's host is from the fault
SLOWING = ("pfc_storm", "gpu_throttle", "ib_link_degraded", "io_starvation", "cpu_saturation", "link_flap",
           "packet_drops", "straggler", "nvlink_errors", "numa_misplacement", "nccl_misconfig", "busy_but_slow",
           "pcie_aer", "cpu_stall")


def throughput_truth(plan) -> None:
    """Label the job's logged throughput falling while a fault slows its steps: a ``throughput_drop``
    effect on the log's host over the fault's window (not a recall target; a drop found then is true)."""
    host = plan.cluster.hosts[log_host(plan.cluster, plan)].name
    for f in list(plan.faults) + list(plan.effects):
        if f["kind"] in SLOWING:
            plan.effects.append({"kind": "throughput_drop", "hosts": [host], "subject": "training throughput",
                                 "start": f["start"], "end": f["end"],
                                 "signals": [f"train_log: logged rate below the job's best while {f['kind']} lasts"]})
