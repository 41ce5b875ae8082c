"""sar: how it is collected and where it is found (standard library only; see :mod:`forensics.descriptor`)."""
from __future__ import annotations

from forensics.descriptor import Descriptor, SosPath, Spec, MB


def _sar(name, flags, raw):
    return Spec(name, ("sar",) + flags + ("{interval}", "{count}"), "sar", raw, mode="stream", cap=32 * MB,
                argv_once=("sar",) + flags + ("1", "1"))


DESCRIPTOR = Descriptor(
    "sar", "sar",
    collect=(
        _sar("sar_u", ("-u",), "sar-u.txt"),
        _sar("sar_p_all", ("-P", "ALL"), "sar-P-ALL.txt"),
        _sar("sar_n_dev", ("-n", "DEV"), "sar-n-DEV.txt"),
        _sar("sar_n_edev", ("-n", "EDEV"), "sar-n-EDEV.txt"),
        _sar("sar_r", ("-r",), "sar-r.txt"),
        _sar("sar_q", ("-q",), "sar-q.txt"),
        _sar("sar_w", ("-W",), "sar-W.txt"),  # swap-in/out pages/s
        _sar("sar_b", ("-B",), "sar-B.txt"),  # paging: major faults, direct reclaim
        _sar("sar_s", ("-S",), "sar-S.txt"),  # swap space used
    ),
    # sos's `sar -A -f saDD` text, and the sysstat daily text reports (var/log/sysstat/ on Debian/Ubuntu)
    sosreport=(SosPath(r"^sos_commands/sar/sar[0-9]+$", "sos_commands/sar/sar30"),
               SosPath(r"^var/log/(?:sa|sysstat)/sar[0-9]+$", "var/log/sa/sar30")),
    events=("disk_saturated", "cpu_iowait"),
)
