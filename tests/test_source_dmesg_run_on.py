"""Kernel log pastes whose line breaks were lost or moved: records that ran into each other on one line
(dmesg.runon), the same text wrapped again by a mail client, and a kern.log cut at 80 columns whose cuts fell
on a blank. Each record is one row, or its text is kept in `unparsed`: never several records in one row, nor
one record in several."""
from __future__ import annotations

from pathlib import Path

from fixture_cases import context_for
from forensics.sources import ParseContext, parse_bytes

FIX = Path(__file__).parent / "fixtures" / "dmesg"
RUN_TOGETHER = FIX / "dmesg--netlog-jp-syslog-records-run-together-usb3-toshiba-hdd.txt"
REWRAPPED = FIX / "dmesg--netlog-jp-DERIVED-syslog-run-together-word-wrapped-76.txt"
KMSG = FIX / "dmesg--chinaunix-proc-kmsg-records-run-together-usb-camera.txt"
I40E = FIX / "dmesg--pfring-syslog-short-i40e-link-up.txt"
I40E_CUT = FIX / "dmesg--pfring-DERIVED-syslog-short-i40e-cut-at-80.txt"


def _parse(f: Path):
    return parse_bytes(f.read_bytes(), "dmesg", context_for(f))[1]


def test_syslog_records_run_together_on_one_line_are_one_row_each():
    # real: 9 syslog records whose line breaks were lost (7 kernel, 2 mtp-probe); before, 1 row whose message held
    # all 9, and the mtp-probe record's sysfs path gave the first record a PCI address
    res = _parse(RUN_TOGETHER)
    k, s = res.tables["kernel_log"], res.tables["syslog"]
    assert res.lines == 1 and res.unparsed.height == 0 and res.meta["run_on"] == 9
    assert k.height == 7 and s.height == 2 and set(k["line_no"]) == set(s["line_no"]) == {1}
    assert k["boot_s"].to_list() == [6387.251489, 6387.271931, 6387.271938, 6387.271942, 6387.273520, 6387.273854,
                                     6390.651768]
    assert k["message"][0] == "usb 4-2: new SuperSpeed USB device number 3 using xhci_hcd"
    assert k["message"][6] == "scsi 9:0:0:0: Direct-Access TOSHIBA MQ01ABD100 PQ: 0 ANSI: 6"
    assert k["pci_addr"][0] is None
    assert s["program"].to_list() == ["mtp-probe"] * 2
    assert s["message"][1] == "bus: 4, device: 3 was not an MTP device"


def test_run_together_records_wrapped_again_read_the_same():
    # DERIVED: the same text word-wrapped at 76 columns, heads broken over two lines ("... S5350Ubuntu1604" /
    # "kernel: [ 6387.271931] ..."; "May 3" / "10:13:05 ..."), a line filled to exactly 76 by the wrap (joined with
    # its blank, not as a cut); before, 3 rows (5 records inside other messages, one head read as its own record)
    one, res = _parse(RUN_TOGETHER), _parse(REWRAPPED)
    assert res.lines == 14 and res.unparsed.height == 0
    for table in ("kernel_log", "syslog"):
        assert res.tables[table]["message"].to_list() == one.tables[table]["message"].to_list()
        assert res.tables[table]["ts"].to_list() == one.tables[table]["ts"].to_list()
    # each record on the line its head starts on
    assert res.tables["kernel_log"]["line_no"].to_list() == [1, 2, 4, 5, 6, 8, 12]


def test_proc_kmsg_records_run_together_are_one_row_each():
    # real: `cat /proc/kmsg` in a blog post, 13 "<N>[time] msg" records on one line; before, 1 row
    res = _parse(KMSG)
    k = res.tables["kernel_log"]
    assert k.height == 13 and res.unparsed.height == 0
    assert k["boot_s"].is_sorted() and k["boot_s"][0] == 4020.883267 and k["boot_s"][12] == 4021.455075
    assert k["level"].to_list().count("info") == 2 and k["level"].to_list().count("debug") == 11
    assert k["message"][1] == "ehci_hcd 0000:00:1a.7: resume root hub" and k["pci_addr"][1] == "0000:00:1a.7"


def test_only_a_head_of_the_same_log_is_cut_at():
    ctx = ParseContext(host="h", year=2017)
    # another host's head inside a message, and a kernel time earlier than the record's: no record of this log
    other = b"May 3 10:13:05 a kernel: [ 1.000000] relayed: May 3 10:13:04 b kernel: [ 2.0] x\n"
    earlier = b"[   5.000000] saw [   4.000000] in a buffer dump\n"
    for data in (other, earlier):
        _, res = parse_bytes(data, "dmesg", ctx)
        assert res.tables["kernel_log"].height == 1 and "run_on" not in res.meta, data
    # a prose line after run-together records is no wrapped part of them: unparsed, as it is
    data = RUN_TOGETHER.read_bytes() + b"Any idea why the disk is not seen?\n"
    _, res = parse_bytes(data, "dmesg", ctx)
    assert res.rows() == {"kernel_log": 7, "syslog": 2}
    assert res.unparsed["text"].to_list() == ["Any idea why the disk is not seen?"]


def test_hostile_run_together_line_is_read_in_bounded_work():
    # 64 KiB lines (the longest a parser sees) of heads and of near-heads: one pass each, no backtracking blow-up
    head = b"May 3 10:13:05 h kernel: x "
    near = b"May 3 10:13:05 " * 4
    for data in (head * (65536 // len(head)), near * (65536 // len(near)), b"[ 1.000000] " * 5000,
                 b"<7>[ 1.000000] " + b" [" * 30000):
        _, res = parse_bytes(data + b"\n", "dmesg", ParseContext(host="h", year=2017))
        assert res.lines == 1
        assert sum(res.rows().values()) + res.unparsed.height >= 1


def test_kern_log_cut_at_80_columns_joins_the_tails_that_start_with_a_blank():
    # DERIVED: a kern.log cut at 80 columns (fold -w 80); 3 cuts fell on a blank, so those tails start with one, as
    # the kernel's own continuation lines do; before, each was a row of its own (15 rows for 12 records)
    want, res = _parse(I40E), _parse(I40E_CUT)
    assert res.lines == 23 and res.unparsed.height == 0
    assert res.tables["kernel_log"]["message"].to_list() == want.tables["kernel_log"]["message"].to_list()
    assert res.tables["kernel_log"]["iface"].to_list() == want.tables["kernel_log"]["iface"].to_list()
    # the kernel's own continuation lines stay rows where the file was not cut at its width
    data = b"[ 1.000000] BUG: unable to handle page fault\n[ 1.000001] Call Trace:\n  foo+0x1/0x2\n  bar+0x3/0x4\n"
    _, res = parse_bytes(data, "dmesg", ParseContext(host="h"))
    assert res.tables["kernel_log"].height == 4
