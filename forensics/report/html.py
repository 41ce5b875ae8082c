"""One self-contained HTML report of an analysis, to attach to a ticket and open offline.

Sections: the diagnosis (ranked findings, root cause first, consequences under their causes),
a swimlane timeline (hosts x time on the aligned clock, events as marks coloured by severity,
findings as shaded windows), every finding with its evidence tables and the warning/critical
events in its window, per-host charts of the signals behind the findings (pause rates, drops,
throughput, GPU utilisation/clocks/temperature/power, disk utilisation and latency, CPU iowait)
with the finding windows shaded, the NCCL configuration differences across hosts, and the
parsing coverage, clock offsets and failed collection commands.

This module gathers the page's data and assembles the page; the diagnosis and the finding cards
are rendered by :mod:`forensics.report.findings_html`, the NCCL differences computed by
:mod:`forensics.report.nccl_config`, the chart series by :mod:`forensics.report.signals`.

It reads only the analysis' findings and the bundle's views (`events`, `nic_rates`,
`gpu_samples`, `disk_io`, `cpu_util`, `nccl_config`, `coverage`, `hosts`), never raw files.

Plotting library: uPlot (npm `uplot`, MIT, vendored unmodified in `_assets/` with its licence).
It is one 51 kB minified file with no dependencies, so it inlines into the page; it draws on
canvas and stays fast with dozens of charts of thousands of points (SVG libraries slow down with
that many nodes, and Plotly or ECharts would add 1-3 MB to every report); it has synchronised
cursors and drag-to-zoom across charts, which the shared timeline needs, and it is actively
maintained. The swimlane is a small canvas drawing of our own (report.js); the text sections are
rendered here as plain HTML, so they read (and print) even with scripts disabled.

Nothing leaves the page: every script, style and the data are inlined, there are no web fonts
(system font stacks), and a Content-Security-Policy (default-src 'none', inline scripts and
styles, data: images only) forbids any request even if a log line smuggled markup in (all text
is escaped anyway). Series are downsampled (see :mod:`forensics.report.signals`) so an 8-node
bundle's report stays well under 5 MB.
"""
from __future__ import annotations

import datetime as dt
import html
import json
import math
from pathlib import Path

import polars as pl

from forensics.atomic import atomic_path, umask_mode
from forensics.detect.catalog import SEVERITIES
from forensics.report import eventsample, signals
from forensics.report.findings_html import (  # noqa: F401 (evidence_html: part of this module's interface)
    _badge, _diagnosis, _epoch, _finding_cards, _hosts_text, evidence_html)
from forensics.report.nccl_config import nccl_differences

UPLOT_VERSION = "1.6.32"
ASSETS = Path(__file__).parent / "_assets"
MAX_INFO_PER_HOST = 400  # info events drawn per host lane (thinned evenly); warnings and worse all kept
MAX_ALERTS = 8000
# the signal families that explain each layer's findings (their charts are listed first)
LAYER_FAMILIES = {"gpu": ["gpu"], "nic_fabric": ["nic"], "nccl": ["nic", "gpu"], "storage": ["disk", "cpu"],
                  "host_cpu": ["cpu", "disk"], "numa": ["cpu", "gpu"]}

e = html.escape


# ---------------------------------------------------------------------------------------------
# data gathering (views only)

def _sql(bundle, query: str, errors: list[str], what: str) -> pl.DataFrame:
    try:
        return bundle.sql(query)
    except Exception as exc:  # a bundle without that table: the section says so
        errors.append(f"{what}: {str(exc).splitlines()[0]}")
        return pl.DataFrame()


def _events(bundle, errors: list[str]) -> pl.DataFrame:
    try:
        df, total = eventsample.load(bundle, "epoch_us(ts_aligned) / 1e6 AS t, host, source, kind, severity, subject, "
                                             "left(message, 300) AS message")
    except Exception as exc:  # noqa: BLE001 - the report shows what it could not read
        errors.append(f"events: {str(exc).splitlines()[0]}")
        df, total = pl.DataFrame(), 0
    if total > df.height:
        errors.append(f"events: {df.height} of {total} loaded (warning and critical first, info sampled evenly per host)")
    if df.height == 0:
        return pl.DataFrame(schema={"t": pl.Float64, "host": pl.String, "source": pl.String, "kind": pl.String,
                                    "severity": pl.String, "subject": pl.String, "message": pl.String})
    return df.with_columns(pl.col("severity").fill_null("info"))


