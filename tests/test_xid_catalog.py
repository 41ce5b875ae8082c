"""NVIDIA's Xid catalogue shipped as data (forensics/detect/data/xid_catalog.csv) and gpu_xid's use of it."""
from __future__ import annotations

import json

import polars as pl

from forensics.analysis import analyze_paths
from forensics.detect import xid_catalog
from forensics.detect.catalog import SEVERITIES
from test_detect_real_fixtures import findings_for


def test_catalogue_shape_every_xid_1_to_172_once():
    c = xid_catalog.catalog()
    assert c["xid"].to_list() == list(range(1, 173))
    assert c.columns == ["xid", "mnemonic", "description", "applies_a100", "applies_h100", "applies_b100",
                         "applies_gb200", "immediate_action", "investigatory_action", "driver_gate", "notes"]
    assert c["mnemonic"].null_count() == 0 and c["description"].null_count() == 0
    assert all(c[g].dtype == pl.Boolean for g in c.columns if g.startswith("applies_"))
    # the catalogue gives a bucket to every Xid up to 161 (162-172 have none yet)
    assert c.filter(pl.col("xid") <= 161)["immediate_action"].null_count() == 0
    assert c.filter(pl.col("xid") >= 162)["immediate_action"].null_count() == 11


def test_catalogue_header_states_source_version_licence():
    head = [ln for ln in xid_catalog.CATALOG_FILE.read_text().splitlines() if ln.startswith("#")]
    text = "\n".join(head)
    for word in ("source:", "docs.nvidia.com/deploy/xid-errors", "version:", "licence:", "retrieved"):
        assert word in text


def _row(xid: int) -> dict:
    return xid_catalog.catalog().filter(pl.col("xid") == xid).to_dicts()[0]


