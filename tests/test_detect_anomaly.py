"""The anomaly model on its own (no rule findings to explain anything away): it finds the straggler
of the simulator's `straggler` scenario on the right host, naming its features, stays silent on
healthy clusters, is deterministic, and leaves what a rule already explains to the rule."""
from __future__ import annotations

import datetime as dt
import json
import tarfile

import numpy as np
import polars as pl
import pytest

from forensics import schema
from forensics.db import open_bundle
from forensics.detect import anomaly
from forensics.detect.rules import prepare
from forensics.simulate import SimConfig, write_bundle

# the quiet simulator (no benign confounders): what each detector finds in isolation; the noisy world is
# measured by benchmarks/detection_eval.py and tests/test_detect_confounders.py
SIZE = dict(nodes=4, gpus_per_node=4, duration_s=240.0, interval_s=2.0, confounders=False)


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    root = tmp_path_factory.mktemp("anomaly")
    out = {}

    def get(scenario, seed):
        if (scenario, seed) not in out:
            path = root / f"{scenario}-{seed}.tar.gz"
            write_bundle(SimConfig(scenario=scenario, seed=seed, **SIZE), path)
            with tarfile.open(path) as tf:
                labels = json.load(tf.extractfile("truth/labels.json"))
            b = open_bundle(path, cache_dir=root / "cache")
            prepare(b.con)
            out[(scenario, seed)] = (b, labels)
        return out[(scenario, seed)]

    return get


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_model_finds_the_straggler(bundles, seed):
    b, labels = bundles("straggler", seed)
    truth = labels["faults"][0]
    found = anomaly.detect_anomalies(b, schema.empty("findings")).to_dicts()
    assert [f["kind"] for f in found] == ["straggler"], found
    f = found[0]
    assert f["hosts"] == truth["hosts"] and f["detector"] == "anomaly_model"
    ev = json.loads(f["evidence"])
    assert ev["top_features"][0] == "gpu_power_w" and ev["z_vs_peer_median"]["gpu_power_w"] > 1.0
    start, end = dt.datetime.fromisoformat(truth["start"]), dt.datetime.fromisoformat(truth["end"])
    assert f["start"] < end and f["end"] > start  # overlaps the true window
    assert "gpu_power_w" in f["summary"] and f["severity"] == "warning"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_model_is_silent_on_healthy_clusters(bundles, seed):
    b, _ = bundles("healthy", seed)
    assert anomaly.detect_anomalies(b, schema.empty("findings")).height == 0


def test_model_is_deterministic_and_defers_to_rules(bundles):
    b, labels = bundles("straggler", 1)
    first = anomaly.detect_anomalies(b, schema.empty("findings"))
    assert first.equals(anomaly.detect_anomalies(b, schema.empty("findings")))
    rule = first.with_columns(pl.lit("straggler_rule").alias("detector"))  # a rule said the same
    assert anomaly.detect_anomalies(b, rule).height == 0


def test_peer_z_floors_jitter_and_flags_a_deviating_host():
    w = dt.datetime(2026, 12, 1, 10, tzinfo=dt.timezone.utc)
    feat = pl.DataFrame({
        "host": ["a", "b", "c", "d"] * 2,
        "w": [w] * 4 + [w + dt.timedelta(seconds=30)] * 4,
        "gpu_power_w": [500.0, 501.0, 499.5, 500.5, 500.0, 500.2, 499.9, 650.0],
    })
    z, cols = anomaly.peer_z(feat)
    assert cols == ["gpu_power_w"]
    z0 = z.filter(pl.col("w") == w)["gpu_power_w"].abs().max()
    assert z0 < 0.1  # 1 W of jitter against a 25 W floor (5% of the median)
    zd = z.filter((pl.col("w") > w) & (pl.col("host") == "d"))["gpu_power_w"].item()
    assert zd > 5


# --- the episode's statistic and its severity, on feature tables built by hand (no simulator): the benign
# patterns of detection_eval held-out seed 7505 (32 nodes x 10 s x 60 min, confounders on), where the model
# gave six false warnings

def _feature_bundle(n_hosts: int, n_windows: int, host_fn):
    """A stand-in bundle whose det_host_windows holds `n_hosts` hosts x `n_windows` windows of 30 s; each
    host's GPU features are its peers' steady values (+-0.5 W, +-0.3 C of jitter) changed by
    `host_fn(host_index, window_index, row)`; no NIC features."""
    import duckdb

    w0 = dt.datetime(2026, 12, 1, 10, tzinfo=dt.timezone.utc)
    rows = []
    for h in range(n_hosts):
        for k in range(n_windows):
            jit = ((h * 7 + k * 3) % 5 - 2) / 4  # -0.5 .. +0.5, deterministic
            row = {"host": f"node{h + 1:02d}", "w": w0 + dt.timedelta(seconds=30 * k), "gpu_util_pct": 99.6,
                   "gpu_util_min_pct": 99.0, "gpu_power_w": 550.0 + jit, "gpu_mem_util_pct": 35.0,
                   "gpu_sm_clock_mhz": 1950.0, "gpu_temp_max_c": 66.0 + jit * 0.6}
            host_fn(h, k, row)
            rows.append(row)
    con = duckdb.connect()
    hw = pl.DataFrame(rows)  # noqa: F841 (read by name below)
    con.execute("CREATE TABLE det_host_windows AS SELECT * FROM hw")
    con.execute("CREATE TABLE det_nic_windows (host VARCHAR, w TIMESTAMPTZ, nic_tx_mb_s DOUBLE, nic_pause_per_s DOUBLE)")
    return type("FeatureBundle", (), {"con": con})()