def _window(findings: list[dict], events: pl.DataFrame, span) -> tuple[float, float] | None:
    """The report's time range: sampled series, finding windows and warning+ events (not the
    info messages of boot, days before the incident), padded by 2%."""
    ts: list[float] = []
    if span:
        ts += list(span)
    for f in findings:
        ts += [v for v in (_epoch(f["start"]), _epoch(f["end"])) if v is not None]
    alerts = events.filter(pl.col("severity") != "info")["t"]
    if alerts.len():
        ts += [alerts.min(), alerts.max()]
    if not ts and events.height:
        ts += [events["t"].min(), events["t"].max()]
    if not ts:
        return None
    lo, hi = min(ts), max(ts)
    pad = max(5.0, (hi - lo) * 0.02)
    return lo - pad, hi + pad


def _lane_events(events: pl.DataFrame, lo: float, hi: float) -> tuple[pl.DataFrame, int]:
    """Events to draw: every warning and critical one (up to MAX_ALERTS), info thinned per host."""
    inside = events.filter(pl.col("t").is_between(lo, hi))
    alerts = inside.filter(pl.col("severity") != "info")
    if alerts.height > MAX_ALERTS:
        alerts = alerts.sort([pl.col("severity") == "critical", "t"], descending=[True, False]).head(MAX_ALERTS)
    infos = []
    for (_,), part in inside.filter(pl.col("severity") == "info").group_by(["host"]):
        infos.append(part.gather_every(max(1, math.ceil(part.height / MAX_INFO_PER_HOST))))
    drawn = pl.concat([alerts] + infos) if infos else alerts
    return drawn.sort("t"), events.height - drawn.height


def _host_order(findings: list[dict], known: list[str]) -> list[str]:
    """Hosts of the most likely root causes first, then the others involved, then the rest."""
    out: list[str] = []
    for f in sorted(findings, key=lambda f: f["caused_by"] is not None):
        for h in f["hosts"] or []:
            if h not in out:
                out.append(h)
    rest = sorted(set(known) - set(out), key=signals._natural_key)
    return out + rest


