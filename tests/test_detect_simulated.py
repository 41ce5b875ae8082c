"""Detection against the simulator's ground truth: every scenario's faults are found, the root cause
is ranked first, and nothing is reported that the truth does not name (precision), at a small size.
benchmarks/detection_eval.py measures the same at larger sizes and several seeds."""
from __future__ import annotations

import json
import tarfile

import pytest

from forensics.analysis import analyze_paths
from forensics.detect.evaluate import score_bundle
from forensics.simulate import SCENARIOS, SimConfig, write_bundle

# the quiet simulator (no benign confounders): what each detector finds in isolation; the noisy world is
# measured by benchmarks/detection_eval.py and tests/test_detect_confounders.py
SIZE = dict(nodes=4, gpus_per_node=4, duration_s=240.0, interval_s=2.0, seed=5, confounders=False)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    root = tmp_path_factory.mktemp("sim")
    cache = root / "cache"
    out = {}
    paths = {}

    def run(scenario):
        if scenario not in out:
            path = paths[scenario] = root / f"{scenario}.tar.gz"
            write_bundle(SimConfig(scenario=scenario, **SIZE), path)
            with tarfile.open(path) as tf:
                labels = json.load(tf.extractfile("truth/labels.json"))
            findings = analyze_paths([path], cache_dir=cache).findings.to_dicts()
            out[scenario] = (findings, labels, score_bundle(findings, labels))
        return out[scenario]

    run.paths, run.cache = paths, cache
    return run


def test_healthy_cluster_has_no_findings(evaluated):
    findings, _, _ = evaluated("healthy")
    assert [f for f in findings if f["severity"] != "info"] == []


#: faults no detector can see in the collected data, by design of the scenario (said in its docstring)
BLIND: dict[str, str] = {}  # (ib_congestion was here until perfquery -x's 64-bit PortXmitWait was collected)
FAULTY = [pytest.param(s, marks=pytest.mark.xfail(reason=BLIND[s], strict=True)) if s in BLIND else s
          for s in sorted(SCENARIOS) if s != "healthy"]


@pytest.mark.parametrize("scenario", FAULTY)
def test_faults_found_root_first_nothing_false(evaluated, scenario):
    findings, labels, score = evaluated(scenario)
    missed = {k: v for k, v in score["per_kind"].items() if v["found"] < v["faults"]}
    assert not missed, f"missed faults: {missed}"
    assert score["root_first"], f"first root finding {findings[0]['kind']} is not a fault of {labels['faults']}"
    false = [(f["kind"], f["hosts"], f["subject"]) for f in score["false_findings"]]
    assert not false, f"findings the truth does not name: {false}"


@pytest.mark.parametrize("scenario", ["healthy", "dataloader_starvation"])
def test_no_memory_pressure_on_simulated_hosts(evaluated, scenario):
    """The simulator writes no sar -W/-B and no OOM kills: memory_pressure must stay quiet (sar -r alone never fires)."""
    findings, _, _ = evaluated(scenario)
    assert [f for f in findings if f["kind"] == "memory_pressure"] == []


@pytest.mark.parametrize("scenario,kind,table", [("thermal_throttle", "gpu_throttle", "gpu_samples"),
                                                 ("ecc_remap", "ecc_error", "gpu_samples"),
                                                 ("xid_79", "gpu_xid", "kernel_log"),
                                                 ("packet_drops", "nccl_transport_error", "nccl_log"),
                                                 ("link_flap", "link_flap", "kernel_log")])
def test_evidence_first_row_is_one_real_row(evaluated, scenario, kind, table):
    """`evidence.first` names the file and line of one and the same row (the earliest), not a line
    number of one file with the name of another."""
    from forensics.db import open_bundle

    findings, _, _ = evaluated(scenario)
    firsts = [json.loads(f["evidence"])["first"] for f in findings if f["kind"] == kind]
    assert firsts
    b = open_bundle(evaluated.paths[scenario], cache_dir=evaluated.cache)
    for first in firsts:
        rows = b.sql(f"SELECT count(*) AS n FROM {table} WHERE file = $f AND line_no = $l", f=first["file"], l=first["line_no"])
        assert rows["n"][0] >= 1, (first, table)