def test_known_rows():
    r = _row(79)
    assert (r["mnemonic"], r["immediate_action"], r["investigatory_action"]) == (
        "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "RESTART_BM", "CONTACT_SUPPORT")
    r = _row(48)
    assert (r["mnemonic"], r["description"], r["immediate_action"]) == (
        "ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", "WORKFLOW_XID_48")
    r = _row(94)
    assert (r["mnemonic"], r["description"], r["immediate_action"], r["investigatory_action"]) == (
        "ROBUST_CHANNEL_CONTAINED_ERROR", "Contained memory error", "RESTART_APP", "IGNORE (sympathetic)")
    r = _row(119)
    assert (r["mnemonic"], r["immediate_action"], r["investigatory_action"]) == ("GSP_RPC_TIMEOUT", "RESET_GPU", "INVESTIGATE_SW")
    r = _row(154)
    assert (r["mnemonic"], r["immediate_action"]) == ("GPU_RECOVERY_ACTION_CHANGED", "XID_154")
    # generations: Xid 74 (NVLink 4 and older) is not listed for B100/GB200, the NVLink5 Xids only for them
    assert (_row(74)["applies_h100"], _row(74)["applies_b100"]) == (True, False)
    assert (_row(145)["applies_h100"], _row(145)["applies_gb200"]) == (False, True)


def test_every_bucket_has_a_severity_and_an_action():
    b = xid_catalog.buckets()
    used = set(xid_catalog.catalog()["immediate_action"].drop_nulls())
    assert used <= set(b["bucket"])
    assert set(b["severity"]) <= set(SEVERITIES) and b["action"].null_count() == 0
    sev = dict(zip(b["bucket"], b["severity"]))
    assert (sev["RESTART_BM"], sev["RESET_GPU"], sev["RESTART_APP"], sev["IGNORE"]) == ("critical", "critical", "warning", "info")


def test_gpu_xid_names_mnemonic_bucket_and_action(tmp_path):
    f = findings_for(tmp_path, [("n3", "dmesg", "dmesg--gpud-sxid-readme-raw-xid79-sxid20034.txt"),
                                ("n2", "dmesg", "dmesg--gpud-decode-iso-xid13-xid43.txt")])
    x = {json.loads(r["evidence"])["root_xid"]: r for r in f.filter(f["kind"] == "gpu_xid").to_dicts()}
    assert set(x) == {79, 13}
    assert x[79]["severity"] == "critical"
    assert "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS [RESTART_BM]" in x[79]["summary"]
    assert "restart it" in x[79]["remediation"] and "CONTACT_SUPPORT" in x[79]["remediation"]
    assert json.loads(x[79]["evidence"])["root_bucket"] == "RESTART_BM"
    assert x[13]["severity"] == "warning" and "[RESTART_APP]" in x[13]["summary"]
    assert "restart the application" in x[13]["remediation"]


def test_nvlink5_decode_sheet_shape_and_known_rows():
    """The catalogue's 'Xid 144-150 Decode' sheet (catalogue 610): 95 rows, 32-bit patterns, every action a bucket."""
    d = xid_catalog.nvlink5_decode()
    assert d.height == 95 and set(d["xid"]) == set(range(144, 151))
    assert all(len(p) == 32 and set(p) <= set("01-") for p in d["v1_pattern"].to_list() + d["v2_pattern"].to_list())
    actions = set(d["recovery_action"]) | set(d["action2"].drop_nulls())
    assert actions <= set(xid_catalog.buckets()["bucket"]), actions - set(xid_catalog.buckets()["bucket"])
    head = xid_catalog.NVLINK5_FILE.read_text().split("\nxid,", 1)[0]
    assert "analyzing-xid-catalog.html" in head and "610" in head and "7f70ce96" in head
    row = d.filter((pl.col("subcode") == "RLW_SRC_TRACK") & (pl.col("error_status") == "0x00000001")).row(0, named=True)
    assert (row["recovery_action"], row["severity"], row["fault_origin"]) == ("RESET_GPU", "Fatal", "HW")


def test_gpu_xid_decodes_nvlink5_xids_with_the_sheet(tmp_path):
    """Real Xid 145/149 lines (quoted as kmsg input in leptonai/gpud PRs #1160 and #1174, B200/GB200): the
    decode gives NVIDIA's action per sub code, which sets severity and remediation (gpud reads them the same way:
    145 RLW_RXPIPE errorStatus 0x8 non-fatal; 149 NETIR_LINK_DOWN sub code 37 (0b100101) fatal, peer device)."""
    p = tmp_path / "dmesg.txt"
    p.write_text(
        "[ 1234.567890] NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 "
        "0x00000001 0x00000000 0x00100000 0x00000004)\n"
        "[ 2234.567890] NVRM: Xid (PCI:0000:00:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x025001c6 0x00000000 "
        "0x00000000 0x00000000 0x00000000 0x00000000)\n"
        "[ 3234.567890] NVRM: Xid (PCI:0019:01:00): 149, NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000 0x00000000 "
        "0x00000000 0x00000000 0x00000000)\n")
    found = {json.loads(f["evidence"])["pci_addr"]: f
             for f in analyze_paths([p], cache_dir=tmp_path / "c").findings.to_dicts() if f["kind"] == "gpu_xid"}
    rx = found["0018:01:00.0"]
    assert rx["severity"] == "info" and "[IGNORE]" in rx["summary"]
    assert "RLW_RXPIPE errorStatus 0x00000008 decoded" in rx["remediation"] and "CONTACT_SUPPORT" in rx["remediation"]
    peer = found["0000:00:00.0"]
    assert peer["severity"] == "critical" and "INVESTIGATE_PEER_DEVICE" in peer["remediation"]
    assert "NETIR_LINK_DOWN" in json.loads(peer["evidence"])["worst_decoded"]
    netir = found["0019:01:00.0"]
    assert "NETIR/NETIR_INT" in netir["remediation"] and "SYMPATHETIC_REPORT_SOLO" in netir["remediation"]
