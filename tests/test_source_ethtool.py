"""ethtool -S parser: hand-checked values from the real fixtures, queue naming rules, bad input."""
from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import polars as pl
import pytest

from forensics.layout import format_marker
from forensics.sources import ParseContext, ethtool
from forensics.sources import _ethtool_names
from forensics.sources._base import marker_split, split_lines

FIX = Path(__file__).parent / "fixtures" / "ethtool"
UTC = dt.timezone.utc


def parse(name_or_bytes, **ctx):
    data = name_or_bytes if isinstance(name_or_bytes, bytes) else (FIX / name_or_bytes).read_bytes()
    res = ethtool.parse(data, ParseContext(host="h1", file="f.txt", **ctx))
    assert res.lines == split_lines(data).height
    nos = res.unparsed["line_no"].to_list()
    assert len(nos) == len(set(nos))
    used = set(res.tables["nic_counters"]["line_no"].to_list())
    assert not used & set(nos), "a line both produced a row and is unparsed"
    return res


def one(res, raw_name, sample_no=None):
    t = res.tables["nic_counters"].filter(pl.col("raw_name") == raw_name)
    if sample_no is not None:
        t = t.filter(pl.col("sample_no") == sample_no)
    assert t.height == 1, (raw_name, t)
    return t.row(0, named=True)


# --- real fixtures: the values that matter -------------------------------------------------------

def test_mlx5_grep_excerpt_pause_and_pci_counters():
    res = parse("ethtool--mlx5-cx4lx-grep-pause-pci.txt")
    t = res.tables["nic_counters"]
    assert t.height == 17 and res.unparsed.height == 0  # line 1 is the command: structure
    assert one(res, "tx_pause_ctrl_phy")["value"] == 1266552
    assert one(res, "tx_global_pause_duration")["value"] == 555665182
    assert one(res, "tx_pci_signal_integrity")["value"] == 3
    assert one(res, "tx_pause_storm_error_events")["value"] == 0
    assert one(res, "tx_pause_storm_warning_events")["queue"] is None
    assert set(t["iface"]) == {"eth03"}  # from "# ethtool -S eth03 | grep ..."
    assert set(t["ts_quality"]) == {"none"} and t["ts"].null_count() == t.height
    assert "command" in res.meta["variant"]


def test_mlx5_xdp_huge_values_and_channels():
    res = parse("ethtool--mlx5-xdp-kernel5.15-nonzero.txt")
    assert res.unparsed.height == 0
    assert one(res, "rx_discards_phy")["value"] == 58_591_428_329
    assert one(res, "rx_out_of_buffer")["value"] == 990_473_555
    r = one(res, "rx_prio0_discards")
    assert (r["counter"], r["queue"], r["value"]) == ("rx_prio0_discards", None, 58_591_314_012)
    r = one(res, "ch0_events")
    assert (r["counter"], r["queue"], r["value"]) == ("ch_events", 0, 55)
    r = one(res, "rx0_xdp_drop")
    assert (r["counter"], r["queue"], r["value"]) == ("rx_xdp_drop", 0, 3_753_342_954)
    # the device-wide counter keeps queue null beside the per-channel one of the same name
    agg = one(res, "rx_xdp_drop")
    assert (agg["counter"], agg["queue"], agg["value"]) == ("rx_xdp_drop", None, 3_753_342_954)
    assert one(res, "tx_global_pause_duration")["value"] == 771_103_810


def test_bnxt_queue_prefix_and_priorities_are_not_queues():
    res = parse("ethtool--bnxt_en-12q-queue-prefixed.txt")
    t = res.tables["nic_counters"]
    assert res.unparsed.height == 0 and t.height == 499
    q = t.filter(pl.col("queue").is_not_null())
    assert q["queue"].n_unique() == 12 and q.height == 12 * 24
    r = t.filter((pl.col("counter") == "rx_ucast_packets") & (pl.col("queue") == 0)).row(0, named=True)
    assert (r["raw_name"], r["value"], r["line_no"]) == ("rx_ucast_packets", 10_198_513_532, 2)
    assert t.filter((pl.col("counter") == "rx_discards") & (pl.col("queue") == 1))["value"].item() == 10_611_365
    for name in ("rx_pfc_ena_frames_pri3", "pfc_pri3_rx_duration_us", "rx_discard_packets_cos0",
                 "tx_pfc_ena_frames_pri7", "rx_bytes_pri3"):
        r = one(res, name)
        assert (r["counter"], r["queue"]) == (name, None)
    assert one(res, "rx_bytes")["value"] == 577_687_185_962_088  # port total, not queue 0
    assert one(res, "rx_bits")["value"] == 4_621_497_487_696_704


