"""`forensics export --perfetto`: a Chrome trace-event JSON checked against the Trace Event Format."""
from __future__ import annotations

import json
from numbers import Number

import pytest
from typer.testing import CliRunner

import report_bundles as rb
from forensics.cli import app
from forensics.cli._common import UserError
from forensics.report.perfetto import _lanes, _track, build_trace

# phase types of the Trace Event Format
MAX_POINTS = 40
ALLOWED_PH = set("BEXiICbenstfPOND") | {"(", ")", "M", "R", "c"}
METADATA = {"process_name": "name", "process_labels": "labels", "process_sort_index": "sort_index",
            "thread_name": "name", "thread_sort_index": "sort_index"}


def _no_nan(text: str):
    raise ValueError(f"{text} is not JSON")


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    a = rb.pfc_analysis()
    path = tmp_path_factory.mktemp("trace") / "trace.json"
    path.write_text(json.dumps(build_trace(a.bundle, a.findings, max_points=MAX_POINTS), allow_nan=False))
    return a, json.loads(path.read_text(), parse_constant=_no_nan)


def is_num(v) -> bool:
    return isinstance(v, Number) and not isinstance(v, bool)


def test_trace_event_format(trace):
    _, t = trace
    assert isinstance(t["traceEvents"], list) and t["traceEvents"]
    assert t["displayTimeUnit"] in ("ms", "ns")
    for ev in t["traceEvents"]:
        assert ev["ph"] in ALLOWED_PH, ev
        assert isinstance(ev["name"], str) and ev["name"], ev
        assert isinstance(ev["pid"], int) and isinstance(ev["tid"], int), ev
        if ev["ph"] == "M":
            assert ev["name"] in METADATA, ev
            assert METADATA[ev["name"]] in ev["args"], ev
            continue
        assert is_num(ev["ts"]) and ev["ts"] > 0, ev
        if ev["ph"] == "X":
            assert is_num(ev["dur"]) and ev["dur"] >= 0, ev
        if ev["ph"] == "i":
            assert ev.get("s", "t") in ("g", "p", "t"), ev
        if ev["ph"] == "C":
            assert ev["args"] and all(is_num(v) for v in ev["args"].values()), ev
        if "args" in ev:
            assert isinstance(ev["args"], dict)


def test_processes_tracks_and_names(trace):
    a, t = trace
    evs = t["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"}
    assert sorted(procs.values()) == sorted(a.hosts["host"].to_list()), "one process per host"
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    assert len(set(threads)) == len(threads)
    for e in evs:
        if e["ph"] in ("i", "X"):
            assert (e["pid"], e["tid"]) in threads, e  # every track used is named
        if e["ph"] != "M":
            assert e["pid"] in procs
    for pid in procs:
        names = {n for (p, _), n in threads.items() if p == pid}
        assert {"GPU0", "GPU1"} <= names, names  # a track per GPU
        assert any(n.startswith("NIC ") for n in names), names  # and per NIC
    counters = {(e["pid"], e["name"]) for e in evs if e["ph"] == "C"}
    for pid in procs:
        assert (pid, "GPU0") in counters and any(n.startswith("NIC ") for p, n in counters if p == pid)
    gpu = next(e for e in evs if e["ph"] == "C" and e["name"] == "GPU0")
    assert {"util_pct", "sm_clock_mhz", "temp_c", "power_w"} <= set(gpu["args"])
    pause = [e for e in evs if e["ph"] == "C" and e["name"].startswith("NIC ") and e["args"].get("tx_pause_per_s", 0) > 1000]
    assert pause, "the storm's pause rate is a counter"
    instants = [e for e in evs if e["ph"] == "i"]
    assert any(e["cat"] == "ethtool" and threads[(e["pid"], e["tid"])].startswith("NIC ") for e in instants)
    assert any(e["cat"] == "dmesg" for e in instants)


def test_findings_are_slices_that_never_overlap_on_a_track(trace):
    a, t = trace
    xs = [e for e in t["traceEvents"] if e["ph"] == "X"]
    want = sum(len(f["hosts"]) for f in a.findings.to_dicts() if f["start"] is not None)
    assert len(xs) == want and want > 0
    assert {e["args"]["id"] for e in xs} == set(a.findings["id"])
    by_track: dict = {}
    for e in xs:
        by_track.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_track.values():
        spans.sort()
        assert all(b[0] >= a_[1] for a_, b in zip(spans, spans[1:])), spans
    root = a.findings.filter(a.findings["caused_by"].is_null()).row(0, named=True)
    x = next(e for e in xs if e["args"]["id"] == root["id"])
    assert x["ts"] == int(root["start"].timestamp() * 1e6) and x["cname"] == "terrible"


