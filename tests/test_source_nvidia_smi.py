"""nvidia_smi source: the values that matter, read from real fixtures (tests/fixtures/nvidia_smi/)."""
from __future__ import annotations

import datetime as dt
import doctest
from pathlib import Path

import polars as pl
import pytest

from forensics.layout import format_marker
from forensics.sources import ParseContext, nvidia_smi, parse_bytes, registry, sniff_pasted
from forensics.sources.nvidia_smi import common as _nvsmi_common
from test_sources_conformance import check_accounting

FX = Path(__file__).parent / "fixtures" / "nvidia_smi"
UTC = dt.timezone.utc


def load(name: str) -> bytes:
    return (FX / f"nvidia_smi--{name}").read_bytes()


def parse_nvsmi(data: bytes, ctx: ParseContext):
    """The nvidia_smi source as `forensics parse FILE --source nvidia_smi` reads a file."""
    return parse_bytes(data, "nvidia_smi", ctx)[1]


def run(data: bytes, **ctx):
    # through the paste layer, as `forensics parse` reads a file (sources.parse_bytes: prefixes, quoted-printable,
    # Markdown hard breaks, elisions), not the parser alone
    ctx.setdefault("host", "node01")
    res = parse_bytes(data, "nvidia_smi", ParseContext(**ctx))[1]
    check_accounting(res, data, "case")
    return res


def sniff_smi(head: bytes):
    """The verdict `forensics parse --source nvidia_smi` reports: the sniffer's, on the input as the paste layer reads it."""
    return sniff_pasted("nvidia_smi", head)


def sample(res, i: int = 0) -> dict:
    return res.tables["gpu_samples"].row(i, named=True)


def gpu(res, i: int = 0) -> dict:
    return res.tables["gpus"].row(i, named=True)


def reasons(row: dict) -> dict:
    return {k: row[k] for k in _nvsmi_common.REASON_COLUMNS}


# ---------------------------------------------------------------- -q text


def test_throttle_reasons_old_naming_v100_410():
    data = load("q-v100-410-throttle-old-ecc.txt")
    assert b"Clocks Throttle Reasons" in data
    row = sample(run(data))
    assert set(reasons(row).values()) == {False}
    hot = data.replace(b"        SW Power Cap                : Not Active", b"        SW Power Cap                : Active")
    hot = hot.replace(b"            HW Thermal Slowdown     : Not Active", b"            HW Thermal Slowdown     : Active")
    row = sample(run(hot))
    assert row["reason_sw_power_cap"] is True and row["reason_hw_thermal_slowdown"] is True
    assert row["reason_hw_slowdown"] is False and row["reason_gpu_idle"] is False


def test_throttle_reasons_new_naming_and_counters_kept_apart():
    a10 = sample(run(load("q-a10-535-remap-pending.txt")))
    assert a10["reason_gpu_idle"] is True and a10["reason_sw_power_cap"] is False
    # 580: "Clocks Event Reasons Counters" repeats "SW Thermal Slowdown" with microseconds
    res = run(load("q-rtx5080-580-event-counters.txt"))
    row = sample(res)
    assert res.unparsed.height == 0
    assert row["reason_sw_thermal_slowdown"] is False
    assert row["clocks_event_sw_power_cap_us"] == 12234991553
    assert row["clocks_event_sw_thermal_us"] == 11591399010
    assert row["clocks_event_hw_power_brake_us"] == 0


def test_remapped_rows_pending_a10():
    res = run(load("q-a10-535-remap-pending.txt"))
    row = sample(res)
    assert (row["remapped_correctable"], row["remapped_uncorrectable"]) == (0, 4)
    assert row["remap_pending"] is True and row["remap_failure"] is False
    # "Remapped Rows : N/A" (no remapper, TITAN/GeForce) leaves them null
    row = sample(run(load("q-rtx5080-580-event-counters.txt")))
    assert row["remapped_uncorrectable"] is None and row["remap_pending"] is None


def test_standalone_d_page_retirement_eight_gpus():
    """`nvidia-smi -q -d PAGE_RETIREMENT` alone (Azure, driver 535.86.10): a section per GPU holding only
    Retired Pages; each GPU gets its sample with the three counters, and the PCI domain (0001-0008, as
    Hyper-V numbers them) keeps the GPUs apart."""
    data = load("q-d-page-retirement-8gpu-535-azure.txt")
    res = run(data)
    assert res.unparsed.height == 0
    rows = res.tables["gpu_samples"].sort("gpu")
    assert rows["gpu"].to_list() == list(range(8))
    assert rows["pci_bus_id"].to_list() == [f"000{i}:00:00.0" for i in range(1, 9)]
    assert set(zip(rows["retired_pages_sbe"], rows["retired_pages_dbe"], rows["retired_pages_pending"])) == {(0, 0, False)}
    assert rows["ts"].unique().to_list() == [dt.datetime(2024, 3, 14, 20, 45, 34, tzinfo=UTC)]
    # a pending page shows as such on its GPU only
    bumped = data.replace(b"Pending Page Blacklist            : No", b"Pending Page Blacklist            : Yes", 3)
    rows = run(bumped).tables["gpu_samples"].sort("gpu")
    assert rows["retired_pages_pending"].to_list() == [True, True, True] + [False] * 5
    assert rows["ecc_sbe_volatile"].null_count() == 8  # not asked for: null, not 0


def test_ecc_old_and_new_layouts():
    v100 = sample(run(load("q-v100-410-throttle-old-ecc.txt")))  # Single/Double Bit ... Total
    assert (v100["ecc_sbe_volatile"], v100["ecc_dbe_volatile"], v100["ecc_sbe_aggregate"]) == (0, 0, 0)
    assert (v100["retired_pages_sbe"], v100["retired_pages_dbe"], v100["retired_pages_pending"]) == (0, 0, False)
    data = load("q-a10-535-remap-pending.txt")
    vol = data.index(b"        Volatile")
    bumped = (data[:vol] + data[vol:].replace(b"DRAM Correctable              : 0", b"DRAM Correctable              : 177", 1)
              .replace(b"SRAM Uncorrectable            : 0", b"SRAM Uncorrectable            : 2", 1))
    row = sample(run(bumped))
    assert (row["ecc_sbe_volatile"], row["ecc_dbe_volatile"]) == (177, 2)
    assert (row["ecc_sbe_aggregate"], row["ecc_dbe_aggregate"]) == (0, 0)
    # ECC disabled (RTX 4090): every part N/A -> null, not 0
    row = sample(run(load("q-2xrtx4090-535-multi-gpu-cut.txt")))
    assert row["ecc_sbe_volatile"] is None and row["ecc_dbe_aggregate"] is None


def test_power_temperature_clocks_h100():
    res = run(load("q-a-h100-545-prompt.txt"))
    row = sample(res)
    assert (row["power_w"], row["power_limit_w"]) == (72.02, 700.0)
    assert (row["temp_c"], row["mem_temp_c"]) == (33.0, 41.0)
    assert (row["sm_clock_mhz"], row["gr_clock_mhz"], row["mem_clock_mhz"], row["max_sm_clock_mhz"]) == (345.0, 345.0, 2619.0, 1980.0)
    assert (row["pcie_gen"], row["pcie_width"], row["pcie_tx_kb_s"], row["pcie_rx_kb_s"]) == (5, 16, 464.0, 2593.0)
    assert row["uuid"] == "GPU-10f35015-e921-bfab-2eb8-4e9b6664d5f1" and row["pci_bus_id"] == "0000:19:00.0"
    g = gpu(res)
    assert (g["name"], g["architecture"], g["driver_version"], g["cuda_version"]) == ("NVIDIA H100 80GB HBM3", "Hopper", "545.23.08", "12.3")
    assert (g["mig_mode"], g["persistence_mode"], g["pcie_gen_max"], g["vbios"]) == ("Disabled", "Enabled", 5, "96.00.74.00.0D")
    # the shell prompt line is the command (meta), not an unparsed line
    assert res.unparsed.height == 0 and [c["line_no"] for c in res.meta["commands"]] == [1]


def test_power_old_enforced_limit_and_new_average_draw():
    v100 = sample(run(load("q-v100-410-throttle-old-ecc.txt")))
    assert (v100["power_w"], v100["power_limit_w"]) == (58.81, 250.0)
    rtx = sample(run(load("q-rtx5080-580-event-counters.txt")))  # Average 12.72 / Instantaneous 14.47
    assert (rtx["power_w"], rtx["power_limit_w"]) == (12.72, 80.0)


def test_multi_gpu_index_is_position_not_minor_number():
    res = run(load("q-2xrtx4090-535-multi-gpu-cut.txt"))
    s = res.tables["gpu_samples"]
    assert s["gpu"].to_list() == [0, 1]
    assert s["pci_bus_id"].to_list() == ["0000:01:00.0", "0000:21:00.0"]
    assert s["fan_pct"].to_list() == [100.0, 70.0]
    assert s["mem_used_mib"].to_list() == [22078.0, 0.0]
    assert res.tables["gpus"]["uuid"].to_list() == ["GPU-6b7298f4-721f-9e24-a277-9ec909ba76f0",
                                                    "GPU-4962ecf4-ef69-e7c3-fe53-a434de2b7c37"]


def test_local_timestamp_to_utc_and_marker_time_wins():
    data = load("q-a10-535-remap-pending.txt")  # Timestamp : Wed Sep 25 10:40:24 2024
    row = sample(run(data, tz="Europe/Berlin"))
    assert row["ts"] == dt.datetime(2024, 9, 25, 8, 40, 24, tzinfo=UTC) and row["ts_quality"] == "local"
    t0 = dt.datetime(2024, 9, 25, 8, 40, 30, tzinfo=UTC)
    two = (format_marker(t0, ["nvidia-smi", "-q"]).encode() + b"\n" + data
           + format_marker(t0 + dt.timedelta(seconds=30), ["nvidia-smi", "-q"]).encode() + b"\n" + data)
    res = run(two, tz="Europe/Berlin")
    s = res.tables["gpu_samples"]
    assert s["sample_no"].to_list() == [0, 1]
    assert s["ts"].to_list() == [t0, t0 + dt.timedelta(seconds=30)]
    assert set(s["ts_quality"]) == {"sampled"}
    assert res.tables["gpus"].height == 1 and res.unparsed.height == 0


