"""DCGM (dcgmi): how it is collected and where it is found (standard library only; see
:mod:`forensics.descriptor`).

``dcgmi diag -r 1`` once after sampling (its verdict then includes what happened during the
capture): level 1 runs only DCGM's deployment checks (denylist, NVML,
CUDA library, permissions, persistence mode, environment, page retirement / row remapping, graphics
processes, inforom) in seconds and loads no GPU, so it is safe beside a running job; levels 2-4 stress
the GPUs and are left to the operator (their saved output is read the same way). A node without DCGM
records the command as failed (not found); one whose nv-hostengine is not running prints dcgmi's
``Error: ...`` line, read as a ``run_error`` row. sosreport and nvidia-bug-report do not run dcgmi.
"""
from __future__ import annotations

from forensics.descriptor import Descriptor, Spec, MB

DESCRIPTOR = Descriptor(
    "dcgm", "DCGM (dcgmi)",
    collect=(Spec("dcgmi_diag", ("dcgmi", "diag", "-r", "1"), "dcgm", "diag-r1.txt", timeout=120, cap=4 * MB,
                  when="end"),),
)
