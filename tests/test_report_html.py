"""The HTML report: self-contained, the sections it promises, escaping, size bound, CLI."""
from __future__ import annotations

import datetime as dt
import json
import re

import polars as pl
import pytest
from typer.testing import CliRunner

import report_bundles as rb
from forensics import schema
from forensics.analysis import Analysis
from forensics.cli import app
from forensics.cli._common import UserError
from forensics.report import signals
from forensics.report.html import evidence_html, render_html, write_html
from forensics.report.nccl_config import nccl_differences

# what would make a browser fetch something: an external URL in a tag's src/href/action/poster/data
# attribute (escaped log text has no '<' so it cannot match), in CSS url() or @import, and script APIs
EXTERNAL_LOAD = re.compile(r"""<[a-z][^<>]*\b(?:src|href|action|poster|data|srcset)\s*=\s*["']?\s*(?:https?:)?//"""
                           r"""|url\(\s*["']?\s*(?:https?:)?//|@import""", re.I)
SCRIPT_NET = re.compile(r"\bfetch\s*\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon|importScripts|navigator\.serviceWorker", re.I)


@pytest.fixture(scope="module")
def report():
    path = rb.pfc_report()
    return rb.pfc_analysis(), path, path.read_text()


class NoViews:
    """A bundle whose every query fails (a bundle without those tables): the page still renders."""

    hosts: list[str] = []

    def sql(self, query, **params):
        raise RuntimeError("Catalog Error: Table with name events does not exist!")


def page_data(text: str) -> dict:
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)
    assert m, "no embedded report data"
    return json.loads(m.group(1))


def test_self_contained_no_request_leaves_the_page(report):
    _, _, text = report
    assert not EXTERNAL_LOAD.search(text), EXTERNAL_LOAD.search(text).group(0)
    assert not SCRIPT_NET.search(text), SCRIPT_NET.search(text).group(0)
    assert "<link" not in text.lower()
    assert not re.search(r"<script[^>]*\bsrc\s*=", text, re.I), "every script is inline"
    assert "@font-face" not in text
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"', text)
    assert csp and "default-src 'none'" in csp.group(1) and "connect-src 'none'" in csp.group(1)
    assert "uPlot" in text and "Leon Sorokin" in text  # the library inlined, with its licence


def test_diagnosis_root_cause_first_and_consequence_under_it(report):
    analysis, _, text = report
    f = analysis.findings.to_dicts()
    roots = [x for x in f if x["caused_by"] is None]
    effects = [x for x in f if x["caused_by"] is not None]
    assert roots and roots[0]["kind"] == "pfc_storm" and effects
    diag = text[text.index('id="diagnosis"'):text.index('id="timeline"')]
    assert "Most likely root cause:" in diag
    head = diag[diag.index("Most likely root cause:"):]
    assert f'href="#{roots[0]["id"]}"' in head.split("</div>")[0]
    # each consequence sits in the effects list under its cause and names it
    for eff in effects:
        cause = next(x for x in f if x["id"] == eff["caused_by"])
        i = diag.index(f'href="#{eff["id"]}"')
        assert diag.rfind('<ul class="effects">', 0, i) > diag.index(f'href="#{cause["id"]}"')
        assert f"follows {cause['kind']} on" in diag[i:i + 2000]


def test_findings_with_evidence_tables_and_windows(report):
    analysis, _, text = report
    for f in analysis.findings.to_dicts():
        card = text[text.index(f'id="{f["id"]}"'):]
        card = card[:card.index("</details>")]
        assert "<h4>Evidence</h4>" in card and "<table" in card
        ev = json.loads(f["evidence"])
        first_key = next(iter(ev))
        assert f"<th>{first_key}</th>" in card
        assert f["start"].strftime("%Y-%m-%d %H:%M:%S") in card
        assert "data-zoom=" in card
        assert "Confirm on the live cluster" in card and "Remediation" in card


