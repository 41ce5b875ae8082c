"""NVIDIA Fabric Manager's log: how it is collected and where it is found (standard library only; see
:mod:`forensics.descriptor`).

At the end of a capture the collector copies ``/var/log/fabricmanager.log`` (FM's default
``LOG_FILE_NAME``; its last 64 MiB when it is longer, the copy then starting mid-record) the way it
copies NCCL logs: never through a link, a regular file with one link owned by root
(:mod:`forensics.collect.files`); a node without Fabric Manager (no NVSwitch) records the copy as
failed with the reason. It also keeps the service's journal of this boot (``journalctl -u
nvidia-fabricmanager -b -o short-iso``), which holds the start script's and systemd's lines (a start
that failed leaves no log file at all), a failed command where there is no journal.

sosreport's nvidia plugin keeps the service's journal (``journalctl --no-pager --unit
nvidia-fabricmanager``, because ``nvidia-fabricmanager`` is one of its services) but not the log
file; nvidia-bug-report.sh appends the log file (``append_silent "${HOST_ROOT}/var/log/fabricmanager.log"``:
a ``*** /var/log/fabricmanager.log`` heading, then its ``*** ls:`` line and the file).
"""
from __future__ import annotations

from forensics.descriptor import BugSection, Descriptor, SosPath, Spec, MB

LOG_PATH = "/var/log/fabricmanager.log"

DESCRIPTOR = Descriptor(
    "fabricmanager", "Fabric Manager",
    collect=(
        Spec("fabricmanager_log", ("copy", LOG_PATH), "fabricmanager", "fabricmanager.log", mode="copy", when="end",
             timeout=60, cap=64 * MB),
        Spec("fabricmanager_journal", ("journalctl", "-u", "nvidia-fabricmanager", "-b", "-o", "short-iso", "--no-pager"),
             "fabricmanager", "journal.txt", when="end", timeout=60, cap=32 * MB),
    ),
    sosreport=(SosPath(r"^sos_commands/nvidia/journalctl_--no-pager_--unit_nvidia-fabricmanager(?:_.*)?$",
                       "sos_commands/nvidia/journalctl_--no-pager_--unit_nvidia-fabricmanager",
                       name="journalctl-nvidia-fabricmanager.txt"),),
    bug_report=(BugSection(r"^\*\*\* (?:/\S*)?/var/log/fabricmanager\.log$", "nvidia-bug-report-fabricmanager.txt",
                           "*** /var/log/fabricmanager.log"),),
    events=("fm_nvswitch_error", "fm_gpu_nvl_error", "fm_multicast_failure", "fm_ready", "fm_start_failed", "fm_service",
            "fm_port_down", "fm_trunk_port_failure", "fm_error"),
)
