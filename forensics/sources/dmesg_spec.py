"""dmesg: how it is collected and where it is found (standard library only; see :mod:`forensics.descriptor`)."""
from __future__ import annotations

from forensics.descriptor import BugSection, Descriptor, SosPath, Spec, MB

DESCRIPTOR = Descriptor(
    "dmesg", "dmesg",
    # at the end: the kernel log then holds what happened while we sampled
    collect=(Spec("dmesg", ("dmesg", "--time-format", "iso"), "dmesg", "dmesg.txt", timeout=30, cap=128 * MB, when="end",
                  fallbacks=(("dmesg",), ("journalctl", "-k", "-b", "-o", "short-iso", "--no-pager"))),),
    sosreport=(SosPath(r"^sos_commands/kernel/dmesg(?:_.*)?$", "sos_commands/kernel/dmesg"),),
    bug_report=(BugSection(r"^dmesg:$", "nvidia-bug-report-dmesg.txt", "dmesg:"),
                BugSection(r"^Scanning kernel log files for NVIDIA kernel messages", "nvidia-bug-report-kernel-messages.txt",
                           "Scanning kernel log files for NVIDIA kernel messages:")),
    events=("xid", "sxid", "link_down", "link_up", "pcie_error", "thermal", "oom", "hung_task", "nic_error", "other"),
)
