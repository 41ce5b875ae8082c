"""The report's findings as HTML: the diagnosis (root cause first, consequences under their
causes, long lists of one kind grouped) and one card per finding with its evidence tables and the
warning/critical events in its window. Plain HTML, escaped, readable without scripts."""
from __future__ import annotations

import datetime as dt
import html
import json

import polars as pl

from forensics.detect.catalog import LAYER_LABELS, SEVERITIES
from forensics.report import signals

MAX_EVIDENCE_ROWS = 25
MAX_RELATED_EVENTS = 15
GROUP_AT = 4  # consequences of one kind under one cause shown as one line from this many on

e = html.escape


def _epoch(ts) -> float | None:
    return None if ts is None else ts.timestamp()


def _fmt_ts(ts, date: bool = True) -> str:
    if ts is None:
        return "-"
    return ts.strftime("%Y-%m-%d %H:%M:%S" if date else "%H:%M:%S")


def _when(f: dict) -> str:
    if f["start"] is None:
        return "no timestamp (configuration, untimed log lines or a single counter snapshot)"
    end = f["end"] or f["start"]
    same_day = end.date() == f["start"].date()
    return (f"{_fmt_ts(f['start'])} .. {_fmt_ts(end, not same_day)} UTC "
            f"({(end - f['start']).total_seconds():.0f} s)")


def _hosts_text(hs: list[str] | None, limit: int = 6) -> str:
    hs = hs or []
    return ", ".join(hs[:limit]) + (f" (+{len(hs) - limit} more)" if len(hs) > limit else "")


def _badge(sev: str) -> str:
    return f'<span class="badge sev-{e(sev)}">{e(sev)}</span>'


def _value(v) -> str:
    if isinstance(v, float):
        return e(f"{v:,.0f}" if 1e4 <= abs(v) < 1e15 else f"{v:.4g}")
    if isinstance(v, (dict, list)):
        return f"<code>{e(json.dumps(v, default=str))[:400]}</code>"
    return e(str(v)) if v is not None else '<span class="muted">-</span>'


def _rows_table(rows: list[dict]) -> str:
    cols: list[str] = []
    for r in rows[:MAX_EVIDENCE_ROWS]:
        cols += [k for k in r if k not in cols]
    out = ["<table><tr>" + "".join(f"<th>{e(c)}</th>" for c in cols) + "</tr>"]
    for r in rows[:MAX_EVIDENCE_ROWS]:
        out.append("<tr>" + "".join(f'<td{" class=num" if isinstance(r.get(c), (int, float)) else ""}>'
                                    f"{_value(r.get(c))}</td>" for c in cols) + "</tr>")
    out.append("</table>")
    if len(rows) > MAX_EVIDENCE_ROWS:
        out.append(f'<p class="muted">{len(rows) - MAX_EVIDENCE_ROWS} more rows not shown</p>')
    return "".join(out)


def evidence_html(evidence: str | None) -> str:
    """The finding's evidence JSON as tables: scalars as key/value rows, lists of rows as sub-tables."""
    try:
        ev = json.loads(evidence) if evidence else {}
    except ValueError:
        return f"<pre>{e(evidence or '')}</pre>"
    if not isinstance(ev, dict):
        ev = {"evidence": ev}
    if not ev:
        return ""
    simple, nested = [], []
    for k, v in ev.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            nested.append((k, v))
        elif isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values()):
            nested.append((k, [{"key": kk, **vv} for kk, vv in v.items()]))
        else:
            if isinstance(v, list) and all(not isinstance(x, (list, dict)) for x in v):
                v = ", ".join(str(x) for x in v)
            simple.append((k, v))
    out = []
    if simple:
        out.append('<table class="kv">' + "".join(f"<tr><th>{e(str(k))}</th><td>{_value(v)}</td></tr>"
                                                   for k, v in simple) + "</table>")
    for k, rows in nested:
        out.append(f"<h4>{e(str(k))}</h4>" + _rows_table(rows))
    return "".join(out)


