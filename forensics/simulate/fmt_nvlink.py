"""``nvidia-smi nvlink -s`` and ``-e`` of the simulated HGX H100 node (driver 545), as the real ones
print them (tests/fixtures/nvlink: ``Link N: 26.562 GB/s`` on H100, ``<inactive>`` for a link that is
down; ``Link N: Replay Errors: n`` / ``Recovery Errors`` / ``CRC Errors`` per link, a tab and a
space before ``Link`` as nvidia-smi indents). Error counters are running totals from the driver's
load: zero on a healthy node, growing where a scenario puts errors on a link
(``plan.nvlink_extra[(h, gpu, link)] = {"replay"|"recovery"|"crc": per-second increments}``).
A GPU that fell off the bus is no longer listed.
"""
from __future__ import annotations

import datetime as dt

import numpy as np

from forensics.layout import format_marker
from forensics.simulate.fmt_nvsmi.common import PRODUCT
from forensics.simulate.series import NVLINKS

SPEED = "26.562 GB/s"  # H100 NVLink4 per link and direction (tests/fixtures/nvlink, ml-engineering)
COUNTERS = (("replay", "Replay Errors"), ("recovery", "Recovery Errors"), ("crc", "CRC Errors"))


def status(host, hm, plan, h: int, t: float) -> bytes:
    """``nvidia-smi nvlink -s`` at true time t."""
    out = []
    for g, gpu in enumerate(host.gpus):
        if hm.lost(g, np.array([t]))[0]:
            continue
        down = plan.nvlink_inactive.get((h, g), set())
        out.append(f"GPU {gpu.index}: {PRODUCT} (UUID: {gpu.uuid})\n")
        out.extend(f"\t Link {k}: {'<inactive>' if k in down else SPEED}\n" for k in range(NVLINKS))
    return "".join(out).encode()


def _cum(plan, rate, times: np.ndarray) -> np.ndarray:
    c = np.concatenate([[0.0], np.cumsum(rate)])
    return np.floor(np.interp(np.clip(times - plan.grid0, 0, plan.T - 1), np.arange(plan.T + 1), c)).astype(np.int64)


def errors_snapshots(host, hm, plan, h: int, times: np.ndarray, argv: str) -> bytes:
    """``nvidia-smi nvlink -e`` at true `times`, each output preceded by the collector's marker line."""
    n = len(times)
    vals = {}
    for (hh, g, link), extra in plan.nvlink_extra.items():
        if hh == h:
            for key, _ in COUNTERS:
                if key in extra:
                    vals[(g, link, key)] = _cum(plan, extra[key], times)
    lost = [hm.lost(g, times) for g in range(hm.G)]
    out = []
    for i, t in enumerate(times):
        gpus = []
        for g, gpu in enumerate(host.gpus):
            if lost[g][i]:
                continue
            lines = [f"GPU {gpu.index}: {PRODUCT} (UUID: {gpu.uuid})\n"]
            for k in range(NVLINKS):
                for key, name in COUNTERS:
                    v = vals.get((g, k, key))
                    lines.append(f"\t Link {k}: {name}: {0 if v is None else int(v[i])}\n")
            gpus.append("".join(lines))
        if gpus:
            ts = dt.datetime.fromtimestamp(round(float(host.wall(t)), 6), dt.timezone.utc)
            out.append(format_marker(ts, argv) + "\n")
            out.extend(gpus)
    return "".join(out).encode() if n else b""