def test_virtio_noheader_with_capture_time_and_iface_hint():
    cap = dt.datetime(2019, 1, 10, 8, 0, tzinfo=UTC)
    res = parse("ethtool--virtio_net-2q-noheader.txt", capture_time=cap, hints={"iface": "eth0"})
    r = one(res, "rx_queue_1_bytes")
    assert (r["counter"], r["queue"], r["value"]) == ("rx_bytes", 1, 4_819_127_125)
    assert (r["ts"], r["ts_quality"], r["iface"], r["sample_no"]) == (cap, "sampled", "eth0", 0)
    res = parse("ethtool--virtio_net-2q-noheader.txt")
    r = one(res, "tx_queue_0_bytes")
    assert (r["counter"], r["queue"], r["ts"], r["ts_quality"], r["iface"]) == ("tx_bytes", 0, None, "none", None)


def test_ice_nic_suffix_and_priority_xoff():
    res = parse("ethtool--ice-e810-nic-suffix-cut.txt")
    r = one(res, "tx_bytes.nic")
    assert (r["counter"], r["queue"], r["value"]) == ("tx_bytes.nic", None, 74_057_390_445)
    r = one(res, "tx_priority_3_xoff.nic")
    assert (r["counter"], r["queue"]) == ("tx_priority_3_xoff.nic", None)
    r = one(res, "tx_queue_9_packets")
    assert (r["counter"], r["queue"], r["value"]) == ("tx_packets", 9, 2_032_857)
    assert one(res, "rx_queue_2_bytes")["value"] == 29_867_186


def test_intel_dotted_queue_names_i40e_iavf_sfc():
    res = parse("ethtool--i40e-unindented-noheader.txt")
    r = one(res, "tx-0.tx_packets")
    assert (r["counter"], r["queue"], r["value"]) == ("tx_packets", 0, 27_274_035_294)
    assert one(res, "rx-11.rx_bytes")["queue"] == 11
    for name in ("port.tx_priority_3_xoff", "veb.tc_3_rx_bytes", "port.rx_size_1522"):
        assert one(res, name)["queue"] is None
    res = parse("ethtool--iavf-16q-dot-names.txt")
    r = one(res, "rx-8.packets")
    assert (r["counter"], r["queue"], r["value"]) == ("rx_packets", 8, 69_038)
    res = parse("ethtool--sfc-xdp-cpu-queues.txt")
    r = one(res, "tx-xdp-cpu-5.tx_packets")
    assert (r["counter"], r["queue"]) == ("tx_xdp_cpu_tx_packets", 5)
    r = one(res, "rx-11.rx_packets")
    assert (r["counter"], r["queue"], r["value"]) == ("rx_packets", 11, 60)
    assert one(res, "port_rx_dp_di_dropped_packets")["queue"] is None


def test_ena_be2net_vmxnet3_dpaa2_queue_schemes():
    res = parse("ethtool--ena-4q-unindented-noheader.txt")
    r = one(res, "queue_3_rx_bytes")
    assert (r["counter"], r["queue"], r["value"]) == ("rx_bytes", 3, 66_809_815_952)
    res = parse("ethtool--be2net-rxq-txq-prefixed.txt")
    t = res.tables["nic_counters"]
    assert t.filter((pl.col("counter") == "rx_compl_err") & (pl.col("queue") == 8))["value"].item() == 93_862
    assert t.filter((pl.col("counter") == "tx_pkts") & (pl.col("queue") == 7))["value"].item() == 8_958_932
    res = parse("ethtool--vmxnet3-queue-sections.txt")
    t = res.tables["nic_counters"]
    assert t.height == 67 and res.unparsed.height == 0  # 4 "Queue#" headers + banner are structure
    assert t.filter((pl.col("counter") == "TSO pkts tx") & (pl.col("queue") == 1))["value"].item() == 620
    assert t.filter((pl.col("counter") == "LRO byte rx") & (pl.col("queue") == 0))["value"].item() == 27_010_018
    assert one(res, "tx timeout count")["queue"] is None  # back at the top level after the sections
    res = parse("ethtool--fsl_dpaa2_eth-bracket-groups.txt")
    r = one(res, "[hw] rx frames")
    assert (r["counter"], r["queue"], r["value"]) == ("[hw] rx frames", None, 92_343_581)