def test_timeline_and_chart_data(report):
    analysis, _, text = report
    d = page_data(text)
    hosts = sorted(d["hosts"])
    assert hosts == ["node01", "node02", "node03"]
    root = analysis.findings.filter(pl.col("caused_by").is_null()).row(0, named=True)
    assert d["hosts"][0] == root["hosts"][0], "the root cause's host gets the first lane"
    assert {f["id"] for f in d["findings"]} == set(analysis.findings["id"])
    for f in d["findings"]:
        assert d["range"][0] <= f["start"] <= f["end"] <= d["range"][1]
    sev = {e[2] for e in d["events"]}
    assert 1 in sev or 2 in sev, "pause-storm warnings are drawn"
    for e in d["events"]:
        assert d["range"][0] <= e[0] <= d["range"][1] and 0 <= e[1] < len(d["hosts"]) and e[3] < len(d["kinds"])
    for host in hosts:
        keys = {c["key"] for c in d["charts"][host]}
        assert {"gpu_util", "gpu_sm_clock", "gpu_temp", "nic_pause", "disk_util", "cpu"} <= keys, keys
        for c in d["charts"][host]:
            if c.get("flat"):
                continue
            assert c["series"], c["key"]
            for s in c["series"]:
                assert len(s["data"]) == len(c["x"])
            assert c["x"] == sorted(c["x"])
    # the storm port's pause rate is in the chart of the root cause's host, inside the finding window
    pause = next(c for c in d["charts"][root["hosts"][0]] if c["key"] == "nic_pause")
    port = root["subject"].split()[0]
    series = [s for s in pause["series"] if s["label"].startswith(port)]
    assert series
    f0 = next(f for f in d["findings"] if f["id"] == root["id"])
    inside = [v for s in series for x, v in zip(pause["x"], s["data"]) if v and f0["start"] <= x <= f0["end"]]
    outside = [v or 0 for s in series for x, v in zip(pause["x"], s["data"]) if x < f0["start"] - 20]
    assert inside and max(inside) > 100 * max(outside + [1])
    # every host section and chart placeholder of the page matches the data
    for host in hosts:
        assert f'data-host="{host}"' in text
    assert "Signals per host" in text and "NCCL configuration" in text and "Parsing coverage" in text


def test_coverage_and_hosts_tables(report):
    analysis, _, text = report
    cov = text[text.index('id="coverage"'):]
    for src in analysis.coverage["source"].to_list():
        assert f"<td>{src}</td>" in cov
    assert "Per host (share of lines parsed)" in cov and "clock offset" in cov


def _finding(**kw) -> dict:
    base = {"id": "x-1", "kind": "gpu_xid", "severity": "critical", "layer": "gpu",
            "start": dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.timezone.utc),
            "end": dt.datetime(2026, 11, 30, 10, 1, tzinfo=dt.timezone.utc), "hosts": ["node01"], "subject": "GPU0",
            "score": 1.0, "summary": "s", "evidence": "{}", "confirm": "dmesg", "remediation": "r", "caused_by": None,
            "detector": "gpu_xid"}
    base.update(kw)
    return base


def test_text_from_logs_is_escaped(report):
    analysis, _, _ = report
    evil = "<script>alert(1)</script><img src=http://evil.example/x.png>"
    f = _finding(summary=evil, subject="</script><b>", evidence=json.dumps({"message": evil, "rows": [{"line": evil}]}))
    findings = schema.conform(pl.DataFrame([f]), "findings")
    a = Analysis(findings, analysis.hosts, analysis.coverage, analysis.failed_commands, ["<i>err</i>"], [], NoViews())
    text = render_html(a.bundle, a)
    assert evil not in text and "<i>err</i>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<img" not in text and not EXTERNAL_LOAD.search(text)
    data = page_data(text)  # '</script>' inside the data cannot close the data's script element
    assert data["findings"][0]["summary"] == evil
    # without views: the failures are listed, nothing is invented
    assert "Table with name events does not exist" in text and data["charts"] == {} and data["events"] == []
    assert "The bundle has no sampled series" in text and "No NCCL configuration" in text


