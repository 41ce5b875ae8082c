"""The anomaly model on its own (no rule findings to explain anything away): it finds the straggler
of the simulator's `straggler` scenario on the right host, naming its features, stays silent on
healthy clusters, is deterministic, and leaves what a rule already explains to the rule."""
from __future__ import annotations

import datetime as dt
import json
import tarfile

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
