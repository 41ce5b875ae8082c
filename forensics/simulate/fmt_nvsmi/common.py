"""What the nvidia-smi writers (-q text and -q -x) share: the board's product name, thermal limit,
how a clock event reason prints and the GPU's process."""
from __future__ import annotations

T_LIMIT = 87  # C at which "GPU T.Limit Temp" reaches 0
PRODUCT = "NVIDIA H100 80GB HBM3"


def reason_state(bits: int, flag: int) -> str:
    return "Active" if bits & flag else "Not Active"


def gpu_process(host, hm, g: int, i: int, s: dict):
    if not s["ctx"][g][i]:
        return None
    return (host.pid(g), "/usr/bin/python3", max(int(s["mem_used"][g][i]) - 520, 1))