def test_repeated_banners_are_snapshots_and_no_time_is_flagged():
    data = load("q-d-performance-v100-410.txt")
    body = data.split(b"\n", 1)[1]  # without the command line
    res = run(load("q-v100-410-throttle-old-ecc.txt") * 2)  # `nvidia-smi -q -l`: banner per report
    assert res.tables["gpu_samples"]["sample_no"].to_list() == [0, 1]
    res = run(body + body)  # partial output without banner: the GPU section repeating starts a snapshot
    s = res.tables["gpu_samples"]
    assert s["sample_no"].to_list() == [0, 1] and set(s["ts_quality"]) == {"none"}
    cap = dt.datetime(2026, 11, 30, 10, 15, 2, tzinfo=UTC)
    row = sample(run(body, capture_time=cap))
    assert (row["ts"], row["ts_quality"]) == (cap, "sampled")


def test_bad_value_goes_to_unparsed_rest_is_kept():
    data = load("q-a10-535-remap-pending.txt").replace(b"GPU Current Temp                  : 33 C",
                                                        b"GPU Current Temp                  : hot C")
    res = run(data)
    row = sample(res)
    assert row["temp_c"] is None and row["power_w"] == 43.89
    (bad,) = res.unparsed.iter_rows(named=True)
    assert "hot" in bad["text"] and "gpu current temp" in bad["reason"]


def test_na_tokens_are_null_on_purpose():
    res = run(load("q-rtx5080-580-event-counters.txt"))  # "Requested functionality has been deprecated", "N/A", empty value
    row, g = sample(res), gpu(res)
    assert row["fan_pct"] is None and row["mem_temp_c"] is None and g["mig_mode"] is None
    assert res.unparsed.height == 0


# ---------------------------------------------------------------- -q -x XML


def test_xml_mig_a100():
    res = run(load("qx-a100-mig-535-v12.xml.txt"))
    assert res.meta["variant"] == "q-xml" and res.meta["mig_devices"] == 4
    assert res.tables["gpus"].height == 1 and res.tables["gpu_samples"].height == 1
    row, g = sample(res), gpu(res)
    assert g["mig_mode"] == "Enabled" and g["name"] == "NVIDIA A100-SXM4-80GB"
    assert row["util_pct"] is None and row["mem_util_pct"] is None  # N/A under MIG
    assert (row["power_w"], row["power_limit_w"], row["temp_c"], row["mem_temp_c"]) == (67.03, 500.0, 27.0, 44.0)
    assert row["mem_total_mib"] == 81920.0 and row["remapped_uncorrectable"] is None  # <remapped_rows>N/A
    assert reasons(row) == dict.fromkeys(_nvsmi_common.REASON_COLUMNS, False)


def test_xml_throttle_naming_and_power_readings_v11():
    res = run(load("qx-t4-515-v11-throttle.xml.txt"))
    row = sample(res)
    assert row["pci_bus_id"] == "0000:00:1e.0"
    assert (row["power_w"], row["power_limit_w"], row["pcie_width"]) == (26.78, 70.0, 8)
    assert (row["retired_pages_sbe"], row["retired_pages_pending"]) == (0, False)
    hot = load("qx-t4-515-v11-throttle.xml.txt").replace(
        b"<clocks_throttle_reason_hw_slowdown>Not Active", b"<clocks_throttle_reason_hw_slowdown>Active")
    assert sample(run(hot))["reason_hw_slowdown"] is True


def test_xml_hostile_entities_refused():
    bomb = (b'<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [\n <!ENTITY a "aaaaaaaaaa">\n'
            b' <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">\n]>\n'
            b'<nvidia_smi_log><gpu id="00000000:01:00.0"><product_name>&c;</product_name></gpu></nvidia_smi_log>\n')
    res = run(bomb)
    assert res.tables["gpu_samples"].height == 0
    assert res.unparsed.height == 7 and "ENTITY" in res.unparsed["reason"][0]
    xxe = (b'<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
           b'<nvidia_smi_log><gpu id="00000000:01:00.0"><serial>&x;</serial></gpu></nvidia_smi_log>\n')
    assert run(xxe).tables["gpus"].height == 0


def test_xml_truncated_and_multi_document():
    doc = load("qx-t4-515-v11-throttle.xml.txt")
    cut = doc[: doc.index(b"<fb_memory_usage>")]
    res = run(cut)
    # cut short inside its GPU (the input ends before <fb_memory_usage>): the GPU's complete elements are its
    # row (it gave no row, every line from <gpu> on unparsed, before the cut document was read); the cut said
    s0 = res.tables["gpu_samples"]
    assert s0.height == 1 and s0["uuid"][0] == "GPU-d37e67a5-91dd-3774-a5cb-99096249601a"
    assert s0["pstate"][0] == "P0" and s0["mem_total_mib"][0] is None
    assert res.unparsed.height == 0 and res.meta["cut"][0]["line_no"] == 93 and res.meta["cut"][0]["partial_gpu"] == 0
    # broken in the middle instead (a syntax error, not the end coming too soon): from the incomplete <gpu> on
    res = run(doc.replace(b"<fb_memory_usage>", b"<fb_memory_usage <", 1))
    assert res.tables["gpu_samples"].height == 0
    assert res.unparsed["line_no"].min() == 8
    assert "truncated" in res.unparsed["reason"][0]
    t0 = dt.datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
    two = (format_marker(t0).encode() + b"\n" + doc + b"\n" + format_marker(t0 + dt.timedelta(minutes=1)).encode()
           + b"\n" + doc + b"\n" + format_marker(t0 + dt.timedelta(minutes=2)).encode() + b"\n" + cut)
    res = run(two)
    s = res.tables["gpu_samples"]
    assert s["sample_no"].to_list() == [0, 1, 2]
    assert s["ts"].to_list() == [t0, t0 + dt.timedelta(minutes=1), t0 + dt.timedelta(minutes=2)]
    assert s["mem_total_mib"].to_list() == [15360.0, 15360.0, None]  # the third cut before its memory
    assert res.tables["gpus"].height == 1 and len(res.meta["cut"]) == 1
    # pasted with the command above and a prompt below: the command is meta, the empty prompt unparsed, the GPU kept
    small = load("qx-gtx1070ti-v10-trimmed.xml.txt")
    res = run(b"$ nvidia-smi -q -x\n" + small + b"user@host:~$ \n")
    assert res.tables["gpus"]["name"].to_list() == ["GeForce GTX 1070 Ti"]
    assert res.unparsed["line_no"].to_list() == [49] and [c["line_no"] for c in res.meta["commands"]] == [1]


# ---------------------------------------------------------------- --query-gpu CSV


def test_csv_units_stripped_header_with_units():
    res = run(load("csv-header-units-2x3090-515.csv.txt"))
    s = res.tables["gpu_samples"]
    assert s.select("gpu", "util_pct", "mem_util_pct", "temp_c", "mem_total_mib", "mem_used_mib").rows() == [
        (0, 1.0, 13.0, 42.0, 24576.0, 963.0), (1, 0.0, 0.0, 37.0, 24576.0, 1.0)]
    assert res.tables["gpus"].select("gpu", "name", "driver_version").rows() == [
        (0, "NVIDIA GeForce RTX 3090", "515.65.01"), (1, "NVIDIA GeForce RTX 3090", "515.65.01")]


def test_csv_nounits_and_timestamp():
    s = run(load("csv-header-nounits-16xv100-sxm3.csv.txt")).tables["gpu_samples"]
    assert s.height == 16 and s["power_w"][1] == 383.55 and s["util_pct"][7] == 100.0
    assert s["uuid"][0] == "GPU-ad466f2f-575d-d949-35e0-9a7d912d974e" and s["sample_no"].max() == 0
    s = run(load("csv-header-units-timestamp-3090ti.csv.txt"), tz="America/New_York").tables["gpu_samples"]
    assert s["ts"][0] == dt.datetime(2025, 9, 29, 1, 48, 26, 6000, tzinfo=UTC) and s["ts_quality"][0] == "local"
    assert s["power_w"].to_list() == [8.48, 55.14, 451.06, 443.86]
    assert s["sample_no"].to_list() == [0, 1, 2, 3]


def test_csv_bracketed_na_is_null_and_prompt_line_is_named():
    res = run(load("csv-header-units-gb10-580-na-memory.csv.txt"))  # DGX Spark: no framebuffer memory
    s = res.tables["gpu_samples"]
    assert s.select("mem_total_mib", "mem_used_mib", "util_pct", "power_w", "temp_c").rows() == [
        (None, None, 0.0, 11.17, 35.0)]  # "[N/A]" is no value, not a bad row
    # the prompt line above it is the command that printed it: a fact (meta), not an unparsed line
    assert res.unparsed.height == 0 and [c["line_no"] for c in res.meta["commands"]] == [1]


def test_csv_noheader_inferred_omniopt():
    res = run(load("csv-noheader-a100-555-omniopt.csv.txt"))
    assert res.meta["variant"] == "csv-noheader-inferred"
    g = res.tables["gpus"]
    assert g["pci_bus_id"].to_list() == ["0000:c1:00.0", "0000:40:00.0"]
    assert set(g["driver_version"]) == {"555.42.06"} and set(g["pcie_gen_max"]) == {4}
    s = res.tables["gpu_samples"]
    assert s["mem_total_mib"][0] == 40960.0 and s["pstate"][0] == "P0"


def test_seed_pulsing_sample_with_hints():
    data = load("csv-noheader-index-util-pulsing-seed.csv.txt")
    res = run(data, hints={"query_fields": ["index", "utilization.gpu"]})
    assert res.meta["variant"] == "csv-noheader-hinted"
    s = res.tables["gpu_samples"]
    assert s.height == 40 and s["sample_no"].max() == 4
    assert s.filter(pl.col("gpu") == 5)["util_pct"].to_list() == [1.0, 4.0, 97.0, 5.0, 3.0]
    assert s.filter(pl.col("gpu") == 0)["util_pct"].to_list() == [100.0, 100.0, 100.0, 0.0, 12.0]
    # the same field list as a comma string
    res2 = run(data, hints={"query_fields": "index,utilization.gpu"})
    assert res2.tables["gpu_samples"].equals(s)


