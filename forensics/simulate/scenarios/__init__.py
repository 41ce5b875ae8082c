"""Scenarios: each changes the healthy job (see :mod:`forensics.simulate.plan`) and records the truth.

Faults are the root causes, effects what they cause; ``kind`` is one of the finding kinds of the
detectors. Subjects: a NIC by interface name, a GPU as ``GPU<n> <pci address>``, a NCCL setting by
its variable, a disk by device name. Times in the truth are true UTC (the hosts' clocks are off by
``clock_offsets_s``).
"""
from __future__ import annotations

from forensics.simulate.scenarios.base import SCENARIOS, Scenario, crash_truth, scenario
# registered in this order (after ``healthy``): what `simulate --list` and the evaluation show
from forensics.simulate.scenarios import network, gpu, workload, fabric, health  # noqa: E402,F401

__all__ = ["SCENARIOS", "Scenario", "crash_truth", "scenario"]
