"""What the collector runs, declared as data (standard library only, Python 3.8 syntax).

Each source declares the commands that feed it beside its parser (``collect`` in
``forensics/sources/<name>_spec.py``, see :mod:`forensics.descriptor` for :class:`Spec`); this module
adds the collector's own commands (clock reference, the GPU processes' inventory) and gives the
whole list, in a fixed order: every source's (sources by name), then the collector's.
"""
from __future__ import annotations

from forensics.descriptor import MB, Spec
from forensics.sources import descriptors

COLLECTOR = (
    Spec("chronyc_tracking", ("chronyc", "tracking"), "collector", "chronyc-tracking.txt", timeout=10, cap=1 * MB),
    Spec("timedatectl", ("timedatectl",), "collector", "timedatectl.txt", timeout=10, cap=1 * MB),
    Spec("nvidia_smi_apps", ("nvidia-smi", "--query-compute-apps=pid,gpu_uuid,gpu_bus_id,used_memory", "--format=csv,noheader"),
         "collector", "compute-apps.csv", timeout=30, cap=4 * MB),
    Spec("nvidia_smi_gpus", ("nvidia-smi", "--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader"),
         "collector", "gpu-index.csv", timeout=30, cap=1 * MB),
)

SPECS = tuple(s for d in descriptors().values() for s in d.collect) + COLLECTOR


def by_name():
    return dict((s.name, s) for s in SPECS)


__all__ = ["COLLECTOR", "MB", "SPECS", "Spec", "by_name"]