def test_ixgbe_watch_header_gives_local_time_and_iface():
    res = parse("ethtool--ixgbe-watch-header-2013.txt", tz="Europe/Berlin")
    r = one(res, "rx_errors")
    assert r["value"] == 4_141_831_567 and r["iface"] == "eth1"
    assert r["ts"] == dt.datetime(2013, 4, 16, 6, 23, 27, tzinfo=UTC) and r["ts_quality"] == "local"
    r = one(res, "tx_queue_1_packets")
    assert (r["counter"], r["queue"], r["value"]) == ("tx_packets", 1, 26)
    assert one(res, "tx_flow_control_xoff")["value"] == 3
    assert res.unparsed.height == 0


def test_grep_excerpts_each_command_is_a_snapshot_labels_unparsed():
    res = parse("ethtool--grep-excerpts-mlx5-ixgbe-ice-labelled.txt")
    assert res.unparsed["line_no"].to_list() == [1, 13, 20]
    assert set(res.unparsed["reason"]) == {"not a 'name: value' counter line"}
    t = res.tables["nic_counters"]
    assert t.group_by("sample_no").len().sort("sample_no")["len"].to_list() == [9, 4, 32]
    assert one(res, "tx_flow_control_xoff")["sample_no"] == 1
    r = one(res, "rx_priority_3_xoff.nic")
    assert (r["sample_no"], r["queue"], r["iface"]) == (2, None, "eth03")


def test_marker_series_samples_times_and_old_mlx5_names():
    name = "ethtool--mlx5_core-series-2snapshots-markers.txt"
    res = parse(name)
    t = res.tables["nic_counters"]
    assert res.unparsed.height == 0 and t.height == 294
    assert set(t["iface"]) == {"p3p1"} and set(t["ts_quality"]) == {"sampled"}
    by = t.group_by("sample_no").agg(pl.len(), pl.col("ts").first()).sort("sample_no")
    assert by["len"].to_list() == [113, 181]
    assert by["ts"].to_list() == [dt.datetime(2018, 10, 20, 12, tzinfo=UTC), dt.datetime(2018, 10, 21, 12, tzinfo=UTC)]
    assert one(res, "rx_packets", 0)["value"] == 5_487_361
    assert one(res, "rx_packets", 1)["value"] == 845_320_277
    r = one(res, "tx1_0_packets")  # old mlx5 tx<channel>_<tc>_name
    assert (r["counter"], r["queue"], r["value"]) == ("tx_0_packets", 1, 14_384)
    r = one(res, "tx0_xmit_more")
    assert (r["counter"], r["queue"], r["sample_no"]) == ("tx_xmit_more", 0, 1)
    assert one(res, "rx_prio3_packets")["queue"] is None
    assert one(res, "link_down_events_phy")["value"] == 0
    # snapshot numbering agrees with the shared marker_split
    ms = marker_split(split_lines((FIX / name).read_bytes()))
    ref = dict(zip(ms["line_no"].to_list(), ms["sample_no"].to_list()))
    assert all(ref[ln] == s for ln, s in zip(t["line_no"].to_list(), t["sample_no"].to_list()))


# --- rules on small inputs built from real lines -------------------------------------------------

def test_driver_padded_names_are_trimmed():
    # bcm63xx/cxgb drivers pad their ethtool strings ("TxOctetsOK          "); ethtool prints them as is
    data = b"NIC statistics:\n     TxOctetsOK          : 1462856966524\n     RxErrors            : 0   \n"
    res = parse(data)
    assert res.tables["nic_counters"]["raw_name"].to_list() == ["TxOctetsOK", "RxErrors"]
    assert one(res, "TxOctetsOK")["value"] == 1_462_856_966_524


def test_mlx5_per_priority_pfc_names_are_not_queues():
    # names from mlx5 en_stats.c pport_per_prio_pfc_stats_desc ("rx_%s_pause", %s = "global" or "prio{i}");
    # the fixtures hold the "global" instances, these lines spell the per-priority ones (values arbitrary)
    fmts = ("rx_%s_pause", "rx_%s_pause_duration", "tx_%s_pause", "tx_%s_pause_duration", "rx_%s_pause_transition")
    names = [f % f"prio{p}" for p in range(8) for f in fmts]
    data = ("NIC statistics:\n" + "".join(f"     {n}: {i}\n" for i, n in enumerate(names))).encode()
    t = parse(data).tables["nic_counters"]
    assert t["counter"].to_list() == names and t["queue"].null_count() == len(names)
    assert t.filter(pl.col("counter") == "tx_prio3_pause")["value"].item() == names.index("tx_prio3_pause")


