"""iostat: values that matter, per column set, time format and report kind (hand-checked against the fixtures)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from forensics.sources import ParseContext, iostat, sar

FIX = Path(__file__).parent / "fixtures" / "iostat"
UTC = dt.timezone.utc
BANNER = "Linux 5.15.0-112-generic (gpu-node07) \t11/30/2021 \t_x86_64_\t(8 CPU)\n\n"
OLD_HDR = "Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util\n"
OLD_ROW = "sda               0.00     0.02    0.13    0.11     5.27     1.10    52.53     0.00    0.88    0.53    1.29   0.52   0.01\n"
CPU = "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n           0.14    0.00    0.16    0.00    0.00   99.70\n\n"


def parse_file(name: str, **ctx) -> iostat.ParseResult:
    return iostat.parse((FIX / name).read_bytes(), ParseContext(host="n1", file=name, **ctx))


def parse_text(text: str, **ctx):
    ctx.setdefault("host", "n1")
    return iostat.parse(text.encode(), ParseContext(file="t", **ctx))


def row(df: pl.DataFrame, **where) -> dict:
    for k, v in where.items():
        df = df.filter(pl.col(k) == v)
    assert df.height == 1, (where, df.height)
    return df.row(0, named=True)


def test_old_columns_sysstat10():
    r = parse_file("iostat--centos77-x-old-columns.txt")
    sda = row(r.tables["disk_io"], device="sda")
    assert (sda["rrqm_s"], sda["wrqm_s"], sda["r_s"], sda["w_s"]) == (0.0, 0.02, 0.13, 0.11)
    assert (sda["rkb_s"], sda["wkb_s"], sda["avgrq_sz_sectors"], sda["aqu_sz"]) == (5.27, 1.10, 52.53, 0.0)
    assert (sda["await_ms"], sda["r_await_ms"], sda["w_await_ms"], sda["svctm_ms"], sda["util_pct"]) == (0.88, 0.53, 1.29, 0.52, 0.01)
    assert sda["rareq_sz_kb"] is None and sda["f_s"] is None
    assert r.meta["variant"] == "x-old" and r.meta["hosts"] == ["localhost.localdomain"]


def test_new_columns_sysstat12_land_in_the_same_columns():
    r = parse_file("iostat--ubuntu2010-x-new-columns.txt")
    assert r.tables["disk_io"].height == 14 and r.unparsed.height == 0
    sda = row(r.tables["disk_io"], device="sda")
    assert (sda["r_s"], sda["rkb_s"], sda["rrqm_s"], sda["rrqm_pct"], sda["r_await_ms"], sda["rareq_sz_kb"]) == (
        2.67, 100.76, 0.66, 19.76, 0.36, 37.75)
    assert (sda["w_s"], sda["wkb_s"], sda["wrqm_s"], sda["wrqm_pct"], sda["w_await_ms"], sda["wareq_sz_kb"]) == (
        2.81, 129.44, 4.42, 61.15, 0.42, 46.11)
    assert (sda["d_s"], sda["dkb_s"], sda["f_s"], sda["f_await_ms"], sda["aqu_sz"], sda["util_pct"]) == (0, 0, 0, 0, 0, 0.41)
    assert sda["svctm_ms"] is None and sda["avgrq_sz_sectors"] is None
    # the same queue-length meaning under both names
    old = row(parse_file("iostat--centos77-x-old-columns.txt").tables["disk_io"], device="dm-0")
    assert old["aqu_sz"] == 0.0 and r.meta["variant"] == "x-sysstat12"


def test_sysstat11_intermediate_columns():
    r = parse_file("iostat--ubuntu1804-x-sysstat11-columns.txt")
    sda = row(r.tables["disk_io"], device="sda")
    assert (sda["r_s"], sda["w_s"], sda["rkb_s"], sda["wkb_s"]) == (127.92, 67.15, 8595.16, 12457.33)
    assert (sda["rrqm_pct"], sda["wrqm_pct"], sda["aqu_sz"], sda["rareq_sz_kb"], sda["wareq_sz_kb"]) == (10.99, 68.04, 0.79, 67.19, 185.52)
    assert (sda["svctm_ms"], sda["util_pct"]) == (0.78, 15.14)
    assert r.meta["variant"] == "x-sysstat11.5"
    assert row(r.tables["cpu_util"], cpu="all")["user_pct"] == 39.64


def test_megabyte_columns_become_kilobytes():
    mx = row(parse_file("iostat--centos77-mx-old-columns-mb.txt").tables["disk_io"], device="sda")
    assert mx["rkb_s"] == pytest.approx(0.01 * 1024) and mx["avgrq_sz_sectors"] == 52.51
    m = row(parse_file("iostat--centos77-m-basic-mb.txt").tables["disk_io"], device="sda")
    assert m["kb_read"] == 198 * 1024 and m["kb_wrtn"] == 41 * 1024 and m["kb_read_s"] == pytest.approx(10.24)


def test_sectors_of_sysstat9_become_kilobytes():
    text = BANNER + "Device:         rrqm/s   wrqm/s     r/s     w/s   rsec/s   wsec/s avgrq-sz avgqu-sz   await  svctm  %util\n" \
        "sda               0.05     1.27    0.42    0.84    14.46    16.90    24.93     0.00    3.56   1.01   0.13\n"
    sda = row(parse_text(text).tables["disk_io"], device="sda")
    assert sda["rkb_s"] == pytest.approx(7.23) and sda["wkb_s"] == pytest.approx(8.45) and sda["r_await_ms"] is None


def test_basic_report_with_discard_columns():
    r = parse_file("iostat--ubuntu2010-basic-dscd.txt")
    sda = row(r.tables["disk_io"], device="sda")
    assert (sda["tps"], sda["kb_read_s"], sda["kb_wrtn_s"], sda["kb_dscd_s"]) == (5.58, 103.76, 133.05, 0.0)
    assert (sda["kb_read"], sda["kb_wrtn"], sda["kb_dscd"]) == (541026, 693732, 0)
    assert r.meta["variant"] == "basic"


def test_first_report_is_since_boot_and_sample_numbers():
    r = parse_file("iostat--centos77-basic-3-reports.txt")
    d = r.tables["disk_io"]
    assert d["sample_no"].to_list() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert d["since_boot"].to_list() == [True] * 3 + [False] * 6
    assert r.tables["cpu_util"]["since_boot"].to_list() == [True, False, False]
    assert row(d, device="sda", sample_no=0)["kb_read"] == 203305
    assert (d["ts_quality"] == "none").all() and d["ts"].null_count() == 9
    # -y cannot be seen in the output: the caller may say so
    r = parse_file("iostat--centos77-basic-3-reports.txt", hints={"y": True})
    assert not r.tables["disk_io"]["since_boot"].any()


def test_each_banner_starts_a_new_run():
    text = BANNER + CPU + OLD_HDR + OLD_ROW + "\n" + CPU + OLD_HDR + OLD_ROW + "\n" + BANNER + CPU + OLD_HDR + OLD_ROW
    d = parse_text(text).tables["disk_io"]
    assert d["sample_no"].to_list() == [0, 1, 2] and d["since_boot"].to_list() == [True, False, True]


def test_two_digit_year_timestamps_local_to_utc():
    r = parse_file("iostat--xt-two-digit-year.txt", tz="Europe/Paris")
    c = r.tables["cpu_util"]
    assert c["ts"].to_list() == [dt.datetime(2014, 11, 10, 16, 44, 13, tzinfo=UTC), dt.datetime(2014, 11, 10, 16, 44, 15, tzinfo=UTC)]
    assert c["ts_quality"].to_list() == ["local", "local"] and c["sample_no"].to_list() == [0, 1]
    d = r.tables["disk_io"]
    assert d["wkb_s"].to_list() == [102.62, 42.0] and d["since_boot"].to_list() == [True, False]


def test_t_timestamp_english_locale_pm_real_capture():
    # iostat -t -d -x -k under an English locale: "07/13/2017 05:12:21 PM", no avg-cpu block (-d)
    r = parse_file("iostat--el6-tdxk-ampm-english-locale.txt", tz="Asia/Shanghai")
    d = r.tables["disk_io"]
    assert d["device"].to_list() == ["sda", "sdb", "dm-0", "dm-1", "dm-2"]
    assert set(d["ts"].to_list()) == {dt.datetime(2017, 7, 13, 9, 12, 21, tzinfo=UTC)} and set(d["ts_quality"]) == {"local"}
    assert row(d, device="sdb")["await_ms"] == 42.75 and row(d, device="sdb")["avgrq_sz_sectors"] == 423.29
    assert d["since_boot"].to_list() == [True] * 5 and r.tables["cpu_util"].height == 0
    assert r.unparsed.height == 0 and [c["line_no"] for c in r.meta["commands"]] == [1]  # the shell prompt


@pytest.mark.parametrize("stamp,tz,expected,quality", [
    ("11/30/2021 10:15:02 AM", "America/New_York", dt.datetime(2021, 11, 30, 15, 15, 2, tzinfo=UTC), "local"),
    ("11/30/2021 12:05:00 AM", "UTC", dt.datetime(2021, 11, 30, 0, 5, 0, tzinfo=UTC), "local"),
    ("11/30/2021 03:59:48 PM", "Asia/Tokyo", dt.datetime(2021, 11, 30, 6, 59, 48, tzinfo=UTC), "local"),
    ("2021-11-30T10:15:02+0100", "Asia/Tokyo", dt.datetime(2021, 11, 30, 9, 15, 2, tzinfo=UTC), "exact"),
    ("30/11/21 10:15:02", "Europe/London", dt.datetime(2021, 11, 30, 10, 15, 2, tzinfo=UTC), "local"),
    ("30.11.2021 10:15:02", "Europe/Berlin", dt.datetime(2021, 11, 30, 9, 15, 2, tzinfo=UTC), "local"),
])
def test_t_timestamp_formats(stamp, tz, expected, quality):
    text = BANNER.replace("11/30/2021", stamp.split()[0].split("T")[0]) + stamp + "\n" + CPU + OLD_HDR + OLD_ROW
    r = parse_text(text, tz=tz)
    assert r.unparsed.height == 0, r.unparsed["reason"].to_list()
    for t in ("cpu_util", "disk_io"):
        assert r.tables[t]["ts"].to_list() == [expected] and r.tables[t]["ts_quality"].to_list() == [quality]


def test_sysstat5_time_lines_and_block_columns():
    text = ("Linux 2.4.22-1.2188.nptl (localhost.localdomain)        05/01/2004\n\nTime: 03:59:48 PM\n"
            "Device:            tps   Blk_read/s   Blk_wrtn/s   Blk_read   Blk_wrtn\n"
            "dev3-0            1.00         8.00         0.00          8          0\n")
    r = parse_text(text, tz="UTC")
    d = row(r.tables["disk_io"], device="dev3-0")
    assert (d["kb_read_s"], d["kb_read"]) == (4.0, 4) and d["ts"] == dt.datetime(2004, 5, 1, 15, 59, 48, tzinfo=UTC)


def test_partitions_and_device_mapper_names():
    text = BANNER + OLD_HDR + OLD_ROW + OLD_ROW.replace("sda  ", "sda1 ") + OLD_ROW.replace("sda        ", "centos-root")
    d = parse_text(text).tables["disk_io"]
    assert d["device"].to_list() == ["sda", "sda1", "centos-root"] and d["sample_no"].to_list() == [0, 0, 0]


def test_sampled_times_from_interval_hint():
    cap = dt.datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
    r = parse_file("iostat--centos77-basic-3-reports.txt", capture_time=cap, hints={"interval_s": 5})
    c = r.tables["cpu_util"]
    assert c["ts"].to_list() == [cap, cap + dt.timedelta(seconds=5), cap + dt.timedelta(seconds=10)]
    assert c["ts_quality"].to_list() == ["sampled"] * 3


def test_json_basic_with_locale_date():
    r = parse_file("iostat--json-basic-de-date.json")
    nv = row(r.tables["disk_io"], device="nvme0n1")
    assert (nv["tps"], nv["kb_read_s"], nv["kb_wrtn_s"], nv["kb_read"], nv["kb_wrtn"]) == (213.21, 68.44, 1832.81, 5958762, 159566317)
    assert nv["line_no"] == 16 and nv["since_boot"]
    assert row(r.tables["cpu_util"], cpu="all")["user_pct"] == 10.67
    assert r.meta["hosts"] == ["BDT233"] and r.meta["date_order"] == "dmy"


JSON_X = """{"sysstat": {
\t"hosts": [
\t\t{
\t\t\t"nodename": "gpu-node07",
\t\t\t"sysname": "Linux",
\t\t\t"release": "5.15.0-78-generic",
\t\t\t"machine": "x86_64",
\t\t\t"number-of-cpus": 8,
\t\t\t"date": "08/05/23",
\t\t\t"statistics": [
\t\t\t\t{
\t\t\t\t\t"timestamp": "08/05/23 14:00:00",
\t\t\t\t\t"disk": [
\t\t\t\t\t\t{"disk_device": "loop22", "r/s": 0.30, "w/s": 0.00, "d/s": 0.00, "f/s": 0.00, "rMB/s": 0.01, "wMB/s": 0.00, "dMB/s": 0.00, "rrqm/s": 0.00, "wrqm/s": 0.00, "drqm/s": 0.00, "rrqm": 0.00, "wrqm": 0.00, "drqm": 0.00, "r_await": 0.16, "w_await": 0.00, "d_await": 0.00, "f_await": 0.00, "rareq-sz": 22.91, "wareq-sz": 0.00, "dareq-sz": 0.00, "aqu-sz": 0.00, "util": 0.02}
\t\t\t\t\t]
\t\t\t\t},
\t\t\t\t{
\t\t\t\t\t"timestamp": "08/05/23 14:00:05",
\t\t\t\t\t"disk": [
\t\t\t\t\t\t{"disk_device": "loop37", "r/s": 0.69, "w/s": 0.00, "d/s": 0.00, "f/s": 0.00, "rMB/s": 0.04, "wMB/s": 0.00, "dMB/s": 0.00, "rrqm/s": 0.00, "wrqm/s": 0.00, "drqm/s": 0.00, "rrqm": 0.00, "wrqm": 0.00, "drqm": 0.00, "r_await": 0.27, "w_await": 0.00, "d_await": 0.00, "f_await": 0.00, "rareq-sz": 55.50, "wareq-sz": 0.00, "dareq-sz": 0.00, "aqu-sz": 0.00, "util": 0.08}
\t\t\t\t\t]
\t\t\t\t}
\t\t\t]
\t\t}
\t]
}}
"""


def test_json_extended_keys_and_timestamps():
    r = parse_text(JSON_X, host=None, tz="Europe/Berlin")
    d = r.tables["disk_io"]
    assert d["device"].to_list() == ["loop22", "loop37"] and d["host"].to_list() == ["gpu-node07"] * 2
    a = d.row(0, named=True)
    assert (a["rkb_s"], a["rareq_sz_kb"], a["util_pct"], a["rrqm_pct"], a["line_no"]) == (pytest.approx(10.24), 22.91, 0.02, 0.0, 14)
    assert d["ts"].to_list() == [dt.datetime(2023, 8, 5, 12, 0, 0, tzinfo=UTC), dt.datetime(2023, 8, 5, 12, 0, 5, tzinfo=UTC)]
    assert d["since_boot"].to_list() == [True, False] and d["sample_no"].to_list() == [0, 1]


def test_json_truncated_keeps_complete_records():
    data = (FIX / "iostat--json-basic-de-date.json").read_bytes()
    cut = data[: data.index(b'"loop7"') + 20]
    r = iostat.parse(cut, ParseContext(host="n1", file="cut"))
    assert r.tables["disk_io"]["device"].to_list() == ["loop0"]
    assert r.unparsed["line_no"].to_list() == [15] and "JSON" in r.unparsed["reason"][0]


def test_bad_values_go_to_unparsed_with_a_reason():
    text = (BANNER + CPU + OLD_HDR + OLD_ROW + OLD_ROW.replace("0.13", "0.1x").replace("sda ", "sdb ")
            + OLD_ROW.replace("52.53", "52.5k").replace("sda ", "sdc ") + "sdd 1 2 3\n")
    r = parse_text(text)
    assert r.tables["disk_io"]["device"].to_list() == ["sda"]
    reasons = dict(zip(r.unparsed["line_no"].to_list(), r.unparsed["reason"].to_list()))
    assert "not a number" in reasons[8] and "human-readable" in reasons[9] and "fields" in reasons[10]
    assert r.lines == 10


def test_human_value_of_a_kb_column_is_read_as_kilobytes():
    # iostat -h prints kB columns with sysstat's units (common.c cprintf_unit: one step per 1024); avgrq-sz of
    # the old column set counts sectors, so a unit there is not converted (test above)
    d = row(parse_text(BANNER + OLD_HDR + OLD_ROW.replace("5.27", "5.3M")).tables["disk_io"], device="sda")
    assert d["rkb_s"] == 5.3 * 1024


def test_na_values_are_null_on_purpose():
    text = BANNER + OLD_HDR + OLD_ROW.replace("0.52", " N/A")
    d = row(parse_text(text).tables["disk_io"], device="sda")
    assert d["svctm_ms"] is None and d["util_pct"] == 0.01


def test_sniffers_tell_iostat_from_sar():
    for f in sorted(FIX.glob("iostat--*")):
        if f.name.endswith(".expected.json"):
            continue
        assert iostat.sniff(f.read_bytes()), f.name
        assert not sar.sniff(f.read_bytes()), f.name
    for f in sorted((FIX.parent / "sar").glob("sar--*")):
        if not f.name.endswith(".expected.json"):
            assert not iostat.sniff(f.read_bytes()), f.name
    assert not iostat.sniff(b"[    0.000000] Linux version 5.15.0\n")


def test_a_paste_indented_as_a_whole_is_recognised_and_read():
    # a Markdown code block indented four spaces (tests/fixtures/README.md): recognised by its header lines
    from forensics.sources import recognise
    data = (FIX / "iostat--gentoo-indented-x-two-reports.txt").read_bytes()
    name, verdict = recognise(data)
    assert name == "iostat" and verdict.confidence >= 0.9
    res = iostat.parse(data, ParseContext(host="gentoo-local", tz="UTC"))
    d = res.tables["disk_io"].sort("line_no")
    assert d.select("device", "w_s", "wkb_s", "util_pct").rows()[0] == ("sda", 0.73, 25.64, 0.08)
    assert res.tables["cpu_util"]["idle_pct"].to_list() == [99.63, 98.02]
    assert res.unparsed.height == 0 and res.meta["commands"] == [{"line_no": 1, "command": "$ iostat -x 1 2"}]
    # an indented sar paste is recognised the same way (the first lines of an indented `sar -n DEV 1`
    # in public notes on the 60-second checklist, search index file id 335654145)
    sar_text = (b"    $ sar -n DEV 1\n"
                b"    Linux 4.15.0-65-generic (elastic-00.fullrate.dk) \t12/10/19 \t_x86_64_\t(8 CPU)\n    \n"
                b"    13:44:23        IFACE   rxpck/s   txpck/s    rxkB/s    txkB/s   rxcmp/s   txcmp/s  rxmcst/s   %ifutil\n"
                b"    13:44:24       ens160   1824.00    786.00   7323.50   2525.08      0.00      0.00      0.00      0.60\n")
    assert recognise(sar_text)[0] == "sar"
    net = sar.parse(sar_text, ParseContext(host="h", tz="UTC")).tables["sar_net_dev"]
    assert net.select("iface", "rxpck_s").rows() == [("ens160", 1824.0)]


def test_a_paste_quoted_in_mail_and_wrapped_at_72_columns_is_read():
    # linux-raid reply (tests/fixtures/README.md): `> ` quotes, and the header and each device row wrapped
    # after the 7th column; the wrapped tails are read with the line they continue
    from forensics.sources import recognise
    data = (FIX / "iostat--linux-raid-resync-mail-quoted-wrapped-72.txt").read_bytes()
    assert recognise(data)[0] == "iostat"
    res = iostat.parse(data, ParseContext(host="h", tz="UTC"))
    d = res.tables["disk_io"]
    assert d.height == 24 and d["line_no"].to_list()[:3] == [4, 6, 8]
    nvme1 = d.filter(pl.col("device") == "nvme1n1").row(0, named=True)
    assert (nvme1["r_s"], nvme1["rkb_s"], nvme1["r_await_ms"], nvme1["aqu_sz"], nvme1["util_pct"]) == \
        (21484.2, 85936.8, 0.04, 0.82, 99.16)
    assert res.unparsed.height == 0 and res.meta["commands"][0]["command"] == "# iostat -dx 5"
    # a short row whose next line is not its tail is still reported, not joined
    cut = iostat.parse(b"Device            r/s     w/s     rkB/s     wkB/s   rrqm/s   wrqm/s  %util\n"
                       b"sda 1.00 2.00\nsdb 1.00 2.00 3.00 4.00 0.00 0.00 5.00\n", ParseContext(host="h"))
    assert cut.tables["disk_io"]["device"].to_list() == ["sdb"] and cut.unparsed["line_no"].to_list() == [2]


# --- quoted pastes with elision marks and a subset of the device columns --------------------------

def test_quoted_basic_table_of_a_2004_mail():
    from forensics.sources import parse_bytes
    data = (FIX / "iostat--lkml-2004-mail-quoted-basic-md-raid0.txt").read_bytes()
    name, res = parse_bytes(data, None, ParseContext(host="h"))
    assert name == "iostat" and res.meta["quoted"] == "> "
    d = res.tables["disk_io"]
    assert d["device"].to_list() == ["sda", "sdb", "sdc", "sdd", "md_d0", "md_d0p2"]
    assert d.filter(pl.col("device") == "md_d0")["tps"].to_list() == [14444.64]
    assert res.unparsed["line_no"].to_list() == [8]  # the author's "(over 60sec, ...)" note


@pytest.mark.parametrize("mark", ["[...]", "[ ... ]", "...", "[snip]", "<snip>", "…"])
def test_elision_marks_in_a_quoted_column_subset_are_skipped_and_counted(mark):
    # CONSTRUCTED from the real centos77 -x fixture's device rows: the 7 columns a reply kept, quoted,
    # with the author's elision mark between rows
    from forensics.sources import parse_bytes
    data = ("> Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s  %util\n"
            "> sda               0.00     0.02    0.13    0.11     5.27     1.10   0.01\n"
            f"> {mark}\n"
            "> dm-1              0.00     0.00    0.00    0.00     0.06     0.00   0.00\n").encode()
    name, res = parse_bytes(data, None, ParseContext(host="h"))
    assert name == "iostat" and res.unparsed.height == 0 and res.tables["disk_io"].height == 2
    assert res.meta["skipped"] == {"elision mark: lines the paste's author left out": 1}
    assert res.tables["disk_io"].filter(pl.col("device") == "sda")["rkb_s"].to_list() == [5.27]


def test_human_sysstat12_device_last_quoted_mail_is_recognised_and_read():
    from forensics.sources import parse_bytes, recognise

    name = "iostat--lkml-2024-h-sysstat12-device-last-human-units-quoted.txt"
    data = (FIX / name).read_bytes()
    assert recognise(data)[0] == "iostat"
    _, r = parse_bytes(data, None, ParseContext(host="n1", file=name))
    df = r.tables["disk_io"]
    assert df.height == 12 and r.lines == 31
    # the command line above (meta commands) and the closing code fence (skipped by the paste layer, counted)
    assert r.unparsed.height == 0 and [c["line_no"] for c in r.meta["commands"]] == [1]
    assert list(r.meta["skipped"].values()) == [1] and "code fence" in next(iter(r.meta["skipped"]))
    sda = df.filter(pl.col("device") == "sda").sort("line_no")
    assert sda["tps"].to_list() == [7.0, 5.0, 21.0, 5.0, 5.0, 1848.0]
    assert sda["kb_wrtn_s"].to_list()[-1] == pytest.approx(448.1 * 1024)  # "448.1M" in a kB column
    assert sda["kb_read_s"].to_list() == [0.0] * 6
    assert df["sample_no"].unique().sort().to_list() == list(range(6))


def test_human_sysstat11_device_name_on_its_own_line():
    r = parse_file("iostat--centos77-x-h-name-own-line-DERIVED.txt")
    plain = parse_file("iostat--centos77-x-old-columns.txt")
    assert r.unparsed.height == 0 and r.lines == 13
    cols = [c for c in plain.tables["disk_io"].columns if c not in ("line_no", "file")]
    assert r.tables["disk_io"].select(cols).equals(plain.tables["disk_io"].select(cols))
    assert r.tables["disk_io"]["line_no"].to_list() == [7, 9, 11]  # the row's first line: the name's


def test_human_sysstat11_long_file_takes_the_line_reader():
    one = (FIX / "iostat--centos77-x-h-name-own-line-DERIVED.txt").read_text()
    body = one.split("\n", 2)[2]  # without the banner: reports after it
    text = one + "\n" + "\n".join([body] * 200)
    assert len(text.splitlines()) >= iostat.FAST_MIN_LINES
    r = parse_text(text)
    assert r.unparsed.height == 0
    assert r.tables["disk_io"].height == 3 * 201 and r.tables["cpu_util"].height == 201
    assert r.tables["disk_io"].filter(pl.col("device") == "dm-0")["r_s"].unique().to_list() == [0.12]


def test_prompt_and_comment_lines_before_the_first_header():
    base = (FIX / "iostat--ubuntu2010-x-new-columns.txt").read_text()
    head = "[root@node3 ~]# # disk stats while the job stalls\n[root@node3 ~]# iostat -x 1 2\n"
    from forensics.sources import recognise

    assert recognise((head + base).encode())[0] == "iostat"
    r = parse_text(head + base)
    assert r.tables["disk_io"].height == 14 and r.tables["cpu_util"].height == 1
    # the command line is a fact (meta commands), the comment typed at a prompt skipped and counted
    assert r.unparsed.height == 0 and [c["line_no"] for c in r.meta["commands"]] == [2]
    assert r.meta["skipped"] == {iostat.COMMENT: 1}


GERRY = "iostat--gerry-zh-spaced-date-two-prompts-d-dx-ctrl-c.txt"


def test_two_prompts_spaced_zh_banner_dates_and_ctrl_c():
    # a real note: two `[root@host ~]# iostat ...` blocks, banner dates spaced out by CJK auto-spacing
    # ("2019 年 08 月 19 日"), the ^C that stopped the second; before, 5 lines unparsed (both prompts, both
    # banners, the ^C) and neither host nor date read
    r = parse_file(GERRY)
    assert r.unparsed.height == 0
    assert [c["line_no"] for c in r.meta["commands"]] == [1, 18]
    assert r.meta["commands"][1]["command"] == "[root@localhost ~]# iostat -dx 5"
    assert r.meta["hosts"] == ["gerry", "localhost.localdomain"]
    assert sum(r.meta["skipped"].values()) == 1  # the ^C
    d = r.tables["disk_io"]
    assert d.height == 19 and row(d, device="sdb", line_no=23)["w_s"] == 0.60
    assert row(d, device="sda", line_no=5)["kb_read"] == 51703735


def test_hash_lines_and_comments_above_a_report_are_skipped_and_counted():
    # the same paste as a note-taker keeps it: a line of #, a comment, then the prompt and report
    text = FIX.joinpath(GERRY).read_text()
    noted = "##########################\n# 查看磁盘 IO (每 2 秒一次)\n" + text
    r = parse_text(noted)
    assert r.unparsed.height == 0 and r.lines == 39
    assert [c["line_no"] for c in r.meta["commands"]] == [3, 20]
    assert r.meta["skipped"] == {iostat.COMMENT: 2, iostat.INTERRUPT: 1}
    assert r.tables["disk_io"].height == 19
    # a prompt that runs something else is the paste's shell: skipped and counted as such (it was unparsed);
    # what that command printed stays unparsed
    from forensics.sources._shell import OTHER_PROMPT
    r = parse_text("[root@gerry ~]# uptime\n 10:01:02 up 3 days,  load average: 0.10, 0.20, 0.30\n" + text)
    assert r.meta["skipped"][OTHER_PROMPT] == 1
    assert r.unparsed["text"].to_list() == [" 10:01:02 up 3 days,  load average: 0.10, 0.20, 0.30"]


def test_device_header_of_an_author_cut_column_subset_is_recognised():
    # a study note kept only -x's write side ("Device w/s wkB/s w_await wareq-sz aqu-sz %util"): nothing after
    # Device that the sniffer looked for (tps, r/s, rrqm/s), so no source recognised it; the parser read it already
    from forensics.sources import recognise

    data = (FIX / "iostat--zh-notes-x-y-fio-randwrite-column-subset-two-samples.txt").read_bytes()
    name, verdict = recognise(data)
    assert name == "iostat" and verdict.confidence >= 0.9
    res = iostat.parse(data, ParseContext())
    disk = res.tables["disk_io"]
    assert disk["device"].to_list() == ["vdb", "vdb"] and disk["util_pct"].to_list() == [76.10, 55.70]
    assert disk["w_await_ms"].to_list() == [1.77, 0.18] and res.unparsed.height == 0
    # every column must be iostat's, two at least: a Device line of other words, or of one column, is no header
    assert not iostat.sniff(b"Device            Model        Serial\nvdb  QEMU  1234\n")
    assert not iostat.sniff(b"Device   %util\nvdb 3.0\n")
    assert not sar.sniff(data)


def test_prose_between_rows_and_a_row_wrapped_by_a_narrow_terminal():
    # DERIVED from sysstat's own iostat -x test output: a note between two device rows, a label between the reports,
    # the last row of report 2 wrapped (its last values on the next line); both readers read it alike
    name = "iostat--sysstat-test-x-DERIVED-prose-between-rows-and-reports-row-wrapped.txt"
    data = (FIX / name).read_bytes()
    r = iostat.parse(data, ParseContext(host="n1", file=name))
    assert r.lines == 22 and r.tables["disk_io"].height == 4 and r.tables["cpu_util"].height == 2
    assert r.unparsed["line_no"].to_list() == [8, 12]
    assert set(r.unparsed["reason"]) == {"text among the device rows, not an iostat row (a label or prose line?)"}
    sdb = r.tables["disk_io"].filter(pl.col("device") == "sdb").sort("line_no")
    assert sdb["line_no"].to_list() == [9, 19] and sdb["r_await_ms"].to_list() == [60.92, 0.0]


def test_blanks_collapsed_and_capitalised_avg_cpu_header_read_as_the_original():
    # the jc CentOS 7.7 -x paste with every run of blanks one space and "%User %Nice ..." in the avg-cpu header
    # (DERIVED fixture): the same rows as the original, values and all
    got = parse_file("iostat--centos77-x-old-columns-DERIVED-blanks-collapsed-capitalised-avg-cpu.txt")
    want = parse_file("iostat--centos77-x-old-columns.txt")
    assert got.unparsed.height == 0
    for t in ("cpu_util", "disk_io"):
        assert got.tables[t].drop("file").equals(want.tables[t].drop("file")), t
    assert got.tables["cpu_util"]["nice_pct"].to_list() == [0.0] and got.tables["cpu_util"]["idle_pct"][0] == 99.70


def test_prompt_lines_of_other_commands_are_skipped_not_unparsed():
    # "iostat: not found", then the author's apt install at a user@host prompt, then iostat: the apt prompt line
    # is the paste's shell (skipped, counted; it was unparsed), apt's own output stays unparsed
    from forensics.sources import parse_bytes
    from forensics.sources._shell import OTHER_PROMPT
    name = "iostat--wsl2-not-found-apt-install-prompts-then-basic.txt"
    src, r = parse_bytes((FIX / name).read_bytes(), None, ParseContext(file=name))
    assert src == "iostat" and r.tables["disk_io"].height == 1 and r.tables["cpu_util"].height == 1
    assert r.meta["skipped"][OTHER_PROMPT] == 1
    assert "devansh@DESKTOP-J561SE4:~$ sudo apt install sysstat" not in r.unparsed["text"].to_list()
    assert "Reading package lists... Done" in r.unparsed["text"].to_list()
