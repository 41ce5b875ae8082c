"""sar / sadf: values that matter, times (AM/PM, locales, midnight, zones), sections and summaries."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from forensics.sources import ParseContext, iostat, sar

FIX = Path(__file__).parent / "fixtures" / "sar"
UTC = dt.timezone.utc
BANNER = "Linux 3.10.0-957.el7.x86_64 (gpu-node07) \t11/29/2026 \t_x86_64_\t(64 CPU)\n\n"
U_HDR = "{t}     CPU     %user     %nice   %system   %iowait    %steal     %idle\n"
U_ROW = "{t}     all      0.03      0.00      0.05      0.00      0.00     99.92\n"


def parse_file(name: str, **ctx):
    ctx.setdefault("host", "n1")
    return sar.parse((FIX / name).read_bytes(), ParseContext(file=name, **ctx))


def parse_text(text: str, **ctx):
    ctx.setdefault("host", "n1")
    return sar.parse(text.encode(), ParseContext(file="t", **ctx))


def row(df: pl.DataFrame, **where) -> dict:
    for k, v in where.items():
        df = df.filter(pl.col(k) == v)
    assert df.height == 1, (where, df.height)
    return df.row(0, named=True)


def test_u_with_average_and_prompt_line_12h_times():
    r = parse_file("sar--centos74-u-prompt-average-ampm.txt", tz="Asia/Shanghai")
    c = r.tables["cpu_util"]
    assert c["user_pct"].to_list() == [0.03, 0.10, 0.03] and c["idle_pct"].to_list() == [99.92, 99.82, 99.95]
    assert c["ts"].to_list() == [dt.datetime(2022, 3, 8, 2, 46, 48, tzinfo=UTC), dt.datetime(2022, 3, 8, 2, 46, 58, tzinfo=UTC),
                                 dt.datetime(2022, 3, 8, 2, 47, 8, tzinfo=UTC)]
    assert c["sample_no"].to_list() == [0, 1, 2] and not c["since_boot"].any()
    # the Average row summarises the three above: recognised, counted, not emitted
    assert r.meta["average_lines"] == 1 and c.height == 3
    assert r.unparsed.height == 0 and [c["line_no"] for c in r.meta["commands"]] == [1]  # the command line: a fact
    assert r.meta["hosts"] == ["ldap-server"]


def test_pm_times_and_net_dev_without_ifutil():
    r = parse_file("sar--centos76-n-DEV-ampm.txt", tz="UTC")
    eth0 = row(r.tables["sar_net_dev"], iface="eth0")
    assert (eth0["rxpck_s"], eth0["txpck_s"], eth0["rxkb_s"], eth0["txkb_s"]) == (11225.50, 11336.50, 1140.19, 1151.03)
    assert eth0["ifutil_pct"] is None and eth0["ts"] == dt.datetime(2020, 8, 11, 15, 59, 48, tzinfo=UTC)
    assert r.tables["sar_net_dev"]["iface"].to_list() == ["eth0", "veth1", "lo", "br-0", "docker0"]


def test_net_dev_average_block_skipped():
    r = parse_file("sar--centos79-n-DEV-average.txt")
    assert r.tables["sar_net_dev"].height == 4 and r.meta["average_lines"] == 5
    assert row(r.tables["sar_net_dev"], iface="lo")["rxpck_s"] == 9.71


def test_u_all_p_all_per_cpu_rows():
    r = parse_file("sar--centos79-u-ALL-P-ALL.txt")
    c = r.tables["cpu_util"]
    assert c["cpu"].to_list() == ["all", "0", "1"]
    one = row(c, cpu="1")
    assert (one["user_pct"], one["iowait_pct"], one["irq_pct"], one["gnice_pct"], one["idle_pct"]) == (1.0, 1.0, 0.0, 0.0, 98.0)
    assert r.meta["average_lines"] == 4  # the repeated "Average: CPU ..." header counts too


def test_r_old_columns_have_no_kbavail():
    m = row(parse_file("sar--centos79-r-old-columns.txt").tables["sar_memory"], line_no=5)
    assert (m["kbmemfree"], m["kbmemused"], m["memused_pct"], m["kbcached"], m["kbcommit"], m["commit_pct"]) == (
        90612, 923996, 91.07, 440512, 1514620, 48.66)
    assert m["kbavail"] is None and m["kbanonpg"] is None


def test_d_old_sectors_become_kilobytes_and_dev_names_kept():
    d = parse_file("sar--rhel7-d-old-dev-names-ampm.txt").tables["disk_io"]
    dev = row(d, device="dev8-0")
    assert (dev["tps"], dev["rkb_s"], dev["wkb_s"], dev["avgrq_sz_sectors"], dev["aqu_sz"]) == (6274.0, 200.0, 398336.0, 127.04, 142.20)
    assert (dev["await_ms"], dev["svctm_ms"], dev["util_pct"]) == (22.64, 0.16, 100.0)
    assert dev["areq_sz_kb"] is None and dev["since_boot"] is False
    assert row(d, device="dev253-3")["aqu_sz"] == 4285.03


def test_bdp_names_and_b_section_generic():
    r = parse_file("sar--centos7-bdp-names-ampm.txt")
    assert r.tables["disk_io"]["device"].to_list() == ["sda", "centos-root", "centos-swap"]
    g = r.tables["sar_generic"]
    assert dict(zip(g["metric"], g["value"])) == {"tps": 863.0, "rtps": 863.0, "wtps": 0.0, "bread/s": 47048.0, "bwrtn/s": 0.0}
    assert g["section"].unique().to_list() == ["tps rtps wtps bread/s bwrtn/s"] and g["item"].null_count() == 5


def test_sa2_all_sections_restart_and_new_columns():
    r = parse_file("sar--sysstat-sa2-A-restart.txt", host=None, tz="UTC")
    assert r.unparsed.height == 0 and r.meta["average_lines"] == 47
    assert r.meta["restarts"] == ["2019-04-18T13:20:09"]
    g = r.tables["sar_generic"]
    restart = row(g, section="LINUX RESTART")
    assert restart["value"] == 9 and restart["ts"] == dt.datetime(2019, 4, 18, 13, 20, 9, tzinfo=UTC)
    assert restart["host"] == "SYSSTAT.TEST"
    m = r.tables["sar_memory"].row(0, named=True)
    assert (m["kbmemfree"], m["kbavail"], m["kbshmem"], m["kbanonpg"], m["kbslab"], m["kbvmused"], m["commit_pct"]) == (
        1437740, 4389516, 87980, 2733164, 445740, 0, 120.77)
    q = r.tables["sar_queue"].row(0, named=True)
    assert (q["runq_sz"], q["plist_sz"], q["ldavg_1"], q["ldavg_15"], q["blocked"]) == (3, 956, 3.16, 3.43, 0)
    assert row(r.tables["sar_net_dev"], iface="enp6s0")["ifutil_pct"] == 0.05
    assert row(r.tables["sar_net_edev"], iface="wlp5s0")["rxdrop_s"] == 9.60
    assert r.tables["cpu_util"]["cpu"].to_list() == ["all", "0", "1", "2", "3", "4", "5", "7"]  # CPU 6 offline
    # sections without a table of their own: nothing lost
    assert row(g, section="proc/s cswch/s", metric="cswch/s")["value"] == 46287.74
    assert row(g, section="TTY rcvin/s xmtin/s framerr/s prtyerr/s brk/s ovrun/s", item="1", metric="ovrun/s")["value"] == 0
    assert g.filter(pl.col("section").str.starts_with("CPU total/s"))["item"].unique().len() == 8
    # every row of the one interval shares its sample number
    assert set(r.tables["cpu_util"]["sample_no"]) == {1} and restart["sample_no"] == 0


def test_zh_locale_times_and_dates():
    r = parse_file("sar--centos6-zh-locale-v-d.txt", tz="Asia/Shanghai")
    g = r.tables["sar_generic"]
    assert row(g, metric="inode-nr", line_no=6)["value"] == 14541
    assert g["ts"].min() == dt.datetime(2017, 1, 12, 6, 28, 1, tzinfo=UTC)
    d = r.tables["disk_io"]
    assert row(d, device="dev8-0", line_no=20)["wkb_s"] == 16.0 and d["ts"].max() == dt.datetime(2017, 1, 12, 6, 33, 14, tzinfo=UTC)
    # the two command lines are facts; the bare prompt between them stays unparsed
    assert r.meta["average_lines"] == 1 and r.unparsed["line_no"].to_list() == [9]
    assert [c["line_no"] for c in r.meta["commands"]] == [1, 10]


def test_zh_locale_12_hour_times_xiawu():
    # the same real zh_CN paste with its times in the 12-hour form of that locale ("下午 02时28分00秒": %r there)
    r = parse_file("sar--centos6-zh-DERIVED-ampm-xiawu-v-d.txt", tz="Asia/Shanghai")
    ref = parse_file("sar--centos6-zh-locale-v-d.txt", tz="Asia/Shanghai")
    assert r.meta["locale_times"] == "zh_CN"
    for t in ("sar_generic", "disk_io"):
        assert r.tables[t].drop("file").equals(ref.tables[t].drop("file")), t
    assert r.unparsed["line_no"].to_list() == [9] and r.meta["average_lines"] == 1
    assert r.tables["sar_generic"]["ts"].min() == dt.datetime(2017, 1, 12, 6, 28, 1, tzinfo=UTC)
    # 上午 (AM) and 12 o'clock: 上午 12时 is just past midnight, 下午 12时 noon
    am = parse_text("Linux 3.10.0 (h) \t2017年01月12日 \t_x86_64_\t(8 CPU)\n\n"
                    "上午 11时59分59秒  runq-sz  plist-sz   ldavg-1   ldavg-5  ldavg-15   blocked\n"
                    "下午 12时00分00秒        1       300      0.10      0.20      0.30         0\n"
                    "下午 12时00分01秒        1       300      0.10      0.20      0.30         0\n", tz="UTC")
    assert am.unparsed.height == 0
    assert sorted(set(am.tables["sar_queue"]["ts"].to_list())) == [dt.datetime(2017, 1, 12, 12, 0, 0, tzinfo=UTC),
                                                                  dt.datetime(2017, 1, 12, 12, 0, 1, tzinfo=UTC)]
    # unparsed lines keep the file's text
    bad = parse_text("Linux 3.10.0 (h) \t2017年01月12日 \t_x86_64_\t(8 CPU)\n\n下午 02时28分00秒 dentunusd   file-nr\n"
                     "下午 02时28分01秒 1\n", tz="UTC")
    assert bad.unparsed["text"].to_list() == ["下午 02时28分01秒 1"]


def test_zh_spaced_time_units_and_banner_date():
    # the Netkiller book as OpenDocCN keeps it: zh_CN times and banner dates with a blank around each unit
    # ("15 时 30 分 13 秒", "2017 年 03 月 08 日"); before, not recognised (0.3, banner dates unread) and every
    # timed line unparsed
    from forensics.sources import recognise
    f = FIX / "sar--netkiller-zh-spaced-units-n-DEV-EDEV-SOCK.txt"
    name, sn = recognise(f.read_bytes()[:65536])
    assert name == "sar" and sn.confidence >= 0.9
    r = parse_file(f.name, tz="Asia/Shanghai")
    assert r.unparsed.height == 0 and r.meta["locale_times"] == "zh_CN"
    d = r.tables["sar_net_dev"]
    assert d.height == 4 and row(d, iface="eth0")["rxpck_s"] == 3.03
    assert d["ts"].unique().to_list() == [dt.datetime(2017, 3, 8, 7, 30, 13, tzinfo=UTC)]
    assert r.tables["sar_net_edev"].height == 4
    g = r.tables["sar_generic"]
    assert row(g, metric="tcp-tw")["value"] == 67 and g["ts"].max() == dt.datetime(2017, 3, 8, 7, 33, 30, tzinfo=UTC)
    assert [c["line_no"] for c in r.meta["commands"]] == [1, 15, 29] and r.meta["average_lines"] == 11


def test_zh_spaced_and_unspaced_units_read_alike():
    from forensics.sources._sysstat.dates import zh_spaced_times
    spaced = FIX.joinpath("sar--netkiller-zh-spaced-units-n-DEV-EDEV-SOCK.txt").read_bytes()
    squeezed = spaced.replace(" 时 ".encode(), "时".encode()).replace(" 分 ".encode(), "分".encode()) \
        .replace(" 秒".encode(), "秒".encode()).replace(" 年 ".encode(), "年".encode()) \
        .replace(" 月 ".encode(), "月".encode()).replace(" 日".encode(), "日".encode())
    a = sar.parse(spaced, ParseContext(host="h", file="f", tz="UTC"))
    b = sar.parse(squeezed, ParseContext(host="h", file="f", tz="UTC"))
    for t in ("sar_net_dev", "sar_net_edev", "sar_generic"):
        assert a.tables[t].equals(b.tables[t]), t
    assert zh_spaced_times("3 时 5 分 1 秒\n".encode()) is None  # sysstat prints two digits


def test_timed_headers_with_average_rows_only_2_4_era():
    # LKML 2001, "VM test on 2.4.16 (SMP)": sysstat 4's whole-run report mailed as its summaries (each section a
    # titled timed header and its Average: lines, no interval row). Before: 0 rows, the Average: lines skipped
    f = FIX / "sar--lkml-2001-2.4.16-smp-vm-test-A-averages-only-titled-wrapped.txt"
    r = parse_file(f.name)
    assert r.meta["averages_only"] is True and r.meta["variant"] == "text-averages-only"
    cpu = r.tables["cpu_util"]
    assert cpu["cpu"].to_list() == ["all", "0", "1"] and row(cpu, cpu="all")["system_pct"] == 64.94
    assert cpu["ts"].null_count() == 3 and set(cpu["sample_no"]) == {0}  # a mean over the run: no time
    assert row(r.tables["disk_io"], device="dev8-0")["tps"] == 125.66
    assert row(r.tables["sar_queue"], line_no=45)["ldavg_1"] == 37.65
    assert row(r.tables["sar_memory"], line_no=51)["kbmemfree"] == 173006
    assert row(r.tables["sar_generic"], metric="cswch/s")["value"] == 20611.94
    # the tails the mail wrapped are joined back (below); the titles and their ~~~ rules are skipped (below)
    assert r.unparsed.height == 0 and r.meta["wrapped_joined"] == 8
    assert row(r.tables["sar_net_dev"], iface="eth0")["rxmcst_s"] == 0.0


def test_author_headings_over_sections_are_skipped_and_counted():
    # the same LKML 2001 mail: each section under the author's title and a ~~~ rule of about its width (15 pairs);
    # before, all 30 lines were unparsed beside the 8 wrapped tails (38 of 81)
    from forensics.sources.sar import HEADING

    f = FIX / "sar--lkml-2001-2.4.16-smp-vm-test-A-averages-only-titled-wrapped.txt"
    r = parse_file(f.name)
    assert r.meta["skipped"][HEADING] == 30 and r.unparsed.height == 0
    # a rule with no title above it, or far off its title's width, is no heading: it stays unparsed
    text = ("16:36:46     pswpin/s pswpout/s\nAverage:         2.37    986.87\n~~~~~~~~~~\n\n"
            "swapping  statistics.\n~~~~~~\n")
    r = parse_text(text)
    assert r.unparsed["line_no"].to_list() == [3, 5, 6] and HEADING not in r.meta.get("skipped", {})


def test_average_rows_are_not_read_where_a_section_has_interval_rows():
    # the table contract marks an average by the whole file (meta averages_only; no per-row column): a file
    # with interval rows keeps its Average: lines as summaries, not rows
    text = ("10:00:01 AM CPU %user %nice %system %iowait %steal %idle\n"
            "10:00:02 AM all 1.00 0.00 1.00 0.00 0.00 98.00\n"
            "Average: all 1.00 0.00 1.00 0.00 0.00 98.00\n"
            "10:00:01 AM runq-sz plist-sz ldavg-1 ldavg-5 ldavg-15\n"
            "Average: 1 200 0.10 0.20 0.30\n")
    r = parse_text(text)
    assert r.tables["cpu_util"].height == 1 and r.tables["sar_queue"].height == 0
    assert "averages_only" not in r.meta and r.meta["average_lines"] == 2


_NET = ("Linux 3.10.0 (h1) \t03/08/2017 \t_x86_64_\t(2 CPU)\n\n"
        "10:00:01 AM     IFACE   rxpck/s   txpck/s    rxkB/s    txkB/s   rxcmp/s   txcmp/s  rxmcst/s\n")
_ROW = "10:00:02 AM      eth0      3.03      1.01      0.18      0.16      0.00      0.00      0.00\n"


@pytest.mark.parametrize("repeat", [1, sar.FAST_MIN_LINES])  # the line loop and the vectorised reader
def test_a_timed_line_without_numbers_is_a_header_only_when_it_names_columns(repeat):
    # before, any timed line without a number opened a section: "eth0 nan nan ..." became a header and the
    # rows after it generic rows of that bogus section (a silent wrong table), "eth0 N/A ..." another
    text = (_NET + _ROW * repeat + "10:00:03 AM      eth0      nan      nan      nan      nan      nan      nan      nan\n"
            + _ROW + "10:00:05 AM      eth0      N/A       N/A       N/A       N/A       N/A       N/A       N/A\n"
            + "10:00:06 AM      all is quiet\n")
    r = parse_text(text)
    n = repeat + 2
    assert r.tables["sar_net_dev"].height == n and r.tables["sar_generic"].height == 0
    assert r.tables["sar_net_dev"].sort("line_no")["rxpck_s"].to_list()[-2:] == [3.03, None]  # N/A: a row of nulls
    assert dict(r.unparsed.select("line_no", "reason").rows()) == {
        repeat + 4: "not a number: 'nan' in column rxpck/s",
        repeat + 7: "3 values for 8 columns of section 'IFACE rxpck/s txpck/s rxkB/s txkB/s rxcmp/s txcmp/s rxmcst/s'"}
    # every sar header form is still one
    from forensics.sources.sar.sections import is_section_header
    for hdr in ("dentunusd file-nr inode-nr pty-nr", "totsck tcpsck udpsck rawsck ip-frag tcp-tw", "tps rtps wtps bread/s",
                "proc/s cswch/s", "kbhugfree kbhugused %hugused", "FAN rpm drpm DEVICE", "BUS idvendor idprod maxpower",
                "MBfsfree MBfsused %fsused %ufsused Ifree Iused %Iused FILESYSTEM", "CPU wghMHz", "LINUX RESTART"):
        assert is_section_header(hdr.split()), hdr


def test_midnight_rollover():
    text = BANNER + U_HDR.format(t="11:59:58 PM") + U_ROW.format(t="11:59:59 PM") + U_ROW.format(t="12:00:00 AM") \
        + U_ROW.format(t="12:00:01 AM")
    c = parse_text(text, tz="UTC").tables["cpu_util"]
    assert c["ts"].to_list() == [dt.datetime(2026, 11, 29, 23, 59, 59, tzinfo=UTC), dt.datetime(2026, 11, 30, 0, 0, 0, tzinfo=UTC),
                                 dt.datetime(2026, 11, 30, 0, 0, 1, tzinfo=UTC)]
    assert c["sample_no"].to_list() == [0, 1, 2]


def test_daily_file_sections_restart_their_clock_without_a_new_day():
    q_hdr = "00:00:01      runq-sz  plist-sz   ldavg-1   ldavg-5  ldavg-15   blocked\n"
    q_row = "{t}            3       956      3.16      3.24      3.43         0\n"
    text = (BANNER + U_HDR.format(t="00:00:01") + U_ROW.format(t="00:10:01") + U_ROW.format(t="23:50:01") + "\n"
            + q_hdr + q_row.format(t="00:10:01") + q_row.format(t="23:50:01"))
    r = parse_text(text, tz="UTC")
    assert r.tables["cpu_util"]["ts"].to_list() == r.tables["sar_queue"]["ts"].to_list() == [
        dt.datetime(2026, 11, 29, 0, 10, 1, tzinfo=UTC), dt.datetime(2026, 11, 29, 23, 50, 1, tzinfo=UTC)]
    assert r.tables["sar_queue"]["sample_no"].to_list() == r.tables["cpu_util"]["sample_no"].to_list() == [0, 1]


def test_dst_fall_back_is_not_a_new_day():
    text = ("Linux 5.15.0 (n) \t10/25/2026 \t_x86_64_\t(8 CPU)\n\n" + U_HDR.format(t="02:50:00") + U_ROW.format(t="02:59:00")
            + U_ROW.format(t="02:01:00"))
    c = parse_text(text, tz="Europe/Berlin").tables["cpu_util"]
    assert [t.date() for t in c["ts"]] == [dt.date(2026, 10, 25)] * 2


def test_tz_conversion_and_date_from_capture_time_without_banner():
    text = U_HDR.format(t="10:15:01") + U_ROW.format(t="10:15:02")
    r = parse_text(text, tz="Europe/Berlin", capture_time=dt.datetime(2026, 11, 30, 9, 0, tzinfo=UTC))
    c = r.tables["cpu_util"]
    assert c["ts"].to_list() == [dt.datetime(2026, 11, 30, 9, 15, 2, tzinfo=UTC)] and c["ts_quality"].to_list() == ["local"]
    assert r.meta["date_source"] == "capture_time"
    c = parse_text(text).tables["cpu_util"]  # no date anywhere: order only
    assert c["ts"].to_list() == [None] and c["ts_quality"].to_list() == ["none"] and c["sample_no"].to_list() == [0]


def test_bad_value_rows_are_unparsed_the_rest_kept():
    text = BANNER + U_HDR.format(t="10:00:00 AM") + U_ROW.format(t="10:00:01 AM") \
        + U_ROW.format(t="10:00:02 AM").replace("0.05", "0.0x") + "10:00:03 AM     all      0.03\n" \
        + "10:00:04 AM     all      0.03      0.00      0.05      0.00      0.00     9.9M\n"
    r = parse_text(text)
    assert r.tables["cpu_util"].height == 1
    reasons = r.unparsed["reason"].to_list()
    assert r.unparsed["line_no"].to_list() == [5, 6, 7]
    assert "not a number" in reasons[0] and "2 values for 7 columns" in reasons[1] and "human-readable" in reasons[2]


def test_sadf_d_sections():
    r = parse_file("sar--sysstat-sadf-d-sections.txt", host=None)
    assert r.unparsed.height == 0 and r.meta["hosts"] == ["SYSSTAT.TEST"] and r.meta["interval_s"] == 31
    c = r.tables["cpu_util"]
    first = c.row(0, named=True)
    assert (first["cpu"], first["user_pct"], first["nice_pct"], first["idle_pct"], first["ts_quality"]) == ("all", 2.15, 12.50, 82.88, "exact")
    assert first["ts"] == dt.datetime(2019, 4, 18, 13, 20, 19, tzinfo=UTC) and first["host"] == "SYSSTAT.TEST"
    assert row(c, cpu="3", line_no=6)["nice_pct"] == 99.55
    assert row(r.tables["disk_io"], device="sda", line_no=44)["rkb_s"] == 41499.97
    assert row(r.tables["disk_io"], device="sdq")["areq_sz_kb"] == 2.48
    g = r.tables["sar_generic"]
    intr = g.filter(pl.col("line_no") == 25)
    assert intr["item"].unique().to_list() == ["sum"] and intr["metric"].to_list() == ["all"] + [f"CPU{i}" for i in range(8)]
    assert intr["value"].to_list()[:2] == [31915.30, 5759.67]
    bat = g.filter(pl.col("line_no") == 60)
    assert bat["item"].unique().to_list() == ["1 status=Unknown"] and dict(zip(bat["metric"], bat["value"])) == {"%cap": 83.0, "cap/min": -3.85}
    assert row(g, item="/dev/sda7", metric="Ifree")["value"] == 19051710
    # distinct timestamps numbered in time order, shared across sections
    assert sorted(set(r.tables["sar_queue"]["sample_no"])) == [0, 1, 2, 3]


def test_sadf_d_restart_and_local_times():
    text = ("# hostname;interval;timestamp;CPU;%user;%nice;%system;%iowait;%steal;%idle\n"
            "node07;-1;2026-11-30 10:00:00 UTC;LINUX-RESTART\t(64 CPU)\n"
            "node07;600;2026-11-30 10:10:01;-1;5.00;0.00;2.00;30.00;0.00;63.00\n")
    r = parse_text(text, host="node07", tz="America/New_York")
    g = row(r.tables["sar_generic"], section="LINUX RESTART")
    assert g["value"] == 64 and g["ts"] == dt.datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
    c = r.tables["cpu_util"].row(0, named=True)
    assert (c["iowait_pct"], c["ts_quality"], c["ts"]) == (30.0, "local", dt.datetime(2026, 11, 30, 15, 10, 1, tzinfo=UTC))


def test_sadf_j_record():
    r = parse_file("sar--sysstat-sadf-j-first-record.json", host=None)
    assert r.unparsed.height == 0 and r.meta["hosts"] == ["SYSSTAT.TEST"] and r.meta["comments"] == ["Testing sysstat!"]
    t0 = dt.datetime(2019, 4, 18, 13, 20, 19, tzinfo=UTC)
    c = r.tables["cpu_util"]
    assert c["cpu"].to_list() == ["all", "0", "1"] and c["ts"].to_list() == [t0] * 3 and (c["ts_quality"] == "exact").all()
    assert row(c, cpu="all")["system_pct"] == 1.84 and row(c, cpu="all")["line_no"] == 16
    m = r.tables["sar_memory"].row(0, named=True)
    assert (m["kbmemfree"], m["kbavail"], m["kbshmem"], m["commit_pct"]) == (1437740, 4389516, 87980, 48.54)
    d = row(r.tables["disk_io"], device="sdr")
    assert (d["rkb_s"], d["wkb_s"], d["areq_sz_kb"], d["avgrq_sz_sectors"], d["util_pct"]) == (4.81, 16.04, 4.33, 8.67, 6.42)
    assert row(r.tables["sar_net_edev"], iface="virbr0")["coll_s"] == 0.64
    g = r.tables["sar_generic"]
    assert row(g, section="memory", metric="swpfree")["value"] == 16777212
    assert row(g, section="io", metric="io-reads.rtps")["value"] == 12.83
    assert row(g, section="serial", item="1", metric="ovrun")["value"] == 0
    assert row(g, section="power-management.cpu-frequency", item="all")["value"] == 3522.54
    restarts = g.filter(pl.col("section") == "LINUX RESTART")
    assert restarts["value"].to_list() == [9.0, 10.0]
    assert restarts["ts"].to_list() == [dt.datetime(2019, 4, 18, 13, 37, 29, tzinfo=UTC), dt.datetime(2019, 4, 18, 13, 54, 9, tzinfo=UTC)]


def test_sadf_j_truncated_keeps_complete_lines():
    data = (FIX / "sar--sysstat-sadf-j-first-record.json").read_bytes()
    cut = data[: data.index(b'"memory"') + 30]
    r = sar.parse(cut, ParseContext(host="n1", file="cut"))
    assert r.tables["cpu_util"].height == 3 and r.tables["sar_memory"].height == 0
    assert r.unparsed.height == 1 and r.unparsed["line_no"][0] == 24


def test_sniffers_recognise_every_variant_and_not_iostat():
    from forensics.sources import sniff_pasted

    for f in sorted(FIX.glob("sar--*")):
        if f.name.endswith((".expected.json", ".ctx.json")):
            continue
        # (as the paste layer reads it: a fixture behind a list mark is sniffed without it)
        assert sniff_pasted("sar", f.read_bytes()), f.name
    for f in sorted((FIX.parent / "iostat").glob("iostat--*")):
        if not f.name.endswith(".expected.json"):
            assert not sar.sniff(f.read_bytes()), f.name
    assert not sar.sniff(b"[Mon Nov 30 10:15:02 2026] mlx5_core 0000:18:00.0: link down\n")
    assert not iostat.sniff((FIX / "sar--sysstat-sadf-d-sections.txt").read_bytes())


@pytest.mark.parametrize("text", ["", "\n\n", "Average:        all      0.05\n", "10:00:00 AM\n", "# hostname;interval;timestamp;CPU\n;;;\n"])
def test_degenerate_inputs(text):
    r = parse_text(text)
    assert r.lines == len(text.splitlines()) and all(df.height == 0 for df in r.tables.values())


def test_sniff_states_confidence_sar_iostat_apart():
    from fixture_cases import FIXTURES

    sar_text = (FIXTURES / "sar" / "sar--centos79-u-ALL-P-ALL.txt").read_bytes()
    io_text = next(iter(sorted((FIXTURES / "iostat").glob("iostat--*.txt")))).read_bytes()
    assert sar.sniff(sar_text).confidence == 0.95 and not iostat.sniff(sar_text)
    assert iostat.sniff(sar_text).confidence == 0.3  # the sysstat banner alone: not enough
    assert iostat.sniff(io_text).confidence == 0.95 and not sar.sniff(io_text)
    assert sar.sniff(b"hello\n").confidence == 0.0
    assert "sar section header" in sar.sniff(b"hello\n").reason


# sysstat's own test expectation of `sar -A` (tests/expected.sar-A): one section of every report
_REPORT_FIRST_METRIC = {  # report option -> the first column of its section header
    "-n TCP": "active/s", "-n ETCP": "atmptf/s", "-n SOCK": "totsck", "-n IP": "irec/s", "-n EIP": "ihdrerr/s",
    "-n ICMP": "imsg/s", "-n EICMP": "ierr/s", "-n UDP": "idgm/s", "-n SOFT": "total/s", "-n NFS": "call/s",
    "-n NFSD": "scall/s", "-n SOCK6": "tcp6sck", "-n IP6": "irec6/s", "-n UDP6": "idgm6/s", "-b": "tps",
    "-w": "proc/s", "-W": "pswpin/s", "-y": "rcvin/s", "-H": "kbhugfree", "-I": "all", "-m CPU": "MHz",
    "-m FREQ": "wghMHz", "-S": "kbswpfree", "-v": "dentunusd", "-B": "pgpgin/s", "-q CPU": "%scpu-10"}


def test_every_report_of_sar_A_lands_in_a_table_with_numbers():
    from fixture_cases import FIXTURES

    data = (FIXTURES / "sar" / "sar--sysstat-sar-A-every-n-report-ipv6-softnet-freq.txt").read_bytes()
    res = sar.parse(data, ParseContext(host="t", tz="UTC"))
    assert res.lines == 547 and res.unparsed.height == 0
    gen = res.tables["sar_generic"]
    assert gen.schema["value"] == pl.Float64 and gen["value"].null_count() == 0
    metrics = set(gen["metric"].to_list())
    missing = {opt: m for opt, m in _REPORT_FIRST_METRIC.items() if m not in metrics}
    assert not missing
    # -n TCP at 12:53:21: four zeros; -m CPU: 3522.54 MHz; -y: TTY 0 and 1 as items; -d: disk_io
    tcp = gen.filter(pl.col("section").str.starts_with("active/s")).head(4)
    assert tcp.select("metric", "value").rows() == [("active/s", 0.0), ("passive/s", 0.0), ("iseg/s", 0.0),
                                                     ("oseg/s", 0.0)]
    assert tcp["ts"][0].isoformat() == "2020-06-01T12:53:21+00:00"  # banner 06/01/20: two-digit year
    mhz = gen.filter(pl.col("metric") == "MHz").row(0, named=True)
    assert (mhz["item"], mhz["value"]) == ("all", 3522.54)
    assert set(gen.filter(pl.col("metric") == "rcvin/s")["item"].to_list()) >= {"0", "1"}
    assert res.tables["disk_io"].height == 10 and res.tables["sar_net_dev"].height == 12


def test_minimum_maximum_last_rows_are_summaries_and_psi_alone_is_recognised():
    from fixture_cases import FIXTURES

    res = sar.parse((FIXTURES / "sar" / "sar--sysstat-sar-minimum-maximum-rows.txt").read_bytes(), ParseContext())
    assert res.unparsed.height == 0 and res.meta["average_lines"] == 44
    psi = (FIXTURES / "sar" / "sar--sysstat-sar-q-IO-psi-only.txt").read_bytes()
    assert sar.sniff(psi).confidence == 0.95
    got = sar.parse(psi, ParseContext()).tables["sar_generic"]
    assert got.select("metric", "value").row(0) == ("%sio-10", 0.45)


def test_human_values_of_kb_and_percent_columns_are_converted():
    """sar -h (--human): sysstat prints kB columns with a unit (common.c cprintf_unit: "sBkMGTP", one step per
    1024) and % columns with "%"; both are read as numbers (kB, percent); MB columns of -F stay unparsed."""
    from fixture_cases import FIXTURES

    res = sar.parse((FIXTURES / "sar" / "sar--sysstat-sar-human-h-units.txt").read_bytes(), ParseContext(tz="UTC"))
    cpu = res.tables["cpu_util"].filter(pl.col("cpu") == "all").row(0, named=True)
    assert (cpu["user_pct"], cpu["nice_pct"], cpu["idle_pct"]) == (2.1, 12.5, 82.9)
    mem = res.tables["sar_memory"].row(0, named=True)  # 1.4G 4.2G 3.6G 46.1% ... kbdirty 396.0k
    assert mem["kbmemfree"] == pytest.approx(1.4 * 1024 ** 2) and mem["kbavail"] == pytest.approx(4.2 * 1024 ** 2)
    assert mem["memused_pct"] == 46.1
    assert res.tables["sar_net_dev"].filter(pl.col("iface") == "lo")["rxkb_s"].to_list()[0] == 0.0  # "0.0B"
    why = set(res.unparsed["reason"].to_list())
    assert res.unparsed.height == 24 and all("MBfs" in w and "converted in kB columns only" in w for w in why)


def test_ambiguous_date_of_a_decimal_comma_locale_is_day_first_and_said_assumed():
    # Ubuntu forums, 2008-07-10: sar -u in an Italian locale ("1,95", "Media:"), banner 10/07/2008
    from forensics.sources import get

    data = (Path(__file__).parent / "fixtures" / "sar" / "sar--ubuntuforums-it-locale-decimal-comma-media-ddmmyyyy.txt").read_bytes()
    res = get("sar").parse(data, ParseContext(host="h"))
    assert (res.meta["date_order"], res.meta["date_order_assumed"]) == ("dmy", True)
    cpu = res.tables["cpu_util"]
    assert res.unparsed.height == 0 and cpu.height == 5
    assert cpu["ts"][0] == dt.datetime(2008, 7, 10, 11, 32, 11, tzinfo=dt.timezone.utc)
    assert cpu["user_pct"][0] == 1.95 and cpu["iowait_pct"][0] == 78.10
    # the same lines with decimal points (C locale): month first, as before
    c = get("sar").parse(data.replace(b",", b"."), ParseContext(host="h"))
    assert c.meta["date_order"] == "mdy" and c.tables["cpu_util"]["ts"][0].month == 10


def test_a_paste_of_average_lines_only_is_read_as_untimed_rows():
    # `sar -n DEV ... | grep Average` as a Java test holds it (a real capture, 54 docker/veth interfaces):
    # no timed line at all, so the Average: lines are the data, recognised by their header
    name = "sar--java-test-n-DEV-average-lines-only-docker-veth.txt"
    data = (FIX / name).read_bytes()
    assert sar.sniff(data[:65536])
    r = parse_file(name)
    d = r.tables["sar_net_dev"]
    assert (r.lines, r.unparsed.height, d.height) == (55, 0, 54)
    assert r.meta["averages_only"] is True and r.meta["variant"] == "text-averages-only"
    e = row(d, iface="enp2s0")
    assert (e["rxpck_s"], e["txpck_s"], e["rxkb_s"], e["txkb_s"], e["ifutil_pct"]) == (19.6, 25.4, 1.61, 10.98, 0.09)
    assert d["ts"].null_count() == d.height and set(d["ts_quality"]) == {"none"} and set(d["sample_no"]) == {0}
    # with interval rows present the Average: lines stay summaries, as before
    timed = parse_file("sar--centos79-n-DEV-average.txt")
    assert "averages_only" not in timed.meta and timed.meta["average_lines"] > 0
    # a summary row before any Average: header is unparsed, not guessed
    bad = parse_text("Average:         eth0      0.97      0.97      0.06      0.09      0.00      0.00      0.00\n")
    assert bad.unparsed["reason"].to_list() == ["sar summary row before any column header"]


def test_ko_kr_times_dates_and_average_label(tmp_path):
    # a real `sar -q 1 1` run three times under ko_KR (Surface Pro 7, Ubuntu, sysstat 12): times are
    # strftime %X of glibc's ko_KR, "%H시 %M분 %S초" (three words), the banner date its %x "%Y년 %m월 %d일",
    # the average label 평균값:. Before: not recognised, and 0 rows with --source sar.
    from forensics.ingest.files import parse_file

    f = FIX / "sar--ko-kr-q-1-1-three-runs-surface-indented.txt"
    summary, tables = parse_file(f, tz="Asia/Seoul")
    assert summary["source"] == "sar" and summary["indented"] == "    "
    q = tables["sar_queue"].sort("line_no")
    assert q["line_no"].to_list() == [5, 13, 21]
    assert q["runq_sz"].to_list() == [0, 1, 2] and q["plist_sz"].to_list() == [861, 851, 852]
    assert q["ts"].to_list()[0] == dt.datetime(2021, 9, 9, 17, 21, 58, tzinfo=dt.timezone.utc)  # 02:21:58 KST
    res = sar.parse(f.read_bytes(), ParseContext(tz="Asia/Seoul"))
    assert res.meta["locale_times"] == "ko_KR" and res.meta["average_lines"] == 3
    assert res.meta["hosts"] == ["ubun2-Surface-Pro-7"] and res.meta["date_source"] == "banner"
    # the lines left are the shell's job-control notices, with the text the file has; the prompt lines of the
    # other command (taskset) are skipped and counted
    from forensics.sources._shell import OTHER_PROMPT
    left = res.unparsed["text"].to_list()
    assert len(left) == 4 and all(t.lstrip()[:1] == "[" for t in left)
    assert res.meta["skipped"][OTHER_PROMPT] == 3
    assert [c["command"] for c in res.meta["commands"]] == ["$ sar -q 1 1"] * 3  # the sar command lines: facts


def test_ko_kr_words_elsewhere_are_left_alone():
    from forensics.sources._sysstat.dates import ko_kr_times

    assert ko_kr_times("1초 뒤에 다시\n".encode()) is None
    assert ko_kr_times(b"10:00:01 AM CPU %user\n") is None


def test_a_paste_of_n_tcp_etcp_alone_is_recognised_and_read():
    # an Azure AKS doc's `sar -n TCP,ETCP` (command line, banner with a two-digit year, Average blocks):
    # before, no header of the sniffer's list was in it and the file was refused
    from forensics.sources import recognise

    data = (FIX / "sar--aks-doc-n-TCP-ETCP-two-digit-year-average.txt").read_bytes()
    name, got = recognise(data)
    assert name == "sar" and got.confidence == 0.95
    res = sar.parse(data, ParseContext(tz="UTC"))
    gen = res.tables["sar_generic"]
    assert gen.filter(pl.col("metric") == "iseg/s")["value"].to_list() == [19.0]
    assert gen.filter(pl.col("metric") == "retrans/s")["value"].to_list() == [0.0]
    assert gen["ts"][0].isoformat() == "2020-02-10T22:50:09+00:00"
    assert gen["host"][0] == "aks-main-10212767-vmss000001"
    assert res.unparsed.height == 0 and [c["line_no"] for c in res.meta["commands"]] == [1]  # the command line


def test_each_report_of_sar_A_pasted_alone_is_recognised():
    # every section of sysstat's sar -A expectation, cut out with the banner and pasted on its own
    lines = (FIX / "sar--sysstat-sar-A-every-n-report-ipv6-softnet-freq.txt").read_text().splitlines()
    banner = next(ln for ln in lines if ln.startswith("Linux "))
    blocks, cur = [], []
    for ln in lines[1:]:
        if not ln.strip():
            if cur:
                blocks.append(cur)
            cur = []
        else:
            cur.append(ln)
    blocks.append(cur)
    refused = [b[0] for b in blocks if len(b) > 1 and not sar.sniff(("\n".join([banner, ""] + b) + "\n").encode())]
    assert len(blocks) > 30 and not refused


def test_a_line_that_names_sar_in_prose_is_no_command():
    data = (FIX / "sar--centos74-u-prompt-average-ampm.txt").read_bytes()
    res = sar.parse(b"sar is what I ran, output below\n" + data, ParseContext(tz="UTC"))
    assert res.unparsed["line_no"].to_list() == [1] and [c["line_no"] for c in res.meta["commands"]] == [2]


# --- the paste author's "# ..." notes around and inside a report ----------------------------------

def test_hash_comment_lines_are_skipped_and_counted_not_unparsed():
    # a study guide's code block: "# Step 5: ...", the command, "# Output:", then the Average lines
    from forensics.sources import parse_bytes
    data = (FIX / "sar--sre-guide-u-averages-hash-output-comments.txt").read_bytes()
    name, res = parse_bytes(data, None, ParseContext(host="h"))
    assert name == "sar" and res.unparsed.height == 0
    assert res.meta["skipped"] == {"comment line (# ...) added to the paste, not sar output": 2}
    assert res.meta["commands"] == [{"line_no": 2, "command": "sar -u 1 5"}]
    assert res.tables["cpu_util"]["user_pct"].to_list() == [90.25]


def test_comments_inside_a_report_and_after_values():
    # CONSTRUCTED: the real centos74 `sar -u` fixture with notes written into it as people do
    lines = (FIX / "sar--centos74-u-prompt-average-ampm.txt").read_text().splitlines(True)
    lines[4] = lines[4].rstrip("\n") + "   # <- first sample after the restart\n"
    lines.insert(5, "# the job starts here\n")
    lines.append("# Average is what the alert looked at\n")
    data = "".join(lines).encode()
    res = sar.parse(data, ParseContext(host="h"))
    assert res.unparsed.height == 0 and res.tables["cpu_util"].height == 3
    assert res.meta["comments_cut"] == 1 and sum(res.meta["skipped"].values()) == 2
    assert res.tables["cpu_util"].filter(pl.col("line_no") == 5)["idle_pct"].to_list() == [99.92]


def test_a_wrapped_input_is_read_once(monkeypatch):
    # the tails were joined after a first read left them unparsed, and the input read again (2.15x the time of
    # the unwrapped file); now the join comes first and the input is read once, to the same tables
    import forensics.sources.sar as sar_pkg
    reads = []
    real = sar_pkg._parse_any
    monkeypatch.setattr(sar_pkg, "_parse_any", lambda data, ctx: reads.append(1) or real(data, ctx))
    r = parse_file("sar--lkml-2002-2.4.19-r-ampm-mail-wrapped-80-header-and-rows.txt")
    assert r.meta["wrapped_joined"] == 5 and r.unparsed.height == 0 and len(reads) == 1


def _wrapped_at(data: bytes, width: int) -> bytes:
    out = []
    for ln in data.split(b"\n"):
        while len(ln) > width and ln.rfind(b" ", 0, width) > 0:
            cut = ln.rfind(b" ", 0, width)
            out.append(ln[:cut])
            ln = ln[cut:].lstrip(b" ")
        out.append(ln)
    return b"\n".join(out)


@pytest.mark.parametrize("f", sorted(p for p in FIX.glob("sar--*") if not p.name.endswith(".json")), ids=lambda p: p.name)
def test_the_wrap_prescan_agrees_with_the_whole_pattern(f):
    # _may_be_wrapped passes over the lines that start with a time without matching them; it must say what the
    # pattern over the whole input says (a tail-shaped line after a timed one), on every fixture and wrapped copy
    from forensics.sources.sar import _WRAPPED, _may_be_wrapped
    data = f.read_bytes()
    for d in (data, data.replace(b"\n", b"\r\n"), _wrapped_at(data, 60), _wrapped_at(data, 80), data[:200], data[-3:]):
        assert _may_be_wrapped(d) == (_WRAPPED.search(d) is not None)
    assert _may_be_wrapped(b"10:00:00 AM a b\n1 2") and _may_be_wrapped(b"x\n10:00:00 a b\n%c")
    assert not _may_be_wrapped(b"10:00:00 a b\n10:00:01 1 2\n") and not _may_be_wrapped(b"")


def test_a_hash_inside_a_line_that_is_no_comment_leaves_the_row_unparsed_as_written():
    data = (b"10:46:38 AM     CPU     %user     %nice   %system   %iowait    %steal     %idle\n"
            b"10:46:48 AM     all      0.03      0.00      0.05      0.00      0.00     99.92 # x 1\n"
            b"10:46:58 AM     all      0.10      0.00      0.08      0.00      #0.00     99.82\n")
    res = sar.parse(data, ParseContext(host="h"))
    assert res.tables["cpu_util"].height == 1
    assert res.unparsed.select("line_no", "text").rows() == [(3, data.decode().splitlines()[2])]


def test_header_and_rows_wrapped_by_a_mail_are_joined_back():
    # LKML 2002 (2.4.19 oops report): `sar -r` whose header and every row the mail wrapped, the last three columns
    # and values alone on the next line. Before: the swap columns lost and 5 of 10 lines unparsed
    r = parse_file("sar--lkml-2002-2.4.19-r-ampm-mail-wrapped-80-header-and-rows.txt")
    assert r.unparsed.height == 0 and r.meta["wrapped_joined"] == 5 and r.lines == 10
    mem = r.tables["sar_memory"]
    assert mem["line_no"].to_list() == [3, 5, 7, 9] and mem["kbmemfree"].to_list() == [7020, 6964, 18648, 18360]
    g = r.tables["sar_generic"]
    assert g.filter(pl.col("metric") == "%swpused")["value"].to_list() == [4.98, 4.99, 5.07, 5.07]
    assert g.filter(pl.col("metric") == "kbswpfree")["value"].to_list() == [1946212, 1946128, 1944448, 1944448]
    # a numbers-only line is joined only where it holds exactly the values its row lacks
    text = ("12:00:00 AM kbmemfree kbmemused  %memused\n12:04:00 AM      7020   2062752\n1 2\n"
            "12:05:00 AM      6964   2062808     99.66\n5.07\n")
    r = parse_text(text)
    assert r.unparsed["line_no"].to_list() == [2, 3, 5] and "wrapped_joined" not in r.meta  # the short row too


def test_a_column_of_words_beside_the_usual_ones_is_text_not_every_row_unparsed():
    # DERIVED from the real CentOS 7.4 sar -u: a "zone" column of words beside sysstat's own columns
    from forensics.sources import parse_bytes

    name = "sar--centos74-u-DERIVED-extra-zone-column-beside-the-usual.txt"
    _, r = parse_bytes((FIX / name).read_bytes(), "sar", ParseContext(host="n1", file=name))
    assert r.unparsed.height == 0 and r.lines == 9
    cpu = r.tables["cpu_util"].sort("line_no")
    assert cpu["line_no"].to_list() == [5, 6, 7] and cpu["idle_pct"].to_list() == [99.92, 99.82, 99.95]
    gen = r.tables["sar_generic"].sort("line_no")
    assert gen.select("line_no", "metric", "item").rows() == [(5, "zone", "all rack-a"), (6, "zone", "all rack-a"),
                                                                (7, "zone", "all rack-b")]
    assert gen["value"].null_count() == 3
    # a word in one row only is still a bad value, and a float's word (nan) is no label
    one = parse_text("10:46:38 AM     CPU     %user     %idle\n10:46:48 AM     all      0.03     abc\n"
                     "10:46:58 AM     all      0.10     99.82\n")
    assert one.unparsed["line_no"].to_list() == [2]
    nan = parse_text("10:46:38 AM     CPU     %user     %idle\n10:46:48 AM     all      0.03     nan\n")
    assert nan.unparsed["line_no"].to_list() == [2]


def test_glossary_of_the_columns_under_a_report_is_skipped_and_counted():
    # a Chinese note's sar -b with zh_CN times and the author's glossary of the five columns (full-width colons)
    from forensics.sources import parse_bytes

    fx = Path(__file__).parent / "fixtures" / "sar" / "sar--zh-notes-b-el6-zh-times-glossary-fullwidth-colons.txt"
    _, res = parse_bytes(fx.read_bytes(), "sar", ParseContext(host="n1", file=fx.name))
    assert res.unparsed.height == 0 and res.meta["skipped"][sar.GLOSSARY] == 5
    assert res.tables["sar_generic"].filter(pl.col("metric") == "bwrtn/s")["value"].to_list() == [64.0, 80.81, 0.0]
    # English, blanks collapsed (sar -n SOCK and the man page's words under it); one such line alone stays unparsed
    text = ("10:00:01 AM totsck tcpsck udpsck rawsck ip-frag tcp-tw\n10:00:02 AM 707 5 6 0 0 0\n\n"
            "totsck: Total number of sockets used by the system.\ntcpsck: Number of TCP sockets currently in use.\n"
            "note: not a column\n")
    res = sar.parse(text.encode(), ParseContext(host="n1", file="t"))
    assert res.unparsed["line_no"].to_list() == [6] and res.meta["skipped"][sar.GLOSSARY] == 2
    res = sar.parse(text.encode().replace(b"tcpsck: Number", b"other: Number"), ParseContext(host="n1", file="t"))
    assert res.unparsed["line_no"].to_list() == [4, 5, 6]


@pytest.mark.parametrize("name,table,n,first", [
    ("sar--tecmint-en-in-q-zone-word-long-banner-date-indented.txt", "sar_queue", 5, dt.datetime(2014, 9, 4, 2, 0, 46)),
    ("sar--c-comment-el7-u-zone-word-long-banner-date.txt", "cpu_util", 1, dt.datetime(2025, 9, 11, 1, 55, 52)),
])
def test_a_zone_word_after_every_time_and_a_long_banner_date_are_read(name, table, n, first):
    # en_IN-style times with the zone after each ("02:00:44  IST   runq-sz") and the banner date spelt out
    # ("Thursday 04 September 2014"): before, no source recognised either file (the word stood where sar's
    # column header or row item is) and the banner's date and host were not read
    from forensics.sources import parse_bytes
    src, r = parse_bytes((FIX / name).read_bytes(), None, ParseContext(file=name, tz="UTC"))
    assert src == "sar" and r.tables[table].height == n
    assert r.meta["time_zone_word"] == "IST" and "not mapped" in r.meta["time_zone_word_note"]
    t = r.tables[table]
    assert t["ts"][0] == first.replace(tzinfo=UTC) and t["ts_quality"][0] == "local"
    assert t["host"][0] in ("tecmint.com", "localhost.localdomain")


def test_a_word_after_the_time_that_is_a_column_is_no_zone_word():
    from forensics.sources._sysstat.dates import zone_word_times
    text = BANNER + U_HDR.format(t="10:46:38 AM") + U_ROW.format(t="10:46:48 AM")
    assert zone_word_times(text.encode()) is None
    # a header's first column alone (no row) is not taken either; nor a lower-case word
    assert zone_word_times(b"10:00:01  IFACE  rxpck/s\n10:00:02  IFACE  rxpck/s\n") is None
    r = parse_text(BANNER + U_HDR.format(t="10:46:38 AM") + U_ROW.format(t="10:46:48 AM"))
    assert "time_zone_word" not in r.meta and r.tables["cpu_util"].height == 1


def test_prompt_lines_of_other_commands_are_skipped_not_unparsed():
    # a guide's terminal block: apt, systemctl, sysbench and cat prompts around the sar command and its rows;
    # before, the four other prompt lines were unparsed ("not a sar line"); the job-control notice stays so
    from forensics.sources import parse_bytes
    from forensics.sources._shell import OTHER_PROMPT
    name = "sar--pt-benchmark-guide-u-behind-apt-systemctl-sysbench-prompts.txt"
    src, r = parse_bytes((FIX / name).read_bytes(), None, ParseContext(file=name))
    assert src == "sar" and r.tables["cpu_util"].height == 3
    assert r.meta["skipped"][OTHER_PROMPT] == 4 and r.meta["commands"][0]["line_no"] == 4
    assert r.unparsed["text"].to_list() == ["[1] 23456"]
    # a line that is no prompt stays unparsed
    r = parse_text(BANNER + U_HDR.format(t="10:46:38 AM") + U_ROW.format(t="10:46:48 AM") + "run $ this\n")
    assert r.unparsed.height == 1 and OTHER_PROMPT not in r.meta.get("skipped", {})