def test_csv_bitmask_decoding_both_field_names():
    # constructed from the documented field names and the "0x%016x" mask format nvidia-smi prints
    for name in ("clocks_event_reasons.active", "clocks_throttle_reasons.active"):
        data = (f"timestamp, index, clocks.sm [MHz], {name}\n"
                "2026/11/30 10:15:02.123, 0, 1980 MHz, 0x0000000000000004\n"
                "2026/11/30 10:15:02.123, 1, 1410 MHz, 0x0000000000000044\n"
                "2026/11/30 10:15:02.123, 2, 345 MHz, 0x0000000000000001\n").encode()
        s = run(data).tables["gpu_samples"]
        assert s["clocks_event_reasons"].to_list() == [4, 0x44, 1]
        assert s["reason_sw_power_cap"].to_list() == [True, True, False]
        assert s["reason_hw_thermal_slowdown"].to_list() == [False, True, False]
        assert s["reason_gpu_idle"].to_list() == [False, False, True]
        assert s["sm_clock_mhz"].to_list() == [1980.0, 1410.0, 345.0]


def test_csv_bad_rows_reported():
    data = load("csv-header-units-2x3090-515.csv.txt") + b"2, NVIDIA GeForce RTX 3090, 515.65.01, 40, lots %, 0 %, 24576 MiB, 1 MiB\n3, x\n"
    res = run(data)
    assert res.tables["gpu_samples"].height == 2
    reasons_ = dict(zip(res.unparsed["line_no"], res.unparsed["reason"]))
    assert "utilization.gpu" in reasons_[4] and "fields" in reasons_[5]
    unknown = run(b"1, 2, 3\n", hints={"query_fields": "a.b,c.d,e.f"})
    assert unknown.tables["gpu_samples"].height == 1  # unknown fields are read (counted), not mapped
    res = run(b"7, 8, 9\n10, 11, 12\n")  # no header, no hint, no known shape: not taken for nvidia-smi
    assert res.unparsed.height == 2 and "not recognised" in res.unparsed["reason"][0]
    data = b"7, 8, 9\n" + b"index, utilization.gpu [%]\n0, 3 %\n"  # rows before the header
    res = run(data)
    assert res.unparsed["line_no"].to_list() == [1] and "query_fields" in res.unparsed["reason"][0]


# ---------------------------------------------------------------- topo -m


def test_topo_asymmetric_numa_4xa100():
    res = run(load("topo-4xa100-numa-split-gpu-numa-id.txt"))
    g = res.tables["gpus"]
    assert g.select("gpu", "numa_node", "cpu_affinity").rows() == [
        (0, 0, "0-31,64-95"), (1, 1, "32-63,96-127"), (2, 1, "32-63,96-127"), (3, 1, "32-63,96-127")]
    t = res.tables["gpu_topo"]
    assert t.height == 16 and set(t.filter(pl.col("device") != pl.col("peer"))["link"]) == {"NV12"}


def test_topo_nic_legend_and_blank_cpu_affinity():
    res = run(load("topo-8xh100-nic-legend-blank-affinity.txt"))
    g = res.tables["gpus"]
    assert g["cpu_affinity"].to_list()[:4] == [None] * 4 and g["cpu_affinity"][4] == "1"
    assert g["numa_node"].to_list() == [0, 0, 0, 0, 1, 1, 1, 1]
    t = res.tables["gpu_topo"]
    pix = t.filter((pl.col("device") == "GPU0") & (pl.col("link") == "PIX"))["peer"].to_list()
    assert pix == ["mlx5_0", "mlx5_1"]
    assert "NIC0" not in set(t["device"]) | set(t["peer"])


def test_topo_old_driver_mlx5_columns_and_numa_na():
    t = run(load("topo-dgx1-8xv100-mlx5-columns.txt")).tables["gpu_topo"]
    row = dict(t.filter(pl.col("device") == "GPU0").select("peer", "link").rows())
    assert (row["mlx5_0"], row["mlx5_2"], row["mlx5_1"], row["mlx5_3"]) == ("PIX", "SYS", "PHB", "SYS")
    g = run(load("topo-4xv100-p3-460-numa-na.txt")).tables["gpus"]  # "0-31\t\tN/A"
    assert g["cpu_affinity"].to_list() == ["0-31"] * 4 and g["numa_node"].to_list() == [None] * 4
    g = run(load("topo-4xa100-mlx5-numa-split-space-indented-header.txt")).tables["gpus"]
    assert g["numa_node"].to_list() == [0, 0, 1, 1]


# ---------------------------------------------------------------- detection, docs, bad input


def test_sniffer_claims_no_other_source_fixture():
    others = [p for p in (FX.parent).glob("*/*--*") if p.parent.name != "nvidia_smi" and not p.name.endswith(".json")]
    claimed = [p.name for p in others if sniff_smi(p.read_bytes()[:65536])]
    assert claimed == []
    assert sniff_smi(load("q-d-performance-v100-410.txt"))
    assert not sniff_smi(b"name, uuid\nfoo, bar\n")
    assert not sniff_smi(b"GPU 0000:18:00.0\nnot indented\n")


def test_quick_bad_inputs():
    for data in (b"", b"\n\n", b"\x00\xff\xfe" * 100, b"GPU 00000000:18:00.0\n" + b"    x" * 400000,
                 b"==============NVSMI LOG==============\r\nTimestamp : nonsense\r\n",
                 b"\tGPU0\tGPU1\nGPU0\t X \tWHAT?\n", b"<nvidia_smi_log><gpu id='zz'>"):
        run(data)


def test_helper_doctests():
    from forensics.sources.nvidia_smi import query_csv
    for mod in (_nvsmi_common, query_csv):
        failures, tried = doctest.testmod(mod)
        assert tried > 0 and failures == 0, mod.__name__
    failures, tried = doctest.testmod(nvidia_smi, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried > 0 and failures == 0
    assert "nvidia_smi" in registry()


def test_collector_query_fields_are_all_mapped():
    """Every field `forensics collect` asks --query-gpu for lands in a gpu_samples/gpus column."""
    from forensics.sources import nvidia_smi_spec as specs
    from forensics.sources.nvidia_smi import query_csv as _nvsmi_csv

    for q in (specs.GPU_QUERY_FIELDS, specs.GPU_QUERY_FIELDS_OLD, specs.GPU_QUERY_FIELDS_MIN):
        assert [f for f in q.split(",") if _nvsmi_csv.canonical(f) not in _nvsmi_csv.SPECS] == []


# ---------------------------------------------------------------- nvidia-smi nvlink -gt d|r / -g 0


def nvl(res) -> pl.DataFrame:
    return res.tables["nvlink_counters"]


def test_nvlink_gt_d_two_pasted_snapshots_a100():
    res = run(load("nvlink-gt-d-6xa100-pcie-two-snapshots.txt"), capture_time=dt.datetime(2021, 5, 1, 12, 0, tzinfo=UTC))
    df = nvl(res)
    assert set(res.tables) == {"nvlink_counters"} and res.unparsed.height == 0
    assert df.height == 2 * 6 * 12 * 2 and res.meta["samples"] == 2
    assert df["sample_no"].unique().sort().to_list() == [0, 1]
    first = df.filter((pl.col("sample_no") == 0) & (pl.col("gpu") == 0) & (pl.col("link") == 11)).sort("direction")
    assert first.select("counter", "direction", "value", "unit").rows() == [("data", "rx", 7489712, "KiB"),
                                                                           ("data", "tx", 8301807, "KiB")]
    assert first["gpu_uuid"][0] == "GPU-f41a1a93-42ec-1dc1-e936-03c617b58fd4" and first["gpu_name"][0] == "A100-PCIE-40GB"
    # the pasted second output has no time of its own: only the first sample gets the capture time
    assert df.filter(pl.col("sample_no") == 0)["ts_quality"].unique().to_list() == ["sampled"]
    assert df.filter(pl.col("sample_no") == 1)["ts"].null_count() == df.filter(pl.col("sample_no") == 1).height
    # the counters only grow between the two outputs
    wide = df.pivot(on="sample_no", index=["gpu", "link", "direction"], values="value")
    assert (wide["1"] > wide["0"]).all()


def test_nvlink_h800_prompts_comments_and_raw_counters():
    res = run(load("nvlink-gt-d-r-h800-525-gpu0-idle-training-prompts.txt"))
    df = nvl(res)
    assert df.group_by("sample_no").agg(pl.col("counter").unique()).sort("sample_no")["counter"].to_list() == [
        ["data"], ["data"], ["raw"]]
    assert set(df["gpu"].to_list()) == {0} and df["link"].max() == 7
    reasons = dict(res.unparsed.select("line_no", "reason").rows())
    assert [c["line_no"] for c in res.meta["commands"]] == [2, 22, 40]  # the three prompts: meta, not unparsed
    assert len(reasons) == 2 and reasons[1] == "not part of nvidia-smi nvlink output"  # + a comment after the GPU
    res = run(load("nvlink-gt-r-8xh800-525-elided.txt"))
    assert nvl(res)["gpu"].unique().sort().to_list() == [0, 1, 2, 6, 7]
    # the "..." the author put for the links left out: skipped and counted by the paste layer, not unparsed
    assert res.unparsed.height == 0 and res.meta["skipped"] == {"elision mark: lines the paste's author left out": 1}


def test_nvlink_tab_indented_v100_dgx2_and_old_g0_format():
    res = run(load("nvlink-gt-d-v100-sxm3-dgx2-tab-start-end.txt"))
    assert nvl(res).select("sample_no", "gpu", "link", "direction", "value").rows() == [
        (0, 3, 0, "tx", 19241022), (0, 3, 0, "rx", 19255516), (1, 3, 0, "tx", 20886285), (1, 3, 0, "rx", 20904969)]
    res = run(load("nvlink-g0-4xv100-sxm2-old-rx0-tx0.txt"))
    df = nvl(res)
    assert df.height == 2 * 18 and set(df["counter"].to_list()) == {"counter0"} and set(df["unit"].to_list()) == {"KBytes"}
    assert df.filter((pl.col("gpu") == 1) & (pl.col("link") == 2)).select("raw_name", "value").rows() == [("Rx0", 50), ("Tx0", 0)]


def test_nvlink_marker_series_as_collected():
    """The collector's snapshot series: marker lines give sample_no and ts; a failed sample (error text) is unparsed."""
    one = load("nvlink-gt-d-v100-sxm3-dgx2-tab-start-end.txt").decode().split("\n")
    out = [x for x in one if x != "..."][:3]  # GPU line + two counters of the first output
    argv = ["nvidia-smi", "nvlink", "-gt", "d"]
    t0 = dt.datetime(2026, 11, 30, 10, 15, 2, tzinfo=UTC)
    data = "".join(format_marker(t0 + dt.timedelta(seconds=5 * k), argv) + "\n" + "\n".join(out) + "\n" for k in range(3))
    data += format_marker(t0 + dt.timedelta(seconds=15), argv) + "\nFailed to get NVLink counters\n"
    res = run(data.encode(), capture_time=t0 - dt.timedelta(seconds=1))
    df = nvl(res)
    assert df["sample_no"].to_list() == [0, 0, 1, 1, 2, 2]
    assert df["ts"].to_list()[::2] == [t0, t0 + dt.timedelta(seconds=5), t0 + dt.timedelta(seconds=10)]
    assert set(df["ts_quality"].to_list()) == {"sampled"}
    assert res.unparsed.select("text", "reason").rows() == [
        ("Failed to get NVLink counters", "not part of nvidia-smi nvlink output")]
    assert sniff_smi(data.encode())


def test_nvlink_edge_lines():
    data = (b"    Link 0: Data Tx: 5 KiB\n"
            b"GPU 0: NVIDIA H800 (UUID: GPU-34bf77d1-c686-6821-79a8-32d326c5039c)\n"
            b"\t Link 0: 26.562 GB/s\n"
            b"\t Link 1: Data Tx: 99999999999999999999 KiB\n"
            b"\t Link 1: Data Rx: 7 KiB\n")
    res = run(data)
    assert nvl(res).select("link", "direction", "value").rows() == [(1, "rx", 7)]
    reasons = res.unparsed.sort("line_no")["reason"].to_list()
    assert "before any" in reasons[0] and "--status" in reasons[1] and "int64" in reasons[2]
    # `nvidia-smi -L` (GPU lines, no links) is not nvlink output: it is read as the GPU list
    one = b"GPU 0: NVIDIA H800 (UUID: GPU-34bf77d1-c686-6821-79a8-32d326c5039c)\n"
    assert "nvidia-smi -L" in sniff_smi(one).reason and run(one).meta["variant"] == "list"


def _marker_series(outputs: list[str]) -> str:
    t0 = dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.timezone.utc)
    return "".join(format_marker(t0 + dt.timedelta(seconds=10 * i), ["nvidia-smi", "nvlink", "-gt", "d"]) + "\n" + o
                   for i, o in enumerate(outputs))


