"""NCCL RAS: how it is collected and where it is found (standard library only; see
:mod:`forensics.descriptor`).

``ncclras -v`` (NCCL 2.24+; the client connects to the RAS socket a running NCCL job's processes
open on localhost:28028) prints the job-wide report: which processes and communicator ranks did not
answer, are considered dead, or differ in status or collective operation counts. Run at the end of a
capture, while the job (hung or not) still runs; a node without the binary, or with no NCCL job
running, records the command as failed. Saved reports (text, ``ncclras -f json`` of 2.28.7+, the
monitor mode's event lines) are read the same way.
"""
from __future__ import annotations

from forensics.descriptor import Descriptor, Spec, MB

DESCRIPTOR = Descriptor(
    "nccl_ras", "NCCL RAS (ncclras)",
    collect=(Spec("ncclras", ("ncclras", "-v", "-t", "30"), "nccl_ras", "ncclras-v.txt", timeout=60, cap=16 * MB,
                  when="end"),),
)
