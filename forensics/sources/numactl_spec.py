"""numactl -H: how it is collected and where it is found (standard library only; see :mod:`forensics.descriptor`)."""
from __future__ import annotations

from forensics.descriptor import BugSection, Descriptor, SosPath, Spec, MB

DESCRIPTOR = Descriptor(
    "numactl", "numactl",
    collect=(Spec("numactl_h", ("numactl", "-H"), "numactl", "numactl-H.txt", timeout=20, cap=4 * MB),),
    sosreport=(SosPath(r"^sos_commands/numa/numactl_(?:--hardware|-H)$", "sos_commands/numa/numactl_--hardware"),),
    bug_report=(BugSection(r"^(?:\S*/)?numactl\s+(?:-H|--hardware)\s*$", "nvidia-bug-report-numactl-H.txt",
                           "/usr/bin/numactl -H"),),
)
