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
    # the file's stamps carry no zone and no NVIDIA document names one: read in the host's zone, and labelled so
    t = PARSER.parse(rep.sections[0].data, ParseContext(host="hgx-07", tz="Europe/Paris")).tables["fabricmanager_log"]
    assert t["ts_quality"].unique().to_list() == ["local_zone_assumed"]
    assert t["ts"][0] == dt.datetime(2024, 7, 9, 16, 14, 7, tzinfo=dt.timezone.utc)  # 18:14:07 CEST
    # Bottlerocket's copy of the script puts its host root before the path
    assert nvbug.split_report(text.replace("*** /var/log", "*** /.bottlerocket/rootfs/var/log").encode()).sections


# ------------------------------------------------------------------ mlxlink where sos and the bug report put it

MLX = Path(__file__).resolve().parent / "fixtures" / "mlxlink" / "mlxlink--bluefield3-100g-dac-two-ports-m-c-prompts.txt"


def _one_run() -> str:
    """The first port's output of the BlueField-3 fixture, without its prompt line."""
    return "".join(MLX.read_text().splitlines(keepends=True)[2:95])


def test_mlxlink_of_a_sosreport_takes_the_device_from_the_file_name():
    for tool in ("mlxlink", "mstlink"):  # MFT's, or mstflint's when MFT is absent
        hit = sos.pick(f"sos_commands/mellanox_firmware/{tool}_-d_0000_08_00.0")
        assert hit == ("mlxlink", "mlxlink-0000_08_00.0.txt", {"device": "0000_08_00.0"})
    assert sos.pick("sos_commands/mellanox_firmware/mstdump_0000_08_00.0") is None
    res = get("mlxlink").parse(_one_run().encode(), ParseContext(host="n1", hints={"device": "0000_08_00.0"}))
    t = res.tables["mlxlink"]
    assert set(t["device"]) == {"0000_08_00.0"} and "state" in set(t["field"]) and res.unparsed.height == 0


def test_mlxlink_dump_of_the_bug_report_keeps_its_command_line():
    csv = "Device,Port,Speed\n0000:08:00.0,1,100G\n"  # amber CSV stand-in: two lines mlxlink's text reader leaves
    text = (f"{nvbug.SEPARATOR}\n\n{nvbug.START}.\n\nuname: Linux dgx-3 6.8.0 #1 SMP x86_64\n\n"
            f"{nvbug.SEPARATOR}\nStarting ConnectX dump (PRIMARY FUNCTION)(0000:08:00.0)...\n"
            f"{nvbug.SEPARATOR}\n/usr/bin/mlxlink -d 0000:08:00.0 --amber_collect /tmp/mlx4242.csv > /tmp/mlx4242.info 2>&1\n"
            f"{_one_run()}{csv}{nvbug.SEPARATOR}\n\n")
    rep = nvbug.split_report(text.encode())
    assert [(s.source, s.name) for s in rep.sections] == [("mlxlink", "nvidia-bug-report-mlxlink.txt")]
    res = get("mlxlink").parse(rep.sections[0].data, ParseContext(host="dgx-3"))
    t = res.tables["mlxlink"]
    assert set(t["device"]) == {"0000:08:00.0"} and t.filter(t["field"] == "state")["value"].to_list() == ["Active"]
    # the command line (used for the device, reported as mlxlink reports prompts) and the two CSV lines, counted
    assert res.unparsed["line_no"].to_list() == [1, 95, 96]


def test_sxid_lines_of_the_bug_reports_kernel_message_scan():
    """nvidia-bug-report.sh greps syslog and the journal for 'nvidia-' (which NVSwitch SXid lines carry:
    nvidia-nvswitchN:) into its 'Scanning kernel log files' section: the dmesg source reads them."""
    text = (f"{nvbug.SEPARATOR}\n\n{nvbug.START}.\n\nuname: Linux hgx-07 5.15.0 #1 SMP x86_64\n\n"
            f"{nvbug.SEPARATOR}\n\nScanning kernel log files for NVIDIA kernel messages:\n\n  journalctl -b -0:\n"
            "Nov 30 10:15:02 hgx-07 kernel: nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 20034, Fatal, Link 33 LTSSM Fault Up\n")
    rep = nvbug.split_report(text.encode())
    assert [s.source for s in rep.sections] == ["dmesg"]
    res = get("dmesg").parse(rep.sections[0].data, ParseContext(host="hgx-07", year=2025))
    k = res.tables["kernel_log"].filter(res.tables["kernel_log"]["event"] == "nvswitch_sxid")
    assert k.select("pci_addr", "event_detail").rows() == [("0000:86:00.0", "20034, Fatal, Link 33 LTSSM Fault Up")]
