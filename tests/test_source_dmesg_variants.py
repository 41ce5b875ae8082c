"""The kernel log shapes as people really paste them: raw /dev/kmsg records with their dictionary
lines, mail posts (quote prefixes, lines wrapped after a soft break), syslog files mixing the kernel
with other programs (a `syslog` table of their own), dates without a year, journalctl -o json.
Hand-checked values from real fixtures (tests/fixtures/README.md says where each comes from)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from forensics.sources import ParseContext, dmesg, recognise
from forensics.sources._base import split_lines

FIX = Path(__file__).parent / "fixtures" / "dmesg"
UTC = dt.timezone.utc


def parse(name_or_bytes, **ctx):
    data = name_or_bytes if isinstance(name_or_bytes, bytes) else (FIX / name_or_bytes).read_bytes()
    res = dmesg.parse(data, ParseContext(host=ctx.pop("host", "h1"), file="f.txt", **ctx))
    # exact line accounting: every line produced a row, is structure, or is unparsed exactly once
    assert res.lines == split_lines(data).height
    unparsed = res.unparsed["line_no"].to_list()
    used = [n for t in res.tables.values() for n in t["line_no"].to_list()]
    assert len(unparsed) == len(set(unparsed)) and len(used) == len(set(used))
    assert not set(used) & set(unparsed), "a line both produced a row and is unparsed"
    return res


def row(res, line_no, table="kernel_log"):
    t = res.tables[table].filter(pl.col("line_no") == line_no)
    assert t.height == 1, line_no
    return t.row(0, named=True)


# --- /dev/kmsg ----------------------------------------------------------------------------------------

def test_kmsg_records_priority_sequence_monotonic_time():
    res = parse("dmesg--gpud-kmsg-nvswitch-addrconf-calico.txt")
    t = res.tables["kernel_log"]
    assert res.unparsed.height == 0 and t.height == res.lines == 47 and res.meta["variant"] == "kmsg"
    first = row(res, 1)
    assert (first["raw_time"], first["boot_s"], first["facility"], first["level"]) == \
        ("6,3964,206764307,-", 206.764307, "kern", "info")
    assert first["message"] == "nvidia-nvswitch2: open (major=510)" and first["subsystem"] == "nvidia-nvswitch2"
    assert first["ts"] is None and first["ts_quality"] == "none"  # no boot time given
    assert row(res, 39)["boot_s"] == 3757.433091  # "6,4002,3757433091,-;"
    addr = row(res, 11)
    assert (addr["subsystem"], addr["iface"]) == ("IPv6", "calib317e2eeb40")
    assert recognise((FIX / "dmesg--gpud-kmsg-nvswitch-addrconf-calico.txt").read_bytes())[0] == "dmesg"


def test_kmsg_boot_time_gives_ts():
    boot = dt.datetime(2025, 3, 1, 0, 0, 0, tzinfo=UTC)
    res = parse(b"6,3964,206764307,-;nvidia-nvswitch2: open (major=510)\n", boot_time=boot)
    r = row(res, 1)
    assert r["ts"] == boot + dt.timedelta(seconds=206, microseconds=764307) and r["ts_quality"] == "boot"


def test_kmsg_in_a_mail_wrapped_flowed_with_dictionary_lines():
    res = parse("dmesg--linux-pci-mail-flowed-kmsg-dict-r8169.txt")
    assert res.lines == 105
    # the "---" separator the poster typed is the one line that is not kernel log
    assert res.unparsed["line_no"].to_list() == [10]
    # soft-wrapped lines (the line before ends with a space) joined back to their message
    assert row(res, 13)["message"] == "NETDEV WATCHDOG: enp9s0 (r8169): transmit queue 0 timed out"
    assert row(res, 1)["message"] == "microcode: microcode updated early to revision 0x28, date = 2019-11-12"
    modules = row(res, 17)["message"]
    assert modules.startswith("Modules linked in: intel_rapl_msr vfat intel_rapl_common fat ")
    assert modules.endswith(" crypto_simd ttm cryptd drm_display_helper xhci_pci video")
    assert len(modules.split()) == 94  # every word of the 15 lines (wc -w), none lost or doubled
    # the record's dictionary lines (" SUBSYSTEM=pci", " DEVICE=+pci:...") are structure, not messages
    r8169 = row(res, 97)
    assert (r8169["level"], r8169["pci_addr"], r8169["iface"], r8169["subsystem"]) == \
        ("err", "0000:0a:00.0", "enp10s0", "r8169")
    assert r8169["message"] == "r8169 0000:0a:00.0 enp10s0: rtl_chipcmd_cond == 1 (loop: 100, delay: 100)."
    kl = res.tables["kernel_log"]
    assert not kl["message"].str.contains("SUBSYSTEM=|DEVICE=").any()
    # a "c" fragment of an older kernel is a row of its own
    assert row(res, 32)["message"] == " intel_gtt" and row(res, 32)["raw_time"] == "4,1594,363524300,c"
    # records userspace wrote to /dev/kmsg (facility syslog) are systemd-journald's, in `syslog`
    s = res.tables["syslog"]
    assert s["line_no"].to_list() == [33, 101] and set(s["program"]) == {"systemd-journald"}
    assert s["pid"].to_list() == [301, 301] and s["facility"].to_list() == ["syslog", "syslog"]
    assert row(res, 33, "syslog")["message"] == "Compressed data object 996 -> 565 using ZSTD"
    # every line is a row, structure (4 dictionary lines, 2 blank) or one of the wrapped tails
    wrapped = res.lines - kl.height - s.height - res.unparsed.height - 4 - 2
    assert wrapped == 44  # grep -vcE of the prefixed, blank, dictionary and "---" lines


def test_wrapped_line_without_a_soft_break_is_not_joined():
    data = (b"[    1.000000] mlx5_core 0000:18:00.0: firmware version: 28.39.1002\n"
            b"this line follows a line that did not end with a space\n"
            b"[    1.000001] mlx5_core 0000:18:00.0: wrapped here \n"
            b"and continued\n")
    res = parse(data)
    assert res.unparsed["line_no"].to_list() == [2]
    assert row(res, 3)["message"] == "mlx5_core 0000:18:00.0: wrapped here and continued"


def test_mail_quote_prefixes_are_looked_through_and_reported_as_written():
    data = (b"> [    0.000000] Linux version 6.1.12-arch1-1 (linux@archlinux)\n"
            b">> [  360.770261] mlx5_core 0000:18:00.0: Port module event: module 0, Cable plugged\n"
            b"> > what the poster wrote between\n"
            b">\n")
    res = parse(data)
    assert res.tables["kernel_log"]["line_no"].to_list() == [1, 2]
    assert row(res, 2)["pci_addr"] == "0000:18:00.0" and row(res, 2)["boot_s"] == 360.770261
    assert res.unparsed["text"].to_list() == ["> > what the poster wrote between"]
    assert recognise(data)[0] == "dmesg"


def test_a_paste_indented_as_a_whole_is_read_without_its_indent():
    data = (b"    [    2.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05\n"
            b"    [    3.000000] nvidia-nvswitch0: open (major=510)\n"
            b"        a continuation of the second\n")
    res = parse(data)
    assert res.unparsed.height == 0 and res.tables["kernel_log"]["line_no"].to_list() == [1, 2, 3]
    assert row(res, 3)["message"] == "a continuation of the second" and row(res, 3)["boot_s"] == 3.0


def test_kernel_lines_indented_under_a_caption_are_read_without_the_indent():
    # real: a linux-input reply quoting four kernel lines under " -> Kernel log:" (the caption less indented than the
    # lines); before, not recognised and with --source dmesg every line unparsed (the indented lines taken for
    # continuation lines without a message)
    f = FIX / "dmesg--linux-input-mail-q6adm-indented-under-kernel-log-caption.txt"
    name, verdict = recognise(f.read_bytes())
    assert name == "dmesg" and verdict.confidence == 1.0
    from forensics.sources import parse_bytes
    _, res = parse_bytes(f.read_bytes(), "dmesg", ParseContext(host="h"))
    k = res.tables["kernel_log"]
    assert k["boot_s"].to_list() == [585.679421, 587.917135, 587.917378, 587.917409]
    assert k["message"][3] == "qcom-q6adm aprsvc:service:4:8: Failed to close copp -22"
    assert res.unparsed["text"].to_list() == [" -> Kernel log:"]
    # DERIVED: a real fixture indented 4 under "Output:" (with its own continuation lines, and lines ending ":")
    raw = (FIX / "dmesg--gpud-xe9680-ctime-xid119-gsp.txt").read_bytes()
    data = b"Output:\n" + b"\n".join(b"    " + ln if ln.strip() else ln for ln in raw.split(b"\n"))
    assert recognise(data)[0] == "dmesg"
    want, got = dmesg.parse(raw, ParseContext(host="h")), dmesg.parse(data, ParseContext(host="h"))
    assert got.tables["kernel_log"]["message"].to_list() == want.tables["kernel_log"]["message"].to_list()
    assert got.unparsed["text"].to_list() == ["Output:"]
    # prose above is no caption: the lines keep their indent (continuations without a message, as before)
    prose = b"I see this after the update\n" + data[len(b"Output:\n"):]
    assert dmesg.parse(prose, ParseContext(host="h")).tables["kernel_log"].height == 0


# --- syslog files and the year -------------------------------------------------------------------------

def test_syslog_year_from_the_capture_time_rolls_back_and_is_stated():
    data = (b"Dec 31 23:59:58 gpu01 kernel: [ 100.000001] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
            b"Jan  1 00:00:02 gpu01 systemd[1]: Started Session 7 of user root.\n")
    cap = dt.datetime(2025, 1, 1, 0, 10, tzinfo=UTC)
    res = parse(data, capture_time=cap)
    k = row(res, 1)
    assert k["ts"] == dt.datetime(2024, 12, 31, 23, 59, 58, tzinfo=UTC) and k["ts_quality"] == "local_year_inferred"
    assert k["xid"] == 79 and k["boot_s"] == 100.000001
    s = row(res, 2, "syslog")
    assert (s["program"], s["pid"], s["message"]) == ("systemd", 1, "Started Session 7 of user root.")
    assert s["ts"] == dt.datetime(2025, 1, 1, 0, 0, 2, tzinfo=UTC) and s["ts_quality"] == "local_year_inferred"
    assert res.meta["hosts"] == ["gpu01"]


def test_syslog_year_given_and_without_any_year_source():
    data = b"Nov 30 10:15:02 gpu01 kernel: mlx5_core 0000:18:00.0: Port module event: module 0, Cable unplugged\n"
    assert row(parse(data, year=2019), 1)["ts"] == dt.datetime(2019, 11, 30, 10, 15, 2, tzinfo=UTC)
    r = row(parse(data), 1)
    assert r["ts"] is None and r["ts_quality"] == "none" and r["raw_time"] == "Nov 30 10:15:02"
    # the file's modification time (hint "file_time") when nothing better is known
    ft = dt.datetime(2021, 2, 3, tzinfo=UTC)
    r = row(parse(data, hints={"file_time": ft}), 1)
    assert r["ts"] == dt.datetime(2020, 11, 30, 10, 15, 2, tzinfo=UTC) and r["ts_quality"] == "local_year_inferred"


def test_short_monotonic_other_programs_of_the_same_host_go_to_syslog():
    data = (b"[    1.241863] archlinux systemd[1]: Reached target System Initialization.\n"
            b"[    1.343565] archlinux kernel: ata_piix 0000:00:01.1: version 2.13\n"
            b"[    2.000000] e1000e eth0: renamed from enp0s3\n")  # a dmesg line of the same shape, another "host"
    res = parse(data)
    assert row(res, 1, "syslog")["program"] == "systemd"
    assert row(res, 2)["pci_addr"] == "0000:00:01.1" and row(res, 2)["boot_s"] == 1.343565
    assert row(res, 3)["message"] == "e1000e eth0: renamed from enp0s3"


# --- journalctl -o json ---------------------------------------------------------------------------------

def test_journal_json_real_kernel_entries():
    res = parse("dmesg--walle-journalctl-json-ext4-errors.txt")
    assert res.unparsed.height == 0 and res.tables["kernel_log"].height == 4 and res.meta["variant"] == "journal_json"
    assert res.meta["hosts"] == ["vla3-3255.search.yandex.net"]
    r = row(res, 1)
    # __REALTIME_TIMESTAMP 1599485011210892 us; _SOURCE_MONOTONIC_TIMESTAMP 250278904537 us (the kernel's time)
    assert r["ts"] == dt.datetime(2020, 9, 7, 13, 23, 31, 210892, tzinfo=UTC) and r["ts_quality"] == "exact"
    assert (r["boot_s"], r["level"], r["facility"], r["raw_time"]) == (250278.904537, "crit", "kern", "1599485011210892")
    assert r["message"].startswith("EXT4-fs error (device sdh2): ext4_wait_block_bitmap:519:")
    assert row(res, 3)["subsystem"] == "EXT4-fs"
    assert row(res, 4)["message"] == "EXT4-fs (sdh2): This should not happen!! Data will be lost\n"
    assert recognise((FIX / "dmesg--walle-journalctl-json-ext4-errors.txt").read_bytes())[0] == "dmesg"


def test_journal_json_other_programs_binary_message_and_garbage():
    # the real first line; then that entry as journald writes another program's record, and as it
    # writes a MESSAGE that is not UTF-8 (an array of byte values: systemd's JSON export format)
    real = (FIX / "dmesg--walle-journalctl-json-ext4-errors.txt").read_bytes().split(b"\n")[0]
    prog = real.replace(b'"_TRANSPORT" : "kernel"', b'"_TRANSPORT" : "syslog"').replace(
        b'"SYSLOG_IDENTIFIER" : "kernel"', b'"SYSLOG_IDENTIFIER" : "smartd", "_PID" : "812"')
    binary = real.replace(b'"MESSAGE" : "EXT4-fs error', b'"MESSAGE" : [69,88,84,52], "X" : "')
    res = parse(b"\n".join([real, prog, binary, b"{ not json"]) + b"\n")
    assert res.tables["kernel_log"]["line_no"].to_list() == [1]
    s = row(res, 2, "syslog")
    assert (s["program"], s["pid"], s["level"]) == ("smartd", 812, "crit")
    assert res.unparsed.select("line_no", "reason").rows() == [
        (3, "journal MESSAGE is binary (an array of bytes)"), (4, "no kernel log prefix (dmesg/journalctl/syslog)")]


def test_journalctl_short_kernel_and_systemd_records_of_a_gpu_node():
    cap = dt.datetime(2026, 2, 14, 6, 0, tzinfo=UTC)
    res = parse("dmesg--gpud-pr1209-journalctl-k-systemd-mlx5.txt", capture_time=cap)
    assert res.unparsed.select("line_no", "reason").rows() == [
        (1, "shell prompt or command line, not kernel log output")]
    k, s = res.tables["kernel_log"], res.tables["syslog"]
    assert k["line_no"].to_list() == [4, 5, 10, 11] and s["line_no"].to_list() == [3, 6, 7, 8, 9]
    link = row(res, 4)
    assert (link["subsystem"], link["pci_addr"], link["iface"]) == ("mlx5_core", "0000:ab:00.0", "mlx5_5")
    assert link["ts"] == dt.datetime(2026, 2, 14, 5, 3, 41, tzinfo=UTC) and link["ts_quality"] == "local_year_inferred"
    assert set(s["program"]) == {"systemd"} and set(s["pid"]) == {1}
    assert row(res, 9, "syslog")["message"] == "Started systemd-journald.service - Journal Service."
    assert res.meta["hosts"] == ["000-000-00000-1-gpu-1"]


def test_reltime_deltas_and_printk_caller_ids():
    # `dmesg -H` deltas (rwth-i6/returnn issue 1500) and CONFIG_PRINTK_CALLER ids (qualcomm-linux/kernel PR 1118)
    data = (b"[  +0.000844] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)\n"
            b"[   36.772366][  T291] pcieport 0000:00:00.0: AER: Multiple Correctable error message received from 0000:00:00.0\n")
    res = parse(data)
    d = row(res, 1)
    assert (d["boot_s"], d["raw_time"], d["ts_quality"], d["subsystem"], d["pci_addr"]) == \
        (None, "+0.000844", "none", "nvidia", "0000:03:00.0")
    c = row(res, 2)
    assert c["boot_s"] == 36.772366 and c["message"].startswith("pcieport 0000:00:00.0: AER: Multiple Correctable")


# --- kernel signatures as fields (classification only) ----------------------------------------------------

def test_mlx5_fatal_error_syndrome_recovery_aborted_and_hung_tasks():
    res = parse("dmesg--netdev-mlx5-fatal-syndrome-hung-task-recovery-aborted.txt")
    assert res.unparsed.height == 0
    t = res.tables["kernel_log"].filter(pl.col("event").is_not_null())
    assert t.select("line_no", "event", "pci_addr", "event_detail").rows() == [
        (1, "mlx5_fatal_error", "0000:00:00.0", "Fatal error 1"),
        (12, "mlx5_fw_syndrome", "0000:00:00.0", "0xff: unrecognized error"),
        (17, "hung_task", None, None),
        (45, "hung_task", None, None),
        (51, "mlx5_fatal_error", "0001:00:00.0", "Fatal error 1"),
        (63, "mlx5_fw_syndrome", "0001:00:00.0", "0xff: unrecognized error"),
        (71, "mlx5_recovery_aborted", "0001:00:00.0", None),
    ]
    hung = row(res, 45)
    assert (hung["task"], hung["task_pid"], hung["duration_s"]) == ("kworker/u128:2", 346, 122.0)
    assert (row(res, 17)["task"], row(res, 17)["task_pid"]) == ("kmcheck", 73)
    # the lines around them (assert_var, ext_synd, call traces) are no events
    assert row(res, 13)["event"] is None and row(res, 2)["event"] is None


def test_soft_lockup_rcu_stalls_nvrm_and_aer():
    res = parse("dmesg--signatures-lockup-rcu-aer-nvrm-real-lines.txt")
    assert res.unparsed.height == 0
    ev = {r["line_no"]: r for r in res.tables["kernel_log"].filter(pl.col("event").is_not_null()).iter_rows(named=True)}
    soft = ev[1]
    assert (soft["event"], soft["cpu"], soft["duration_s"], soft["task"], soft["task_pid"]) == \
        ("soft_lockup", 2, 23.0, "kworker/2:1", 25629)
    assert [ev[n]["event"] for n in (3, 4, 5)] == ["rcu_stall"] * 3 and ev[4]["cpu"] == 0 and ev[3]["cpu"] is None
    # the NVRM fallen-off-the-bus message without an Xid (three lines; the continuation rows carry no event)
    assert (ev[6]["event"], ev[6]["pci_addr"], ev[6]["xid"]) == ("nvrm_fallen_off_bus", "0000:b3:00.0", None)
    assert row(res, 8)["message"] == "NVRM: fallen off the bus and is not responding to commands."
    assert ev[9]["event"] == "nvrm_init_failed"
    assert (ev[10]["event"], ev[10]["pci_addr"], ev[10]["event_device"]) == ("aer_corrected", "0000:00:01.0", "0000:01:00.0")
    assert 11 not in ev  # "PCIe Bus Error: severity=Corrected" details the error above, it is not another one
    assert (ev[12]["event"], ev[13]["event"], ev[13]["event_device"]) == ("aer_recovery_failed", "aer_fatal", "0000:00:03.0")
    assert (ev[14]["event"], ev[14]["subsystem"], ev[14]["pci_addr"]) == ("aer_recovery_failed", "nvidia", "0000:03:00.0")
    assert (ev[15]["event"], ev[15]["event_device"]) == ("aer_nonfatal", "0000:00:1d.0")
    assert (ev[16]["event"], ev[16]["event_device"]) == ("aer_corrected", None)  # "id=00e5": no PCI address


def test_event_fields_are_the_same_from_python_re_and_from_polars():
    # few messages past the gate are worked on with Python's re, many with polars: the same table of
    # patterns must give the same columns either way (every message of every dmesg fixture, and edges)
    from forensics.sources.dmesg import events
    msgs = []
    for f in sorted(FIX.glob("*.txt")):
        res = dmesg.parse(f.read_bytes(), ParseContext(host="h", tz="UTC"))
        msgs += res.tables["kernel_log"]["message"].to_list()
    msgs += ["watchdog: BUG: soft lockup - CPU#99999999999 stuck for 5s! [a:b:99999999999999999999]",
             "INFO: task x y:12 blocked for more than 9 seconds. task z:3 blocked for more than 1 seconds",
             "pcieport 0000:00:1C.0: AER: Corrected error received: 0000:3B:00.0", None, "",
             "mlx5_core 0000:01:00.0: print_health_info:1: synd 0xAB: x: synd 0x1: y",
             "rcu: INFO: rcu_preempt self-detected stall on CPU 7", "NVRM: The NVIDIA GPU 0000:b3:00.0"]
    py = events.events_python(msgs)
    pol = events.events_polars(pl.Series(msgs, dtype=pl.String))
    assert py.schema == pol.schema and py.height == len(msgs)
    assert py.equals(pol, null_equal=True)
    assert py["event"].drop_nulls().n_unique() >= 10  # (the fixtures hold most kinds)
    assert py.row(len(msgs) - 8, named=True)["cpu"] is None  # over Int32: null, as polars' cast says


def test_event_columns_are_the_same_through_each_path_of_add_events(monkeypatch):
    # up to PY_MAX rows the gate and the columns are worked out in Python; above it the gate is a polars
    # query and the messages past it go through Python's re (few) or polars (many): the same columns
    from forensics.sources.dmesg import events
    msgs = []
    for f in sorted(FIX.glob("*.txt")):
        msgs += dmesg.parse(f.read_bytes(), ParseContext(host="h", tz="UTC")).tables["kernel_log"]["message"].to_list()
    msgs += [None, "", "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus. NVRM: fallen off the bus",
             "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up"]
    xid = [79 if m is not None and m.startswith("NVRM: Xid") else None for m in msgs]
    df = pl.DataFrame({"message": msgs, "xid": xid}, schema={"message": pl.String, "xid": pl.Int32})
    got = []
    for py_max in (10 ** 9, df.height - 1, 0):  # all Python; polars gate + Python re; polars throughout
        monkeypatch.setattr(events, "PY_MAX", py_max)
        got.append(events.add_events(df))
    assert got[0].columns == ["message", "xid", *events.EVENT_COLUMNS] and got[0].schema == got[2].schema
    assert got[0].equals(got[1], null_equal=True) and got[0].equals(got[2], null_equal=True)
    assert got[0]["event"].drop_nulls().n_unique() >= 10
    assert got[0].filter(pl.col("xid").is_not_null())["event"].null_count() == sum(x is not None for x in xid)


def test_xid_lines_keep_their_xid_and_no_event():
    res = parse("dmesg--gpud-xe9680-ctime-xid119-gsp.txt")
    x = res.tables["kernel_log"].filter(pl.col("xid").is_not_null())
    assert x.height and x["event"].null_count() == x.height


# --- journal lines in other locales, without their host, or without their time --------------------------

def test_journal_month_of_a_norwegian_locale():
    # `jan. 29 20:50:17 kevin kernel:` (nb_NO's %b), hirschmann/nbfc issue 181, January 2017
    res = parse("dmesg--nbfc-issue181-journal-localized-month-jan-dot.txt",
                capture_time=dt.datetime(2017, 2, 1, tzinfo=UTC))
    assert res.unparsed.height == 0 and res.tables["kernel_log"].height == 4
    r = row(res, 1)
    assert r["ts"] == dt.datetime(2017, 1, 29, 20, 50, 17, tzinfo=UTC) and r["raw_time"] == "jan. 29 20:50:17"
    assert (r["event"], r["pci_addr"]) == ("aer_corrected", "0000:00:1c.5")
    assert res.meta["hosts"] == ["kevin"]


def test_journal_russian_month_without_host():
    res = parse("dmesg--gsconnect-issue1052-journal-russian-month-no-host.txt",
                capture_time=dt.datetime(2026, 2, 20, tzinfo=UTC))
    assert res.unparsed.height == 0 and res.tables["kernel_log"].height == 11
    r = row(res, 1)
    assert r["ts"] == dt.datetime(2026, 2, 12, 0, 48, 2, tzinfo=UTC) and r["ts_quality"] == "local_year_inferred"
    assert (r["event"], r["event_device"]) == ("aer_corrected", "0000:00:1c.5")
    assert r["message"].startswith("pcieport 0000:00:1c.5: AER: Corrected error received")


def test_unknown_month_abbreviation_is_reported_not_guessed():
    data = b"xyz. 29 20:50:17 kevin kernel: pcieport 0000:00:1c.5: AER: Corrected error received: id=00e5\n"
    res = parse(data, capture_time=dt.datetime(2017, 2, 1, tzinfo=UTC))
    assert res.tables["kernel_log"].height == 0
    assert res.unparsed["reason"].to_list() == ["syslog time does not convert"]


def test_kernel_lines_pasted_without_time_and_host():
    # `kernel: NVRM: Xid ...` (NVIDIA/open-gpu-kernel-modules issue 1150)
    res = parse("dmesg--open-gpu-issue1150-kernel-prefix-only-xid.txt")
    t = res.tables["kernel_log"]
    assert res.unparsed.height == 0 and t.height == 7 and t["ts"].null_count() == 7
    assert set(t["ts_quality"]) == {"none"} and set(t["xid"]) == {45}
    assert row(res, 1)["pci_addr"] == "0000:dc:00.0" and row(res, 1)["xid_text"].endswith("caused by previous Xid 149")
    assert recognise((FIX / "dmesg--open-gpu-issue1150-kernel-prefix-only-xid.txt").read_bytes())[0] == "dmesg"


# --- SONiC syslog, kernel messages without a time -----------------------------------------------------

def test_sonic_syslog_severity_word_and_container_program():
    # sonic-net/sonic-buildimage issue 7310: "host INFO kernel: [10601.214044] igb ...: NIC Link is Down"
    name = "dmesg--sonic-issue7310-syslog-level-word-igb-link-down.txt"
    assert recognise((FIX / name).read_bytes())[0] == "dmesg"
    res = parse(name, year=2021)
    assert res.unparsed.height == 0 and res.rows() == {"kernel_log": 1, "syslog": 4}
    k = row(res, 2)
    assert (k["level"], k["boot_s"], k["iface"], k["pci_addr"]) == ("info", 10601.214044, "eth0", "0000:00:14.0")
    assert k["ts"] == dt.datetime(2021, 4, 9, 21, 5, 38, 106121, tzinfo=UTC) and k["ts_quality"] == "local_year_inferred"
    assert k["message"] == "igb 0000:00:14.0 eth0: igb: eth0 NIC Link is Down"
    s = row(res, 1, "syslog")
    assert (s["program"], s["level"]) == ("swss#portsyncd", "notice") and s["message"].startswith(":- onMsg: nlmsg")


def test_sonic_year_first_time_is_local_not_inferred():
    # sonic-net/sonic-buildimage PR 18099 put the year first; the file has no kernel line: a syslog file of other
    # programs' whole records only, recognised as such at a lower confidence (refused before)
    data = (FIX / "dmesg--sonic-pr18099-syslog-year-first-teamd-no-kernel.txt").read_bytes()
    name, verdict = recognise(data)
    assert name == "dmesg" and verdict.confidence == 0.6 and "no kernel line" in verdict.reason
    res = parse(data, tz="UTC")
    s = res.tables["syslog"]
    assert res.unparsed.height == 0 and s.height == 5 and set(s["ts_quality"]) == {"local"}
    r = row(res, 3, "syslog")
    assert (r["program"], r["pid"], r["level"]) == ("teamd#teamd_PortChannel103", 41, "debug")
    assert r["ts"] == dt.datetime(2024, 2, 15, 2, 24, 26, 752655, tzinfo=UTC)


def test_severity_word_only_between_host_and_program():
    # an upper-case program name that is no severity word stays the program
    res = parse(b"Nov 12 16:29:31.708140 sonic INFO kernel: [45185.022439] IPv6: ADDRCONF(NETDEV_UP): Vlan1: link is not ready\n"
                b"Nov 12 16:29:31.710270 sonic NOTICED orchagent: x\n", year=2019)
    assert row(res, 1)["level"] == "info" and row(res, 1)["subsystem"] == "IPv6"
    assert res.unparsed["line_no"].to_list() == [2]  # "NOTICED orchagent:" is no "host program:"


def test_untimed_commit_message_paste_is_read_without_times():
    # Linux commit b361663c5a40 (ASM1083 ASPM quirk) quotes its AER errors without times, indented
    name = "dmesg--linux-asm1083-commit-untimed-aer-indented.txt"
    name_, verdict = recognise((FIX / name).read_bytes())
    assert name_ == "dmesg" and 0.5 <= verdict.confidence < 1.0 and "without a time" in verdict.reason
    res = parse(name)
    t = res.tables["kernel_log"]
    assert res.unparsed.height == 0 and t.height == 5 and res.meta["variant"] == "untimed"
    assert set(t["ts_quality"]) == {"none"} and t["ts"].null_count() == 5 and t["raw_time"].null_count() == 5
    r = row(res, 4)
    assert (r["subsystem"], r["pci_addr"], r["event"]) == ("pcieport", "0000:00:1c.0", "aer_corrected")


def test_untimed_needs_kernel_only_shapes_and_stays_out_of_timed_logs():
    prose = b"Note: this is prose.\nAnother: line of it\nThird: one more\n"
    assert recognise(prose)[0] is None
    assert parse(prose).tables["kernel_log"].height == 0
    # a timed log's lines without a prefix stay unparsed, even when they look like kernel messages
    mixed = (b"[  1.000000] pci 0000:00:01.0: PME# supported\n"
             b"pcieport 0000:00:1c.0: AER: Corrected error received: 0000:00:1c.0\n"
             b"pcieport 0000:00:1c.0: AER: can't find device of ID00e0\n")
    res = parse(mixed)
    assert res.tables["kernel_log"]["line_no"].to_list() == [1] and res.unparsed["line_no"].to_list() == [2, 3]


def test_modules_linked_in_list_broken_by_the_paste_is_joined_back():
    # a DMA-API warning pasted from a 154-column terminal: the module list is cut mid-word ("vmw_vsock_vir" /
    # "tio_transport_common ..."), and so is the Code: line (its tail starts with a space: a continuation row)
    name = "dmesg--dma-api-warning-modules-list-cut-at-width.txt"
    data = (Path(__file__).parent / "fixtures" / "dmesg" / name).read_bytes()
    res = dmesg.parse(data, ParseContext(host="h"))
    assert (res.lines, res.unparsed.height) == (26, 0)
    mods = res.tables["kernel_log"].filter(pl.col("line_no") == 4)["message"][0]
    assert "vmw_vsock_virtio_transport vmw_vsock_virtio_transport_common vsock overlay" in mods
    assert mods.endswith("[last unloaded: nova_core]") and res.tables["kernel_log"].filter(pl.col("line_no") == 5).height == 0
    # a mail's word wrap at ~72 columns (linux-kernel, "Trying to vfree() nonexistent vm area", 2025): the list
    # goes on over several lines, each break at a dropped space
    mail = (b"[  156.768859] WARNING: CPU: 143 PID: 18534 at mm/vmalloc.c:3378\n"
            b"vfree+0x2d0/0x320\n"
            b"[  156.768874] Modules linked in: nvidia_uvm(O) svcrdma(O) ib_umad(O)\n"
            b"rpcrdma(O) xprtrdma(O) rdma_ucm(O) rdma_cm(O) iw_cm(O) ib_iser(O)\n"
            b"ib_ipoib(O) ib_cm(O) mlx5_fwctl(O) fwctl(O) xt_tcpudp xt_conntrack\n"
            b"nft_compat xt_LOG nf_log_syslog nft_fib_ipv6 nft_masq nft_nat\n")
    res = dmesg.parse(mail, ParseContext(host="h"))
    mods = res.tables["kernel_log"].filter(pl.col("line_no") == 3)["message"][0]
    assert mods.endswith("ib_umad(O) rpcrdma(O) xprtrdma(O) rdma_ucm(O) rdma_cm(O) iw_cm(O) ib_iser(O) ib_ipoib(O) "
                         "ib_cm(O) mlx5_fwctl(O) fwctl(O) xt_tcpudp xt_conntrack nft_compat xt_LOG nf_log_syslog "
                         "nft_fib_ipv6 nft_masq nft_nat")
    # the symbol after the WARNING line is not a module list: it stays unparsed, as does any line that is not
    # module names right after the list
    assert res.unparsed["line_no"].to_list() == [2]
    odd = dmesg.parse(mail + b"see the attached log\n", ParseContext(host="h"))
    assert odd.unparsed["line_no"].to_list() == [2, 7]


def test_messages_hard_wrapped_by_a_mail_are_joined_back():
    # a real linux-rdma reply (ConnectX-6 RoCE GID add failure, 2023-07) quoting dmesg twice ("> >> "),
    # stored quoted-printable: three messages word-wrapped at ~72 columns with no soft-break space kept.
    # Before: the three wrapped tails were unparsed and the messages cut.
    from forensics.sources import parse_bytes

    f = Path(__file__).parent / "fixtures" / "dmesg" / "dmesg--rdma-list-cx6-roce-gid-mail-wrapped-quoted-qp.txt"
    _, res = parse_bytes(f.read_bytes(), "dmesg")
    msgs = dict(res.tables["kernel_log"].select("line_no", "message").iter_rows())
    assert msgs[1].endswith("mlx5_cmd_out_err:803:(pid 1440): SET_ROCE_ADDRESS(0x761) op_mod(0x0) failed, "
                            "status bad parameter(0x3), syndrome (0x63c66), err(-22)")
    assert msgs[6] == "__ib_cache_gid_add: unable to add gid fe80:0000:0000:0000:ad3e:e3ff:fe92:b31b error=3D-22"
    assert res.unparsed.height == 0


def test_one_short_line_after_a_long_message_is_not_taken_for_a_wrap():
    from forensics.sources import parse_bytes

    text = (b"[   12.345678] mlx5_core 0000:18:00.0: Port module event: module 0, Cable unplugged now\n"
            b"[   12.345999] mlx5_core 0000:18:00.0: mlx5e: Link down\n"
            b"Then it stopped.\n")
    _, res = parse_bytes(text, "dmesg")
    assert res.unparsed["line_no"].to_list() == [3]  # one break of that shape proves no wrap
    assert res.tables["kernel_log"]["message"].to_list()[0].endswith("Cable unplugged now")


def test_untimed_program_records_beside_kernel_only_lines():
    # "kernel: ..." lines with their time and host cut off, and another program's record cut the same
    # way: that record goes to syslog; without any "kernel: " line such a line is not taken for a record
    from forensics.sources import ParseContext, dmesg

    text = (b"wpa_supplicant[580]: rfkill: WLAN soft blocked\n"
            b"kernel: [   10.881037] WARNING: CPU: 0 PID: 580 at net/wireless/nl80211.c:6714\n"
            b"kernel: iwlwifi 0000:02:00.0: Detected Intel(R) Wireless 8265\n")
    res = dmesg.parse(text, ParseContext())
    assert res.tables["syslog"].select("program", "pid").rows() == [("wpa_supplicant", 580)]
    assert res.tables["kernel_log"]["boot_s"].to_list() == [10.881037, None]
    assert res.tables["kernel_log"]["message"][1] == "iwlwifi 0000:02:00.0: Detected Intel(R) Wireless 8265"
    alone = dmesg.parse(b"wpa_supplicant[580]: rfkill: WLAN soft blocked\n", ParseContext())
    assert alone.unparsed.height == 1 and not alone.rows().get("syslog")


def test_syslog_word_wrapped_by_a_mail_beside_longer_lines_is_joined_and_recognised():
    # a linux-media bug report (2012): /var/log/everything.log lines word-wrapped by the mail client near
    # 80 columns (the space at each break dropped), beside lines it left whole (a 110-column mtp-probe record
    # with a path no wrap could break). Before: 12 of 28 lines unparsed (the width was taken from the longest
    # line, 110, past any wrap width) and the sniffer counted only 16 of 28 lines (0.57)
    from forensics.sources import ParseContext, dmesg, recognise

    data = (FIX / "dmesg--linux-media-mail-syslog-word-wrapped-dvb-usb.txt").read_bytes()
    name, verdict = recognise(data)
    assert name == "dmesg" and verdict.confidence == 1.0
    res = dmesg.parse(data, ParseContext(year=2012, tz="UTC"))
    assert (res.lines, res.unparsed.height) == (28, 0)
    msgs = res.tables["kernel_log"]["message"].to_list()
    assert msgs[0] == "usb 2-4: new high-speed USB device number 5 using ehci_hcd"
    assert "DVB: registering adapter 0 frontend 0 (DiBcom 7000PC)..." in msgs
    assert "Registered IR keymap rc-dib0700-rc5" in msgs  # an 84-column line left whole, nothing joined to it
    assert res.tables["syslog"]["program"].to_list() == ["mtp-probe", "mtp-probe"]


def test_prose_after_one_short_kernel_line_is_not_a_wrap():
    from forensics.sources import ParseContext, dmesg

    text = (b"[   12.000000] usb 1-1: new device\n"
            b"I then unplugged it and the port\n"
            b"stayed dead.\n")
    res = dmesg.parse(text, ParseContext())
    assert res.unparsed.height == 2


# --- 2.6-era task state lines (the saved PC after the state) ---------------------------------------

def test_untimed_sysrq_w_of_a_2009_mail_task_line_with_address_and_no_flags():
    # linux-media 2009 mail: "bash          D ffff880078524c94     0     1      0" (no flags column yet)
    name = "dmesg--linux-media-mail-2009-sysrq-w-untimed-task-address-no-flags.txt"
    data = (FIX / name).read_bytes()
    got, verdict = recognise(data)
    assert got == "dmesg" and "without a time" in verdict.reason, verdict
    from forensics.sources import parse_bytes
    _, res = parse_bytes(data, "dmesg", ParseContext(host="h1", file="f.txt"))
    t = res.tables["kernel_log"]
    assert res.unparsed.height == 0 and t.height == 34 and res.meta["variant"] == "untimed"
    assert t.filter(pl.col("line_no") == 3)["message"][0].startswith("bash          D ffff880078524c94")


@pytest.mark.parametrize("line", [
    "khubd         D ffff8800010220c0     0   170      2",  # 2.6.29 (linux-media 2009, hung task)
    "async/0       D 0000000000000000     0  3604      2 0x00000000",  # 2.6.32 (syslog, 2010)
    "fsnotify_mark   D 0000000000000000     0    49      2 0x00000000",  # 2.6.38 sysrq-w
    "db2fmcd       D 0000000000000000     0 11032      1          1373 11031 (NOTLB)",  # 2.6.9 sysrq-t (LKML 2004)
    "kworker/u4:3    D    0   166      2 0x80004000",  # 4.x-5.12, already read
])
def test_task_state_lines_of_every_era_are_kernel_shapes(line):
    from forensics.sources.dmesg.untimed import RE_MESSAGE
    import re
    assert re.match(RE_MESSAGE, line)


@pytest.mark.parametrize("line", ["root         1  0.0  0.1 167600 11860 ?  Ss   Dec06   0:05 /sbin/init",
                                  "bash D ffff880078524c94 zero 1 0"])
def test_task_state_shape_is_not_ps_output(line):
    from forensics.sources.dmesg.untimed import RE_TASK_STATE
    import re
    assert not re.match(RE_TASK_STATE, line)


# --- `grep ... | cut -d '[' -f 2-`: lines that start inside the time ---------------------------------

def test_cut_bracket_mid_timestamp_lines_are_raw_dmesg():
    # DERIVED fixtures: real raw dmesg fixtures put through `cut -d '[' -f 2-`
    for name, n, first_s in (("dmesg--geerlingguy-cx5-DERIVED-cut-bracket-f2-mid-timestamp.txt", 14, 10.642917),
                             ("dmesg--mlnx-ofed47-DERIVED-cut-bracket-f2-six-digit-seconds.txt", 7, 360770.261344)):
        data = (FIX / name).read_bytes()
        got, verdict = recognise(data)
        assert got == "dmesg", verdict
        res = parse(data)
        t = res.tables["kernel_log"]
        assert t.height == n and res.meta["bracket_cut"] == n and res.meta["variant"] == "raw"
        assert t["boot_s"][0] == first_s and t["subsystem"][0] == "mlx5_core"
        assert not t["message"].str.contains(r"^\s*[0-9]+\.[0-9]+\]").any()
    res = parse("dmesg--geerlingguy-cx5-DERIVED-cut-bracket-f2-mid-timestamp.txt")
    assert res.unparsed.select("line_no", "text").rows() == [(1, "jgeerling@nas01:~$ dmesg | grep mlx5")]


def test_cut_bracket_is_not_read_into_other_shapes():
    # a number with a "]" after it inside a message, and a plain raw log, are left as they are
    res = parse(b"[   10.642917] mlx5_core 0004:01:00.0: Adding to iommu group 29\n"
                b"[   10.643196] foo: bar 12.345678] baz\n")
    assert "bracket_cut" not in res.meta and res.tables["kernel_log"].height == 2
    assert recognise(b"The run took\n12.345678] seconds, see\nthe log below and\nthe notes.\n")[0] != "dmesg"


def test_untimed_2_6_task_line_with_its_call_trace_alone_is_a_kernel_log():
    # the lines of a 2.6.32 hung-task report (syslog of a 2010 forum post, prefixes dropped as a paste does):
    # the task line with its saved PC is a shape only the kernel prints, as "Call Trace:" is
    data = (b"ata_aux       D 0000000000000000     0    24      2 0x00000000\n"
            b" ffff88003eae7990 0000000000000046 ffff88003eae7990 0000000000015880\n"
            b"Call Trace:\n"
            b" [<ffffffff81528755>] schedule_timeout+0x1d5/0x230\n")
    got, verdict = recognise(data)
    assert got == "dmesg" and "2 of a shape only the kernel prints" in verdict.reason, verdict
    res = parse(data)
    assert res.unparsed.height == 0 and res.tables["kernel_log"].height == 4
    # the newer task line without an address stays a kernel shape, not a kernel-only one
    from forensics.sources.dmesg.untimed import RE_STRONG
    import re
    assert not re.match(RE_STRONG, "kworker/u4:3    D    0   166      2 0x80004000")


def test_untimed_2_6_9_sysrq_t_task_with_unindented_stack_words():
    # LKML 2004-10-01, "Here is the full sysrq-t output" (Badari Pulavarty, quoted by Andrew Morton; search index
    # file id 13731646234): a 2.6.9 task line with child/sibling pids and "(NOTLB)", the first stack-word line
    # not indented, the x86_64 "Call Trace:<addr>{fn+off}" of the time
    data = (b"> db2fmcd       D 0000000000000000     0 11032      1          1373 11031 (NOTLB)\n"
            b"> 00000101b9b9bef8 0000000000000002 0000003700000037 00000101c13608a0 \n"
            b">        000000010000009f 0000010199649250 0000010199649588 0000000000000000 \n"
            b">        0000000000000206 ffffffff801353db \n"
            b"> Call Trace:<ffffffff801353db>{try_to_wake_up+971} <ffffffff80445570>{__down_write+128} \n"
            b">        <ffffffff80125e7f>{sys32_mmap+143} <ffffffff80124b01>{ia32_sysret+0} \n")
    got, verdict = recognise(data)
    assert got == "dmesg" and "without a time" in verdict.reason, verdict
    from forensics.sources import parse_bytes
    _, res = parse_bytes(data, "dmesg", ParseContext(host="h1", file="f.txt"))
    assert res.unparsed.height == 0 and res.meta["variant"] == "untimed"
    # a line of hex words alone is no kernel-only shape: prose with two such words stays unrecognised
    assert recognise(b"checksums:\n00000101b9b9bef8 0000000000000002\nall good\n")[0] != "dmesg"


@pytest.mark.parametrize("name, rows, skipped", [
    # DualCoder/vgpu_unlock#114: three AER lines of a fatal error between two "..." elision marks, in a code fence
    ("dmesg--vgpu-unlock-issue114-fenced-untimed-aer-fatal-elided.txt", 3, 4),
    # NVIDIA/open-gpu-kernel-modules#1229: an AER report, two indented detail lines and an Xid 31, in a code fence
    ("dmesg--open-gpu-issue1229-fenced-untimed-aer-nvrm-xid31.txt", 7, 2),
])
def test_untimed_kernel_lines_in_a_code_fence_are_recognised_without_a_time(name, rows, skipped):
    # the fence and elision lines are the paste's: not weighed against the kernel lines (they were: refused)
    from forensics.sources import parse_bytes

    data = (FIX / name).read_bytes()
    got, verdict = recognise(data)
    assert got == "dmesg" and 0.5 <= verdict.confidence < 1.0 and "without a time" in verdict.reason
    _, res = parse_bytes(data, None, ParseContext(host="h1", file="f.txt"))
    t = res.tables["kernel_log"]
    assert (t.height, res.unparsed.height, sum(res.meta["skipped"].values())) == (rows, 0, skipped)
    assert res.meta["variant"] == "untimed" and set(t["ts_quality"]) == {"none"} and t["ts"].null_count() == rows