def test_values_beyond_int64_and_non_integers_are_reported():
    data = (b"     rx_bytes: 9223372036854775807\n"
            b"     rx_bits: 18446744073709551615\n"
            b"     rx_more: 18446744073709551616\n"
            b"     rx_neg: -1\n     rx_plus: +5\n     rx_frac: 1.5\n     rx_empty: \n"
            b"     rx_na: N/A\n     rx_text: abc\n     rx_nocolon 5\n     rx_nospace:5\n     rx_tail: 7 \t\n")
    res = parse(data)
    assert one(res, "rx_bytes")["value"] == 2**63 - 1
    assert one(res, "rx_na")["value"] is None  # N/A is null on purpose
    reasons = dict(zip(res.unparsed["line_no"].to_list(), res.unparsed["reason"].to_list()))
    assert "2^63-1" in reasons[2] and "2^64-1" in reasons[3]
    assert reasons[4] == reasons[5] == reasons[6] == reasons[9] == "value is not an unsigned integer"
    assert reasons[7] == "no value after the colon"
    assert reasons[10] == reasons[11] == "not a 'name: value' counter line"
    assert one(res, "rx_tail")["value"] == 7  # whitespace pasted after the value is forgiven
    assert res.tables["nic_counters"].height == 3


def test_markers_malformed_and_lines_before_first_marker():
    t0 = dt.datetime(2026, 11, 30, 10, 15, 2, 123456, tzinfo=UTC)
    data = ("     rx_bytes: 1\n"
            + format_marker(t0, "ethtool -S eth2") + "\n     rx_bytes: 2\n"
            + "#### forensics-sample ts=garbage\n     rx_bytes: 3\n"
            + format_marker(t0 + dt.timedelta(seconds=5), ["ethtool", "-S", "eth2"]) + "\n     rx_bytes: 4\n"
            ).encode()
    res = parse(data, hints={"iface": "ethX"})
    t = res.tables["nic_counters"]
    assert t["value"].to_list() == [2, 3, 4] and t["sample_no"].to_list() == [0, 1, 2]
    assert t["ts"].to_list() == [t0, None, t0 + dt.timedelta(seconds=5)]
    assert t["ts_quality"].to_list() == ["sampled", "none", "sampled"]
    assert t["iface"].to_list() == ["eth2", "ethX", "eth2"]  # the malformed marker has no argv
    reasons = dict(zip(res.unparsed["line_no"].to_list(), res.unparsed["reason"].to_list()))
    assert reasons == {1: "line before the first forensics-sample marker", 4: "malformed forensics-sample marker line"}


def test_prompt_command_line_gives_iface_and_host():
    # from isc-projects/ethq issue #8 (mlx5_core on Ubuntu 16.04)
    data = b"leinen@zhdk0192:~$ sudo ethtool -S p3p1\nNIC statistics:\n     rx_packets: 5487361\n     rx_bytes: 1063043816\n"
    res = parse(data, hints={"iface": "other"})
    assert set(res.tables["nic_counters"]["iface"]) == {"p3p1"}
    assert res.meta["hosts"] == ["zhdk0192"] and res.unparsed.height == 0


def test_sosreport_file_name_gives_iface():
    data = b"     rx_pause_frames: 95331\n     rx_constant_pause_events: 0\n     tx_pause_frames: 0\n"
    res = ethtool.parse(data, ParseContext(file="sosreport-x/sos_commands/networking/ethtool_-S_eth1"))
    assert set(res.tables["nic_counters"]["iface"]) == {"eth1"}
    assert one(res, "rx_pause_frames")["value"] == 95_331


def test_crlf_gives_the_same_rows():
    data = (FIX / "ethtool--bnxt_en-12q-queue-prefixed.txt").read_bytes()
    a = parse(data).tables["nic_counters"].drop("file")
    b = parse(data.replace(b"\n", b"\r\n")).tables["nic_counters"].drop("file")
    assert a.equals(b)


@pytest.mark.parametrize("data", [b"", b"\n", b"\x00\x00\n\x00", bytes(range(256)) * 8, b"x" * (5 << 20) + b"\n",
                                  "caf\xe9: 1\n".encode("latin-1"), b"rx_bytes: 12", b"[0]: rx_x: y\n[9999999999]: a: 1\n",
                                  b"     Tx Queue#: 0\n       TSO pkts tx: 1\n     Tx Queue#: x\n"])
def test_bad_input_is_accounted(data):
    res = parse(data)
    t = res.tables["nic_counters"]
    assert t.height + res.unparsed.height <= res.lines


