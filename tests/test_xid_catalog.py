"""NVIDIA's Xid catalogue shipped as data (forensics/detect/data/xid_catalog.csv) and gpu_xid's use of it."""
from __future__ import annotations

import json

import polars as pl

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
