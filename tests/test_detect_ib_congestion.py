"""ib_congestion (issue 18): an InfiniBand link-layer port whose PortXmitWait (sysfs
counters/port_xmit_wait) says it had data to send but sent none for a fifth of the time or more;
RoCE ports' wait is PFC pause time, left to pfc_storm. The series is the collector's
``grep -H -s -r .`` of a port in the layout of tests/fixtures/infiniband/
infiniband--sysfs-grep-gpud-h100-ndr-and-roce-bond.txt (4X NDR InfiniBand port mlx5_1)."""
from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from forensics.analysis import analyze_paths

RATE = 400e9  # 400 Gb/sec (4X NDR)
TICK_BYTES = 8


def _series(tmp_path: Path, shares: list[float], layer: str = "InfiniBand", interval: int = 5) -> Path:
    """A port sampled every `interval` s whose port_xmit_wait grows by `shares[k]` of interval k."""
    out, wait = [], 2489603687  # the fixture port's value
    base = "/sys/class/infiniband/mlx5_1/ports/1"
    for k in range(len(shares) + 1):
        if k:
            wait += round(shares[k - 1] * RATE * interval / (TICK_BYTES * 8))
        ts = (dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.timezone.utc)
              + dt.timedelta(seconds=interval * k)).isoformat(timespec="microseconds")
        out += [f'#### forensics-sample ts={ts} argv="grep -H -s -r . {base}/state"', f"{base}/state:4: ACTIVE",
                f"{base}/phys_state:5: LinkUp", f"{base}/rate:400 Gb/sec (4X NDR)", f"{base}/link_layer:{layer}",
                f"{base}/counters/port_xmit_discards:0", f"{base}/counters/port_xmit_wait:{wait}",
                f"{base}/counters/port_xmit_data:{230442669431839 + k * 10**10}"]
    d = tmp_path / "in"
    d.mkdir(parents=True)
    (d / "sysfs-mlx5_1-1.txt").write_text("\n".join(out) + "\n")
    return d


FIXTURES = Path(__file__).parent / "fixtures" / "infiniband"
#: the real perfquery -x of a PMA with the 64-bit PortXmitWait (CapMask2 bit 1), port 1 of the two
PQ64 = (FIXTURES / "infiniband--perfquery-x-treydock-two-ports-xmitwait64.txt").read_text().split("# Port extended", 2)[1]
#: the real perfquery -x of a PMA without it (CapMask 0x200): no PortXmitWait line
PQ_NO_WAIT = (FIXTURES / "infiniband--perfquery-x-2uanta-capmask-0x200-no-xmitwait.txt").read_text()


def _perfquery(d: Path, shares: list[float] | None, interval: int = 5) -> None:
    """The collector's perfquery -x series of mlx5_1 port 1 beside the sysfs one: the real 64-bit block with
    its PortXmitWait grown by `shares[k]` of interval k (None: the real block without PortXmitWait)."""
    out, wait = [], 22730501  # the fixture's value
    for k in range(len(shares or [0] * 6) + 1):
        if k and shares:
            wait += round(shares[k - 1] * RATE * interval / (TICK_BYTES * 8))
        ts = (dt.datetime(2026, 11, 30, 10, 0, 0, 3000, tzinfo=dt.timezone.utc)
              + dt.timedelta(seconds=interval * k)).isoformat(timespec="microseconds")
        body = ("# Port extended" + PQ64).replace("PortXmitWait:....................22730501",
                                                   f"PortXmitWait:....................{wait}") if shares else PQ_NO_WAIT
        out.append(f'#### forensics-sample ts={ts} argv="perfquery -x -C mlx5_1 -P 1"\n' + body.rstrip("\n"))
    (d / "perfquery-x-mlx5_1-1.txt").write_text("\n".join(out) + "\n")


def _kind(tmp_path, d, kind="ib_congestion"):
    a = analyze_paths([d], cache_dir=tmp_path / "c", host="n1")
    return [f for f in a.findings.to_dicts() if f["kind"] == kind]


@pytest.mark.parametrize("shares,severity", [
    ([0.01, 0.02, 0.01, 0.03, 0.02, 0.01], None),       # normal: a few % waiting
    ([0.01, 0.19, 0.19, 0.19, 0.19, 0.01], None),       # just under the threshold
    ([0.01, 0.3, 0.35, 0.3, 0.02, 0.01], "warning"),    # 15 s at ~30%
    ([0.01, 0.6, 0.7, 0.65, 0.6, 0.02], "critical"),    # over half the time
    ([0.01, 0.02, 0.9, 0.02, 0.01, 0.01], None),        # one 5 s burst: shorter than min_duration_s
])
def test_wait_share_against_the_threshold(tmp_path, shares, severity):
    got = _kind(tmp_path, _series(tmp_path, shares))
    if severity is None:
        assert got == []
        return
    assert len(got) == 1 and got[0]["severity"] == severity
    assert got[0]["subject"].startswith("mlx5_1 port 1")
    ev = json.loads(got[0]["evidence"])
    assert ev["rate_gbps"] == 400 and ev["tick_bytes"] == TICK_BYTES and ev["counter_bits"] == 32
    assert abs(ev["max_wait_share"] - max(shares)) < 0.01
    assert "waited to transmit" in got[0]["summary"]


