"""busy_but_slow on small nvidia-smi query CSV captures: what it makes of power limits no board reports."""
from __future__ import annotations

import json

import polars as pl

from forensics.db import open_bundle
from forensics.detect.engine import run_all
from forensics.sources import ParseContext, get
from table_bundles import write_tables

HEAD = "timestamp, index, name, utilization.gpu [%], utilization.memory [%], power.draw [W], power.limit [W]\n"


def _csv(limit: str, power: str = "100.00 W", seconds: int = 300) -> bytes:
    """2 H100s at 100% utilisation and 5% memory utilisation every 5 s, each drawing `power` under `limit`."""
    rows = [f"2026/01/01 00:{s // 60:02d}:{s % 60:02d}.000, {g}, NVIDIA H100 80GB HBM3, 100 %, 5 %, {power}, {limit}\n"
            for s in range(0, seconds, 5) for g in range(2)]
    return (HEAD + "".join(rows)).encode()


def _busy(tmp_path, data: bytes):
    res = get("nvidia_smi").parse(data, ParseContext(host="node01", file="query.csv", tz="UTC"))
    frames = {t: [df] for t, df in res.tables.items()}
    findings, errors = run_all(open_bundle(write_tables(tmp_path, frames)))
    assert errors == []
    return res.tables, [dict(r, evidence=json.loads(r["evidence"]))
                        for r in findings.filter(pl.col("kind") == "busy_but_slow").to_dicts()]


def test_a_limit_no_board_reports_is_no_reference(tmp_path):
    # NVML returns a power limit in milliwatts as an unsigned int (nvmlDeviceGetEnforcedPowerLimit,
    # nvmlDeviceGetPowerManagementLimit): 1e300 W is no limit nvidia-smi printed. The detector's cast of it
    # failed, and with it every busy_but_slow finding of the bundle
    tables, got = _busy(tmp_path, _csv("1" + "0" * 300 + ".00 W"))
    assert tables["gpu_samples"]["power_limit_w"].max() == 1e300  # (the parser's number: a written digit run)
    assert got == []


def test_a_real_limit_still_shows_the_illusion(tmp_path):
    # the same capture under a 700 W limit: 100 W at 100% utilisation for 5 minutes is 14% of it
    _, got = _busy(tmp_path, _csv("700.00 W"))
    assert len(got) == 1 and got[0]["evidence"]["limit_ratio"] == 0.143 and got[0]["evidence"]["waiting_gpus"] == 2


def test_a_draw_no_board_reports_is_no_power_reading(tmp_path):
    # one sample's power.draw a run of 301 digits (1e300: finite, past BIGINT): the evidence's round(x)::BIGINT
    # raised a conversion error and every busy_but_slow finding of the bundle was lost (the error was reported);
    # kept, its 30 s window made the GPU's busiest-window reference 1.6e298 W. NVML reports a draw in milliwatts as
    # an unsigned int (nvmlDeviceGetPowerUsage): a window holding one outside that range is no power reading
    clean = _csv("700.00 W", power="100.00 W")
    lines = clean.decode().split("\n")
    lines[20] = lines[20].replace("100.00 W", "9" * 301 + " W", 1)
    tables, got = _busy(tmp_path / "huge", "\n".join(lines).encode())
    assert tables["gpu_samples"]["power_w"].max() > 1e300  # (the parser's number: a written digit run)
    _, want = _busy(tmp_path / "clean", clean)
    assert len(got) == len(want) == 1
    assert got[0]["summary"] == want[0]["summary"] and got[0]["evidence"] == want[0]["evidence"]


def test_int_text_never_raises_and_matches_the_cast_in_range(tmp_path):
    # the macro the detectors' summaries print whole numbers with (round(x)::BIGINT raised past BIGINT, on inf, NaN)
    res = get("nvidia_smi").parse(_csv("700.00 W"), ParseContext(host="node01", file="query.csv", tz="UTC"))
    b = open_bundle(write_tables(tmp_path, {t: [df] for t, df in res.tables.items()}))
    got = b.sql("SELECT x, int_text(x) AS t, CASE WHEN abs(x) < 9.2e18 THEN round(x)::BIGINT::VARCHAR END AS c FROM "
                "(VALUES (0.0), (2.5), (-2.5), (543.62), (9.1e18), (1e300), (-1e300), ('inf'::DOUBLE), ('nan'::DOUBLE), "
                "(NULL)) v(x)").rows()
    assert [(t, c) for _, t, c in got if c is not None] == [(c, c) for _, _, c in got if c is not None]
    assert [t for x, t, c in got if c is None] == ["1e+300", "-1e+300", "inf", "nan", None]
