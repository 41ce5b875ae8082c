"""Wide views of the sar reports without a table of their own (queries/views/60_sar_reports.sql), on
sysstat's own real outputs (tests/fixtures/README.md): text -A, sadf -d and sadf -j of the same data
give the same typed columns."""
from __future__ import annotations

from pathlib import Path

import polars as pl

import forensics
from forensics.sources import ParseContext, get
from test_db_kit import bundle_dir

FIX = Path(__file__).parent / "fixtures" / "sar"
A = "sar--sysstat-sar-A-every-n-report-ipv6-softnet-freq.txt"
J = "sar--sysstat-sadf-j-first-record.json"
D = "sar--sysstat-sadf-d-sections.txt"


def _bundle(tmp_path, *names):
    g = pl.concat([get("sar").parse((FIX / n).read_bytes(), ParseContext(host="h", tz="UTC", file=n))
                   .tables["sar_generic"] for n in names])
    return forensics.open_bundle(bundle_dir(tmp_path, {"sar_generic": g}))


def test_every_report_of_sar_A_lands_in_a_wide_view_with_its_values(tmp_path):
    b = _bundle(tmp_path, A)
    left = b.sql("SELECT DISTINCT section FROM sar_reports WHERE report IS NULL ORDER BY 1")["section"].to_list()
    assert left == ["BUS idvendor idprod maxpower manufact product"]  # (-m USB: text columns)
    # no value lost or doubled: the non-null cells of each view are its long rows
    for v in b.sql("SELECT DISTINCT report FROM sar_reports WHERE report IS NOT NULL")["report"].to_list():
        cols = [c for c, t in b.sql(f"SELECT * FROM {v} LIMIT 0").schema.items()
                if t.is_numeric() and c not in ("line_no", "sample_no")]
        cells = b.sql(f"SELECT {' + '.join(f'count({c})' for c in cols)} AS n FROM {v}")["n"][0]
        assert cells == b.sql(f"SELECT count(*) AS n FROM sar_reports WHERE report = '{v}'")["n"][0], v
    # 12:53:21 rows of the fixture, as printed
    assert b.sql("SELECT active_s, passive_s, iseg_s, oseg_s FROM sar_net_tcp WHERE sample_no = 0").rows() == \
        [(0.0, 0.0, 0.0, 0.0)]
    sock = b.sql("SELECT totsck, tcpsck, udpsck, rawsck, ip_frag, tcp_tw FROM sar_net_sock WHERE sample_no = 0")
    assert sock.rows() == [(1316, 10, 6, 0, 0, 1)] and sock.schema["totsck"] == pl.Int64
    assert b.sql("SELECT retrans_s FROM sar_net_etcp WHERE sample_no = 0").rows() == [(0.0,)]  # 12.x's retrseg/s
    assert b.sql("SELECT tps, rtps, wtps, dtps, bread_s, bwrtn_s, bdscd_s FROM sar_io WHERE sample_no = 0").rows() == \
        [(20.85, 12.83, 4.81, 3.21, 57.43, 38.5, 32.08)]
    fs = b.sql("SELECT filesystem, mbfsfree, mbfsused, fsused_pct, ufsused_pct, ifree, iused, iused_pct FROM sar_fs "
               "WHERE sample_no = 0 ORDER BY line_no").rows()
    assert len(fs) == 4 and fs[:2] == [("/dev/sda9", 705.0, 145.0, 17.04, 18.92, 6008414, 102818, 1.68),
                  ("/dev/sda7", 2496.0, 845.0, 25.29, 46.57, 19051710, 150338, 0.78)]
    assert b.sql("SELECT cpu, mhz FROM sar_cpu_freq WHERE sample_no = 0 AND mhz IS NOT NULL").rows() == [("all", 3522.54)]
    assert b.sql("SELECT cpu, blg_len FROM sar_net_soft WHERE sample_no = 0").rows() == [("all", 0)]
    assert b.sql("SELECT count(*) AS n FROM sar_psi")["n"][0] == 2
    assert b.sql("SELECT count(*) AS n FROM sar_net_icmp6")["n"][0] == 2