def _clean(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def build_data(bundle, analysis) -> dict:
    """Everything the page shows, as plain Python (JSON-able) values."""
    errors: list[str] = []
    findings = analysis.findings.to_dicts()
    events = _events(bundle, errors)
    frames = signals.fetch(bundle, errors)
    span = signals.time_span(frames)
    known = sorted(set(getattr(bundle, "hosts", []) or []) | set(events["host"].unique().to_list())
                   | {h for df in frames.values() for h in df["host"].unique().to_list()}
                   | {h for f in findings for h in f["hosts"] or []})
    hosts = _host_order(findings, known)
    window = _window(findings, events, span)
    base = math.floor(window[0]) if window else 0.0
    lane, hidden = _lane_events(events, *window) if window else (events.head(0), events.height)
    kinds = sorted(set(lane["kind"].fill_null("?").to_list()))
    kind_ix = {k: i for i, k in enumerate(kinds)}
    host_ix = {h: i for i, h in enumerate(hosts)}
    sev_ix = {s: i for i, s in enumerate(SEVERITIES)}
    lane_rows = [
        [round(r["t"] - base, 3), host_ix[r["host"]], sev_ix.get(r["severity"], 0), kind_ix[r["kind"] or "?"],
         r["subject"] or "", r["message"] or ""]
        for r in lane.iter_rows(named=True) if r["host"] in host_ix
    ]
    chart_map, max_points = signals.charts(frames, base)
    f_json = [{
        "id": f["id"], "kind": f["kind"], "severity": f["severity"], "hosts": f["hosts"] or [],
        "subject": f["subject"], "summary": f["summary"], "root": f["caused_by"] is None,
        "start": None if f["start"] is None else round(_epoch(f["start"]) - base, 3),
        "end": None if f["end"] is None else round(_epoch(f["end"]) - base, 3),
    } for f in findings]
    return {
        "base": base,
        "range": [round(window[0] - base, 3), round(window[1] - base, 3)] if window else [0, 1],
        "hosts": hosts, "severities": list(SEVERITIES), "kinds": kinds, "events": lane_rows,
        "events_hidden": hidden, "findings": f_json, "charts": chart_map, "max_points": max_points,
        "_events_frame": events, "_errors": errors,
    }


# ---------------------------------------------------------------------------------------------
# rendering

def _signal_sections(data: dict, findings: list[dict]) -> str:
    charts = data["charts"]
    if not charts:
        return '<p class="muted">The bundle has no sampled series (GPU, NIC, disk or CPU samples).</p>'
    involved: dict[str, list[str]] = {}
    for f in findings:
        for h in f["hosts"] or []:
            involved.setdefault(h, []).append(f["layer"])
    out = []
    opened = 0
    for host in data["hosts"]:
        specs = charts.get(host)
        if not specs:
            continue
        layers = involved.get(host, [])
        first = [fam for lay in layers for fam in LAYER_FAMILIES.get(lay, [])]
        order = sorted(range(len(specs)), key=lambda i: (first.index(specs[i]["family"]) if specs[i]["family"] in first else 99, i))
        is_open = bool(layers) and opened < 6 or (opened == 0 and not involved)
        opened += is_open
        note = (f'{len(layers)} finding{"s" if len(layers) != 1 else ""}' if layers else "no findings")
        blocks = []
        for i in order:
            spec = specs[i]
            head = f'<h4>{e(spec["title"])} <span class="muted">({e(spec["unit"])})</span></h4>'
            if spec.get("flat"):
                blocks.append(f'<div class="chart">{head}<p class="flat">zero throughout on all '
                              f'{spec["entities"]} series</p></div>')
                continue
            zero = spec.get("zero") or []
            zline = (f'<p class="flat">zero throughout: {e(", ".join(zero[:12]))}'
                     f'{" (+%d more)" % (len(zero) - 12) if len(zero) > 12 else ""}</p>') if zero else ""
            blocks.append(f'<div class="chart">{head}<div class="plot" data-chart="{i}"></div>{zline}</div>')
        out.append(f'<details class="host" data-host="{e(host)}"{" open" if is_open else ""}><summary>{e(host)} '
                   f'<span class="muted">({note})</span></summary><div class="charts">{"".join(blocks)}</div></details>')
    return "".join(out)


def _nccl_section(bundle, errors: list[str]) -> str:
    cfg = _sql(bundle, "SELECT host, key, value FROM nccl_config WHERE key IS NOT NULL", errors, "nccl_config")
    vers = _sql(bundle, "SELECT host, nccl_version FROM hosts WHERE nccl_version IS NOT NULL ORDER BY host", errors, "hosts")
    if cfg.height == 0:
        return '<p class="muted">No NCCL configuration in the bundle (no NCCL_DEBUG=INFO log).</p>'
    differing, common = nccl_differences(cfg)
    out = []
    if vers.height and vers["nccl_version"].n_unique() > 1:
        out.append(f'<p class="sev-warning">{_badge("warning")} NCCL versions differ across hosts: '
                   + e("; ".join(f"{v}: {', '.join(g['host'].to_list())}" for (v,), g in vers.group_by(["nccl_version"]))) + "</p>")
    if differing:
        out.append(f"<h3>Settings that differ across hosts ({len(differing)})</h3><table><tr><th>setting</th>"
                   "<th>values</th><th>hosts</th></tr>")
        for d in differing:
            n = len(d["groups"]) + bool(d["missing"])
            first = True
            for vals, hs in d["groups"]:
                v = ", ".join(vals[:6]) + (f" (+{len(vals) - 6} more)" if len(vals) > 6 else "")
                cls = "" if first else ' class="odd"'
                key_cell = f'<td rowspan="{n}"><code>{e(d["key"])}</code></td>' if first else ""
                out.append(f"<tr>{key_cell}<td{cls}><code>{e(v)}</code></td><td{cls}>{e(_hosts_text(hs, 12))} "
                           f"<span class=muted>({len(hs)})</span></td></tr>")
                first = False
            if d["missing"]:
                key_cell = f'<td rowspan="{n}"><code>{e(d["key"])}</code></td>' if first else ""
                out.append(f'<tr>{key_cell}<td class="odd"><span class="muted">not logged</span></td>'
                           f'<td class="odd">{e(_hosts_text(d["missing"], 12))} <span class=muted>({len(d["missing"])})</span></td></tr>')
        out.append("</table>")
    else:
        out.append("<p>Every host logged the same NCCL settings (IP addresses aside).</p>")
    if common:
        out.append(f"<details><summary>Settings the same on every host ({len(common)})</summary><table>"
                   + "".join(f"<tr><th><code>{e(k)}</code></th><td><code>{e(v)}</code></td></tr>" for k, v in common)
                   + "</table></details>")
    return "".join(out)


def _pct(lines, unparsed, skipped=None) -> float:
    """Share of lines read into tables (lines skipped on purpose are not: see queries/coverage.sql)."""
    lines = lines or 0
    return 100.0 * (lines - (unparsed or 0) - (skipped or 0)) / lines if lines else 100.0


def _coverage_section(analysis, errors: list[str]) -> str:
    out = []
    cov = analysis.coverage
    if cov.height:
        out.append("<h3>Per source</h3><table><tr><th>source</th><th>files</th><th>lines</th><th>unparsed</th>"
                   "<th>parsed</th><th>failed files</th></tr>")
        for r in cov.iter_rows(named=True):
            p = _pct(r["lines"], r["unparsed"], r.get("skipped"))
            out.append(f"<tr><td>{e(r['source'])}</td><td class=num>{r['files']}</td><td class=num>{r['lines'] or 0}</td>"
                       f"<td class=num>{r['unparsed'] or 0}</td><td class=\"num{' bad' if p < 95 else ''}\">{p:.1f}%</td>"
                       f"<td class=\"num{' bad' if r['failed_files'] else ''}\">{r['failed_files']}</td></tr>")
        out.append("</table>")
    per = analysis.coverage_by_host  # queries/coverage.sql
    if per.height:
        sources = sorted(per["source"].unique().to_list())
        hosts = sorted(per["host"].unique().to_list(), key=signals._natural_key)
        cells = {(r["host"], r["source"]): r for r in per.iter_rows(named=True)}
        out.append("<h3>Per host (share of lines parsed)</h3><table><tr><th>host</th>"
                   + "".join(f"<th>{e(s)}</th>" for s in sources) + "</tr>")
        for h in hosts:
            row = [f"<td>{e(h)}</td>"]
            for s in sources:
                r = cells.get((h, s))
                if r is None:
                    row.append('<td class="muted">-</td>')
                    continue
                p = _pct(r["lines"], r["unparsed"], r.get("skipped"))
                bad = p < 95 or r["failed_files"]
                row.append(f'<td class="num{" bad" if bad else ""}">{p:.1f}%{" (" + str(r["failed_files"]) + " failed)" if r["failed_files"] else ""}</td>')
            out.append("<tr>" + "".join(row) + "</tr>")
        out.append("</table>")
    if not out:
        out.append('<p class="muted">No coverage records in the bundle.</p>')
    if analysis.hosts.height:
        out.append("<h3>Hosts and clock offsets</h3><table><tr><th>host</th><th>kernel</th><th>driver</th><th>NCCL</th>"
                   "<th>GPUs</th><th>clock offset</th><th>confidence</th></tr>")
        for r in analysis.hosts.iter_rows(named=True):
            off = r.get("clock_offset_s")
            out.append(f"<tr><td>{e(r['host'])}</td><td>{e(r.get('kernel') or '-')}</td><td>{e(r.get('driver_version') or '-')}</td>"
                       f"<td>{e(r.get('nccl_version') or '-')}</td><td class=num>{r.get('gpu_count') if r.get('gpu_count') is not None else '-'}</td>"
                       f"<td class=num>{'-' if off is None else f'{off * 1000:+.1f} ms'}</td><td>{e(r.get('clock_offset_confidence') or '-')}</td></tr>")
        out.append("</table>")
    fc = analysis.failed_commands
    if fc.height:
        out.append(f"<h3>Collection commands that failed, timed out or were truncated ({fc.height})</h3><table>"
                   "<tr><th>host</th><th>command</th><th>why</th></tr>")
        for r in fc.head(200).iter_rows(named=True):
            why = r["error"] or ("timed out" if r["timed_out"] else "truncated" if r["truncated"] else f"exit {r['exit_code']}")
            out.append(f"<tr><td>{e(r['host'])}</td><td><code>{e(r['command'] or r['name'] or '')}</code></td><td>{e(str(why))}</td></tr>")
        out.append("</table>")
    if analysis.errors or errors:
        out.append("<h3>Errors</h3><ul>" + "".join(f"<li><code>{e(x)}</code></li>" for x in list(analysis.errors) + errors) + "</ul>")
    return "".join(out)


def _script_json(obj) -> str:
    """JSON safe inside <script>: no '<' at all (so no '</script>' or '<!--'), no NaN."""
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False, default=str, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def _deep_clean(obj):
    if isinstance(obj, dict):
        return {k: _deep_clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_deep_clean(v) for v in obj]
    return _clean(obj)


CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
       "connect-src 'none'; form-action 'none'; base-uri 'none'")


