"""fabricmanager source where others put it: the journal sosreport's nvidia plugin keeps (its services
include nvidia-fabricmanager: ``journalctl --no-pager --unit nvidia-fabricmanager``, -o short), and the
log file nvidia-bug-report.sh appends (``append_silent "${HOST_ROOT}/var/log/fabricmanager.log"``:
separator, heading ``*** <path>``, its ``*** ls:`` line, the file); both parsed as the real fixtures."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from forensics.importers import nvbug, sos
from forensics.sources import ParseContext, get

FM = Path(__file__).resolve().parent / "fixtures" / "fabricmanager"
PARSER = get("fabricmanager")


def test_sosreport_journal_of_the_service():
    rel = "sos_commands/nvidia/journalctl_--no-pager_--unit_nvidia-fabricmanager"
    assert sos.pick(rel) == ("fabricmanager", "journalctl-nvidia-fabricmanager.txt", {})
    # with sos --since the option is part of the name
    assert sos.pick(rel + "_--since_2025-09-18")[0] == "fabricmanager"
    data = (FM / "fabricmanager--cube-studio29-journal-start-failed.txt").read_bytes()
    res = PARSER.parse(b"-- Logs begin at Thu 2025-09-18 03:00:00 UTC, end at Thu 2025-09-18 04:00:00 UTC. --\n" + data,
                       ParseContext(host="n1", year=2025))
    t = res.tables["fabricmanager_log"]
    assert res.unparsed.height == 0 and t.height == 4
    assert t["event"].to_list() == ["other", "fm_start_failed", "fm_start_failed", "fm_start_failed"]
    assert t["ts"][0] == dt.datetime(2025, 9, 18, 3, 19, 1, tzinfo=dt.timezone.utc)


def test_bug_report_appends_the_log_file():
    body = (FM / "fabricmanager--gpud-matcher-fatal-sxid-multicast.log").read_text()
    text = (f"{nvbug.SEPARATOR}\n\n{nvbug.START}.\n\nuname: Linux hgx-07 5.15.0-126-generic #136-Ubuntu SMP x86_64\n\n"
            f"{nvbug.SEPARATOR}\n\n*** /var/log/fabricmanager.log\n"
            f"*** ls: -rw-r--r-- 1 root root 455 2024-09-17 06:01:46.000000000 +0000 /var/log/fabricmanager.log\n"
            f"{body}\n{nvbug.SEPARATOR}\n\n/usr/bin/systemctl status nvidia-fabricmanager.service\n\n● nvidia-fabricmanager.service\n")
    rep = nvbug.split_report(text.encode())
    secs = [(s.source, s.name) for s in rep.sections]
    assert secs == [("fabricmanager", "nvidia-bug-report-fabricmanager.txt")] and rep.host == "hgx-07"
    res = PARSER.parse(rep.sections[0].data, ParseContext(host="hgx-07"))
    assert res.unparsed.height == 0  # the '*** ls:' line is structure
    assert res.tables["fabricmanager_log"]["event"].to_list() == ["nvswitch_error", "nvswitch_error", "multicast_failure"]
    # Bottlerocket's copy of the script puts its host root before the path
    assert nvbug.split_report(text.replace("*** /var/log", "*** /.bottlerocket/rootfs/var/log").encode()).sections
