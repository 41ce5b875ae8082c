"""iostat: how it is collected and where it is found (standard library only; see :mod:`forensics.descriptor`)."""
from __future__ import annotations

from forensics.descriptor import Descriptor, SosPath, Spec, MB

DESCRIPTOR = Descriptor(
    "iostat", "iostat",
    collect=(Spec("iostat", ("iostat", "-x", "-t", "{interval}", "{count}"), "iostat", "iostat.txt", mode="stream",
                  cap=64 * MB, argv_once=("iostat", "-x", "-t")),),
    sosreport=(SosPath(r"^sos_commands/(?:block|sysstat|sar)/iostat.*$", "sos_commands/block/iostat_-x"),),
    events=("disk_saturated", "cpu_iowait"),
)