def test_nvlink_marker_series_fast_path_equals_the_line_reader():
    """The collector's nvlink series is read vectorised; the rows are those of the line-by-line reader,
    and inputs the fast path does not take (pasted outputs, a counter before its GPU line, an int64
    overflow) still go through the line reader."""
    from polars.testing import assert_frame_equal

    from forensics import schema
    from forensics.sources.nvidia_smi import nvlink as L
    from forensics.sources._base import split_lines
    from forensics.sources.nvidia_smi.common import frame

    real = (FX / "nvidia_smi--nvlink-gt-d-6xa100-pcie-two-snapshots.txt").read_text()
    cut = real.index("GPU 0", 1)
    first, second = real[:cut], real[cut:]
    ctx = ParseContext(host="h", file="raw/nvidia_smi/nvlink-gt-d.txt")
    cases = {
        "series": (_marker_series([first, second, first]), True),
        "gpu twice in a sample": (_marker_series([first + first]), False),
        "counter before its GPU line": (_marker_series(["\t Link 0: Data Tx: 1 KiB\n" + first]), False),
        "int64 overflow": (_marker_series([first.replace("Data Tx: ", "Data Tx: 99999999999999999999", 1)]), False),
        "no marker": (first + second, False),
    }
    for name, (text, fast_expected) in cases.items():
        lines = split_lines(text.encode())
        fast = L.parse_series(lines["text"])
        assert (fast is not None) == fast_expected, name
        parts = L.parse(lines["text"].to_list(), ctx)
        slow = frame("nvlink_counters", parts.samples)
        if fast is not None:
            assert_frame_equal(schema.conform(fast[0], "nvlink_counters"), schema.conform(slow, "nvlink_counters")), name
            assert fast[1] == parts.meta and not parts.unparsed, name
        res = parse_bytes(text.encode(), "nvidia_smi", ctx)[1]  # as `forensics parse` reads it, whichever path
        assert res.lines == len(lines) and res.tables["nvlink_counters"].height == slow.height, name
        assert res.unparsed.height == len(parts.unparsed), name
    res = parse_nvsmi(cases["series"][0].encode(), ctx)
    t = res.tables["nvlink_counters"]
    assert t["sample_no"].unique().sort().to_list() == [0, 1, 2] and t["ts_quality"].unique().to_list() == ["sampled"]
    assert t.height == 3 * 6 * 12 * 2


# ---------------------------------------------------------------- --query-gpu noheader: field lists by shape


def test_noheader_field_lists_recognised_by_shape_real():
    res = run(load("csv-noheader-index-pcibusid-8xb300.csv.txt"))
    assert res.meta["inferred_fields"] == ["index", "pci.bus_id"]
    assert res.tables["gpus"].select("gpu", "pci_bus_id").rows()[7] == (7, "0000:bd:00.0")
    assert sniff_smi(load("csv-noheader-index-pcibusid-8xb300.csv.txt")).confidence >= 0.8
    res = run(load("csv-noheader-index-name-mem-util-temp-2x4080super.csv.txt"))
    s = res.tables["gpu_samples"]
    assert s.select("gpu", "mem_total_mib", "mem_used_mib", "util_pct", "temp_c").rows() == [
        (0, 16376.0, 1309.0, 0.0, 41.0), (1, 16376.0, 13625.0, 0.0, 39.0)]


def test_noheader_timestamp_first_and_stated_interval_seed004():
    seed = load("csv-noheader-index-util-pulsing-seed.csv.txt").decode().splitlines()
    # the seed's loop with `timestamp,` as first field (time format as in the OmniOpt fixture, 2 s apart)
    rows = [f"2025/03/18 19:59:{42 + 2 * (i // 8):02d}.940, {line}" for i, line in enumerate(seed)]
    res = run(("\n".join(rows) + "\n").encode(), tz="UTC")
    assert res.meta["inferred_fields"] == ["timestamp", "index", "utilization.gpu"]
    s = res.tables["gpu_samples"]
    assert s["sample_no"].max() == 4 and set(s["ts_quality"]) == {"local"}
    assert s.filter(pl.col("gpu") == 5)["util_pct"].to_list() == [1.0, 4.0, 97.0, 5.0, 3.0]
    # untimed: order known (sample_no), no time (ts null, ts_quality none); the interval only when stated
    plain = load("csv-noheader-index-util-pulsing-seed.csv.txt")
    s = run(plain).tables["gpu_samples"]
    assert s["ts"].null_count() == 40 and set(s["ts_quality"]) == {"none"} and s["sample_interval_s"].null_count() == 40
    res = run(plain, hints={"interval_s": 2.0})
    assert set(res.tables["gpu_samples"]["sample_interval_s"]) == {2.0}
    assert res.meta["samples"] == 5 and res.meta["interval_s"] == 2.0


def test_noheader_ambiguous_or_bare_numbers_not_guessed():
    # the same real rows without units ("nounits"): bare numbers fit many field lists
    nounits = b"0, 100\n1, 100\n2, 7\n"
    assert not sniff_smi(nounits)
    res = run(nounits)
    assert not res.tables.get("gpu_samples", pl.DataFrame()).height and res.unparsed.height == 3
    assert "bare numbers" in res.unparsed["reason"][0] and "--fields" in res.unparsed["reason"][0]
    # a stated field list wins, and makes the input recognisable
    from forensics.sources import recognise
    assert recognise(nounits, {"query_fields": ["index", "utilization.gpu"]})[0] == "nvidia_smi"
    s = run(nounits, hints={"query_fields": ["index", "utilization.gpu"]}).tables["gpu_samples"]
    assert s["util_pct"].to_list() == [100.0, 100.0, 7.0]
    # nvidia-smi's shapes but no known list: recognised as its CSV, rows reported with the shapes seen
    amb = b"45 %, 30 %\n"
    v = sniff_smi(amb)
    assert v and v.confidence < 0.8 and "--fields" in v.reason
    res = run(amb)
    assert res.unparsed.height == 1 and "pct, pct" in res.unparsed["reason"][0]
    # an index column must count from 0 without gaps: a temperature is not taken for one
    from forensics.sources.nvidia_smi import csv_shapes
    assert csv_shapes.infer(["45, 100 %"])[0] is None
    assert csv_shapes.infer(["0, 100 %", "1, 3 %"])[0] == ("index", "utilization.gpu")
    # a stated field list is checked
    import pytest
    from forensics.sources.nvidia_smi.query_csv import stated_hints
    with pytest.raises(ValueError, match="unknown"):
        stated_hints("index,utilisation.gpu")
    with pytest.raises(ValueError, match="interval"):
        stated_hints(None, 0)
    # a bundle's hints are not trusted: a non-list field list is ignored, not a crash
    assert run(nounits, hints={"query_fields": {"a": 1}}).unparsed.height == 3


def test_catalogue_lists_recognise_their_own_rows_unambiguously():
    from forensics.sources.nvidia_smi import csv_shapes
    from forensics.sources.nvidia_smi.query_csv import OTHER_FIELDS, SPECS
    for lst in csv_shapes.CATALOGUE:
        assert all(f in SPECS or f in OTHER_FIELDS for f in lst), lst


# ---------------------------------------------------------------- -q -d sections, fragments, ECC per location


def test_ecc_per_location_8xa100_one_gpu_87_aggregate_dram_correctable():
    res = run(load("q-d-ecc-8xa100-535-dram-correctable-87.txt"), tz="UTC")
    e = res.tables["gpu_ecc"]
    assert e.height == 8 * 15  # 5 volatile + 5 aggregate + 5 "Aggregate Uncorrectable SRAM Sources" per GPU
    hot = e.filter(pl.col("count") > 0)
    assert hot.select("gpu", "pci_bus_id", "scope", "location", "error", "count", "line_no").rows() == [
        (1, "0000:0b:00.0", "aggregate", "dram", "correctable", 87, 50)]
    # the peers' same counter, for a detector comparing GPUs
    peers = e.filter((pl.col("scope") == "aggregate") & (pl.col("location") == "dram") & (pl.col("error") == "correctable"))
    assert peers.sort("gpu")["count"].to_list() == [0, 87, 0, 0, 0, 0, 0, 0]
    assert set(e["error"]) == {"correctable", "uncorrectable", "uncorrectable_parity", "uncorrectable_sec_ded"}
    assert set(e.filter(pl.col("location").str.starts_with("sram_"))["location"]) == {
        "sram_l2", "sram_sm", "sram_microcontroller", "sram_pcie", "sram_other"}
    assert set(e["ts_quality"]) == {"local"}
    s = res.tables["gpu_samples"]
    assert s["ecc_sbe_aggregate"].to_list() == [0, 87, 0, 0, 0, 0, 0, 0]