def render_html(bundle, analysis, title: str | None = None) -> str:
    from forensics import __version__

    data = build_data(bundle, analysis)
    events = data.pop("_events_frame")
    errors = data.pop("_errors")
    findings = analysis.findings.to_dicts()
    n_hosts = len(data["hosts"])
    base = data["base"]
    lo = dt.datetime.fromtimestamp(data["range"][0] + base, dt.timezone.utc)
    hi = dt.datetime.fromtimestamp(data["range"][1] + base, dt.timezone.utc)
    title = title or f"forensics report: {len(findings)} findings on {n_hosts} hosts"
    bundles = ", ".join(analysis.bundle_paths) or str(getattr(bundle, "root", ""))
    generated = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    nccl = _nccl_section(bundle, errors)
    coverage = _coverage_section(analysis, errors)
    legend = "".join(f'<span><i style="background:{c}"></i>{s}</span>' for s, c in
                     (("info", "#8a94a6"), ("warning", "#e8a33d"), ("critical", "#d64545")))
    hidden = (f' <span class="muted">({data["events_hidden"]} info events outside the window or thinned out are '
              f"not drawn; <code>forensics timeline</code> lists them all)</span>") if data["events_hidden"] else ""
    payload = _script_json(_deep_clean(data))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="forensics {e(__version__)}">
