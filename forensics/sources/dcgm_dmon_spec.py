"""dcgmi dmon: how it is collected and where it is found (standard library only; see
:mod:`forensics.descriptor`).

``dcgmi dmon -e <fields> -d <interval ms> -c <samples>`` for the whole capture: DCGM's profiling
fields (1001 graphics engine active, 1002 SM active, 1003 SM occupancy, 1004 tensor active, 1005
DRAM active, 1009/1010 PCIe and 1011/1012 NVLink bytes per second) with power (155), SM clock (100),
utilisation (203) and the last Xid (230), every GPU each sampling interval. These tell a GPU that
computes from one that spin-waits in an NCCL kernel, which ``nvidia-smi`` utilisation cannot. A GPU
or driver without the profiling module makes dcgmi refuse the watch; the fallback then reads the
device fields alone. A node without DCGM records the command as failed (not found); one whose
nv-hostengine is not running prints dcgmi's ``Error: ...`` line. sosreport and nvidia-bug-report do
not run dcgmi (checked: sos @5c7e63e has no DCGM plugin, its nvidia
plugin runs only nvidia-smi and nvidia-ctk; nvidia-bug-report.sh Change 37062940 runs no dcgmi).
"""
from __future__ import annotations

from forensics.descriptor import Descriptor, Spec, MB

PROFILING_FIELDS = "1001,1002,1003,1004,1005,1009,1010,1011,1012"
DEVICE_FIELDS = "155,100,203,230"

DESCRIPTOR = Descriptor(
    "dcgm_dmon", "DCGM (dcgmi dmon)",
    collect=(Spec("dcgmi_dmon", ("dcgmi", "dmon", "-e", PROFILING_FIELDS + "," + DEVICE_FIELDS, "-d", "{interval_ms}",
                                 "-c", "{count}"),
                  "dcgm_dmon", "dmon.txt", mode="stream", cap=128 * MB,
                  fallbacks=(("dcgmi", "dmon", "-e", DEVICE_FIELDS, "-d", "{interval_ms}", "-c", "{count}"),),
                  # --duration 0: three 1 s samples (the profiling fields are N/A until DCGM has sampled them)
                  argv_once=("dcgmi", "dmon", "-e", PROFILING_FIELDS + "," + DEVICE_FIELDS, "-d", "1000", "-c", "3")),),
)