def test_fast_line_split_matches_split_lines():
    samples = [f.read_bytes() for f in sorted(FIX.glob("ethtool--*.txt"))]
    samples += [b"", b"\n", b"a", b"a\r\n\r\nb\r", b"\r", b"\r\r\n", b"\n\n\n", b"x\ry\n", bytes(range(256)),
                b"\xef\xbb\xbf", b"\xef\xbb\xbfNIC statistics:\n", b'"a\n"b"\n', b"#x\n\x1f\x1e\x1d\x1c\n"]
    rnd = random.Random(7)
    alphabet = [b"\n", b"\r", b"a", b" ", b":", b'"', b"#", b"\t", b"\x00", b"\xff", b"\xe2\x82", b"\xac",
                b"\xef\xbb\xbf", b"\xed\xa0\x80", b"\xf0\x9f\x98\x80", b"\x1f"]
    samples += [b"".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 40))) for _ in range(400)]
    from forensics.sources._base import _split_lines_csv, _split_lines_py

    for data in samples:
        fast = _split_lines_csv(data)
        assert fast is None or fast.equals(_split_lines_py(data)), data


# --- sniffing ------------------------------------------------------------------------------------

def test_sniff_accepts_every_fixture_variant():
    for f in sorted(FIX.glob("ethtool--*.txt")):
        assert ethtool.sniff(f.read_bytes()), f.name
    assert ethtool.sniff(format_marker(dt.datetime.now(UTC), "ethtool -S eth2").encode() + b"\n     rx_bytes: 1\n")


def test_sniff_rejects_other_tools_outputs():
    """Every other tool's real output under tests/fixtures (and the ibstat, mlnx_qos and dcgmi outputs
    in fixtures/other_tools/) is not ethtool -S."""
    others = [p for d in sorted(FIX.parent.iterdir()) if d.is_dir() and d.name != "ethtool" for p in sorted(d.iterdir())
              if p.is_file() and not p.name.endswith((".expected.json", ".ctx.json"))]
    assert len(others) > 100 and any(p.parent.name == "other_tools" for p in others)
    for p in others:
        assert not ethtool.sniff(p.read_bytes()), p.name


def test_sniff_rejects_key_value_formats():
    nvsmi = (b"==============NVSMI LOG==============\n\nTimestamp                                 : Mon Nov 30\n"
             b"Driver Version                            : 535.129.03\nAttached GPUs                             : 1\n")
    assert not ethtool.sniff(nvsmi)
    assert not ethtool.sniff(b"driver: mlx5_core\nversion: 5.0-0\nfirmware-version: 14.23.1020 (MT_2420110034)\n")
    assert not ethtool.sniff(b"")


def test_block_wise_parsing_equals_whole(monkeypatch):
    t0 = dt.datetime(2026, 11, 30, 10, 15, 2, tzinfo=UTC)
    snaps = [(FIX / n).read_text() for n in ("ethtool--bnxt_en-12q-queue-prefixed.txt",
                                             "ethtool--vmxnet3-queue-sections.txt",
                                             "ethtool--mlx5-cx4lx-grep-pause-pci.txt")]
    data = ("     rx_bytes: 1\n" + "".join(
        (format_marker(t0 + dt.timedelta(seconds=i), f"ethtool -S eth{i % 2}") if i != 4
         else "#### forensics-sample ts=bad") + "\n" + snaps[i % 3] for i in range(9))).encode()
    whole = parse(data)
    monkeypatch.setattr(ethtool, "BLOCK_BYTES", 3000)
    assert len(ethtool._blocks(data, 3000)) >= 4
    parts = parse(data)
    assert parts.tables["nic_counters"].equals(whole.tables["nic_counters"])
    assert parts.unparsed.equals(whole.unparsed) and parts.meta == whole.meta
    t = whole.tables["nic_counters"]
    assert t["sample_no"].unique().sort().to_list() == list(range(9))
    assert t.filter(pl.col("sample_no") == 4)["ts"].null_count() == t.filter(pl.col("sample_no") == 4).height


def test_markers_without_counters():
    t0 = dt.datetime(2026, 11, 30, 10, 15, 2, tzinfo=UTC)
    res = parse((format_marker(t0, "ethtool -S eth2") + "\n" + format_marker(t0, "ethtool -S eth2") + "\n").encode())
    assert res.tables["nic_counters"].height == 0 and res.unparsed.height == 0 and res.meta["ifaces"] == []
    res = parse((format_marker(t0, "ethtool -S eth2") + "\nNIC statistics:\n     rx: x\n").encode())
    assert res.tables["nic_counters"].height == 0 and res.unparsed["line_no"].to_list() == [3]