def test_ecc_per_location_old_layout_and_xml():
    e = run(load("q-v100-410-throttle-old-ecc.txt")).tables["gpu_ecc"]
    locs = set(e.filter(pl.col("scope") == "volatile")["location"])
    assert {"device_memory", "register_file", "l1_cache", "l2_cache", "total"} <= locs
    assert "texture_memory" not in locs  # "N/A": no row
    assert set(e["error"]) == {"correctable", "uncorrectable"}
    x = run(load("qx-t4-515-v11-throttle.xml.txt")).tables["gpu_ecc"]  # <sram_correctable> ... of a T4
    assert x.height == 8 and set(x["scope"]) == {"volatile", "aggregate"} and set(x["location"]) == {"sram", "dram"}
    assert x["line_no"].n_unique() == 1 and set(x["count"]) == {0}


def test_q_d_clock_windows_398_and_old_temperature_key():
    res = run(load("q-d-clock-6gpu-398-windows-prompt.txt"))
    s = sample(res)
    assert (s["sm_clock_mhz"], s["gr_clock_mhz"], s["mem_clock_mhz"], s["max_sm_clock_mhz"]) == (1835.0, 1835.0, 5508.0, 1974.0)
    assert res.unparsed.height == 0 and [c["line_no"] for c in res.meta["commands"]] == [1]  # Windows prompt + command
    # "Gpu : 49 C" of drivers before ~340 (real lines of a 304.108 -q -d TEMPERATURE)
    old = (b"GPU 0000:01:05.0\n    Temperature\n        Gpu                     : 49 C\n")
    assert sample(run(old))["temp_c"] == 49.0


def test_q_fragment_without_gpu_line():
    data = load("q-fragment-grep-clocks-throttle-no-gpu-line.txt")
    v = sniff_smi(data)
    assert v and "no GPU line" in v.reason
    res = run(data)
    assert res.meta["variant"] == "q-text-fragment"
    row = sample(res)
    assert row["reason_gpu_idle"] is True and row["reason_sw_power_cap"] is False and row["pci_bus_id"] is None
    assert res.unparsed.height == 0 and res.meta["commands"][0]["command"].startswith("$ nvidia-smi -q | grep")


def test_topo_markdown_indented_rows_and_wrapped_legend():
    res = run(load("topo-2gpu-markdown-indented-legend-wrapped.txt"))
    assert res.unparsed.height == 0
    assert res.tables["gpu_topo"].select("device", "peer", "link").rows() == [
        ("GPU0", "GPU0", "X"), ("GPU0", "GPU1", "NODE"), ("GPU1", "GPU0", "NODE"), ("GPU1", "GPU1", "X")]
    assert res.tables["gpus"].select("gpu", "cpu_affinity", "numa_node").rows() == [(0, "0-15", 0), (1, "0-15", 0)]
    # a row whose cells were cut when copied is reported, not guessed
    bad = load("topo-2gpu-markdown-indented-legend-wrapped.txt").replace(b"NODE    0-15", b"NO0-15")
    res = run(bad)
    assert res.unparsed.height == 1 and "damaged cell" in res.unparsed["reason"][0]


def test_memory_lists_told_apart_by_values_not_by_order():
    # index,name,memory.total,memory.used and index,(name,)memory.used,memory.total fit the same shapes:
    # memory.total >= memory.used on every row decides, and rows where neither holds are not guessed
    a = run(load("csv-noheader-index-name-total-used-util-4xa100.csv.txt")).tables["gpu_samples"]
    assert a.select("gpu", "mem_total_mib", "mem_used_mib", "util_pct").rows()[3] == (3, 81920.0, 14.0, 0.0)
    b = run(load("csv-noheader-index-used-total-util-2gpu.csv.txt")).tables["gpu_samples"]
    assert b.select("mem_used_mib", "mem_total_mib").rows() == [(22605.0, 24564.0), (22077.0, 24564.0)]
    swapped = b"0, NVIDIA L20, 41993 MiB, 46068 MiB, 100 %\n"  # used before total, with a name
    s = run(swapped).tables["gpu_samples"]
    assert s.select("mem_used_mib", "mem_total_mib").rows() == [(41993.0, 46068.0)]
    # total before used without a name is no list seen: its values contradict the one that is (used <= total)
    res = run(b"0, 2000 MiB, 1000 MiB, 5 %\n")
    assert not res.tables.get("gpu_samples", pl.DataFrame()).height and "no known field list" in res.unparsed["reason"][0]
    c = run(load("csv-noheader-index-used-util-4gpu-p2p-deadlock.csv.txt")).tables["gpu_samples"]
    assert c["util_pct"].to_list() == [100.0] * 4 and c["mem_used_mib"][3] == 1052.0


def test_query_compute_apps_block_after_query_gpu_goes_to_processes():
    # experiment notes of an 8x H200 node: --query-gpu, a blank line, --query-compute-apps
    data = load("h200-query-gpu-then-compute-apps-not-found.txt")
    res = parse_nvsmi(data, ParseContext(host="h"))
    assert res.unparsed.height == 0 and res.meta["variant"] == "csv-header+compute-apps"
    assert res.tables["gpu_samples"].height == 8
    p = res.tables["processes"]
    assert p.height == 8 and p["line_no"].to_list() == list(range(12, 20))
    first = p.row(0, named=True)
    assert (first["pid"], first["command"], first["gpus"], first["gpu_mem_used_mib"]) == (
        1328667, "/usr/local/bin/python3.10", [0], 130004.0)
    assert first["gpu_uuids"] == ["GPU-a44622e3-2296-6285-0a86-84d0f6c67900"]
    last = p.row(7, named=True)
    assert (last["command"], last["gpus"]) == (None, [7])  # "[Not Found]": the driver could not name it


def test_query_compute_apps_alone_nounits_and_bad_rows():
    data = (b"pid, process_name, used_gpu_memory [MiB]\n"
            b"27220, ollama.exe, 12497\n"          # nounits (a real Windows paste)
            b"27221, x, [N/A]\n"                   # MIG / WDDM: memory not known
            b"abc, y, 10 MiB\n"
            b"1, two, fields, too many\n")
    from forensics.sources import recognise

    assert recognise(data)[0] == "nvidia_smi"
    res = parse_nvsmi(data, ParseContext(host="h"))
    p = res.tables["processes"]
    assert p.select("pid", "command", "gpu_mem_used_mib").rows() == [(27220, "ollama.exe", 12497.0), (27221, "x", None)]
    assert res.unparsed.select("line_no", "reason").rows() == [
        (4, "pid: unexpected value abc"), (5, "4 fields where the --query-compute-apps header has 3")]
    assert res.meta["variant"] == "csv-compute-apps"


def test_topo_header_underlined_with_ansi_escapes():
    """nvidia-smi underlines the topo -m header on a terminal (ESC[4m ... ESC[0m): still the header."""
    data = load("topo-h200-590-ansi-underline-header.txt")
    assert b"\x1b[4mGPU0" in data
    assert sniff_smi(data[:4096]).confidence >= 0.9
    res = run(data)
    assert res.unparsed.height == 0
    assert res.tables["gpus"].select("gpu", "cpu_affinity", "numa_node").rows() == [(0, "0-23", 0)]
    assert res.tables["gpu_topo"].select("device", "peer", "link").rows() == [("GPU0", "GPU0", "X")]
    # the same bytes without the escapes parse to the same rows
    plain = run(data.replace(b"\x1b[4m", b"").replace(b"\x1b[0m", b""))
    assert plain.tables["gpus"].equals(res.tables["gpus"])


def test_query_csv_header_of_a_newer_driver_with_mostly_new_field_names():
    """Driver 610 prints ~240 --query-gpu fields, most of them names this parser does not map; the
    header is nvidia-smi's all the same (16+ known names), and the known columns are read."""
    from forensics.sources.nvidia_smi import query_csv

    data = load("csv-header-units-239-fields-win-610.csv.txt")
    header = data.decode().splitlines()[0]
    fields = query_csv.header_fields(header)
    assert fields is not None and len(fields) == 239
    res = run(data)
    s = sample(res)
    assert (s["power_w"], s["util_pct"], s["pstate"], s["temp_c"]) == (39.25, 0.0, "P8", 40.0)
    # a long list of names nvidia-smi does not print is still no header
    assert query_csv.header_fields(", ".join(f"col{i}.x" for i in range(40))) is None
    few_known = ", ".join(["index", "name"] + [f"col{i}.x" for i in range(40)])
    assert query_csv.header_fields(few_known) is None


def test_plain_table_550_eight_h100_date_line_is_local_time():
    """The plain `nvidia-smi` table (leptonai/gpud testdata, 8x H100, driver 550.90.07): one sample per GPU
    block with the values of its two lines, the date line as local time, gpus with driver and CUDA
    version, MIG mode from the third line; borders and headers are structure (nothing unparsed)."""
    data = load("table-8xh100-550-no-processes.txt")
    sniff = sniff_smi(data)
    assert sniff.confidence >= 0.95, sniff
    res = run(data, tz="UTC")
    assert res.meta["variant"] == "smi-table" and res.meta["driver_version"] == "550.90.07"
    assert res.unparsed.height == 0 and res.tables["gpu_samples"].height == 8
    s = sample(res, 7)
    assert (s["gpu"], s["pci_bus_id"], s["temp_c"], s["pstate"], s["power_w"], s["power_limit_w"]) == \
        (7, "0000:db:00.0", 23.0, "P0", 72.0, 700.0)
    assert (s["mem_used_mib"], s["mem_total_mib"], s["util_pct"], s["fan_pct"], s["ecc_dbe_volatile"]) == \
        (1.0, 81559.0, 0.0, None, 0)
    assert s["ts"] == dt.datetime(2025, 1, 20, 10, 18, 26, tzinfo=UTC) and s["ts_quality"] == "local"
    g = gpu(res, 0)
    assert (g["name"], g["driver_version"], g["cuda_version"], g["persistence_mode"], g["mig_mode"]) == \
        ("NVIDIA H100 80GB HBM3", "550.90.07", "12.4", "Enabled", "Disabled")
    assert "processes" not in res.tables or res.tables["processes"].height == 0


