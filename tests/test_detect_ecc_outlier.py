"""A GPU whose correctable ECC count stands far above its peers' is reported with its remapping
state (issue 18): the real 8x A100 `nvidia-smi -q -d ECC` with 87 aggregate correctable DRAM
errors on one GPU and 0 on the other seven."""
from __future__ import annotations

import json

from test_detect_real_fixtures import findings_for

A100 = "nvidia_smi--q-d-ecc-8xa100-535-dram-correctable-87.txt"


def test_the_one_gpu_with_87_correctable_dram_errors_is_found(tmp_path):
    f = findings_for(tmp_path, [("brev", "nvidia_smi", A100)])
    o = f.filter(f["kind"] == "ecc_correctable_outlier").to_dicts()
    assert len(o) == 1
    assert o[0]["subject"] == "GPU1 (0000:0b:00.0)" and o[0]["severity"] == "warning"
    ev = json.loads(o[0]["evidence"])
    assert ev["counters"] == [{"scope": "aggregate", "location": "dram", "count": 87, "peers": 7,
                               "peer_median": 0.0, "peer_max": 0}]
    # -q -d ECC prints no ROW_REMAPPER section: the state is said to be missing, not guessed
    assert ev["remap_pending"] is None and "row remapping: not captured" in o[0]["summary"]
    assert "ecc_error" not in set(f["kind"])  # nothing uncorrectable


def test_no_peers_no_outlier(tmp_path):
    f = findings_for(tmp_path, [("a10", "nvidia_smi", "nvidia_smi--q-a10-535-remap-pending.txt")])
    assert "ecc_correctable_outlier" not in set(f["kind"])


def test_thresholds_are_parameters(tmp_path):
    from forensics.db import open_bundle
    from forensics.detect.engine import run_rule
    from forensics.detect.rules import prepare, rules
    from table_bundles import from_fixtures

    b = open_bundle(from_fixtures(tmp_path, [("brev", "nvidia_smi", A100)]))
    prepare(b.con)
    rule = next(r for r in rules() if r.name == "ecc_correctable_outlier")
    assert run_rule(b, rule).height == 1
    assert run_rule(b, rule, {"min_count": 88}).height == 0
    assert run_rule(b, rule, {"min_peers": 8}).height == 0