def test_small_input_split_matches_split_lines():
    rnd = random.Random(5)
    cases = [b"\n", b"a", b"a\r\n", b"\r", b"\xef\xbb\xbfx\ny\n", b"\xff\n\xfe"]
    cases += [bytes(rnd.choice(b"ab:\n\r\xff\xc3\xa9 ") for _ in range(rnd.randrange(1, 40))) for _ in range(500)]
    for data in cases:
        assert ethtool._split_lines(data).equals(split_lines(data)), data


def test_names_mapped_once_per_process_give_the_same_rows(monkeypatch):
    files = sorted(FIX.glob("ethtool--*.txt"))
    monkeypatch.setattr(_ethtool_names, "KNOWN_NAMES", [None])
    first = [parse(f.name) for f in files]
    again = [parse(f.name) for f in reversed(files)][::-1]
    monkeypatch.setattr(_ethtool_names, "KNOWN_NAMES_MAX", 40)  # the map starts over again and again
    small = [parse(f.name) for f in files]
    for a, b, c in zip(first, again, small):
        assert a.tables["nic_counters"].equals(b.tables["nic_counters"])
        assert a.tables["nic_counters"].equals(c.tables["nic_counters"])
        assert a.unparsed.equals(b.unparsed) and a.unparsed.equals(c.unparsed)
    assert _ethtool_names.KNOWN_NAMES[0]["k"].is_duplicated().sum() == 0


def test_a_paste_quoted_in_a_mail_reply_is_read_without_the_quotes():
    # `> > root@(none):~$ ethtool -S sff2` in a netdev reply (tests/fixtures/README.md): recognised, and the
    # counter names carry no quote characters (before, a forced parse named them ">>      tx_bytes")
    from forensics.sources import recognise
    data = (FIX / "ethtool--mv88e6xxx-sff-mail-double-quoted-prompt.txt").read_bytes()
    assert recognise(data)[0] == "ethtool"
    res = ethtool.parse(data, ParseContext(host="h"))
    t = res.tables["nic_counters"]
    assert t.height == 68 and res.unparsed.height == 0
    assert t.filter(pl.col("raw_name").str.contains(">", literal=True)).height == 0
    assert t.filter(pl.col("raw_name") == "out_octets").select("iface", "value").rows() == [("sff2", 192)]


def test_ethtool_i_block_above_ethtool_S_is_driver_info_not_unparsed():
    # ethq issue 3: `# ethtool -i enp1s0` (r8169) then `# ethtool -S enp1s0`, pasted one after the other
    res = parse("ethtool--ethq-issue3-r8169-ethtool-i-then-S-hash-prompts.txt")
    assert (res.lines, res.unparsed.height, res.tables["nic_counters"].height) == (27, 0, 13)
    (info,) = res.meta["driver_info"]
    assert (info["line_no"], info["iface"], info["driver"], info["version"], info["bus_info"]) == \
        (2, "enp1s0", "r8169", "2.3LK-NAPI", "0000:01:00.0")
    assert info["firmware_version"] is None and info["supports_statistics"] == "yes"
    assert set(res.tables["nic_counters"]["iface"]) == {"enp1s0"}
    # driver fields without their `driver:` line are not taken for a block: unparsed as before
    lone = parse(b"NIC statistics:\n     rx_packets: 1\nversion: 2.3LK-NAPI\nbus-info: 0000:01:00.0\n")
    assert lone.unparsed["line_no"].to_list() == [3, 4] and "driver_info" not in lone.meta
    # a block's fields end at the next non-field line: a later stray `version:` stays unparsed
    late = parse(b"driver: mlx5_core\nbus-info: 0000:af:00.0\n\n\n\nNIC statistics:\n     rx_packets: 1\nsome text\n"
                 b"version: 5.0-0\n")
    assert late.meta["driver_info"][0]["bus_info"] == "0000:af:00.0"
    assert late.unparsed["line_no"].to_list() == [8, 9]