<title>{e(title)}</title>
<script>
window.__reportErrors = [];
window.addEventListener("error", function (ev) {{
  var msg = (ev.message || "error") + (ev.filename ? " (" + ev.filename + ":" + ev.lineno + ")" : "");
  window.__reportErrors.push(msg);
  document.documentElement.dataset.errors = String(window.__reportErrors.length);
  var box = document.getElementById("js-errors");
  if (box) {{ box.hidden = false; box.textContent += msg + "\\n"; }}
}});
</script>
<style>{_asset("uPlot.min.css")}</style>
<style>{_asset("report.css")}</style>
</head><body><main>
<header><h1>{e(title)}</h1>
<div class="meta">bundle {e(bundles)} · {n_hosts} hosts · {lo:%Y-%m-%d %H:%M:%S} .. {hi:%Y-%m-%d %H:%M:%S} UTC (aligned clock)
 · generated {generated} by forensics {e(__version__)}</div>
<nav><a href="#diagnosis">Diagnosis</a><a href="#timeline">Timeline</a><a href="#findings">Findings</a>
<a href="#signals">Signals</a><a href="#nccl">NCCL configuration</a><a href="#coverage">Coverage</a></nav></header>
<pre id="js-errors" hidden></pre>
<section id="diagnosis"><h2>Diagnosis</h2>{_diagnosis(findings, n_hosts, base)}</section>
<section id="timeline"><h2>Timeline</h2>
<p class="legend">{legend}<span class="muted">events as marks, findings as shaded windows (root causes outlined);
drag to zoom (here or on any chart), double-click or</span> <button id="reset-zoom" type="button">reset zoom</button>
<span id="range-label" class="muted"></span>{hidden}</p>
<div id="swimlane"></div><noscript><p>The timeline and charts need JavaScript.</p></noscript></section>
<section id="findings"><h2>Findings</h2>{_finding_cards(findings, events, base)}</section>
<section id="signals"><h2>Signals per host</h2>
<p class="muted">The series behind the findings, finding windows shaded; hosts with findings first. Downsampled to at
most {data["max_points"]} points per chart, each point keeping the worst value of its interval (maximum of rates,
temperatures and latencies, minimum of clocks, mean of GPU utilisation and power).</p>
{_signal_sections(data, findings)}</section>
<section id="nccl"><h2>NCCL configuration</h2>{nccl}</section>
<section id="coverage"><h2>Parsing coverage</h2>{coverage}</section>
<footer class="muted"><details><summary>Third-party software in this page</summary>
<p>uPlot {UPLOT_VERSION} (MIT licence):</p><pre>{e(_asset("uPlot.LICENSE"))}</pre></details></footer>
</main>
<div id="tip" hidden></div>
<script type="application/json" id="report-data">{payload}</script>
<script>{_asset("uPlot.iife.min.js")}</script>
<script>{_asset("report.js")}</script>
</body></html>
"""


def write_html(analysis, path: Path | str, bundle=None, title: str | None = None) -> Path:
    """Write the report of `analysis` (its bundle, or `bundle`) to `path` atomically."""
    bundle = bundle if bundle is not None else getattr(analysis, "bundle", None)
    if bundle is None:
        raise ValueError("write_html needs the open bundle (analysis.bundle or bundle=)")
    path = Path(path)
    text = render_html(bundle, analysis, title)
    with atomic_path(path, mode=umask_mode()) as tmp:  # a full disk: no half-written report left behind
        Path(tmp).write_text(text, encoding="utf-8")
    return path
