"""Untimed evidence does not over-reach (issue 14 item 7), as a user meets it on the command line:
a pasted `ethtool -S` with cumulative pause counters is "pause frames seen since reset", never a
critical storm; its port is the interface the paste names, not the file's name; and untimed
findings link only where their subjects tie them."""
from __future__ import annotations

import json
from pathlib import Path

from test_bundle_cli import cli

FIX = Path(__file__).parent / "fixtures" / "ethtool"
XDP = FIX / "ethtool--mlx5-xdp-kernel5.15-nonzero.txt"  # names no interface: drops and global pauses
CX4 = FIX / "ethtool--mlx5-cx4lx-grep-pause-pci.txt"  # "# ethtool -S eth03 | grep ...": names eth03


def _analyze(paths, tmp_path, capsys, monkeypatch):
    res = cli(["analyze", *paths, "--host", "n1", "--format", "json", "--quiet"], tmp_path, capsys, monkeypatch)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["findings"]


def test_pasted_pause_totals_are_not_a_storm(tmp_path, capsys, monkeypatch):
    got = _analyze([CX4], tmp_path, capsys, monkeypatch)
    assert [f["kind"] for f in got] == ["pause_frames_since_reset"]
    f = got[0]
    assert f["severity"] == "warning" and f["subject"] == "eth03" and f["evidence"]["iface"] == "eth03"
    assert f["summary"].startswith("pause frames seen since reset on n1 eth03: 1266552 pause frames")
    assert "storm" not in f["summary"].split(";")[0]


def test_storm_watchdog_totals_since_reset_are_never_critical(tmp_path, capsys, monkeypatch):
    # the real eth03 paste plus the mlx5 storm watchdog counters (names from the mlx5 counters doc)
    paste = tmp_path / "eth03.txt"
    paste.write_text(CX4.read_text() + "     tx_pause_storm_warning_events: 14\n     tx_pause_storm_error_events: 2\n")
    got = _analyze([paste], tmp_path, capsys, monkeypatch)
    assert [(f["kind"], f["severity"]) for f in got] == [("pause_frames_since_reset", "warning")]
    assert "16 pause-storm watchdog events (2 errors)" in got[0]["summary"]


def test_an_unnamed_paste_is_not_named_after_its_file(tmp_path, capsys, monkeypatch):
    got = _analyze([XDP], tmp_path, capsys, monkeypatch)
    assert {f["kind"] for f in got} == {"pause_frames_since_reset", "packet_drops"}
    for f in got:
        assert f["subject"] == f"unnamed port in {XDP.name}" and f["evidence"]["iface"] is None
        assert f["caused_by"] is None  # two totals since reset: nothing says which came first


def test_untimed_findings_of_two_pastes_stay_apart(tmp_path, capsys, monkeypatch):
    saved = tmp_path / "saved"  # one host's saved outputs in a folder
    saved.mkdir()
    for p in (XDP, CX4):
        (saved / p.name).write_text(p.read_text())
    got = _analyze([saved], tmp_path, capsys, monkeypatch)
    drops = [f for f in got if f["kind"] == "packet_drops"]
    pauses = {f["subject"]: f for f in got if f["kind"] == "pause_frames_since_reset"}
    assert set(pauses) == {"eth03", f"unnamed port in {XDP.name}"}
    assert len(drops) == 1 and drops[0]["caused_by"] is None
    assert all(f["severity"] != "critical" for f in got)