def test_deep_mail_quote_with_tabs_wrapped_values_grep_and_elisions_reads_every_counter():
    from forensics.sources import parse_bytes, recognise

    name = "ethtool--mlx5-xdp-DERIVED-mail-quoted-3-deep-tabs-wrapped-grep-elided.txt"
    data = (FIX / name).read_bytes()
    assert recognise(data)[0] == "ethtool"
    _, r = parse_bytes(data, None, ParseContext(file=name))
    _, whole = parse_bytes((FIX / "ethtool--mlx5-xdp-kernel5.15-nonzero.txt").read_bytes(), None, ParseContext())
    got, ref = r.tables["nic_counters"], whole.tables["nic_counters"]
    # every counter line read (before: the tab and wrapped lines unparsed, and the paste not recognised)
    assert got.height == ref.height == 101 and got.select("raw_name", "value").equals(ref.select("raw_name", "value"))
    assert got.filter(pl.col("raw_name") == "rx_csum_unnecessary").select("line_no", "value").rows() == [(7, 333854079)]
    assert set(got["iface"]) == {"eth2"}  # from the `ethtool -S eth2 | grep` line
    # accounting: the prose line unparsed, the two elision marks skipped, the rest read
    assert r.unparsed["line_no"].to_list() == [1]
    assert r.meta["skipped"] == {"elision mark: lines the paste's author left out": 2}
    # a name line whose next line is no value stays unparsed; a value alone with no name before it too
    odd = b"NIC statistics:\n     rx_packets:\n     tx_packets: 3\n42\n"
    o = parse(odd)
    assert o.tables["nic_counters"].select("raw_name", "value").rows() == [("tx_packets", 3)]
    assert o.unparsed["line_no"].to_list() == [2, 4]


def test_an_authors_note_after_a_value_is_taken_off_and_kept_in_meta():
    # real: a blog's "<----- ..." notes (e1000e), a netdev mail's "// No TX Error" (ixgbe, quoted "> ")
    res = parse("ethtool--e1000e-zh-blog-arrow-notes.txt")
    assert res.unparsed.height == 0
    rows = {r["counter"]: r["value"] for r in res.tables["nic_counters"].iter_rows(named=True)}
    assert rows["rx_crc_errors"] == 0 and rows["rx_no_buffer_count"] == 0 and rows["tx_tcp_seg_good"] == 26208
    assert [n["line_no"] for n in res.meta["notes"]] == [18, 20]
    assert res.meta["notes"][0]["note"].startswith("<----- CRC")
    from forensics.sources import parse_bytes
    _, mail = parse_bytes((FIX / "ethtool--ixgbe-e1000e-netdev-mail-quoted-slash-notes-ip-s.txt").read_bytes(), "ethtool",
                          ParseContext(host="h1", file="f.txt"))
    nic = mail.tables["nic_counters"]
    assert nic.filter(pl.col("line_no") == 16)["value"].to_list() == [0]  # ">      tx_errors: 0 // No TX Error"
    assert [n["note"] for n in mail.meta["notes"]] == ["// No TX Error", "// No dropped Packets",
                                                       "// No Dropped or error in TX"]
    assert 16 not in mail.unparsed["line_no"].to_list()
    # a note is not any trailing text: "rx: 5 packets" is still no counter line
    bad = parse(b"NIC statistics:\n     rx_packets: 5 packets\n     tx_packets: 6\n")
    assert bad.unparsed["line_no"].to_list() == [2] and "notes" not in bad.meta


def test_two_snapshots_pasted_without_a_command_between_them_are_two_samples():
    res = parse("ethtool--be2net-DERIVED-two-ticks-labelled-fenced.txt")
    nic = res.tables["nic_counters"]
    assert nic["sample_no"].unique().sort().to_list() == [0, 1]
    tcp = nic.filter(pl.col("counter") == "rx_tcp_checksum_errs").sort("sample_no")["value"].to_list()
    assert tcp == [1167054962, 1167056713]
    assert "tick 2:" in res.unparsed["text"].to_list()  # the label is no counter: unparsed, counted
    # "NIC statistics:" again, with no label, opens the second snapshot too; "$ sleep 10" between greps as well
    two = parse(b"NIC statistics:\n     rx_dropped: 1\n     tx_dropped: 0\nNIC statistics:\n     rx_dropped: 7\n"
                b"     tx_dropped: 0\n")
    assert two.tables["nic_counters"]["sample_no"].to_list() == [0, 0, 1, 1]
    slept = parse(b"     rx_dropped: 1\n     rx_missed_errors: 2\n$ sleep 10\n     rx_dropped: 5\n     rx_missed_errors: 9\n")
    assert slept.tables["nic_counters"]["sample_no"].to_list() == [0, 0, 1, 1]
    assert slept.unparsed["line_no"].to_list() == [3]
    # one snapshot whose counters never repeat stays one sample, labels or not
    one = parse(b"NIC statistics:\n     rx_dropped: 1\nsome label:\n     tx_dropped: 0\n")
    assert one.tables["nic_counters"]["sample_no"].to_list() == [0, 0]


