"""dcgm_diag_failure on real dcgmi diag outputs: a hardware test's Fail is critical, a Deployment
check's Fail a warning, passes and skips nothing."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from forensics.analysis import analyze_paths

FIXTURES = Path(__file__).parent / "fixtures" / "dcgm"


def _findings(tmp_path, name):
    d = tmp_path / "in"
    d.mkdir()
    shutil.copy(FIXTURES / name, d / "diag.txt")
    a = analyze_paths([d], cache_dir=tmp_path / "c", host="n1")
    return [f for f in a.findings.to_dicts() if f["kind"] == "dcgm_diag_failure"]


def test_gpu_memory_fail_on_every_gpu_is_critical(tmp_path):
    got = _findings(tmp_path, "dcgm--diag-r3-nccl-issue-h100-cuinit-fail-prompt.txt")
    assert [(f["subject"], f["severity"]) for f in got] == [("GPU Memory", "critical")]
    assert "Hardware / GPU Memory (All)" in got[0]["summary"] and "system not yet initialized" in got[0]["summary"]


def test_persistence_mode_fail_is_a_configuration_warning(tmp_path):
    got = _findings(tmp_path, "dcgm--diag-r4-memtest-blog-persistence-fail-wrapped-error.txt")
    assert [(f["subject"], f["severity"]) for f in got] == [("GPU0 Persistence Mode", "warning")]
    assert "requires peristence mode to be enabled" in got[0]["summary"]


@pytest.mark.parametrize("name", ["dcgm--diag-r2-aws-p4d-dcgm333-all-pass-prompt.txt"])
def test_all_pass_gives_nothing(tmp_path, name):
    assert _findings(tmp_path, name) == []


def test_json_output_software_fail_is_a_configuration_warning(tmp_path):
    """dcgmi diag -r 1 -j of DCGM 4.2.3 (GB10): the Deployment 'software' test Fail on GPU 0 with its
    warning (persistence mode disabled) is read from the JSON document like the table's rows."""
    got = _findings(tmp_path, "dcgm--diag-r1-j-dcgm423-gb10-software-fail.json.txt")
    assert [(f["subject"], f["severity"]) for f in got] == [("GPU0 software", "warning")]
    assert "Deployment / software (GPU 0)" in got[0]["summary"]
    assert "Persistence mode for GPU 0 is disabled" in got[0]["summary"]
    assert '"dcgm_version":"4.2.3"' in got[0]["evidence"].replace(" ", "")
