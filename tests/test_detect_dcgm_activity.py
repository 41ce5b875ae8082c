"""busy_but_slow reading DCGM's activity (issue 18): where a `dcgmi dmon` series exists, SM active tells
GPUs that compute from GPUs that spin-wait in NCCL kernels, which nvidia-smi utilisation cannot (seed
000's illusion). Small simulated bundles (2 nodes x 2 GPUs, 3 minutes at 5 s)."""
from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest

from forensics.analysis import analyze_paths
from forensics.simulate import SimConfig, write_bundle

SMALL = dict(nodes=2, gpus_per_node=2, interval_s=5.0, duration_s=180.0, seed=3, confounders=False)


@pytest.fixture(scope="module")
def seed000(tmp_path_factory):
    root = tmp_path_factory.mktemp("dcgm")
    path = root / "seed000.tar"
    write_bundle(SimConfig(scenario="seed000_case_study", **SMALL), path, tables=False)
    return root, path


def _busy(findings):
    return [f for f in findings if f["kind"] == "busy_but_slow"]


def test_spin_wait_is_told_by_dcgm(seed000):
    root, path = seed000
    res = analyze_paths([path], cache_dir=root / "cache")
    busy = _busy(res.findings.to_dicts())
    # node02 holds the four misplaced ranks (here both its GPUs): the straggler, computing longer (SM active
    # ~0.65, at the line); node01's GPUs wait for it at ~0.60
    assert "node01" in {h for f in busy for h in f["hosts"]}
    for f in busy:
        ev = json.loads(f["evidence"])
        assert ev["sm_active"] < 0.65 and ev["tensor_active"] < 0.4, ev  # ~100% utilisation, SMs mostly idle
        assert "DCGM" in f["summary"]


def _computing(src: Path, dst: Path) -> None:
    """The same bundle with every GPU's DCGM SM active at 0.93 (as when GEMMs run), all else unchanged."""
    with tarfile.open(src) as tf:
        tf.extractall(dst, filter="data")
    for p in dst.glob("hosts/*/raw/dcgm_dmon/dmon.txt"):
        lines = p.read_text().splitlines(keepends=True)
        head = next(ln for ln in lines if ln.startswith("#Entity"))
        at = head.index("SMACT")
        out = []
        for ln in lines:
            if ln.startswith("GPU ") and re.match(r"[0-9.]+", ln[at:at + 13]):
                ln = ln[:at] + "0.930".ljust(13) + ln[at + 13:]
            out.append(ln)
        p.write_text("".join(out))


def test_dcgm_computing_vetoes_the_power_guess(seed000, tmp_path):
    """Power alone says waiting (the board stays far below its limit); DCGM's SM active at 0.93 says the
    GPUs compute: no busy_but_slow, where the same bundle without that says spin-waiting."""
    root, path = seed000
    _computing(path, tmp_path / "b")
    res = analyze_paths([tmp_path / "b"], cache_dir=tmp_path / "cache")
    assert _busy(res.findings.to_dicts()) == []
