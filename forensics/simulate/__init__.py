"""``forensics simulate``: a data-parallel training job on N nodes x G GPUs (RoCE, mlx5, two NUMA
sockets) with injected faults, written as a bundle of raw tool outputs in the exact formats the
real tools print, plus the ground truth (``truth/labels.json``).

>>> from forensics.simulate import SCENARIOS
>>> {'healthy', 'pfc_storm', 'straggler'} <= set(SCENARIOS)
True
"""
from __future__ import annotations

from forensics.simulate.bundle import Simulation, ingest_available, write_bundle
from forensics.simulate.config import SimConfig
from forensics.simulate.scenarios import SCENARIOS

__all__ = ["SCENARIOS", "SimConfig", "Simulation", "write_bundle", "ingest_available", "list_scenarios"]


def list_scenarios() -> list[tuple[str, str]]:
    return [(name, SCENARIOS[name].description) for name in sorted(SCENARIOS)]
