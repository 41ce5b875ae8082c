"""ib_link_degraded: an RDMA port down, retrained narrower, or with physical-layer errors growing past
infiniband-diags' thresholds; a port whose link_downed counter rose is a link flap instead."""
from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from forensics.analysis import analyze_paths
from forensics.simulate import SimConfig, write_bundle

FIXTURES = Path(__file__).parent / "fixtures" / "infiniband"


def _kind(analysis, kind):
    return [f for f in analysis.findings.to_dicts() if f["kind"] == kind]


def _series(tmp_path: Path, symbol: list[int], downed: list[int] | None = None, rate: str = "400 Gb/sec (4X NDR)") -> Path:
    out = []
    for k, sym in enumerate(symbol):
        ts = dt.datetime(2026, 11, 30, 10, 0, 5 * k, tzinfo=dt.timezone.utc).isoformat(timespec="microseconds")
        base = "/sys/class/infiniband/mlx5_3/ports/1"
        out += [f'#### forensics-sample ts={ts} argv="grep -H -s -r . {base}/state"', f"{base}/state:4: ACTIVE",
                f"{base}/phys_state:5: LinkUp", f"{base}/rate:{rate}", f"{base}/counters/symbol_error:{sym}",
                f"{base}/counters/link_downed:{(downed or [0] * len(symbol))[k]}"]
    d = tmp_path / "in"
    d.mkdir()
    (d / "sysfs-mlx5_3-1.txt").write_text("\n".join(out) + "\n")
    return d


@pytest.mark.parametrize("symbol,found", [([5, 5, 9, 14], 0), ([5, 5, 9, 15], 1)])
def test_symbol_errors_against_the_infiniband_diags_threshold(tmp_path, symbol, found):
    a = analyze_paths([_series(tmp_path, symbol)], cache_dir=tmp_path / "c", host="n1")
    got = _kind(a, "ib_link_degraded")
    assert len(got) == found
    if found:
        assert got[0]["severity"] == "warning" and "symbol_error +10" in got[0]["summary"]
        assert json.loads(got[0]["evidence"])["symbol_error"] == 10


def test_a_link_that_went_down_is_a_flap_not_a_degraded_link(tmp_path):
    a = analyze_paths([_series(tmp_path, [0, 0, 40, 90], downed=[3, 3, 4, 4])], cache_dir=tmp_path / "c", host="n1")
    assert _kind(a, "ib_link_degraded") == []
    flap = _kind(a, "link_flap")
    assert len(flap) == 1 and flap[0]["subject"] == "mlx5_3 port 1" and "link_down counter +1" in flap[0]["summary"]


def test_real_ibstat_with_ports_down(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    shutil.copy(FIXTURES / "infiniband--ibstat-gpud-h100-down-polling-roce.txt", d / "ibstat.txt")
    a = analyze_paths([d], cache_dir=tmp_path / "c", host="n1")
    got = sorted((f["subject"], f["severity"]) for f in _kind(a, "ib_link_degraded"))
    assert got == [("mlx5_11 port 1", "critical"), ("mlx5_5 port 1", "critical")], got
    assert all("not up in 1 of 1 snapshot(s)" in f["summary"] for f in _kind(a, "ib_link_degraded"))


def test_real_ibstat_all_active_has_nothing(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    shutil.copy(FIXTURES / "infiniband--ibstat-shadeform-8x-cx6-hdr-rate100.txt", d / "ibstat.txt")
    a = analyze_paths([d], cache_dir=tmp_path / "c", host="n1")
    assert _kind(a, "ib_link_degraded") == []


def test_simulated_half_width_rail(tmp_path):
    out = tmp_path / "b.tar"
    write_bundle(SimConfig("ib_link_degraded", nodes=2, gpus_per_node=2, duration_s=150, interval_s=5, seed=11,
                           confounders=False), out)
    got = _kind(analyze_paths([out], cache_dir=tmp_path / "c"), "ib_link_degraded")
    assert len(got) == 1 and got[0]["severity"] == "critical"
    ev = json.loads(got[0]["evidence"])
    assert (ev["max_rate_gbps"], ev["min_rate_gbps"], ev["width"]) == (400.0, 200.0, "2X") and ev["symbol_error"] >= 10


def test_a_counter_read_by_sysfs_and_perfquery_x_counts_once(tmp_path):
    """The same port's symbol_error in the sysfs series and in perfquery -x's PortCountersExtended (the real
    64-bit block of tests/fixtures/infiniband) rises by 9 in each: +9, under infiniband-diags' 10, not +18."""
    symbol = [5, 5, 9, 14]
    d = _series(tmp_path, symbol)
    block = (FIXTURES / "infiniband--perfquery-x-treydock-two-ports-xmitwait64.txt").read_text().split("# Port extended")[1]
    out = []
    for k, sym in enumerate(symbol):
        ts = dt.datetime(2026, 11, 30, 10, 0, 5 * k, 3000, tzinfo=dt.timezone.utc).isoformat(timespec="microseconds")
        out.append(f'#### forensics-sample ts={ts} argv="perfquery -x -C mlx5_3 -P 1"\n# Port extended'
                   + block.replace("SymbolErrorCounter:..............0", f"SymbolErrorCounter:..............{sym}").rstrip("\n"))
    (d / "perfquery-x-mlx5_3-1.txt").write_text("\n".join(out) + "\n")
    assert _kind(analyze_paths([d], cache_dir=tmp_path / "c", host="n1"), "ib_link_degraded") == []
    (d / "perfquery-x-mlx5_3-1.txt").write_text("\n".join(out).replace("SymbolErrorCounter:..............14",
                                                                        "SymbolErrorCounter:..............15") + "\n")
    got = _kind(analyze_paths([d], cache_dir=tmp_path / "c2", host="n1"), "ib_link_degraded")
    assert len(got) == 1 and json.loads(got[0]["evidence"])["symbol_error"] == 10  # the 64-bit series is the one read
