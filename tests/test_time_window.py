"""One clock for windows (issue 13 item 6): --since/--until select [since, until) of the aligned
timeline, applied to what the detectors read (a window's findings are the findings of that window,
not a filter on the whole bundle's findings), and `report` and `export --perfetto` honour them."""
from __future__ import annotations

import datetime as dt
import functools
import json
from pathlib import Path

import pytest

from test_bundle_cli import cli

PFC = Path(__file__).resolve().parent.parent / "sample_bundles" / "pfc_storm.tar.zst"
UTC = dt.timezone.utc
# the sample's storm: node03 enp91s0np0 from ~10:01:21 to ~10:03:21 (aligned), spin-wait 10:01:30-10:03:00
SINCE = dt.datetime(2026, 12, 1, 10, 2, 0, tzinfo=UTC)
UNTIL = dt.datetime(2026, 12, 1, 10, 2, 40, tzinfo=UTC)


@functools.lru_cache(maxsize=None)
def _analysis(since=None, until=None, root=None):
    from forensics.analysis import analyze_paths

    return analyze_paths([PFC], cache_dir=Path(root), since=since, until=until)


@pytest.fixture(scope="module")
def root(parse_cache):
    return str(parse_cache)  # the sample's tables, parsed once for the session


def _kinds(a):
    return sorted(set(a.findings["kind"].to_list()))


def test_window_before_the_fault_has_no_findings(root):
    whole = _analysis(root=root)
    assert {"pfc_storm", "busy_but_slow"} <= set(_kinds(whole))
    before = _analysis(None, dt.datetime(2026, 12, 1, 10, 1, 0, tzinfo=UTC), root)
    assert before.findings.height == 0


def test_a_windows_findings_are_computed_from_the_window(root):
    whole = _analysis(root=root)
    part = _analysis(SINCE, UNTIL, root)
    # a filter on the whole bundle's findings would keep the spin-wait (10:01:30-10:03:00 overlaps
    # the window); from 40 s of samples the 30 s windows it needs are not there
    spin = whole.findings.filter(whole.findings["kind"] == "busy_but_slow")
    assert spin.height and (spin["start"] < UNTIL).all() and (spin["end"] >= SINCE).all()
    assert "busy_but_slow" not in _kinds(part)
    storms = part.findings.filter(part.findings["kind"] == "pfc_storm")
    assert storms.height >= 1
    # the storm seen in the window is the window's: it starts at the window's first interval
    slack = dt.timedelta(seconds=12)  # one sampling interval before since (a rate's interval start)
    assert (storms["start"] >= SINCE - slack).all() and (storms["end"] < UNTIL + slack).all()
    assert (storms["start"] > whole.findings.filter(whole.findings["kind"] == "pfc_storm")["start"].min()).all()


def test_the_reports_read_the_window(root):
    from forensics.report import signals

    part = _analysis(SINCE, UNTIL, root)
    series = signals.fetch(part.bundle)
    assert series and all(df.height for df in series.values())
    lo, hi = SINCE.timestamp() - 0.5, UNTIL.timestamp() + 0.5  # aligned seconds (offsets of tens of ms)
    for key, df in series.items():
        assert df["t"].min() >= lo and df["t"].max() < hi, key
    events = part.bundle.sql("SELECT min(ts_aligned) AS a, max(ts_aligned) AS b FROM events WHERE ts_aligned IS NOT NULL")
    assert events["a"][0] >= SINCE and events["b"][0] < UNTIL


@pytest.mark.slow
def test_cli_report_and_perfetto_honour_the_window(tmp_path, capsys, monkeypatch):
    since, until = SINCE.isoformat(), UNTIL.isoformat()
    trace = tmp_path / "trace.json"
    res = cli(["export", PFC, "--perfetto", trace, "--since", since, "--until", until, "--quiet"], tmp_path, capsys, monkeypatch)
    assert res.returncode == 0, res.stderr
    events = json.loads(trace.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    timed = [e["ts"] for e in events if e.get("ph") == "C"]
    assert timed and min(timed) >= (SINCE.timestamp() - 0.5) * 1e6 and max(timed) < (UNTIL.timestamp() + 0.5) * 1e6
    html = tmp_path / "r.html"
    res = cli(["report", PFC, "--out", html, "--since", since, "--until", until, "--quiet"], tmp_path, capsys, monkeypatch)
    assert res.returncode == 0, res.stderr
    assert "busy_but_slow" not in html.read_text() and "pfc_storm" in html.read_text()
    res = cli(["export", PFC, "--parquet", tmp_path / "pq", "--since", since], tmp_path, capsys, monkeypatch)
    assert res.returncode == 2 and "--perfetto only" in res.stderr


def test_a_timed_counter_snapshot_outside_the_window_gives_no_finding(tmp_path):
    """The single-snapshot NIC rules read the window too (det_nic_snapshot): a snapshot whose time
    lies outside [since, until) is not this window's evidence; inside it, or untimed, it is kept."""
    from forensics.analysis import analyze_paths

    fx = Path(__file__).resolve().parent / "fixtures" / "ethtool"
    # the `watch` title line of one real capture (its time: Tue Apr 16 08:23:27 2013) over the counters of
    # another (mlx5 with pause frames and drops since reset): a timed single snapshot
    header = (fx / "ethtool--ixgbe-watch-header-2013.txt").read_text().splitlines()[0]
    body = (fx / "ethtool--mlx5-xdp-kernel5.15-nonzero.txt").read_text()
    snap = tmp_path / "ethtool-S.txt"
    snap.write_text(header + "\n\n" + body)

    def kinds(**window):
        a = analyze_paths([snap], host="n1", tz="UTC", cache_dir=tmp_path / f"c{len(window)}{sorted(window)}", **window)
        return sorted(set(a.findings["kind"].to_list()))

    taken = dt.datetime(2013, 4, 16, 8, 23, 27, tzinfo=UTC)
    whole = kinds()
    assert {"packet_drops", "pause_frames_since_reset"} <= set(whole)
    assert kinds(since=taken - dt.timedelta(minutes=1), until=taken + dt.timedelta(minutes=1)) == whole
    assert kinds(until=taken - dt.timedelta(minutes=1)) == []
    assert kinds(since=taken + dt.timedelta(minutes=1)) == []
