"""The benign variation of a real fleet, added to every scenario (``--no-confounders`` removes it).

A detector tuned on a silent simulator is tuned to a silence no cluster has. What is added, and
where its size comes from:

- **GPU-to-GPU spread** of power, clocks and temperature among identical boards. Sinha et al.,
  "Not All GPUs Are Created Equal: Characterizing Variability in Large-Scale, Accelerator-Rich
  Systems", SC'22 (arXiv:2208.11035), measured 8% average (22% at most) performance variation
  across GPUs of one SKU on Summit, Vortex, Frontera/Longhorn and Corona, from power management;
  outliers 1.5x slower than the median GPU. Here: compute power drawn differs per GPU with a
  standard deviation of 3% (clipped at +-8%), sustained SM clock 0-45 MHz (0-3 steps of 15 MHz)
  under the maximum, and temperature by the host's position in the rack (sd 2.5 C) plus the GPU's
  slot (sd 1.5 C). The temperature sizes are this simulator's assumption (the paper reports the
  performance spread, not a temperature distribution).
- **Boot-time kernel messages** (:mod:`forensics.simulate.fmt_dmesg`): each port's ``Link down``
  before its first ``Link up`` while the switch negotiates, and corrected PCIe AER errors at boot
  and once during the uptime on some hosts, days or weeks before the capture.
- **Checkpoints** every 5-15 minutes: every GPU idles for 6-20 s while each host writes 1.5-3 GB/s
  to its local NVMe.
- **Evaluation phases** every 10-25 minutes for 40-90 s: forward passes only, utilisation ~100%
  at 55-70% of the training power.
- **Rank-0 extra CPU work** (logging, metrics, data bookkeeping): the first host's socket 0 is
  8-12 CPU points busier all along.
- **Frontend trickle**: half of the hosts count a steady 0.2-1.5 ``rx_out_of_buffer``/s and
  0.05-0.5 ``rx_discards_phy``/s on the frontend port since boot (bursty management traffic).
- **An NTP step**: one host's clock was 0.2-1.5 s behind and chrony steps it forward once during the
  capture (the sampled series' stamps jump; its dmesg, stamped from the boot time, does not).
- **Normal congestion**: every rail port sends and receives priority-3 pauses in proportion to its
  traffic, 30-1300 pauses per GB (up to ~6000/s while the all-reduce runs) of 2-7 us each, i.e. at
  most ~4% of the time paused.
"""
from __future__ import annotations

import numpy as np

from forensics.simulate.config import rng
from forensics.simulate.plan import Plan

CHECKPOINT_EVERY_S = (300.0, 900.0)
CHECKPOINT_STALL_S = (6.0, 20.0)
EVAL_EVERY_S = (600.0, 1500.0)
EVAL_LEN_S = (40.0, 90.0)


def _periodic(r, plan: Plan, every: tuple[float, float], length: tuple[float, float]) -> list[tuple[float, float]]:
    """(start, end) of a recurring phase over the whole plan, first one at a random phase."""
    period = float(r.uniform(*every))
    t = plan.grid0 + 60.0 + float(r.uniform(0, period))
    out = []
    while t < plan.t_end:
        out.append((t, t + float(r.uniform(*length))))
        t += period
    return out


def apply(plan: Plan) -> None:
    cl = plan.cluster
    cfg = cl.cfg
    N, G = cfg.nodes, cfg.gpus_per_node
    r = rng(cfg.seed, "confounders")
    plan.noisy_boot = True
    plan.gpu_power_bias = np.clip(r.normal(0.0, 0.03, (N, G)), -0.08, 0.08)
    plan.gpu_clock_bias = -15.0 * r.integers(0, 4, (N, G))
    plan.gpu_temp_bias = r.normal(0.0, 2.5, N)[:, None] + r.normal(0.0, 1.5, (N, G))
    for a, b in _periodic(r, plan, CHECKPOINT_EVERY_S, CHECKPOINT_STALL_S):
        plan.data_wait[:, plan.span(a, a + 2.5)] += b - a
        plan.ckpt_write[:, plan.span(a, b)] += r.uniform(1.5e6, 3.0e6, (N, 1))
        plan.cpu_points[:, plan.span(a, b)] += 3.0
    for a, b in _periodic(r, plan, EVAL_EVERY_S, EVAL_LEN_S):
        plan.compute_power[plan.span(a, b)] = float(r.uniform(0.55, 0.70))
    plan.cpu_points[0] += float(r.uniform(8.0, 12.0))
    stepped = cl.hosts[int(r.integers(0, N))]
    stepped.clock_step = (cfg.t0 + float(r.uniform(0.2, 0.8)) * cfg.duration_s, float(r.uniform(0.2, 1.5)))
    for h, host in enumerate(cl.hosts):
        if r.random() < 0.5:
            plan.frontend_trickle[h] = (float(r.uniform(0.2, 1.5)), float(r.uniform(0.05, 0.5)))
        for nic in host.rails:
            per_gb = float(np.exp(r.uniform(np.log(30.0), np.log(1300.0))))
            plan.pause_level[(h, nic.iface)] = (per_gb, float(r.uniform(2.0, 7.0)))