def test_a_sentence_naming_ethtool_S_is_prose_not_a_command_line_and_names_no_interface():
    # the netutils-linux issue's first line: a sentence, not a command someone ran; the interface
    # it names is not where the counters below came from (no silent guess): iface null, line unparsed
    res = parse("ethtool--be2net-DERIVED-two-ticks-labelled-fenced.txt")
    assert res.tables["nic_counters"]["iface"].null_count() == res.tables["nic_counters"].height == 90
    assert 1 in res.unparsed["line_no"].to_list()
    body = b"NIC statistics:\n     rx_dropped: 7\n"
    for line, iface in [
        (b"ethtool -S eth0 provides a lot of statistics.", None),
        (b"I ran ethtool -S eth0 twice and got this", None),
        (b"ethtool -S eth0", "eth0"),
        (b"$ sudo ethtool -S eth0 | grep drop", "eth0"),
        (b"[root@n7 ~]# ethtool --statistics ens1f0 > /tmp/s.txt", "ens1f0"),
        (b"> > user@n7:~$ watch -n 1 'ethtool -S eth3 | grep drop'", "eth3"),
        (b"for i in 1 2; do ethtool -S eth4; sleep 1; done", "eth4"),
        (b"Every 1.0s: ethtool -S eth1   Tue Apr 16 08:23:27 2013", "eth1"),
    ]:
        res = parse(line + b"\n" + body)
        assert res.tables["nic_counters"]["iface"].to_list() == [iface], line
        assert (1 in res.unparsed["line_no"].to_list()) == (iface is None), line


def test_counters_on_the_header_line_are_read_as_printed():
    # an HTML <pre> copied without its line breaks (DERIVED from the ethq issue 3 r8169 paste): the same counters
    # as the paste they came from, every row on line 1, the command read as such
    got = parse("ethtool--ethq-issue3-r8169-DERIVED-html-pre-newlines-lost-one-line.txt")
    want = parse("ethtool--ethq-issue3-r8169-ethtool-i-then-S-hash-prompts.txt").tables["nic_counters"]
    rows = got.tables["nic_counters"]
    assert got.lines == 1 and got.unparsed.height == 0 and got.meta["collapsed_lines"] == 1
    assert rows["line_no"].unique().to_list() == [1] and rows["iface"].unique().to_list() == ["enp1s0"]
    assert rows.select("counter", "value").rows() == want.select("counter", "value").rows()
    # a line of prose, then the collapsed line with a word no counter is; a line with the header alone untouched
    data = (b"stats below\nNIC statistics: rx_packets: 12 tx_packets: 34 see? rx_missed_errors: 5\n"
            b"NIC statistics:\n     rx_crc_errors: 7\n")
    res = parse(data)
    assert res.lines == 4 and res.tables["nic_counters"].select("line_no", "counter", "value").rows() == [
        (2, "rx_packets", 12), (2, "tx_packets", 34), (2, "rx_missed_errors", 5), (4, "rx_crc_errors", 7)]
    assert res.unparsed["line_no"].to_list() == [1] and res.meta["collapsed_leftovers"] == [{"line_no": 2, "text": "see?"}]


def test_a_command_run_in_a_network_namespace_is_a_command_line_naming_its_interface():
    # notes on a pod's network: "nsenter -t PID -n ethtool -S eth0" behind a ">>> " prompt, then the node's
    # veth; before, the nsenter line was unparsed and the pod's counter had no interface (null)
    from forensics.sources import parse_bytes
    name = "ethtool--k8s-notes-nsenter-pod-eth0-and-node-veth-peer-ifindex.txt"
    data = (Path(__file__).parent / "fixtures" / "ethtool" / name).read_bytes()
    src, r = parse_bytes(data, None, ParseContext(host="n1", file=name))
    c = r.tables["nic_counters"].sort("line_no")
    assert src == "ethtool" and c["iface"].to_list() == ["eth0", "vethc92900e3"] and c["value"].to_list() == [6, 3]
    assert 2 not in r.unparsed["line_no"].to_list()
    # "ip netns exec NAME" runs it in a namespace too
    _, r = parse_bytes(b"$ sudo ip netns exec ns1 ethtool -S veth1 | grep drop\n     rx_drops: 5\n", "ethtool",
                       ParseContext(host="n1"))
    assert r.tables["nic_counters"]["iface"].to_list() == ["veth1"] and r.unparsed.height == 0