def _related_events(f: dict, events: pl.DataFrame) -> str:
    if f["start"] is None or events.height == 0:
        return ""
    lo, hi = _epoch(f["start"]) - 60, _epoch(f["end"] or f["start"]) + 60
    rel = events.filter(pl.col("host").is_in(f["hosts"] or []) & (pl.col("severity") != "info")
                        & pl.col("t").is_between(lo, hi))
    if rel.height == 0:
        return ""
    rows = []
    for r in rel.head(MAX_RELATED_EVENTS).iter_rows(named=True):
        t = dt.datetime.fromtimestamp(r["t"], dt.timezone.utc)
        rows.append(f"<tr class=\"sev-{e(r['severity'])}\"><td class=mono>{t:%H:%M:%S}.{t.microsecond // 1000:03d}</td>"
                    f"<td>{e(r['host'])}</td><td>{_badge(r['severity'])}</td><td>{e(r['kind'] or '')}</td>"
                    f"<td>{e(r['subject'] or '')}</td><td class=mono>{e(r['message'] or '')}</td></tr>")
    more = f'<p class="muted">{rel.height - MAX_RELATED_EVENTS} more events in the window</p>' if rel.height > MAX_RELATED_EVENTS else ""
    return ("<h4>Warning and critical events in the window (±60 s)</h4><table><tr><th>UTC</th><th>host</th>"
            "<th>severity</th><th>kind</th><th>subject</th><th>message</th></tr>" + "".join(rows) + "</table>" + more)


def _zoom_link(f: dict, base: float) -> str:
    if f["start"] is None:
        return ""
    a, b = _epoch(f["start"]) - base, _epoch(f["end"] or f["start"]) - base
    return f' <a class="zoom" href="#timeline" data-zoom="{a:.3f},{b:.3f}">show on the timeline</a>'


def _diagnosis(findings: list[dict], n_hosts: int, base: float) -> str:
    by_id = {f["id"]: f for f in findings}
    if not findings:
        return (f'<div class="headline none"><b>No findings</b>: nothing abnormal detected on {n_hosts} '
                f"host{'s' if n_hosts != 1 else ''}.</div>")
    children: dict[str, list[dict]] = {}
    for f in findings:
        if f["caused_by"] in by_id:
            children.setdefault(f["caused_by"], []).append(f)
    roots = [f for f in findings if f["caused_by"] not in by_id]
    top = roots[0]
    out = [f'<div class="headline sev-{e(top["severity"])}"><b>Most likely root cause:</b> {_badge(top["severity"])} '
           f'<a href="#{e(top["id"])}"><b>{e(top["kind"])}</b></a> ({e(LAYER_LABELS.get(top["layer"], top["layer"]))}) on '
           f'{e(_hosts_text(top["hosts"]))}{(" <code>" + e(top["subject"]) + "</code>") if top["subject"] else ""}: '
           f'{e(top["summary"] or "")}<br><b>Do:</b> {e(top["remediation"] or "")}<br><b>Confirm:</b> '
           f'<code>{e(top["confirm"] or "")}</code></div>']
    n_cons = len(findings) - len(roots)
    out.append(f"<p>{len(findings)} findings: {len(roots)} independent (root causes, most likely first) and "
               f"{n_cons} consequence{'s' if n_cons != 1 else ''} listed under the finding they follow.</p>")

    def item(f: dict, depth: int) -> str:
        s = (f'{_badge(f["severity"])} <a href="#{e(f["id"])}"><b>{e(f["kind"])}</b></a> '
             f'<span class="muted">({e(LAYER_LABELS.get(f["layer"], f["layer"]))}, score {f["score"]:.2f})</span> '
             f'{e(_hosts_text(f["hosts"], 4))}{(" <code>" + e(f["subject"]) + "</code>") if f["subject"] else ""}: '
             f'{e(f["summary"] or "")} <span class="muted">{e(_when(f))}</span>')
        if depth:
            cause = by_id[f["caused_by"]]
            s += f' <span class="muted">(follows {e(cause["kind"])} on {e(_hosts_text(cause["hosts"], 2))})</span>'
        kids = children.get(f["id"], [])
        if kids and depth < 4:
            s += '<ul class="effects">' + "".join(f"<li>{x}</li>" for x in effects(f, kids, depth + 1)) + "</ul>"
        return s

    def effects(cause: dict, kids: list[dict], depth: int) -> list[str]:
        """One line per consequence; GROUP_AT or more of one kind without consequences of their own
        (the same storm seen on seven receivers) become one line naming each host."""
        out, done = [], set()
        for k in kids:
            if k["id"] in done:
                continue
            same = [x for x in kids if x["kind"] == k["kind"] and not children.get(x["id"])]
            if len(same) >= GROUP_AT and k in same:
                done |= {x["id"] for x in same}
                worst = max((x["severity"] for x in same), key=SEVERITIES.index)
                hosts = sorted({h for x in same for h in x["hosts"] or []}, key=signals._natural_key)
                links = ", ".join(f'<a href="#{e(x["id"])}">{e(_hosts_text(x["hosts"], 2))}'
                                  f'{(" " + e(x["subject"])) if x["subject"] else ""}</a>' for x in same)
                out.append(f'{_badge(worst)} <b>{e(k["kind"])}</b> <span class="muted">({e(LAYER_LABELS.get(k["layer"], k["layer"]))})</span> '
                           f'on {len(hosts)} hosts: {links}. <span class="muted">e.g. {e(k["summary"] or "")} '
                           f'(follow {e(cause["kind"])} on {e(_hosts_text(cause["hosts"], 2))})</span>')
            else:
                done.add(k["id"])
                out.append(item(k, depth))
        return out

    out.append('<ol class="diag">' + "".join(f'<li class="sev-{e(f["severity"])}">{item(f, 0)}</li>' for f in roots) + "</ol>")
    return "".join(out)


