"""nvidia-smi nvlink -s / -e: how they are collected and where they are found (standard library only;
see :mod:`forensics.descriptor`).

``nvidia-smi nvlink -s`` once (each link's state and speed) and ``nvidia-smi nvlink -e`` every 30 s
(replay, recovery and CRC error counters: their growth during the capture is what matters). A GPU
without NVLink prints no link lines; a node without nvidia-smi records failed commands. sosreport's
nvidia plugin keeps both (``sos_commands/nvidia/nvidia-smi_nvlink_-s`` and ``_-e``).
"""
from __future__ import annotations

from forensics.descriptor import Descriptor, SosPath, Spec, MB

DESCRIPTOR = Descriptor(
    "nvlink", "nvidia-smi nvlink",
    collect=(
        Spec("nvidia_smi_nvlink_status", ("nvidia-smi", "nvlink", "-s"), "nvlink", "nvlink-s.txt", timeout=30, cap=4 * MB),
        Spec("nvidia_smi_nvlink_errors", ("nvidia-smi", "nvlink", "-e"), "nvlink", "nvlink-e.txt", mode="snapshot",
             timeout=30, cap=64 * MB, min_interval=30.0),
    ),
    sosreport=(
        SosPath(r"^sos_commands/nvidia/nvidia-smi_nvlink_-s$", "sos_commands/nvidia/nvidia-smi_nvlink_-s"),
        SosPath(r"^sos_commands/nvidia/nvidia-smi_nvlink_-e$", "sos_commands/nvidia/nvidia-smi_nvlink_-e"),
    ),
)