def test_plain_table_525_fan_err_cut_name_exclusive_process():
    """Driver 525 layout (79 columns), no date line: a fan reading of ERR! is null, not a number; the name
    nvidia-smi cut to fit is kept as printed; 'E. Process' compute mode does not disturb the row."""
    res = run(load("table-525-fan-err-name-cut-eprocess.txt"))
    assert res.unparsed.height == 0
    s = sample(res)
    assert (s["fan_pct"], s["temp_c"], s["pstate"], s["power_w"], s["power_limit_w"], s["mem_used_mib"],
            s["util_pct"], s["ts_quality"]) == (None, 38.0, "P5", 49.0, 450.0, 2021.0, 0.0, "none")
    g = gpu(res)
    assert (g["name"], g["persistence_mode"], g["mig_mode"], g["pci_bus_id"]) == \
        ("NVIDIA GeForce ...", "Disabled", None, "0000:01:00.0")


def test_plain_table_processes_block_alone():
    """The Processes block pasted alone (535 layout with GI/CI columns, names cut with '...'): one processes
    row per line, the same pid on two GPUs twice."""
    data = load("table-processes-block-535-names-cut.txt")
    assert sniff_smi(data).confidence >= 0.9
    res = run(data)
    p = res.tables["processes"]
    assert res.unparsed.height == 0 and p.height == 5
    assert p.select("pid", "gpus", "gpu_mem_used_mib").rows() == [
        (10734, [0], 160.0), (58661, [0], 3.0), (10734, [1], 160.0), (18243, [2], 64.0), (22720, [2], 34.0)]
    assert p["command"][3] == "/usr/bin/X"


def test_plain_table_prompt_and_second_snapshot():
    """A prompt line is the command (meta); a second date line after GPU rows starts sample 1."""
    t = load("table-525-fan-err-name-cut-eprocess.txt").decode()
    data = ("$ nvidia-smi\nTue Sep  3 23:10:20 2024\n" + t + "\nTue Sep  3 23:10:21 2024\n" + t + "\n").encode()
    res = run(data, tz="UTC")
    assert res.unparsed.height == 0 and res.meta["commands"] == [{"line_no": 1, "command": "$ nvidia-smi"}]
    assert res.tables["gpu_samples"].select("sample_no", "ts").rows() == [
        (0, dt.datetime(2024, 9, 3, 23, 10, 20, tzinfo=UTC)), (1, dt.datetime(2024, 9, 3, 23, 10, 21, tzinfo=UTC))]


def test_noheader_rows_take_their_fields_from_the_pasted_command_line():
    """`--format=csv,noheader,nounits` rows state no field and have no unit to recognise them by; the pasted
    command line above them does (a design note of a public repository: RTX 3060 + RTX 5060 Ti)."""
    data = load("csv-noheader-nounits-command-line-2gpu-3060-5060ti.csv.txt")
    sniff = sniff_smi(data)
    assert sniff.confidence >= 0.9 and "command" in sniff.reason, sniff
    res = run(data)
    assert res.unparsed.height == 0 and res.meta["fields_from_command_line"] is True
    assert res.tables["gpu_samples"].select("line_no", "gpu", "mem_used_mib", "mem_total_mib", "util_pct", "temp_c").rows() \
        == [(2, 0, 0.0, 12288.0, 0.0, 42.0), (3, 1, 15868.0, 16311.0, 100.0, 67.0)]
    assert res.tables["gpus"]["name"].to_list() == ["NVIDIA GeForce RTX 3060", "NVIDIA GeForce RTX 5060 Ti"]


def test_noheader_gpu_and_compute_apps_blocks_under_their_command_lines():
    """Two commands, each with its rows: the --query-gpu block gives index and UUID, the --query-compute-apps
    block processes whose GPU index is found through the UUID; a command with a header after it (--format=csv)
    is not taken for one."""
    res = run(load("csv-noheader-nounits-command-lines-gpu-and-compute-apps-a6000.csv.txt"))
    assert res.unparsed.height == 0
    assert res.tables["gpu_samples"].select("gpu", "uuid").rows() == [
        (0, "GPU-9de4332b-3b09-a3b4-5589-30229f0c14fe"), (1, "GPU-9c468c54-b125-4903-1476-77c4d63270be")]
    assert res.tables["processes"].select("pid", "command", "gpus", "gpu_mem_used_mib").rows() == [
        (1337099, "VLLM::Worker_TP0", [0], 44974.0),
        (3177322, "/home/wenchang/asdasdsad/wjq/TTFL/.venv/bin/python", [0], 1194.0),
        (1337100, "VLLM::Worker_TP1", [1], 44974.0)]
    from forensics.sources.nvidia_smi.query_csv import command_fields
    assert command_fields("$ nvidia-smi --query-gpu=index,utilization.gpu --format=csv") is None
    assert command_fields("$ nvidia-smi --query-gpu=index,no.such.field --format=csv,noheader") is None


def test_query_csv_piped_through_column_t_is_read_back_as_csv():
    """`--format=csv | column -s, -t` (a 2018 blog post, 3 GPUs): no commas left, cells two or more spaces apart,
    values with single spaces ('86 %'); the aligned header is recognised and the rows typed as CSV."""
    data = load("csv-column-t-aligned-3gpu-2018-blog.csv.txt")
    sniff = sniff_smi(data)
    assert sniff.confidence >= 0.9 and "column -t" in sniff.reason, sniff
    res = run(data)
    assert res.meta["variant"] == "csv-column-aligned" and res.unparsed.height == 0
    assert res.tables["gpu_samples"].select("gpu", "util_pct", "power_w", "sm_clock_mhz", "fan_pct", "temp_c").rows() == [
        (0, 86.0, 124.29, 2012.0, 70.0, 64.0), (1, 86.0, 120.24, 1987.0, 70.0, 65.0), (2, 89.0, 124.77, 1999.0, 70.0, 65.0)]


def test_column_t_rows_that_do_not_fit_are_reported_as_the_file_has_them():
    data = (b"index   utilization.gpu [%]   fan.speed [%]\n0       86 %                  70 %\n"
            b"1       86 %                  70 %   64\n2       8x6 %                 70 %\n")
    res = run(data)
    assert res.unparsed.select("line_no", "text", "reason").rows() == [
        (3, "1       86 %                  70 %   64", "4 fields where the header has 3"),
        (4, "2       8x6 %                 70 %", "utilization.gpu: unexpected value 8x6 %")]
    assert res.tables["gpu_samples"].select("gpu", "util_pct").rows() == [(0, 86.0)]


def test_plain_table_long_hostile_line_is_refused_quickly():
    """A 2 MB line after the table's banner, full of header words (which the structure pattern backtracks over):
    reported as one unparsed line, in well under a second instead of minutes (the table is at most 89 wide)."""
    import time
    data = (b"| NVIDIA-SMI 550.90.07   Driver Version: 550.90.07   CUDA Version: 12.4 |\n|"
            + b"GPU Memory " * 200000 + b"|x\n")
    t = time.process_time()
    res = run(data)
    assert time.process_time() - t < 5
    assert res.unparsed["reason"].to_list() == ["line longer than 512 characters: not the nvidia-smi table"]


# bash's `time` report as ilyam8 pasted it (netdata/netdata issue 10362, 2020-12-10: comma decimals, spaces
# after the tab of `sys`), around the 2x3090 CSV fixture's rows: the only real paste of a timed nvidia-smi with
# its output found was a held-out file, so the shell lines and the rows are two real captures put together here
_TIMED = ("[ilyam@pc ~]$ time nvidia-smi --query-gpu=index,name,driver_version,temperature.gpu,utilization.gpu,"
          "utilization.memory,memory.total,memory.used --format=csv\n"
          + (FX / "nvidia_smi--csv-header-units-2x3090-515.csv.txt")
          .read_text() + "\nreal\t0m0,388s\nuser\t0m0,007s\nsys\t    0m0,034s\n")


def test_prompt_and_shell_time_report_around_a_paste_are_facts_not_unparsed():
    res = parse_nvsmi(_TIMED.encode(), ParseContext(host="h"))
    check_accounting(res, _TIMED.encode(), "timed")
    assert res.unparsed.height == 0 and res.tables["gpu_samples"].height == 2
    (cmd,) = res.meta["commands"]
    assert cmd["line_no"] == 1 and "time nvidia-smi --query-gpu=index" in cmd["command"]
    assert res.meta["shell_time"] == [{"line_no": 6, "real_s": 0.388, "user_s": 0.007, "sys_s": 0.034}]
    # a lone `real` line, or the three lines out of order, is not a time report: unparsed as before
    half = parse_nvsmi((_TIMED.rsplit("user", 1)[0]).encode(), ParseContext(host="h"))
    assert half.unparsed["text"].to_list() == ["real\t0m0,388s"] and "shell_time" not in half.meta
    # real fixtures: the Windows prompt of a -q -d CLOCK paste and the `#`/`>` prompts of nvlink pastes
    win = parse_nvsmi((FX / "nvidia_smi--q-d-clock-6gpu-398-windows-prompt.txt").read_bytes(), ParseContext())
    assert win.unparsed.height == 0 and win.meta["commands"][0]["command"].endswith("nvidia-smi.exe -q -d CLOCK")
    nvl = parse_nvsmi((FX / "nvidia_smi--nvlink-gt-r-8xh800-525-elided.txt").read_bytes(), ParseContext())
    assert [c["line_no"] for c in nvl.meta["commands"]] and nvl.unparsed.height == 0  # (its "...": an elision)
    # a line that only mentions nvidia-smi is not a command line
    err = parse_nvsmi(b"nvidia-smi: command not found\n" + _TIMED.split("\n", 1)[1].encode(), ParseContext())
    assert "commands" not in err.meta and err.unparsed["text"].to_list()[0] == "nvidia-smi: command not found"