def test_evidence_html_tables():
    out = evidence_html(json.dumps({"xid": 79, "peak": 105027.3, "gpus": [0, 3],
                                    "rows": [{"ts": "10:00", "msg": "a"}, {"ts": "10:01", "msg": "b", "extra": 1}]}))
    assert "<th>xid</th><td>79</td>" in out and "105,027" in out and "0, 3" in out
    assert "<h4>rows</h4>" in out and "<th>extra</th>" in out and out.count("<tr>") >= 6
    assert evidence_html("not json <b>") == "<pre>not json &lt;b&gt;</pre>"
    assert evidence_html("") == ""


def test_nccl_differences_groups_hosts_and_masks_addresses():
    rows = []
    for h in ("node01", "node02", "node03"):
        rows += [(h, "env.NCCL_IB_HCA", "mlx5_0,mlx5_1"), (h, "bootstrap_if", f"eth0:10.0.0.{h[-1]}<0>"),
                 (h, "comm_id", f"0x{h[-1]}abc"), (h, "net", "IB" if h != "node03" else "Socket")]
    rows += [("node01", "env.NCCL_BUFFSIZE", "2097152"), ("node01", "version", "2.21.5")]
    cfg = pl.DataFrame(rows, schema=["host", "key", "value"], orient="row")
    differing, common = nccl_differences(cfg)
    by_key = {d["key"]: d for d in differing}
    assert set(by_key) == {"net", "env.NCCL_BUFFSIZE"}
    assert by_key["net"]["groups"] == [(["IB"], ["node01", "node02"]), (["Socket"], ["node03"])]
    assert by_key["env.NCCL_BUFFSIZE"]["missing"] == ["node02", "node03"]
    common_keys = dict(common)
    assert "bootstrap_if" in common_keys and "comm_id" not in common_keys and "comm_id" not in by_key
    assert "logged on one host" in common_keys["version"]


def test_nccl_differences_ignore_pxn_proxy_ranks():
    """PXN channels name their proxy rank ("NET/IB/0(16)/GDRDMA"), different on every node: not a
    configuration difference; a node without GPUDirect RDMA still is one."""
    rows = []
    for i, h in enumerate(("node01", "node02", "node03", "node04")):
        gdr = "" if h == "node04" else "/GDRDMA"
        rows += [(h, "channel_transport", f"NET/IB/0({8 * i}){gdr}"), (h, "channel_transport", f"NET/IB/1{gdr}")]
    differing, common = nccl_differences(pl.DataFrame(rows, schema=["host", "key", "value"], orient="row"))
    (d,) = differing
    assert d["key"] == "channel_transport"
    assert [hs for _, hs in d["groups"]] == [["node01", "node02", "node03"], ["node04"]]
    differing, common = nccl_differences(pl.DataFrame([r for r in rows if r[0] != "node04"],
                                                      schema=["host", "key", "value"], orient="row"))
    assert differing == [] and dict(common)["channel_transport"] == "NET/IB/0(<rank>)/GDRDMA, NET/IB/1/GDRDMA"


def test_size_bound_eight_hosts(tmp_path):
    """8 hosts x 8 GPUs x 10 minutes at 1 s (GPU, NIC, disk, CPU; what `forensics simulate` makes by
    default): the report stays under 5 MB."""
    from forensics.db import open_bundle

    bundle = open_bundle(rb.wide_bundle(8, 8, 600))
    f = _finding(hosts=["node04"], subject="GPU5", kind="gpu_throttle", id="t-1",
                 start=dt.datetime(2026, 11, 30, 10, 5, tzinfo=dt.timezone.utc),
                 end=dt.datetime(2026, 11, 30, 10, 9, tzinfo=dt.timezone.utc))
    a = Analysis(schema.conform(pl.DataFrame([f]), "findings"), pl.DataFrame(), pl.DataFrame(), pl.DataFrame(), [], [], bundle)
    path = write_html(a, tmp_path / "wide.html")
    size = path.stat().st_size
    assert size < 5_000_000, size
    d = page_data(path.read_text())
    assert len(d["hosts"]) == 8 and d["hosts"][0] == "node04"
    assert len(d["charts"]) == 8 and all(len(c) >= 8 for c in d["charts"].values())
    # the hot GPU's clock dip is there
    clock = next(c for c in d["charts"]["node04"] if c["key"] == "gpu_sm_clock")
    gpu5 = next(s for s in clock["series"] if s["label"] == "GPU5")
    assert min(v for v in gpu5["data"] if v is not None) == 1480.0


