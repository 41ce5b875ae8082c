"""nvidia-smi nvlink -s / -e: how they are collected and where they are found (standard library only;
see :mod:`forensics.descriptor`).

``nvidia-smi nvlink -s`` once (each link's state and speed) and ``nvidia-smi nvlink -e`` every 30 s
(replay, recovery and CRC error counters: their growth during the capture is what matters). A GPU
without NVLink prints no link lines; a node without nvidia-smi records failed commands. sosreport's
nvidia plugin keeps both (``sos_commands/nvidia/nvidia-smi_nvlink_-s`` and ``_-e``). nvidia-bug-report.sh
runs ``nvidia-smi nvlink --errorcounters``, ``--remotelinkinfo`` and ``--status`` in its nvidia-smi block,
after ``--query`` (``append_command "$nvidia_smi nvlink --status"``: the script as shipped with the 2025
drivers, MIT-licensed copy in bottlerocket-os/bottlerocket-admin-container @a226b19; the 440 driver's
script ran only ``--query`` and ``--query --unit``); ``--status`` and ``--errorcounters`` are read.
"""
from __future__ import annotations

from forensics.descriptor import BugSection, Descriptor, SosPath, Spec, MB

# the nvidia-smi block's command lines (as forensics/sources/nvidia_smi_spec.py reads its --query)
_NVSMI_CMD = r"^(?:\S*/)?nvidia-smi(?:\s+(.*?))?\s*$"

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
    bug_report=(
        BugSection(_NVSMI_CMD, "nvidia-bug-report-nvlink-s.txt", "/usr/bin/nvidia-smi nvlink --status",
                   args=("nvlink --status", "nvlink -s")),
        BugSection(_NVSMI_CMD, "nvidia-bug-report-nvlink-e.txt", "/usr/bin/nvidia-smi nvlink --errorcounters",
                   args=("nvlink --errorcounters", "nvlink -e")),
    ),
)
