"""dcgmi discovery: how it is collected and where it is found (standard library only; see
:mod:`forensics.descriptor`).

``dcgmi discovery -l`` once at the start: the GPUs DCGM manages (its ids, which ``dcgmi dmon`` and
``dcgmi diag`` use, with PCI bus ids and UUIDs to match them to nvidia-smi's), the NVSwitches and,
on newer versions, ConnectX NICs and CPUs. A node without DCGM records the command as failed (not
found); one whose nv-hostengine is not running prints dcgmi's ``Error: ...`` line. sosreport and
nvidia-bug-report do not run dcgmi (checked: sos @5c7e63e has no DCGM plugin, its nvidia
plugin runs only nvidia-smi and nvidia-ctk; nvidia-bug-report.sh Change 37062940 runs no dcgmi).
"""
from __future__ import annotations

from forensics.descriptor import Descriptor, Spec, MB

DESCRIPTOR = Descriptor(
    "dcgm_discovery", "DCGM (dcgmi discovery)",
    collect=(Spec("dcgmi_discovery", ("dcgmi", "discovery", "-l"), "dcgm_discovery", "discovery-l.txt", timeout=30,
                  cap=4 * MB),),
)