def test_lanes_and_tracks():
    fs = [{"_ts": 0, "_dur": 10}, {"_ts": 5, "_dur": 10}, {"_ts": 10, "_dur": 1}, {"_ts": 12, "_dur": 5}]
    assert _lanes(fs) == [0, 1, 0, 0]
    nics = {("n1", "eth0")}
    assert _track("dmesg", "gpu5", nics, "n1") == "GPU5"
    assert _track("dmesg", "eth0", nics, "n1") == "NIC eth0"
    assert _track("dmesg", "BIOS-e820", nics, "n1") == "kernel"
    assert _track("nccl", "rank13", nics, "n1") == "NCCL rank 13"
    assert _track("nccl", "pid599971", nics, "n1") == "NCCL pid 599971"
    assert _track("ethtool", "eth1", nics, "n1") == "NIC eth1"


def test_counter_thinning(trace):
    """2 minutes of GPU samples at 2 s (60 per GPU) thinned to at most MAX_POINTS per track."""
    _, t = trace
    per = {}
    for e in t["traceEvents"]:
        if e["ph"] == "C":
            per[(e["pid"], e["name"])] = per.get((e["pid"], e["name"]), 0) + 1
    gpu = [n for (_, name), n in per.items() if name.startswith("GPU")]
    assert gpu and max(gpu) <= MAX_POINTS and min(gpu) >= MAX_POINTS // 2


def test_cli_export_perfetto(tmp_path, monkeypatch):
    """`forensics export --perfetto` wiring (with the cached analysis; analyze itself is tested elsewhere)."""
    import forensics.analysis
    import forensics.cli._progress as bars

    calls = []
    monkeypatch.setattr(forensics.analysis, "analyze_paths", lambda paths, **kw: calls.append(kw) or rb.pfc_analysis())
    monkeypatch.setattr(bars, "stderr_is_terminal", lambda: True)  # as on a terminal
    monkeypatch.setattr(bars, "TerminalProgress", lambda: "bars")
    out = tmp_path / "t.json"
    res = CliRunner().invoke(app, ["export", str(rb.pfc_bundle_path()), "--perfetto", str(out)])
    assert res.exit_code == 0, res.output
    assert calls[-1]["progress"] == "bars" and "findings" in res.stderr  # bars on a terminal
    res = CliRunner().invoke(app, ["export", str(rb.pfc_bundle_path()), "--perfetto", str(out), "--quiet"])
    assert res.exit_code == 0 and calls[-1]["progress"] is None and res.stderr == ""
    xs = [e for e in json.loads(out.read_text())["traceEvents"] if e["ph"] == "X"]
    assert {e["args"]["id"] for e in xs} == set(rb.pfc_analysis().findings["id"])
    res = CliRunner().invoke(app, ["export", str(rb.pfc_bundle_path())])
    assert isinstance(res.exception, UserError) and "--perfetto" in str(res.exception)


def test_the_trace_is_written_as_it_is_made(tmp_path, monkeypatch):
    """`write_trace` streams (events CHUNK at a time, series rows BATCH_ROWS at a time, so a track's
    rows span several batches): the bytes are those of the whole trace built at once, whatever the
    sizes, and each series track keeps every step-th of its rows from the first (step = ceil(rows /
    max_points)), as thinning the whole frame does."""
    import polars as pl

    import forensics.report.perfetto as perfetto

    a = rb.pfc_analysis()
    whole = json.dumps(build_trace(a.bundle, a.findings, max_points=MAX_POINTS), separators=(",", ":"))
    for chunk, rows in ((7, 5), (1, 1), (10_000, 65_536)):
        monkeypatch.setattr(perfetto, "CHUNK", chunk)
        monkeypatch.setattr(perfetto, "BATCH_ROWS", rows)
        out = perfetto.write_trace(a.bundle, tmp_path / f"t{chunk}.json", a.findings, max_points=MAX_POINTS)
        assert out.read_text() == whole, (chunk, rows)
    for sql, keys in ((perfetto.GPU_SQL, ("gpu",)), (perfetto.NIC_SQL, ("iface",))):
        full = a.bundle.sql(sql)
        want = {(h, *k): part.gather_every(max(1, -(-part.height // MAX_POINTS)))
                for (h, *k), part in full.group_by(["host", *keys], maintain_order=True)}
        got = list(perfetto._thinned(a.bundle, sql, keys, MAX_POINTS))
        assert [(h, *k) for h, k, _ in got] == list(want) and len(want) > 1
        for h, k, part in got:
            assert part.equals(want[(h, *k)]), (h, k)
    assert not list(perfetto._thinned(a.bundle, sql.replace("nic_signals", "no_such_view"), keys, MAX_POINTS))
