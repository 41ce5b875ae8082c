"""dmesg / journalctl -k / syslog kernel lines: hand-checked values from the real fixtures, time
conversions, prefixes, continuation lines, sniffing and bad input."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest

from forensics.sources import ParseContext, detect, dmesg, sniff_pasted
from forensics.sources._base import split_lines

FIX = Path(__file__).parent / "fixtures" / "dmesg"
OTHERS = Path(__file__).parent / "fixtures"  # other tools' real outputs (origins in fixtures/README.md)
UTC = dt.timezone.utc


def parse(name_or_bytes, host="h1", **ctx):
    data = name_or_bytes if isinstance(name_or_bytes, bytes) else (FIX / name_or_bytes).read_bytes()
    res = dmesg.parse(data, ParseContext(host=host, file="f.txt", **ctx))
    assert res.lines == split_lines(data).height
    nos = res.unparsed["line_no"].to_list()
    assert len(nos) == len(set(nos))
    used = res.tables["kernel_log"]["line_no"].to_list()
    assert len(used) == len(set(used))
    assert not set(used) & set(nos), "a line both produced a row and is unparsed"
    return res


def rows(res):
    return list(res.tables["kernel_log"].iter_rows(named=True))


def at(res, line_no):
    t = res.tables["kernel_log"].filter(pl.col("line_no") == line_no)
    assert t.height == 1, line_no
    return t.row(0, named=True)


# --- Xid numbers, PCI addresses and times of the real fixtures ----------------------------------

def test_xid119_gsp_timeouts_dmesg_T_converted_with_pinned_zone():
    res = parse("dmesg--gpud-xe9680-ctime-xid119-gsp.txt", tz="America/New_York")
    t = res.tables["kernel_log"]
    assert t.height == 43 and res.unparsed.height == 0  # no trailing newline: last line still counts
    xids = t.filter(pl.col("xid").is_not_null())
    assert xids["xid"].to_list() == [119] * 5
    assert set(xids["pci_addr"]) == {"0000:9b:00.0"}  # "PCI:0000:9b:00" without function
    first = at(res, 3)
    # Sun Feb 23 16:24:18 2025 in New York (EST, UTC-5)
    assert first["ts"] == dt.datetime(2025, 2, 23, 21, 24, 18, tzinfo=UTC)
    assert first["ts_quality"] == "local" and first["raw_time"] == "Sun Feb 23 16:24:18 2025"
    assert first["subsystem"] == "NVRM"
    assert first["xid_text"].startswith("pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC")
    assert at(res, 43)["xid_text"].endswith("Expected function 76 (GSP_RM_CONTROL) (0x20803032 0x58c).")
    # the call trace lines are records of their own (their own time prefix), indentation kept
    assert at(res, 29)["message"] == " show_stack+0x52/0x5c"
    assert at(res, 40)["pci_addr"] == "0000:9b:00.0"  # "Rate limiting ... for GPU at PCI:0000:9b:00"
    assert at(res, 25)["subsystem"] == "CPU"


def test_dmesg_T_same_input_other_zone_and_utc_default():
    ny = at(parse("dmesg--gpud-xe9680-ctime-xid119-gsp.txt", tz="America/New_York"), 1)["ts"]
    berlin = at(parse("dmesg--gpud-xe9680-ctime-xid119-gsp.txt", tz="Europe/Berlin"), 1)["ts"]
    utc = at(parse("dmesg--gpud-xe9680-ctime-xid119-gsp.txt"), 1)["ts"]
    assert utc == dt.datetime(2025, 2, 23, 16, 24, 18, tzinfo=UTC)
    assert ny - utc == dt.timedelta(hours=5) and utc - berlin == dt.timedelta(hours=1)


def test_xid13_xid43_decode_iso_exact_to_the_microsecond():
    res = parse("dmesg--gpud-decode-iso-xid13-xid43.txt")
    t = res.tables["kernel_log"]
    assert t.height == 17 and res.unparsed.height == 0
    assert t["xid"].to_list() == [13] * 16 + [43]
    assert set(t["pci_addr"]) == {"0000:38:00.0"}
    assert set(t["facility"]) == {"kern"} and set(t["level"]) == {"warn"}  # "kern  :warn  : "
    assert set(t["ts_quality"]) == {"exact"}
    assert at(res, 1)["ts"] == dt.datetime(2025, 1, 21, 4, 41, 44, 283302, tzinfo=UTC)
    last = at(res, 17)
    assert last["ts"] == dt.datetime(2025, 1, 21, 4, 41, 44, 287197, tzinfo=UTC)
    assert last["raw_time"] == "2025-01-21T04:41:44,287197+00:00"
    assert last["xid_text"] == "pid=2924364, name=pt_main_thread, Ch 00000008"
    assert at(res, 1)["xid_text"].endswith("Graphics SM Global Exception on (GPC 8, TPC 5, SM 1): Multiple Warp Errors")
    assert last["message"].startswith("NVRM: Xid (PCI:0000:38:00): 43,")  # prefixes removed


def test_xid79_raw_seconds_with_and_without_boot_time():
    boot = dt.datetime(2025, 1, 1, tzinfo=UTC)
    res = parse("dmesg--gpud-sxid-readme-raw-xid79-sxid20034.txt", boot_time=boot)
    x = at(res, 3)
    assert (x["xid"], x["pci_addr"], x["subsystem"]) == (79, "0000:91:00.0", "NVRM")
    assert x["xid_text"] == "pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    assert x["boot_s"] == 6781741.548779
    assert x["ts"] == boot + dt.timedelta(seconds=6781741, microseconds=548779)
    assert x["ts_quality"] == "boot"
    # SXid lines of NVSwitch are not NVRM Xids: subsystem and PCI address only
    s = at(res, 6)
    assert (s["subsystem"], s["pci_addr"], s["xid"]) == ("nvidia-nvswitch1", "0000:06:00.0", None)
    assert at(res, 4)["pci_addr"] == "0000:91:00.0"  # "NVRM: GPU 0000:91:00.0: ..."
    no_boot = at(parse("dmesg--gpud-sxid-readme-raw-xid79-sxid20034.txt"), 3)
    assert no_boot["ts"] is None and no_boot["ts_quality"] == "none" and no_boot["boot_s"] == 6781741.548779


def test_boot_time_naive_is_utc_and_aware_is_converted():
    line = b"[   10.642917] mlx5_core 0004:01:00.0: Adding to iommu group 29\n"
    naive = rows(parse(line, boot_time=dt.datetime(2025, 1, 1, 0, 0, 0)))[0]["ts"]
    cet = dt.timezone(dt.timedelta(hours=1))
    aware = rows(parse(line, boot_time=dt.datetime(2025, 1, 1, 1, 0, 0, tzinfo=cet)))[0]["ts"]
    assert naive == aware == dt.datetime(2025, 1, 1, 0, 0, 10, 642917, tzinfo=UTC)


# --- mlx5 / NIC lines: driver, PCI address, interface ---------------------------------------------

def test_mlx5_link_down_up_iface_and_pci():
    res = parse("dmesg--lkml-mlx5-vf-ctime-link-down-up.txt")
    down, up = at(res, 3), at(res, 4)
    for r, word in ((down, "Link down"), (up, "Link up")):
        assert (r["subsystem"], r["pci_addr"], r["iface"]) == ("mlx5_core", "0000:42:00.1", "eth4")
        assert r["message"].endswith(word)
    assert up["ts"] - down["ts"] == dt.timedelta(seconds=7)
    dmar = at(res, 2)  # "Request device [42:00.2]": bus:dev.fn without domain
    assert (dmar["subsystem"], dmar["pci_addr"], dmar["iface"]) == ("DMAR", "0000:42:00.2", None)
    assert at(res, 6)["message"].endswith("recovered after timeout")  # non-ASCII bytes inside kept


def test_mlx5_raw_cable_plugged_and_driver_without_pci():
    res = parse("dmesg--mlnx-ofed47-raw-mlx5-cable-plugged.txt")
    assert res.tables["kernel_log"].height == 7 and res.unparsed.height == 0
    r = at(res, 3)
    assert (r["subsystem"], r["pci_addr"], r["boot_s"]) == ("mlx5_core", "0000:18:00.0", 360772.410308)
    assert r["message"] == "mlx5_core 0000:18:00.0: Port module event: module 0, Cable plugged"
    assert at(res, 6)["subsystem"] == "mlx5_ib" and at(res, 6)["pci_addr"] is None
    assert at(res, 5)["subsystem"] is None  # "Hello Mellanox World!"
    assert res.meta["variant"] == "raw"


def test_pci_domain_kept_and_prompt_line_unparsed():
    res = parse("dmesg--geerlingguy-cx5-raw-pci-domain-0004.txt")
    assert set(res.tables["kernel_log"]["pci_addr"]) == {"0004:01:00.0", "0004:01:00.1"}
    assert res.unparsed.row(0, named=True)["line_no"] == 1
    assert res.unparsed["reason"][0] == dmesg.PROMPT


def test_journalctl_short_iso_hosts_interfaces_and_peermem():
    res = parse("dmesg--gpud-journalctl-short-iso-peermem.txt", host=None)
    t = res.tables["kernel_log"]
    assert t.height == 47 and res.unparsed.height == 0
    host = "exp03-ft-896z-1-lan.exp03-ft-896z-job-svc"
    assert res.meta["hosts"] == [host] and set(t["host"]) == {host}
    assert at(res, 1)["ts"] == dt.datetime(2025, 1, 17, 17, 10, 43, tzinfo=UTC)  # "+0000" without colon
    assert (at(res, 1)["subsystem"], at(res, 1)["iface"]) == ("IPv6", "eth0")
    assert at(res, 2)["iface"] == "cali1d5c6a0536f"
    pm = t.filter(pl.col("subsystem") == "nvidia-peermem")
    assert pm.height == 14 and set(pm["message"].str.slice(0, 43)) == {"nvidia-peermem nv_get_p2p_free_callback:127"}
    # the context's host wins when given (the bundle's name for the machine)
    assert set(parse("dmesg--gpud-journalctl-short-iso-peermem.txt", host="node07").tables["kernel_log"]["host"]) == {"node07"}


def test_syslog_kern_log_inner_boot_seconds_year_and_garbled_line():
    res = parse("dmesg--pfring-syslog-ixgbe-link-flap.txt", year=2017, tz="Europe/Moscow")
    assert res.unparsed["line_no"].to_list() == [1]  # "ov 17 13:50:04 ..." (first character lost in the paste)
    r = at(res, 3)
    assert (r["subsystem"], r["pci_addr"], r["iface"]) == ("ixgbe", "0000:08:00.0", "eth11")
    assert r["message"] == "ixgbe 0000:08:00.0 eth11: NIC Link is Down"
    assert r["boot_s"] == 13301.517381 and r["raw_time"] == "Nov 17 13:50:04"
    assert r["ts"] == dt.datetime(2017, 11, 17, 10, 50, 4, tzinfo=UTC) and r["ts_quality"] == "local_year_inferred"
    assert at(res, 4)["iface"] == "eth11"  # "bpmod: eth11 is in the Bypass mode now."
    assert at(res, 10)["subsystem"] == "PF_RING"  # "[PF_RING] Module unloaded"
    assert res.meta["hosts"] == ["superserver"]


def test_syslog_year_from_capture_time_rolls_back_over_new_year():
    data = b"Dec 31 23:59:58 gpu01 kernel: eth0: renamed from ens1\nJan  1 00:00:02 gpu01 kernel: eth0: link up\n"
    res = parse(data, capture_time=dt.datetime(2027, 1, 1, 0, 5, tzinfo=UTC))
    assert [r["ts"].year for r in rows(res)] == [2026, 2027]
    unknown = rows(parse(data))  # neither ctx.year nor capture time: no timestamp, but the row stays
    assert [r["ts"] for r in unknown] == [None, None] and {r["ts_quality"] for r in unknown} == {"none"}
    assert rows(parse(data, year=2020))[1]["ts"] == dt.datetime(2020, 1, 1, 0, 0, 2, tzinfo=UTC)


def test_syslog_short_i40e_renamed_and_link_up():
    res = parse("dmesg--pfring-syslog-short-i40e-link-up.txt", year=2022)
    assert res.unparsed.height == 0
    assert (at(res, 7)["iface"], at(res, 7)["pci_addr"]) == ("ens4f3", "0000:af:00.3")
    assert at(res, 1)["iface"] == "ens4f2" and at(res, 1)["message"].endswith("Flow Control: None")
    assert at(res, 5)["pci_addr"] == "0000:af:00.3"  # not the MAC address in the message
    assert at(res, 11)["subsystem"] == "PF_RING-ZC"


def test_openwrt_logread_facility_level_and_other_programs_in_syslog():
    res = parse("dmesg--lede-logread-igc-link-flap.txt", tz="Asia/Shanghai")
    t = res.tables["kernel_log"]
    assert t.height == 10 and set(t["facility"]) == {"kern"} and set(t["level"]) == {"info"}
    assert res.unparsed.height == 0
    s = res.tables["syslog"]
    assert s["line_no"].to_list() == [1, 7, 8] and set(s["program"]) == {"netifd"}
    assert s["facility"].to_list() == ["daemon"] * 3 and s["ts_quality"].to_list() == ["local"] * 3
    down = at(res, 2)
    assert (down["iface"], down["pci_addr"], down["boot_s"]) == ("eth5", "0000:05:00.0", 39210.778735)
    assert down["ts"] == dt.datetime(2023, 6, 11, 15, 2, 41, tzinfo=UTC)
    assert at(res, 3)["iface"] == "br-switch"


def test_comment_header_blank_line_and_indented_messages():
    res = parse("dmesg--gpud-ctime-comment-header-kvm-boot.txt")
    assert res.unparsed["line_no"].to_list() == [1]  # "# sudo dmesg --ctime ..."; line 2 is blank
    assert at(res, 6)["message"] == "  Intel GenuineIntel"
    assert at(res, 12)["subsystem"] == "BIOS-e820"


# --- prefixes and variants in the shapes the tools print ---------------------------------------------

def test_raw_priority_prefix_r():
    # dmesg -r prints "<facility*8+level>" before the time
    data = b"<4>[360773.379878] Hello Mellanox World!\n<6>[360773.384107] mlx5_ib: Mellanox Connect-IB Infiniband driver v4.7-3.2.9\n<30>[  13.000001] systemd[1]: Started Journal Service.\n"
    got = [(r["facility"], r["level"], r["subsystem"], r["boot_s"]) for r in rows(parse(data))]
    assert got == [("kern", "warn", None, 360773.379878), ("kern", "info", "mlx5_ib", 360773.384107),
                   ("daemon", "info", "systemd", 13.000001)]


def test_raw_priority_prefix_r_real_boot_oops():
    res = parse("dmesg--lkml-stable-arm-raw-level-prefix-r-oops.txt")
    assert res.lines == 30 and res.unparsed.height == 0
    assert (at(res, 1)["level"], at(res, 1)["subsystem"], at(res, 1)["message"]) == ("info", "GICv3", "GICv3: 224 SPIs implemented")
    assert [at(res, n)["level"] for n in (5, 8, 9, 30)] == ["alert", "emerg", "warn", "emerg"]
    assert {r["facility"] for r in rows(res)} == {"kern"} and {r["boot_s"] for r in rows(res)} == {0.0}
    assert at(res, 7)["message"] == "[00000001] *pgd=00000000"


def test_decode_prefix_x_with_raw_and_ctime_times():
    data = (b"kern  :info  : [    1.000000] pci 0000:00:01.0: [8086:1237] type 00 class 0x060000\n"
            b"user  :notice: [    2.500000] random: crng init done\n"
            b"kern  :err   : [Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout\n")
    got = [(r["facility"], r["level"], r["subsystem"], r["pci_addr"], r["xid"]) for r in rows(parse(data))]
    assert got == [("kern", "info", "pci", "0000:00:01.0", None), ("user", "notice", "random", None, None),
                   ("kern", "err", "NVRM", "0000:9b:00.0", 119)]


def test_journalctl_short_precise_monotonic_and_headers():
    data = (b"-- Logs begin at Mon 2026-11-30 09:00:00 CET, end at Mon 2026-11-30 10:15:02 CET. --\n"
            b"Nov 30 10:15:02.123456 gpu01 kernel: mlx5_core 0000:18:00.0 ens1f0np0: Link down\n"
            b"-- Boot 3f1d2c0e6a8b4f7e9d1c2b3a4f5e6d7c --\n"
            b"[   12.345678] gpu01 kernel: mlx5_core 0000:18:00.0 ens1f0np0: renamed from eth0\n")
    res = parse(data, tz="Europe/Berlin", year=2026, boot_time=dt.datetime(2026, 11, 30, 9, 0, tzinfo=UTC))
    assert res.unparsed.height == 0 and res.tables["kernel_log"].height == 2
    a, b = at(res, 2), at(res, 4)
    assert a["ts"] == dt.datetime(2026, 11, 30, 9, 15, 2, 123456, tzinfo=UTC) and a["ts_quality"] == "local_year_inferred"
    assert (a["iface"], a["pci_addr"]) == ("ens1f0np0", "0000:18:00.0")
    assert b["ts"] == dt.datetime(2026, 11, 30, 9, 0, 12, 345678, tzinfo=UTC) and b["ts_quality"] == "boot"
    assert b["message"] == "mlx5_core 0000:18:00.0 ens1f0np0: renamed from eth0"


def test_continuation_lines_take_the_time_of_their_message():
    data = (b"[Thu Jul 18 16:03:50 2024] rcu: Preemptible hierarchical RCU implementation.\n"
            b"                           \tTrampoline variant of Tasks RCU enabled.\n"
            b"[Thu Jul 18 16:03:51 2024] NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.\n"
            b"    second line of that record\n")
    res = parse(data)
    t = res.tables["kernel_log"]
    assert t["line_no"].to_list() == [1, 2, 3, 4] and res.unparsed.height == 0
    c = at(res, 2)
    assert c["ts"] == at(res, 1)["ts"] and c["subsystem"] == "rcu" and c["raw_time"] is None
    assert c["message"] == "Trampoline variant of Tasks RCU enabled."
    c2 = at(res, 4)
    assert c2["pci_addr"] == "0000:18:00.0" and c2["xid"] is None  # one Xid event, counted once
    orphan = parse(b"    no message before me\n[  1.0] ok\n")
    assert orphan.unparsed["reason"].to_list() == ["continuation line without a preceding message"]


def test_bad_times_go_to_unparsed_dst_gap_keeps_the_row():
    data = (b"[Mon Feb 30 10:00:00 2026] no such day\n"
            b"[Sun Mar  8 02:30:00 2026] inside the DST gap\n"
            b"2025-13-17T17:10:43,000001+00:00 bad month\n")
    res = parse(data, tz="America/New_York")
    assert dict(zip(res.unparsed["line_no"], res.unparsed["reason"])) == {
        1: "dmesg -T time does not convert", 3: "ISO time does not convert"}
    gap = at(res, 2)
    assert gap["ts"] is None and gap["ts_quality"] == "none" and gap["raw_time"] == "Sun Mar  8 02:30:00 2026"


# --- sniffing --------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", sorted(FIX.glob("dmesg--*.txt")), ids=lambda p: p.name)
def test_sniff_recognises_every_fixture(path):
    side = path.with_name(path.name + ".ctx.json")
    if side.is_file() and '"sniff": false' in side.read_text():
        pytest.skip("fixture documented as not sniffable alone (no kernel line)")
    # (as the paste layer weighs it: a talosctl paste of several nodes has a node name before every line)
    assert sniff_pasted("dmesg", path.read_bytes())
    assert detect(path.read_bytes()) == "dmesg"


@pytest.mark.parametrize("rel", [
    "nccl/nccl--aws-2xa10g-nccl2.11.4-socket-nccltests-allreduce.txt",
    "nccl/nccl--nccl-issue1920-k8s-rfc3339-prefix-no-pid-socket-reset.txt",
    "nccl/nccl--pytorch-watchdog-basicsr737-pg-guid-format.txt",
    "sar/sar--centos76-n-DEV-ampm.txt",
    "sar/sar--centos79-u-ALL-P-ALL.txt",
    "numactl/numactl--princeton-della-2node-spr8468-prompt.txt",
    "ethtool/ethtool--bnxt_en-12q-queue-prefixed.txt",
    "iostat/iostat--ubuntu2010-x-new-columns.txt",
    "nvidia_smi/nvidia_smi--q-a-h100-545-prompt.txt",
])
def test_sniff_rejects_other_tools(rel):
    path = OTHERS / rel
    assert not dmesg.sniff(path.read_bytes())


# --- contract on bad input -------------------------------------------------------------------------

@pytest.mark.parametrize("data", [
    b"", b"\n\n", b"[  5.0] truncated mid-li", b"[   10.642917] mlx5_core 0004:01:00.0: Adding\r\n[   11.0] x\r\n",
    bytes(range(256)) * 4, b"\x00\xff\xfe[  1.0]\n\x80abc\n", "[  1.0] caf\xe9\n".encode("latin-1"),
], ids=["empty", "blank", "truncated", "crlf", "garbage", "nul", "latin1"])
def test_bad_input_full_accounting(data):
    res = parse(data)
    t = res.tables["kernel_log"]
    assert t.height + res.unparsed.height <= res.lines


def test_crlf_parses_like_lf_and_5mb_line():
    lf = (FIX / "dmesg--gpud-xe9680-ctime-xid119-gsp.txt").read_bytes()
    a, b = parse(lf), parse(lf.replace(b"\n", b"\r\n"))
    assert a.tables["kernel_log"].equals(b.tables["kernel_log"])
    big = b"[    1.000000] " + b"y" * (5 << 20) + b"\n[    2.000000] eth0: renamed from ens1\n"
    res = parse(big)
    assert res.tables["kernel_log"].height == 2 and at(res, 2)["iface"] == "eth0"


def test_chunked_parse_equals_whole():
    data = b"".join((FIX / n).read_bytes() for n in ("dmesg--gpud-sxid-readme-raw-xid79-sxid20034.txt",
                                                     "dmesg--gpud-decode-iso-xid13-xid43.txt"))
    whole = parse(data).tables["kernel_log"]
    cut = data.index(b"\n", len(data) // 2) + 1
    first, second = parse(data[:cut]).tables["kernel_log"], parse(data[cut:]).tables["kernel_log"]
    shift = data[:cut].count(b"\n")
    joined = pl.concat([first, second.with_columns(pl.col("line_no") + shift)])
    assert joined.equals(whole)


def test_sniff_syslog_file_with_other_programs():
    lines = (FIX / "dmesg--lede-logread-igc-link-flap.txt").read_bytes().splitlines(keepends=True)
    netifd = [ln for ln in lines if b"netifd" in ln]
    kernel = [ln for ln in lines if b"kernel:" in ln]
    assert dmesg.sniff(b"".join(netifd * 3 + kernel[:1]))  # /var/log/messages: mostly other programs
    # no kernel line at all: a syslog file of other programs' whole records (date, host, program), taken as one
    # below the confidence a kernel line gives; refused before (set C's syslog of systemd + nvidia-persistenced)
    only = dmesg.sniff(b"".join(netifd * 3))
    assert only and only.confidence == 0.6 and "no kernel line" in only.reason
    assert not dmesg.sniff(b"".join(netifd[:2]))  # two records are too few to claim a file by
    # a bare "prog[pid]: " line is no whole record (journal lines cut before date and host), nor is prose
    assert not dmesg.sniff(b"wpa_supplicant[580]: wlan0: CTRL-EVENT-SCAN-STARTED\n" * 5)
    assert not dmesg.sniff(b"".join(netifd * 3) + b"some prose line\n")


def test_continuation_lines_without_any_message_are_unparsed():
    res = parse(b"    no message here\n\n   nor here\n")
    assert res.tables["kernel_log"].height == 0 and res.lines == 3
    assert res.unparsed["reason"].to_list() == ["continuation line without a preceding message"] * 2


def test_ingest_chunks_keep_continuation_lines_with_their_message(monkeypatch, tmp_path: Path):
    from forensics import ingest

    head = (FIX / "dmesg--gpud-decode-iso-xid13-xid43.txt").read_bytes().rstrip(b"\n").split(b"\n")
    data = b"".join(ln + b"\n" + b"\n" + b"    continued on a second line\n" * 3 for ln in head * 8)
    path = tmp_path / "dmesg.txt"
    path.write_bytes(data)
    ctx = ParseContext(host="h", file=str(path))
    whole = dmesg.parse(data, ctx)
    monkeypatch.setattr(dmesg, "CHUNK_BYTES", 700)
    frames: list[pl.DataFrame] = []
    _, res = ingest.parse_path(path, "dmesg", ctx, sink=lambda t, df: frames.append(df))
    assert len(frames) > 10 and res.lines == whole.lines
    assert pl.concat(frames).equals(whole.tables["kernel_log"]) and res.unparsed.equals(whole.unparsed)


def test_repeated_messages_get_the_fields_of_each_message():
    lines = (FIX / "dmesg--gpud-decode-iso-xid13-xid43.txt").read_bytes().rstrip(b"\n").split(b"\n")
    data = b"\n".join(lines * (dmesg.DEDUP_MIN_ROWS // len(lines) + 1)) + b"\n"
    once = parse(b"\n".join(lines) + b"\n").tables["kernel_log"].drop("line_no")
    many = parse(data).tables["kernel_log"].drop("line_no")
    assert many.height > dmesg.DEDUP_MIN_ROWS
    assert many.head(once.height).equals(once) and many.tail(once.height).equals(once)


def test_untimed_indented_hung_task_reports_of_a_commit_message():
    # an nvme patch (5.2): two hung-task reports pasted into the commit message without times, indented
    # 2 spaces (the second INFO line 3), with the pre-5.13 task line and "Workqueue:". Before: refused
    from forensics.ingest.files import parse_file

    summary, tables = parse_file(FIX / "dmesg--nvme-commit-untimed-indented-hung-task-5.2-two-tasks.txt")
    assert summary["source"] == "dmesg" and summary["unparsed"] == 0 and summary["lines"] == 50
    k = tables["kernel_log"]
    assert k.height == 49 and set(k["ts_quality"]) == {"none"}
    heads = k.filter(pl.col("message").str.contains("blocked for more than"))
    assert heads["line_no"].to_list() == [1, 32]


def test_untimed_indented_hung_task_arm64_call_trace_and_task_state_line():
    # a 6.12-stable review patch: "task:vchiq-keep/0 state:D ..." and arm64's "Call trace:", indented 2
    from forensics.ingest.files import parse_file

    summary, tables = parse_file(FIX / "dmesg--stable-review-vchiq-untimed-indented-hung-task-arm64.txt")
    assert summary["source"] == "dmesg" and summary["unparsed"] == 0
    assert tables["kernel_log"].height == 11
    # one hint line alone is no kernel log: prose quoting it stays unrecognised
    assert detect(b'the "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message. line\nis noise\n') != "dmesg"


def test_journal_json_pretty_with_mail_wrapped_values():
    # linux-scsi 2020: two `journalctl -o json-pretty` kernel entries in a mail, MESSAGE and __CURSOR wrapped
    name = "dmesg--linux-scsi-2020-journal-json-pretty-mail-wrapped-message.txt"
    data = (FIX / name).read_bytes()
    assert detect(data) == "dmesg"
    r = parse(data, host=None)
    k = r.tables["kernel_log"]
    assert k["line_no"].to_list() == [1, 22] and r.meta["variant"] == "journal_json"
    assert k["message"].to_list() == [
        "blk_update_request: critical medium error, dev nvme0n1, sector 10000 op 0x0:(READ) flags 0x80700 phys_seg 3 prio class 0",
        "block nvme0n1: blk_update_request: critical medium error, dev nvme0n1, sector 10000 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0"]
    assert k["ts"].to_list()[0] == dt.datetime(2020, 9, 30, 13, 7, 40, 802301, tzinfo=dt.timezone.utc)
    assert k["boot_s"].to_list() == [1805.611354, 130.941917] and k["level"].to_list() == ["err", "err"]
    assert r.meta["hosts"] == ["pn"]
    # every line accounted for: 2 entries' first lines, 42 folded into them (one a blank inside the array the
    # mail broke), 2 prose lines unparsed, 3 blank lines between the entries
    blank = sum(1 for t in data.decode().split("\n")[:r.lines] if not t.strip())
    assert (r.meta["json_folded"], r.unparsed["line_no"].to_list(), blank) == (42, [18, 19], 4)
    assert k.height + r.meta["json_folded"] + r.unparsed.height + (blank - 1) == r.lines == 49
    # quoted in a reply ("> "), the same entries
    q = parse(b"".join(b"> " + ln for ln in data.splitlines(keepends=True)), host=None)
    assert q.tables["kernel_log"]["message"].equals(k["message"]) and q.unparsed["text"][0].startswith("> Unless")


def _pretty(obj: dict) -> str:
    """One entry as `journalctl -o json-pretty` prints it (a tab a level, " : " after each key)."""
    out = ["{"]
    for n, (key, v) in enumerate(obj.items()):
        end = "," if n < len(obj) - 1 else ""
        if isinstance(v, list):
            out += [f'\t"{key}" : ['] + [f'\t\t{json.dumps(x)}' + ("," if m < len(v) - 1 else "")
                                          for m, x in enumerate(v)] + ["\t]" + end]
        else:
            out.append(f'\t"{key}" : {json.dumps(v)}{end}')
    return "\n".join(out + ["}"]) + "\n"


def test_journal_json_pretty_scans_only_the_lines_of_wrapped_strings(monkeypatch):
    # a long json-pretty journal: only the object lines that open a string they do not close (the mail-wrapped
    # MESSAGE of the linux-scsi paste) or hold a backslash have their characters scanned; each other line's
    # brace depth is counted in polars (before: every character of every object line went through _scan)
    from forensics.sources.dmesg import journal_json
    name = "dmesg--linux-scsi-2020-journal-json-pretty-mail-wrapped-message.txt"
    wrapped = (FIX / name).read_text()
    entries = [json.loads(t) for t in journal_json.join_objects(wrapped.split("\n"))[0] if t.startswith("{")]
    clean = "".join(_pretty(e) for e in entries)
    data = (clean * 100 + wrapped + clean * 100).encode()
    calls = []
    scan = journal_json._scan
    monkeypatch.setattr(journal_json, "_scan", lambda piece, *a: calls.append(piece) or scan(piece, *a))
    r = parse(data, host=None)
    assert r.tables["kernel_log"].height == 402 and r.unparsed["text"].str.starts_with("Unless").sum() == 1
    # the wrapped MESSAGE lines: 3 in the first entry's (its first and its tail), 2 + 3 in the second's
    assert 0 < len(calls) <= 8, calls
    assert r.tables["kernel_log"]["message"].to_list()[:2] == r.tables["kernel_log"]["message"].to_list()[200:202]


def test_journal_json_join_column_equals_the_line_scan():
    # the vectorised join (polars depths, numpy sums) against the character scan, on every fixture and on
    # generated json-pretty entries with strings holding braces, escaped quotes and backslashes, wrapped at
    # random places, stray lines between them, and small line/character limits
    import random
    from forensics.sources.dmesg import journal_json as jj
    texts = [f.read_text(errors="replace").split("\n") for f in sorted(FIX.parent.glob("*/*")) if f.is_file()]
    rng = random.Random(7)
    vals = ["x", "a{b", "c}d", "[e]", 'q\\"r', "back\\\\slash", "sp ace", "", "{", "}", "\u3000"]

    def entry() -> list[str]:
        d = {rng.choice(["MESSAGE", "_A", "__CURSOR"]) + str(i): rng.choice(vals) if rng.random() < .8
             else [rng.choice(vals) for _ in range(rng.randint(0, 3))] for i in range(rng.randint(1, 6))}
        out = []
        for ln in json.dumps(d, indent=rng.choice([1, 8, "\t"]), ensure_ascii=False).replace("\\\\", "\\").split("\n"):
            if rng.random() < .15 and len(ln) > 3:
                cut = rng.randint(1, len(ln) - 1)
                out += [ln[:cut], ln[cut:]]
            else:
                out += [ln] + ([rng.choice(["", "{", "prose", "}", " ]", '{ "k" : 1'])] if rng.random() < .05 else [])
        return out
    limits = [(jj.MAX_LINES, jj.MAX_CHARS)] * len(texts)
    for _ in range(600):
        texts.append([ln for _ in range(rng.randint(1, 6)) for ln in entry()])
        limits.append((rng.choice([400, 5, 10]), rng.choice([1 << 16, 60, 200])))
    folded = 0
    for lines, (max_lines, max_chars) in zip(texts, limits):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(jj, "MAX_LINES", max_lines)
            mp.setattr(jj, "MAX_CHARS", max_chars)
            want, n = jj.join_objects(lines)
            got, m = jj.join_column(pl.Series("text", lines, dtype=pl.String))
        assert (got.to_list(), m) == (want, n), lines
        folded += n
    assert folded > 500  # (the generated entries are joined, not only left alone)
    # polars strips what Python's str.strip() strips
    assert set(jj.WHITESPACE) == {chr(c) for c in range(0x110000) if chr(c).isspace()}


@pytest.mark.parametrize("indent", [b"  ", b"\t"])
def test_journal_json_pretty_paste_indented_as_a_whole_is_read_without_the_indent(indent):
    # the linux-scsi json-pretty paste under a further indent (a mail or forum paste): the sniffer reads an
    # object at the indent of its opening brace (the JSON's own indent is relative to its braces), so the
    # paste is indented on every line and read without it; before, with the objects joined flush left, the
    # mail's two prose lines were the only indented ones, read as continuation lines: the indent was kept
    # and the prose became kernel_log rows
    from forensics.sources import paste_prefix, parse_bytes
    data = (FIX / "dmesg--linux-scsi-2020-journal-json-pretty-mail-wrapped-message.txt").read_bytes()
    pasted = b"\n".join(indent + ln if ln.strip() else ln for ln in data.split(b"\n"))
    assert detect(pasted) == "dmesg" and paste_prefix("dmesg", pasted) == indent
    _, plain = parse_bytes(data, "dmesg", ParseContext(file="x"))
    _, got = parse_bytes(pasted, "dmesg", ParseContext(file="x"))
    assert got.tables["kernel_log"]["message"].equals(plain.tables["kernel_log"]["message"])
    assert got.tables["kernel_log"].height == 2 and got.unparsed["line_no"].to_list() == [18, 19]
    assert got.meta["indented"] == indent.decode()


def test_journal_json_lines_wrapped_by_a_mail_client():
    wrapped = parse("dmesg--walle-DERIVED-journal-json-lines-mail-wrapped-76.txt", host=None)
    whole = parse("dmesg--walle-journalctl-json-ext4-errors.txt", host=None)
    cols = ["ts", "boot_s", "level", "message", "host"]
    assert wrapped.unparsed.height == 0 and wrapped.tables["kernel_log"].height == 4
    assert wrapped.tables["kernel_log"].select(cols).equals(whole.tables["kernel_log"].select(cols))
    assert wrapped.meta["json_folded"] == wrapped.lines - 4
    # an object that does not close (cut short) is left line by line: unparsed, not guessed
    cut = (FIX / "dmesg--linux-scsi-2020-journal-json-pretty-mail-wrapped-message.txt").read_text().split("\n")[:12]
    r = parse("\n".join(cut).encode(), host=None)
    assert r.tables["kernel_log"].height == 0 and "json_folded" not in r.meta and r.unparsed.height == 12