def test_lasting_needs_mean_and_median_of_the_whole_span():
    # node28 of seed 7505: a shared checkpoint stall seen one window early (-9.9 scales of utilisation) after
    # two windows flagged by the power alternation: one window is no lasting deviation
    assert anomaly.lasting(np.array([0.05, 0.0, -9.88])) == 0.0
    # node05 of seed 7505: power alternating around its peers' median at 10 s sampling (+-2 scales), with
    # a checkpoint seen one window early (-9.0, +12.3): its span is +0.85 on average, under Z_REPORT
    span = np.array([1.9, -3.0, 1.4, -0.9, 6.1, -1.6, 1.7, -9.0, 12.3, -0.1, 1.7, -1.1, 1.9, -0.9, 2.4])
    assert 0 < anomaly.lasting(span) < anomaly.Z_REPORT
    # a deviation that lasts keeps its size: both statistics agree, the smaller is taken
    assert anomaly.lasting(np.array([3.1, 2.9, 3.4, 2.8, 3.0])) == pytest.approx(3.0)
    assert anomaly.lasting(np.array([-2.5, -2.4, -2.6])) == pytest.approx(-2.5)
    assert anomaly.lasting(np.array([])) == 0.0


def test_alternating_power_of_a_host_sampled_at_another_phase_is_no_anomaly():
    """10 s sampling: three 1 s power readings per window, each at one phase of the step; a host whose
    sampler runs at another phase reads +2.5 scales above its peers' median in one window and -1.0 in
    the next, for eight minutes. The rolling median flags every other window; averaged over those alone
    (before: a warning of +2.5 MAD) the host looks 70 W hungrier, over the span it is +0.75 scales."""
    scale = 0.05 * 550.0  # the power scale's floor at this median (5%)

    def alternate(h, k, row):
        if h == 4 and 10 <= k < 26:
            row["gpu_power_w"] += (2.5 if k % 2 == 0 else -1.0) * scale

    b = _feature_bundle(8, 40, alternate)
    assert anomaly.detect_anomalies(b, schema.empty("findings")).height == 0


def test_a_lasting_power_deviation_is_still_a_warning():
    # the same host drawing +3 scales for ten windows (5 minutes): both statistics hold it
    def hungry(h, k, row):
        if h == 4 and 10 <= k < 20:
            row["gpu_power_w"] += 3.0 * 0.05 * 550.0

    found = anomaly.detect_anomalies(_feature_bundle(8, 40, hungry), schema.empty("findings")).to_dicts()
    assert [(f["kind"], f["severity"], f["hosts"], f["subject"]) for f in found] == [
        ("anomaly", "warning", ["node05"], "gpu_power_w")]
    assert json.loads(found[0]["evidence"])["z_vs_peer_median"]["gpu_power_w"] == pytest.approx(3.0, abs=0.1)


def test_a_hotter_host_at_its_peers_clocks_is_info_not_a_warning():
    """Rack position: one host's GPUs 10 C above the median all along (2.5 scales of the 4 C floor), its
    clocks, power and utilisation with its peers': no work lost, a cooling check (info)."""
    def hot(h, k, row):
        if h == 2:
            row["gpu_temp_max_c"] += 10.0

    found = anomaly.detect_anomalies(_feature_bundle(8, 40, hot), schema.empty("findings")).to_dicts()
    assert [(f["kind"], f["severity"], f["hosts"], f["subject"]) for f in found] == [
        ("anomaly", "info", ["node03"], "gpu_temp_max_c")]
    assert "no feature that costs work" in found[0]["summary"]

    # hotter AND its clocks lower (a throttling host): a warning
    def hot_and_slow(h, k, row):
        if h == 2:
            row["gpu_temp_max_c"] += 10.0
            row["gpu_sm_clock_mhz"] -= 300.0

    found = anomaly.detect_anomalies(_feature_bundle(8, 40, hot_and_slow), schema.empty("findings")).to_dicts()
    assert [(f["severity"], f["hosts"]) for f in found] == [("warning", ["node03"])]


def test_a_feature_past_a_double_compares_with_nothing():
    """One host's GPU power averaged past a double for six windows (two 1.7e308 W readings in a window: DuckDB's
    avg is inf): its z-score was +inf, an `anomaly` warning 'gpu_power_w +inf MAD' whose evidence held
    'Infinity' (no JSON number, RFC 8259). Such a value is no measurement: no finding, and the model still
    sees the other host's real deviation."""
    def broken(h, k, row):
        if h == 4 and 10 <= k < 16:
            row["gpu_power_w"] = float("inf")
        if h == 2 and 20 <= k < 30:
            row["gpu_power_w"] += 3.0 * 0.05 * 550.0

    b = _feature_bundle(8, 40, broken)
    z, _ = anomaly.peer_z(anomaly.features(b))
    assert z.filter(pl.col("host") == "node05")["gpu_power_w"].null_count() == 6
    found = anomaly.detect_anomalies(b, schema.empty("findings")).to_dicts()
    assert [(f["kind"], f["severity"], f["hosts"], f["subject"]) for f in found] == [
        ("anomaly", "warning", ["node03"], "gpu_power_w")]
    assert json.loads(found[0]["evidence"], parse_constant=lambda c: pytest.fail(f"{c} in the evidence"))
