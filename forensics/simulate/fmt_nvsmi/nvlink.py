"""``nvidia-smi nvlink -gt d`` snapshots: running KiB totals per GPU, link and direction."""
from __future__ import annotations

import datetime as dt

import numpy as np

from forensics.layout import format_marker
from forensics.simulate.series import NVLINKS
from forensics.simulate.fmt_nvsmi.common import PRODUCT


def nvlink_snapshots(host, hm, times: np.ndarray, argv: str) -> bytes:
    """`nvidia-smi nvlink -gt d` at true `times`, each output preceded by the collector's marker line.
    A GPU that fell off the bus is no longer listed (as in ``-q``); a sample with no GPU left wrote
    nothing, and the collector keeps no marker for an empty output."""
    kib = hm.nvlink_kib(times)
    lost = [hm.lost(g, times) for g in range(hm.G)]
    body = "".join(f"\t Link {k}: Data Tx: %d KiB\n\t Link {k}: Data Rx: %d KiB\n" for k in range(NVLINKS))
    tmpl = [f"GPU {gpu.index}: {PRODUCT} (UUID: {gpu.uuid})\n" + body for gpu in host.gpus]
    rows = [kib[g].transpose(2, 0, 1).reshape(len(times), -1).tolist() for g in range(hm.G)]
    out = []
    for i, t in enumerate(times):
        gpus = [tmpl[g] % tuple(rows[g][i]) for g in range(hm.G) if not lost[g][i]]
        if gpus:
            ts = dt.datetime.fromtimestamp(round(float(host.wall(t)), 6), dt.timezone.utc)
            out.append(format_marker(ts, argv) + "\n")
            out.extend(gpus)
    return "".join(out).encode()