def test_downsampling_budget_keeps_the_worst_value():
    """Longer bundles: the value budget sets the points per chart; buckets keep the extreme."""
    n = 3600
    t = [float(i) for i in range(n)] * 4
    ent = [f"GPU{g}" for g in range(4) for _ in range(n)]
    v = [1980.0 - (700.0 if (g == 2 and i == 1234) else 0.0) for g in range(4) for i in range(n)]
    frames = {"gpu_sm_clock": pl.DataFrame({"host": "h1", "entity": ent, "t": t, "v": v})}
    charts, max_points = signals.charts(frames, base=0.0, budget=4 * 300)
    assert max_points == 300
    c = charts["h1"][0]
    assert len(c["x"]) <= 300 and [s["label"] for s in c["series"]] == ["GPU0", "GPU1", "GPU2", "GPU3"]
    assert min(c["series"][2]["data"]) == 1280.0 and min(c["series"][0]["data"]) == 1980.0
    charts, max_points = signals.charts(frames, base=0.0, budget=10)
    assert max_points == signals.MIN_POINTS


def test_cli_report(tmp_path, monkeypatch):
    """`forensics report` wiring (the analysis itself is the cached one: analyze --report below runs it for real)."""
    import forensics.analysis

    seen = {}

    def fake(paths, **kw):
        seen.update(kw, paths=paths)
        return rb.pfc_analysis()

    monkeypatch.setattr(forensics.analysis, "analyze_paths", fake)
    out = tmp_path / "r.html"
    res = CliRunner().invoke(app, ["report", str(rb.pfc_bundle_path()), "--out", str(out), "--title", "ticket 42", "-q"])
    assert res.exit_code == 0, res.output
    assert seen["progress"] is None and [str(p) for p in seen["paths"]] == [str(rb.pfc_bundle_path())]
    text = out.read_text()
    assert "<title>ticket 42</title>" in text and "pfc_storm" in text
    res = CliRunner().invoke(app, ["report", str(rb.pfc_bundle_path()), "--out", str(tmp_path / "nodir" / "r.html"), "-q"])
    assert isinstance(res.exception, UserError) and "no such directory" in str(res.exception)
    assert "progress" not in seen or seen["progress"] is None


def test_cli_analyze_report(tmp_path):
    bundle = rb.pfc_bundle_path()
    out = tmp_path / "a.html"
    res = CliRunner().invoke(app, ["analyze", str(bundle), "--format", "json", "--report", str(out),
                                   "--cache-dir", str(rb.cache_dir()), "-q"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["findings"][0]["kind"] == "pfc_storm"
    assert res.stderr == ""  # --quiet: no progress, no "wrote" line
    assert out.stat().st_size > 50_000 and "pfc_storm" in out.read_text()


def test_many_consequences_of_one_kind_are_one_line():
    root = _finding(id="root", kind="pfc_storm", layer="nic_fabric", hosts=["node08"], subject="eth3 prio 3")
    effects = [_finding(id=f"e{i}", kind="pfc_storm", layer="nic_fabric", hosts=[f"node0{i}"], subject="eth3 prio 3",
                        caused_by="root", summary=f"receives pauses {i}") for i in range(1, 6)]
    other = _finding(id="nccl", kind="nccl_transport_error", layer="nccl", hosts=["node01"], caused_by="root")
    findings = schema.conform(pl.DataFrame([root] + effects + [other]), "findings")
    a = Analysis(findings, pl.DataFrame(), pl.DataFrame(), pl.DataFrame(), [], [], NoViews())
    text = render_html(a.bundle, a)
    diag = text[text.index('id="diagnosis"'):text.index('id="timeline"')]
    assert "on 5 hosts:" in diag and all(f'href="#e{i}"' in diag for i in range(1, 6))
    assert diag.count("<li>") == 2  # the grouped storm receivers, and the NCCL error on its own line
    assert "follows pfc_storm on node08" in diag
    for i in range(1, 6):
        assert f'id="e{i}"' in text  # each still has its own card
