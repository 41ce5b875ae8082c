"""nvlink_errors: NVLink error counters that grew during the capture (DCGM's health-watch limits), and
an inactive link beside active ones."""
from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from forensics.analysis import analyze_paths

FIXTURES = Path(__file__).parent / "fixtures" / "nvlink"
GPU = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5269b708-678a-b1a8-60f0-c90406537486)"


def _findings(tmp_path, text: str, name: str = "nvlink-e.txt"):
    d = tmp_path / "in"
    d.mkdir()
    (d / name).write_text(text)
    a = analyze_paths([d], cache_dir=tmp_path / "c", host="n1")
    return [f for f in a.findings.to_dicts() if f["kind"] == "nvlink_errors"]


def _series(crc: list[int], recovery: list[int]) -> str:
    out = []
    for k, (c, r) in enumerate(zip(crc, recovery)):
        ts = (dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=30 * k)).isoformat(timespec="microseconds")
        out += [f'#### forensics-sample ts={ts} argv="nvidia-smi nvlink -e"', GPU,
                "\t Link 0: Replay Errors: 0", f"\t Link 0: Recovery Errors: {r}", f"\t Link 0: CRC Errors: {c}",
                "\t Link 1: Replay Errors: 0", "\t Link 1: Recovery Errors: 0", "\t Link 1: CRC Errors: 0"]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("crc,recovery,severity", [
    ([0, 0, 0], [0, 0, 0], None),
    ([10, 30, 300], [0, 0, 0], "warning"),        # 9/s at most: below DCGM's 100/s
    ([10, 30, 3300], [0, 0, 0], "critical"),      # 109/s
    ([0, 0, 0], [0, 1, 1], "critical"),           # one link recovery
])
def test_error_growth_against_dcgm_limits(tmp_path, crc, recovery, severity):
    got = _findings(tmp_path, _series(crc, recovery))
    assert [(f["subject"], f["severity"]) for f in got] == ([("GPU0 link 0", severity)] if severity else [])


def test_inactive_link_beside_active_ones(tmp_path):
    text = GPU + "\n         Link 0: 26.562 GB/s\n         Link 1: <inactive>\n         Link 2: 26.562 GB/s\n"
    got = _findings(tmp_path, text, "nvlink-s.txt")
    assert [(f["subject"], f["severity"]) for f in got] == [("GPU0 link 1", "warning")]


def test_real_status_all_up_has_nothing(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    shutil.copy(FIXTURES / "nvlink--status-gpud-a100-sxm4-8gpu-12links.txt", d / "nvlink-s.txt")
    a = analyze_paths([d], cache_dir=tmp_path / "c", host="n1")
    assert [f for f in a.findings.to_dicts() if f["kind"] == "nvlink_errors"] == []


def test_counter_increases_summed_past_bigint_keep_the_finding(tmp_path):
    # an untrusted capture whose CRC counter climbs to 9e18, resets and climbs again: the increases sum to
    # 1.8e19, past BIGINT; the detector's CAST(sum(...) AS BIGINT) raised and every finding was lost
    d = tmp_path / "in"
    d.mkdir()
    (d / "nvlink-e.txt").write_text(_series([0, 9 * 10**18, 0, 9 * 10**18], [0, 0, 0, 0]))
    a = analyze_paths([d], cache_dir=tmp_path / "c", host="n1")
    assert a.errors == []
    got = [f for f in a.findings.to_dicts() if f["kind"] == "nvlink_errors"]
    assert [(f["subject"], f["severity"]) for f in got] == [("GPU0 link 0", "critical")]  # (3e17/s: past 100/s)
    assert "CRC +18000000000000000000 " in got[0]["summary"]
    assert json.loads(got[0]["evidence"])["crc"] == 18 * 10**18