def test_q_paste_that_starts_inside_a_gpu_record():
    # fastfetch issue 1029 (CarterLi's -q of a GTX 1060 Max-Q, driver 55x): the stored paste starts inside ECC Errors
    res = run(load("q-starts-mid-record-ecc-gtx1060-maxq.txt"))
    assert (res.lines, res.unparsed.height, res.meta["variant"], res.meta["cut_lines"]) == (30, 0, "q-text-fragment", 14)
    row = sample(res)
    assert (row["pci_bus_id"], row["temp_c"], row["power_w"]) == (None, 51.0, 31.83)
    # the next GPU record after the cut one is read as usual, in the same snapshot
    nxt = load("q-starts-mid-record-ecc-gtx1060-maxq.txt") + b"GPU 00000000:02:00.0\n    Temperature\n        GPU Current Temp : 40 C\n"
    s = run(nxt).tables["gpu_samples"]
    assert s.select("gpu", "pci_bus_id", "temp_c").rows() == [(0, None, 51.0), (1, "0000:02:00.0", 40.0)]
    # indented prose (no "key : value") before any GPU is not taken for a record: unparsed as before
    prose = run(b"        see the output below\n" + load("q-d-performance-v100-410.txt"))
    assert prose.unparsed["line_no"].to_list() == [1] and "cut_lines" not in prose.meta


def test_q_paste_that_starts_at_a_gpu_level_line_is_recognised_and_read():
    from forensics.sources import parse_bytes, recognise

    pairs = [("q-a10-535-DERIVED-starts-at-product-name.txt", "q-a10-535-remap-pending.txt"),
             ("q-v100-410-DERIVED-starts-at-serial-masked.txt", "q-v100-410-throttle-old-ecc.txt")]
    for cut, whole in pairs:
        data = load(cut)
        dedent = b"\n".join(t[4:] if t.startswith(b"    ") else t for t in data.split(b"\n"))
        ref = sample(run(load(whole)))
        for form in (data, dedent, data[:data.index(b"    PCI\n")]):  # as pasted; indent lost; only the top lines
            name, verdict = recognise(form)
            assert name == "nvidia_smi" and "starts inside a GPU record" in verdict.reason, (cut, verdict)
            res = run(form)
            assert res.unparsed.height == 0 and res.meta["variant"] == "q-text-fragment", (cut, res.unparsed)
        res = run(data)
        row = sample(res)
        assert row["line_no"] == 1 and row["ts"] is None
        for col in ("uuid", "pci_bus_id", "power_w", "temp_c", "ecc_dbe_aggregate", "vbios_version"):
            if col in row:
                assert row[col] == ref[col], (cut, col)
        _, whole_again = parse_bytes(data, None, ParseContext(host="node01"))
        assert whole_again.tables["gpu_ecc"].equals(res.tables["gpu_ecc"])
    assert (gpu(run(load(pairs[0][0])))["name"], gpu(run(load(pairs[0][0])))["serial"]) == ("NVIDIA A10", "1324521052681")
    masked = gpu(run(load(pairs[1][0])))
    assert masked["serial"] is None and masked["name"] is None  # XXXXXXXXXXXX: no serial; the name was above the cut
    assert masked["uuid"] == gpu(run(load(pairs[1][1])))["uuid"]
    # "key : value" lines of another tool are not taken for nvidia-smi -q
    other = b"Serial Number : 123\nState : Active\nSpeed : 100G\nWidth : 4x\n"
    assert recognise(other)[0] != "nvidia_smi"


def test_q_paste_that_starts_inside_a_sub_section_with_its_indent_lost():
    # the real A10 -q cut at line 23 ("        Pending : N/A" of a section whose header is above the paste, then
    # "    Serial Number"), pasted as is and with the record's 4-space indent taken off, read the way
    # `forensics parse` reads a file (the paste layer first): before, the dedented form was recognised but
    # its first line at column 0 was not the first line, so none of its 4-columns-left lines was read
    from forensics.sources import parse_bytes

    whole = load("q-a10-535-remap-pending.txt")
    data = b"\n".join(whole.split(b"\n")[22:])
    dedent = b"\n".join(t[4:] if t.startswith(b"    ") else t for t in data.split(b"\n"))
    ref = sample(run(whole))
    for form in (data, dedent):
        name, res = parse_bytes(form, None, ParseContext(host="node01"))
        assert name == "nvidia_smi"
        assert res.unparsed.height == 0 and res.meta["variant"] == "q-text-fragment", res.unparsed.rows()[:3]
        row = sample(res)
        for col in ("uuid", "power_w", "temp_c", "ecc_dbe_aggregate"):
            if col in row:
                assert row[col] == ref[col], col


def test_summary_table_of_driver_295_nb_layout():
    # an Ubuntu forums post (2012): `nvidia-smi` on driver 295.40, the table of drivers 270-295 ("Nb.",
    # "Volatile ECC SB / DB", "64 C", "577MB / 1023MB"). Before: 5 of its 14 lines unparsed, no row
    res = run(load("ubuntuforums-2012-295-nb-table-gtx550ti.txt"))
    assert res.unparsed.height == 0 and res.lines == 14
    s = sample(res)
    assert (s["gpu"], s["pci_bus_id"], s["fan_pct"], s["temp_c"]) == (0, "0000:01:00.0", 33.0, 64.0)
    assert (s["mem_used_mib"], s["mem_total_mib"], s["power_w"], s["pstate"], s["util_pct"]) == (577.0, 1023.0, None, None, None)
    g = res.tables["gpus"].row(0, named=True)
    assert (g["name"], g["driver_version"], g["persistence_mode"]) == ("GeForce GTX 550 Ti", "295.40", None)


def test_summary_table_of_driver_290_with_the_index_escaped_as_markdown():
    # the Arch wiki (Italian page, 2012) example of `nvidia-smi` on driver 290.10 with a GeForce 8500 GT, as the
    # page's Markdown keeps it: the index written "0\\." and columns shifted a blank. Before: recognised, 3 lines
    # unparsed and 0 rows ("passing by coverage" at 80%)
    res = run(load("arch-wiki-it-2012-290-nb-table-8500gt-md-escaped-index.txt"))
    assert res.unparsed.height == 0 and res.lines == 15
    s = sample(res)
    assert (s["gpu"], s["pci_bus_id"], s["fan_pct"], s["temp_c"]) == (0, "0000:01:00.0", 30.0, 62.0)
    assert (s["mem_used_mib"], s["mem_total_mib"], s["power_w"], s["util_pct"]) == (42.0, 255.0, None, None)
    g = res.tables["gpus"].row(0, named=True)
    assert (g["name"], g["driver_version"]) == ("GeForce 8500 GT", "290.10")
    assert "processes" not in res.tables or res.tables["processes"].height == 0  # "ERROR: Not Supported": no process


def test_windows_summary_table_tcc_wddm_header():
    # a GPU report on a Windows laptop (driver 551.76): the table names the driver model ("TCC/WDDM", "WDDM")
    # where Linux prints Persistence-M. Before: the header, GPU and state lines unparsed, no gpu row
    res = run(load("windows-551-tcc-wddm-header-4060-laptop-16-procs.txt"))
    assert res.unparsed.height == 0 and res.lines == 35
    s = sample(res)
    assert (s["gpu"], s["pci_bus_id"], s["fan_pct"], s["temp_c"], s["pstate"]) == (0, "0000:01:00.0", None, 57.0, "P0")
    assert (s["power_w"], s["power_limit_w"], s["mem_used_mib"], s["mem_total_mib"], s["util_pct"]) == (21.0, 87.0, 266.0, 8188.0, 13.0)
    g = res.tables["gpus"].row(0, named=True)
    assert (g["name"], g["driver_version"], g["persistence_mode"]) == ("NVIDIA GeForce RTX 4060 ...", "551.76", None)
    assert res.tables["processes"].height == 16 and res.meta["driver_model"] == "WDDM"


def test_windows_summary_table_driver_model_header():
    # a GitHub report from Windows (`C:\Users\...>nvidia-smi`, driver 560.94): the header says "Driver-Model"
    res = run(load("windows-560-driver-model-header-4060-cmd-prompt-17-procs.txt"))
    assert res.unparsed.height == 0
    s = sample(res)
    assert (s["pci_bus_id"], s["fan_pct"], s["power_w"], s["power_limit_w"], s["mem_used_mib"]) == ("0000:03:00.0", 0.0, None, 115.0, 2420.0)
    assert res.tables["gpus"].row(0, named=True)["driver_version"] == "560.94"
    procs = res.tables["processes"]
    assert procs.height == 17 and procs["gpu_mem_used_mib"].null_count() == 17


# --- `nvidia-smi -q | head` pasted from Markdown: hard line breaks at the ends of the lines ----------

@pytest.mark.parametrize("name, breaks", [
    ("nvidia_smi--q-head-20-gtx1080-396-DERIVED-markdown-backslash-breaks.txt", 18),
    ("nvidia_smi--q-head-20-gtx1080-396-DERIVED-markdown-two-space-breaks.txt", None),
])
def test_q_head_pasted_with_markdown_hard_breaks(name, breaks):
    from forensics.sources import parse_bytes, recognise as recognise_source
    data = (FX / name).read_bytes()
    got, verdict = recognise_source(data)
    assert got == "nvidia_smi", verdict
    _, res = parse_bytes(data, None, ParseContext(host="h"))
    assert res.unparsed.height == 0 and res.meta.get("hard_breaks") == breaks
    g = res.tables["gpus"].row(0, named=True)
    assert (g["name"], g["uuid"], g["driver_version"]) == (
        "GeForce GTX 1080", "GPU-0200523e-f473-3a45-9b4a-fbbe0e41ccf8", "396.54")


def test_hard_breaks_only_where_most_lines_have_one():
    from forensics.sources._base import hard_breaks, strip_hard_breaks_bytes
    assert hard_breaks(b"GPU 00000000:01:00.0\n    Product Name : X\n    Name : C:\\dir\\\n") == 0
    assert hard_breaks(b"a \\\nb\\\n\nc\n") == 2
    assert strip_hard_breaks_bytes(b"a \\\nb\\\n\nc\n") == (b"a\nb\n\nc\n", 2)


def test_unparsed_lines_keep_their_hard_break_as_written():
    data = (b"==============NVSMI LOG============== \\\n\nTimestamp : Sun Apr 14 18:55:20 2019 \\\n"
            b"Driver Version : 396.54 \\\nthis is prose \\\n")
    res = parse_nvsmi(data, ParseContext(host="h"))
    assert res.meta["hard_breaks"] == 4
    assert res.unparsed.select("line_no", "text").rows() == [(5, "this is prose \\")]