def _finding_cards(findings: list[dict], events: pl.DataFrame, base: float) -> str:
    by_id = {f["id"]: f for f in findings}
    out = []
    for i, f in enumerate(findings, 1):
        cause = by_id.get(f["caused_by"])
        follows = (f'<tr><th>follows</th><td><a href="#{e(cause["id"])}">{e(cause["kind"])}</a> on '
                   f'{e(_hosts_text(cause["hosts"], 3))} {e(cause["subject"] or "")}</td></tr>') if cause else ""
        out.append(
            f'<details class="finding sev-{e(f["severity"])}" id="{e(f["id"])}"{" open" if not cause else ""}>'
            f'<summary>{i}. {_badge(f["severity"])} <b>{e(f["kind"])}</b> on {e(_hosts_text(f["hosts"], 4))} '
            f'{e(f["subject"] or "")} <span class="muted">— {e(f["summary"] or "")}</span></summary>'
            f'<table class="kv"><tr><th>layer</th><td>{e(LAYER_LABELS.get(f["layer"], f["layer"] or ""))}</td></tr>'
            f'<tr><th>hosts</th><td>{e(", ".join(f["hosts"] or []))}</td></tr>'
            f'<tr><th>subject</th><td>{e(f["subject"] or "-")}</td></tr>'
            f'<tr><th>window</th><td>{e(_when(f))}{_zoom_link(f, base)}</td></tr>'
            f'<tr><th>score</th><td>{f["score"]:.2f}</td></tr>{follows}'
            f'<tr><th>detector</th><td><code>{e(f["detector"] or "")}</code> <span class="muted">id {e(f["id"])}</span></td></tr>'
            f'</table><h4>Evidence</h4>{evidence_html(f["evidence"]) or "<p class=muted>none recorded</p>"}'
            f'{_related_events(f, events)}'
            f'<p><b>Confirm on the live cluster:</b></p><pre>{e(f["confirm"] or "")}</pre>'
            f'<p><b>Remediation:</b> {e(f["remediation"] or "")}</p></details>')
    return "".join(out) or '<p class="muted">No findings.</p>'