SATURATED = [0.0] * 6  # the 32-bit sysfs counter of a port that has carried traffic since boot: stuck


def _saturated_sysfs(tmp_path: Path) -> Path:
    d = _series(tmp_path, SATURATED)
    f = d / "sysfs-mlx5_1-1.txt"
    f.write_text(re.sub(r"/counters/port_xmit_wait:\d+", "/counters/port_xmit_wait:4294967295", f.read_text()))
    return d


@pytest.mark.parametrize("shares,severity", [
    ([0.01, 0.3, 0.35, 0.3, 0.02, 0.01], "warning"),
    ([0.01, 0.6, 0.7, 0.65, 0.6, 0.02], "critical"),
    ([0.01, 0.02, 0.01, 0.03, 0.02, 0.01], None),
])
def test_the_64_bit_perfquery_series_sees_what_saturated_sysfs_hides(tmp_path, shares, severity):
    """sysfs reads 4294967295 throughout (the 32-bit counter is full); perfquery -x's 64-bit PortXmitWait of the
    same port moves, and is judged."""
    d = _saturated_sysfs(tmp_path)
    assert _kind(tmp_path, d) == []  # the saturated 32-bit counter alone: nothing to judge
    _perfquery(d, shares)
    got = _kind(tmp_path, d)
    if severity is None:
        assert got == []
        return
    assert len(got) == 1 and got[0]["severity"] == severity and got[0]["subject"].startswith("mlx5_1 port 1")
    ev = json.loads(got[0]["evidence"])
    assert ev["counter_bits"] == 64 and abs(ev["max_wait_share"] - max(shares)) < 0.01


def test_one_finding_when_both_counters_move(tmp_path):
    """A port whose 32-bit counter was cleared shortly before moves in both series: the 64-bit one is judged,
    and the episode is reported once."""
    shares = [0.01, 0.6, 0.7, 0.65, 0.6, 0.02]
    d = _series(tmp_path, shares)
    _perfquery(d, shares)
    got = _kind(tmp_path, d)
    assert len(got) == 1 and json.loads(got[0]["evidence"])["counter_bits"] == 64


def test_a_pma_without_the_64_bit_counter_leaves_the_32_bit_one(tmp_path):
    """perfquery -x of a PMA that declares no IsAdditionalPortCountersExtendedSupported prints no PortXmitWait:
    the sysfs counter is judged, found when it moves and silent when it is saturated."""
    d = _series(tmp_path, [0.01, 0.6, 0.7, 0.65, 0.6, 0.02])
    _perfquery(d, None)
    got = _kind(tmp_path, d)
    assert len(got) == 1 and json.loads(got[0]["evidence"])["counter_bits"] == 32
    d2 = _saturated_sysfs(tmp_path / "s")
    _perfquery(d2, None)
    assert _kind(tmp_path / "s", d2) == []


def test_roce_port_wait_is_left_to_pfc_storm(tmp_path):
    assert _kind(tmp_path, _series(tmp_path, [0.01, 0.6, 0.7, 0.65, 0.6, 0.02], layer="Ethernet")) == []


def test_real_snapshot_alone_gives_nothing(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    src = Path(__file__).parent / "fixtures" / "infiniband" / "infiniband--sysfs-grep-gpud-h100-ndr-and-roce-bond.txt"
    (d / "sysfs.txt").write_bytes(src.read_bytes())
    assert _kind(tmp_path, d) == []  # one sample: no interval, no share


@pytest.mark.parametrize("scenario", ["pfc_storm", "healthy"])
def test_simulated_roce_pauses_and_a_healthy_bundle_give_none(tmp_path, scenario):
    """End to end on simulated bundles (normal-congestion confounders on): a PFC storm is pfc_storm's
    finding and no ib_congestion; a healthy bundle gives neither. (The simulator's ports are RoCE
    here, and their port_xmit_wait, the pause time in ticks, is saturated (fmt_infiniband.xmit_wait),
    so the Ethernet filter itself is checked by test_roce_port_wait_is_left_to_pfc_storm above.)"""
    from forensics.simulate import SimConfig, write_bundle
    out = tmp_path / "b.tar"
    write_bundle(SimConfig(scenario, nodes=2, gpus_per_node=2, duration_s=150, interval_s=5, seed=11), out)
    kinds = {f["kind"] for f in analyze_paths([out], cache_dir=tmp_path / "c").findings.to_dicts()}
    assert "ib_congestion" not in kinds
    assert ("pfc_storm" in kinds) == (scenario == "pfc_storm")