def test_q_d_temperature_and_q_d_power_on_their_own():
    # issue 17's -q -d sections: TEMPERATURE (530, two GPUs, a README) and POWER (375, a blog's console with its
    # prompt and the Power Samples block, whose max/min/avg are not the reading) each into gpu_samples and gpus
    from forensics.sources import recognise

    d = Path(__file__).parent / "fixtures" / "nvidia_smi"
    data = (d / "nvidia_smi--q-d-temperature-2gpu-530-zh-readme.txt").read_bytes()
    assert recognise(data)[0] == "nvidia_smi"
    res = run(data)
    g = res.tables["gpu_samples"]
    assert g["pci_bus_id"].to_list() == ["0000:04:00.0", "0000:05:00.0"] and g["temp_c"].to_list() == [46.0, 45.0]
    assert g["ts"].to_list() == [dt.datetime(2023, 5, 5, 1, 49, 8, tzinfo=dt.timezone.utc)] * 2
    assert res.tables["gpus"].height == 2 and res.unparsed.height == 0
    data = (d / "nvidia_smi--q-d-power-375-blog-prompt-power-samples.txt").read_bytes()
    assert recognise(data)[0] == "nvidia_smi"
    res = run(data)
    g = res.tables["gpu_samples"]
    assert g.height == 1 and g["power_w"].to_list() == [12.9] and g["power_limit_w"].to_list() == [160.0]
    assert g["pci_bus_id"].to_list() == ["0000:01:00.0"] and res.unparsed.height == 0
    assert res.meta["commands"][0]["command"].endswith("nvidia-smi -i 0 -q -d power")


def test_list_gpus_with_mig_devices_is_recognised_and_read():
    # nvidia-smi -L of 4 A100 in a telegraf issue, GPU 0 in MIG mode with four 1g.20gb devices
    data = load("list-4xa100-mig-telegraf-issue.txt")
    name, res = parse_bytes(data, None, ParseContext(host="n1"))
    assert name == "nvidia_smi" and res.meta["variant"] == "list" and res.unparsed.height == 0
    g = res.tables["gpus"]
    assert g["gpu"].to_list() == [0, 1, 2, 3]
    assert g["uuid"][3] == "GPU-69ec2344-ebac-b028-f88f-452abb3d7f11" and g["name"][0] == "NVIDIA A100-SXM4-80GB"
    assert g["mig_mode"].to_list() == ["Enabled", None, None, None] and res.meta["mig_devices"] == 4


def test_list_gpus_above_the_table_is_the_tables_paste():
    # -L lines pasted above the summary table do not make the paste a listing: the table is read
    listing = load("list-4x3090-prompt-fenced-gpu-hot-issue.txt").split(b"\n")[2:6]
    table = load("table-8xh100-550-no-processes.txt")
    name, res = parse_bytes(b"\n".join(listing) + b"\n" + table, None, ParseContext(host="n1"))
    assert name == "nvidia_smi" and res.meta["variant"] != "list" and res.tables["gpu_samples"].height == 8


def test_dmon_markdown_quote_with_escaped_hash_is_read():
    # nvidia-smi dmon -s pucvmet of 4 GPUs quoted in a GitHub issue, its "#" escaped as "\#"
    name, res = parse_bytes(load("dmon-4gpu-pucvmet-markdown-quote-escaped-hash.txt"), None, ParseContext(host="n1"))
    assert name == "nvidia_smi" and res.meta["variant"] == "dmon" and res.unparsed.height == 0
    s = res.tables["gpu_samples"].sort("gpu")
    assert s["gpu"].to_list() == [0, 1, 2, 3] and s["sample_no"].unique().to_list() == [0]
    r = s.row(3, named=True)
    assert (r["power_w"], r["temp_c"], r["util_pct"], r["mem_util_pct"], r["mem_clock_mhz"], r["gr_clock_mhz"],
            r["mem_used_mib"], r["pcie_rx_kb_s"], r["ecc_sbe_aggregate"]) == (86, 70, 18, 6, 4513, 1784, 11660, 62 * 1024,
                                                                             None)


def test_dmon_cycles_of_one_gpu_and_a_row_that_does_not_fit():
    data = load("dmon-s-pucvmet-c4-gtemp-mtemp-jpg-ofa-guide-fenced.txt")
    res = run(data)
    s = res.tables["gpu_samples"]
    assert s["sample_no"].to_list() == [0, 1, 2, 3] and s["mem_temp_c"].to_list() == [41, 41, 42, 41]
    assert res.unparsed.height == 0 and "nvidia-smi dmon" in str(res.meta)
    res = run(data.replace(b"  0  2619  1410\n    0   160", b"  0  2619\n    0   160"))  # a row cut short
    assert s.height - 1 == res.tables["gpu_samples"].height and "columns of its header" in res.unparsed["reason"][0]


def test_backtick_opened_paste_and_border_cut_short_are_structure():
    # -q -d of a 375 driver pasted after an inline-code backtick on the banner (gnome applet issue 356)
    res = run(load("q-375-gt-backtick-opened-banner-gnome-applet-issue.txt"))
    assert res.unparsed.height == 0 and sample(res)["util_pct"] == 47 and sample(res)["mem_used_mib"] == 1934
    # the GT 640 table opened by a backtick and cut inside its last border (DERIVED)
    res = run(load("table-415-gt640-DERIVED-backtick-opened-cut-short.txt"))
    assert res.unparsed.height == 0 and sample(res)["temp_c"] == 30 and sample(res)["fan_pct"] == 30
    # a line of other characters after a border stays unparsed
    res = run(load("table-415-gt640-DERIVED-backtick-opened-cut-short.txt") + b"+--- this GPU is too old\n")
    assert res.unparsed["line_no"].to_list() == [10]


def test_csv_noheader_under_a_backslash_continued_command_and_a_caption():
    # DERIVED: the command's --format on a continuation line, ">> output:" between it and the rows
    data = load("csv-noheader-nounits-2gpu-3060-5060ti-DERIVED-backslash-continued-command-output-caption.csv.txt")
    name, res = parse_bytes(data, None, ParseContext(host="n1"))
    assert name == "nvidia_smi" and res.unparsed.height == 0
    want = run(load("csv-noheader-nounits-command-line-2gpu-3060-5060ti.csv.txt")).tables["gpu_samples"]
    got = res.tables["gpu_samples"]
    cols = ["gpu", "mem_used_mib", "mem_total_mib", "util_pct", "temp_c"]
    assert got.select(cols).rows() == want.select(cols).rows() and got["line_no"].to_list() == [4, 5]


@pytest.mark.parametrize("name,n,last_uuid", [
    ("list-2x-quadro-rtx4000-DERIVED-bare-command-four-backticks-last-line-cut.txt", 2,
     "GPU-d6de6afc-bdfe-75c4-5273-0544439153fc"),
    ("list-4x2080ti-zh-blog-DERIVED-cut-inside-uuid.txt", 4, None),
])
def test_list_whose_last_line_was_cut_short_keeps_that_gpu(name, n, last_uuid):
    # the paste's last GPU line lost its closing parenthesis (and perhaps part of its UUID): before, that
    # line was unparsed (half of a two-GPU listing); now it is the GPU's row, the cut said, a cut UUID null
    got, res = parse_bytes(load(name), None, ParseContext(host="n1"))
    g = res.tables["gpus"].sort("gpu")
    assert got == "nvidia_smi" and res.unparsed.height == 0 and g.height == n
    assert g["gpu"].to_list() == list(range(n)) and g["uuid"][-1] == last_uuid and g["uuid"][0].startswith("GPU-")
    assert res.meta["cut_last_line"]["uuid_whole"] is (last_uuid is not None)
    check_accounting(res, load(name), name)


def test_a_cut_gpu_line_that_is_not_the_last_stays_unparsed():
    data = (b"GPU 0: Quadro RTX 4000 (UUID: GPU-c7b57be0-94ff-d352-a59b-d0ee00aeed43\n"
            b"GPU 1: Quadro RTX 4000 (UUID: GPU-d6de6afc-bdfe-75c4-5273-0544439153fc)\n")
    _, res = parse_bytes(data, "nvidia_smi", ParseContext(host="n1"))
    assert res.tables["gpus"].height == 1 and res.unparsed.height == 1 and "cut_last_line" not in res.meta


@pytest.mark.parametrize("name,uuid,cut_line", [
    ("qx-3090-555-v12-astra-issue-cut-mid-element.xml.txt", "GPU-8957c40c-ccda-23ec-9b28-f0ec12f25f2a", 35),
    ("qx-geforce410m-390-v9-1panel-issue-cut-mid-tag.xml.txt", "GPU-xxxxx11f-ce5d-xxxx-xxxx-6ea62fb1xxxx", 28),
])
def test_qx_document_cut_short_inside_its_gpu_gives_the_complete_elements(name, uuid, cut_line):
    # a -q -x paste that stops mid-way (inside its only GPU): before, no row and every line of the GPU
    # unparsed as malformed XML; now the GPU's complete elements are its row, only the cut line unparsed
    got, res = parse_bytes(load(name), None, ParseContext(host="n1"))
    assert got == "nvidia_smi" and res.meta["variant"] == "q-xml"
    g = res.tables["gpus"]
    assert g.height == 1 and g["uuid"][0] == uuid and g["name"][0].startswith(("NVIDIA GeForce", "GeForce"))
    assert res.unparsed["line_no"].to_list() == [cut_line]
    assert "truncated" in res.unparsed["reason"][0]
    assert res.meta["cut"] == [{**res.meta["cut"][0], "line_no": cut_line, "partial_gpu": 0, "gpus_whole": 0}]
    check_accounting(res, load(name), name)


def test_qx_cut_keeps_complete_leaves_of_an_open_section_and_drops_the_open_leaf():
    doc = load("qx-t4-515-v11-throttle.xml.txt").split(b"\n")
    i = next(j for j, x in enumerate(doc) if b"<gpu_temp>" in x)
    data = b"\n".join(doc[:i + 1]) + b"\n\t\t\t<gpu_temp_max_threshold>9"
    _, res = parse_bytes(data, "nvidia_smi", ParseContext(host="n1"))
    s = res.tables["gpu_samples"]
    assert s.height == 1 and s["temp_c"][0] is not None and s["mem_total_mib"][0] == 15360.0
    assert res.unparsed.height == 1 and res.meta["cut"][0]["partial_gpu"] == 0


def test_qx_syntax_error_inside_is_no_cut():
    # a document broken in the middle (not cut short) keeps the old rule: no row from the broken GPU
    doc = load("qx-t4-515-v11-throttle.xml.txt").replace(b"<gpu_temp>", b"<gpu_temp <", 1)
    _, res = parse_bytes(doc, "nvidia_smi", ParseContext(host="n1"))
    assert res.tables["gpu_samples"].height == 0 and "cut" not in res.meta