def test_text_and_sadf_j_of_the_same_data_give_the_same_columns(tmp_path):
    b = _bundle(tmp_path, A, J)
    for view, cols in [("sar_io", "tps, rtps, wtps, dtps, bread_s, bwrtn_s, bdscd_s"),
                       ("sar_swap_space", "kbswpfree, kbswpused, swpused_pct, kbswpcad, swpcad_pct"),
                       ("sar_hugepages", "kbhugfree, kbhugused, hugused_pct"),
                       ("sar_net_sock", "totsck, tcpsck, udpsck, rawsck, ip_frag, tcp_tw"),
                       ("sar_tty", "tty, rcvin_s, xmtin_s")]:
        rows = b.sql(f"SELECT file, {cols} FROM {view} WHERE sample_no = 0 OR file = '{J}' ORDER BY file, line_no").rows()
        text = [r[1:] for r in rows if r[0] == A]
        js = [r[1:] for r in rows if r[0] == J]
        assert text and text == js, view


def test_sadf_d_interrupts_filesystems_and_fc_hosts(tmp_path):
    b = _bundle(tmp_path, D)
    intr = dict(b.sql("SELECT cpu, intr_s FROM sar_intr WHERE intr = 'sum' ORDER BY line_no").rows())
    assert intr["all"] == 31915.3 and intr["CPU0"] == 5759.67
    assert b.sql("SELECT filesystem, iused FROM sar_fs ORDER BY line_no").rows()[0] == ("/dev/sda9", 102818)
    assert sorted(b.sql("SELECT DISTINCT fchost FROM sar_fchost")["fchost"].to_list()) == ["host0", "host1"]


def test_sensor_views_split_the_number_from_the_device(tmp_path):
    rows = [{"host": "h", "section": s, "item": "1 f71858fg-isa-0200", "metric": m, "value": v, "sample_no": 0,
             "line_no": 3} for s, m, v in [("FAN rpm drpm DEVICE", "rpm", 1283.0), ("FAN rpm drpm DEVICE", "drpm", 1283.0),
                                           ("power-management.temperature", "percent-temp", 42.5)]]
    b = forensics.open_bundle(bundle_dir(tmp_path, {"sar_generic": rows}))
    assert b.sql("SELECT fan, device, rpm, drpm FROM sar_fan").rows() == [("1", "f71858fg-isa-0200", 1283.0, 1283.0)]
    assert b.sql("SELECT temp, temp_pct FROM sar_temp").rows() == [("1", 42.5)]


def test_the_view_file_is_its_generators_output():
    import importlib.util
    views = Path(__file__).parent.parent / "queries" / "views"
    spec = importlib.util.spec_from_file_location("_gen_sar_reports", views / "_gen_sar_reports.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert (views / "60_sar_reports.sql").read_text() == gen.render()


def test_sensors_of_a_sysstat_10_3_1_data_file(tmp_path):
    b = _bundle(tmp_path, "sar--sysstat-data-10.3.1-A-fan-temp-usb.txt")
    # 08:15:10  1  1620.00  1620.00 nouveau-pci-0100 / TEMP 2  21.00  26.25 coretemp-isa-0000
    assert b.sql("SELECT fan, device, rpm, drpm FROM sar_fan ORDER BY line_no LIMIT 1").rows() == \
        [("1", "nouveau-pci-0100", 1620.0, 1620.0)]
    assert b.sql("SELECT temp, device, degc, temp_pct FROM sar_temp WHERE temp = '2' ORDER BY line_no LIMIT 1").rows() \
        == [("2", "coretemp-isa-0000", 21.0, 26.25)]
    left = b.sql("SELECT DISTINCT section FROM sar_reports WHERE report IS NULL ORDER BY 1")["section"].to_list()
    assert left == ["BUS idvendor idprod maxpower manufact product", "LINUX RESTART"]
    # USB devices that print no manufacturer or product (blank text columns) are read, not reported
    usb = get("sar").parse((FIX / "sar--sysstat-data-10.3.1-A-fan-temp-usb.txt").read_bytes(), ParseContext(host="h"))
    assert usb.unparsed.height == 0
    assert "1 idvendor=8087 idprod=24 manufact= product=" in usb.tables["sar_generic"]["item"].to_list()
