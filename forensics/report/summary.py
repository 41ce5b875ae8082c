"""Text (terminal) and Markdown renderings of an analysis."""
from __future__ import annotations

import json

from rich.markup import escape

from forensics.detect.catalog import KINDS, LAYER_LABELS
from forensics.report.textsafe import printable

_COLOUR = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def _when(ts) -> str:
    return ts.strftime("%Y-%m-%d %H:%M:%S") if ts is not None else "-"


def _window(f: dict) -> str:
    if f["start"] is None:
        return "no timestamp (configuration, untimed log lines or a single counter snapshot)"
    dur = (f["end"] - f["start"]).total_seconds() if f["end"] else 0
    return f"{_when(f['start'])} .. {_when(f['end'])} UTC ({dur:.0f} s)"


def _hosts(f: dict, limit: int = 6) -> str:
    hs = [printable(h) for h in f["hosts"] or []]
    return ", ".join(hs[:limit]) + (f" (+{len(hs) - limit} more)" if len(hs) > limit else "")


def _evidence_line(f: dict, limit: int = 6) -> str:
    try:
        ev = json.loads(f["evidence"]) if f["evidence"] else {}
    except ValueError:
        return printable(f["evidence"])
    if not isinstance(ev, dict):
        return printable(ev)
    parts = []
    for k, v in list(ev.items())[:limit]:
        if isinstance(v, float):
            v = f"{v:.4g}"
        elif isinstance(v, (list, dict)):
            v = json.dumps(v, default=str)
            v = v if len(v) < 80 else v[:77] + "..."
        parts.append(f"{k}={v}")
    return printable(", ".join(parts))


class _Lines(list):
    """Collects what a rich Console would print: (text, print options) per line."""

    def print(self, text: str, **options) -> None:
        self.append((text, options))


def render_text(analysis) -> list[tuple[str, dict]]:
    """The terminal diagnosis as lines: (text with rich markup unless ``markup=False``, the options of
    ``rich.console.Console.print``); the CLI prints them."""
    console = _Lines()
    _render_findings_text(analysis, console)
    _render_coverage_text(analysis, console)
    return list(console)


def _render_findings_text(analysis, console) -> None:
    f_rows = analysis.findings.to_dicts()
    by_id = {f["id"]: f for f in f_rows}
    roots = [f for f in f_rows if not f["caused_by"]]
    console.print(f"[bold]forensics analyze[/bold]: {len(f_rows)} findings, {len(roots)} root causes, "
                  f"{analysis.hosts.height} hosts")
    if not f_rows:
        failed = _failed_files(analysis)
        if failed:  # a file whose parser failed is not in the tables: its absence of findings proves nothing
            console.print(f"[yellow]No findings in what was parsed; {failed} input file{'s' if failed > 1 else ''} "
                          f"could not be parsed (listed below), so this is not a clean bill of health.[/yellow]")
        else:
            console.print("[green]No findings: nothing abnormal detected in the bundle.[/green]")
    for i, f in enumerate(f_rows, 1):
        col = _COLOUR.get(f["severity"], "")
        layer = LAYER_LABELS.get(f["layer"], f["layer"])
        head = f"{i}. [{col}]{f['severity'].upper()}[/{col}] [bold]{f['kind']}[/bold] ({layer})"
        console.print(head + f"  score {f['score']:.2f}")
        console.print(f"   {printable(f['summary'])}", markup=False)
        console.print(f"   hosts: {_hosts(f)}   subject: {printable(f['subject']) or '-'}", markup=False)
        console.print(f"   when:  {_window(f)}", markup=False)
        if f["caused_by"] and f["caused_by"] in by_id:
            c = by_id[f["caused_by"]]
            console.print(f"   follows {c['kind']} on {_hosts(c, 3)} {printable(c['subject'])} ({c['id']})", markup=False, style="italic")
        ev = _evidence_line(f)
        if ev:
            console.print(f"   evidence: {ev}", markup=False)
        console.print(f"   confirm: {printable(f['confirm'])}", markup=False)
        if not f["caused_by"]:
            console.print(f"   do: {printable(f['remediation'])}", markup=False)


def _failed_files(analysis) -> int:
    """Input files whose parser raised (coverage rows with an error): none of their lines reached a table."""
    cov = analysis.coverage
    return int(cov["failed_files"].sum() or 0) if cov.height and "failed_files" in cov.columns else 0


def _render_coverage_text(analysis, console, limit: int = 10) -> None:
    if analysis.coverage.height:
        parts = []
        for r in analysis.coverage.iter_rows(named=True):
            lines = r["lines"] or 0
            failed = r.get("failed_files") or 0
            read = lines - (r["unparsed"] or 0) - (r.get("skipped") or 0)  # (skipped on purpose: not read)
            pct = f"{100.0 * read / lines:.1f}%" if lines else ("-" if failed else "100.0%")
            parts.append(f"{r['source']} {r['files']} files {pct}" + (f" ({failed} failed)" if failed else ""))
        console.print("parsing coverage: " + "; ".join(parts))
    failed = _failed_files(analysis)
    if failed:
        console.print(f"[yellow]{failed} input file{'s' if failed > 1 else ''} could not be parsed (a parser error; "
                      f"none of their lines are in the tables):[/yellow]")
        per = analysis.coverage_by_host
        rows = [r for r in per.iter_rows(named=True) if r.get("errors")] if per.height and "errors" in per.columns else []
        for r in rows[:limit]:
            console.print(printable(f"   {r['host']} ({r['source']}): {r['errors']}"[:400]), markup=False)
        if len(rows) > limit:
            console.print(f"   ... and {len(rows) - limit} more hosts x sources: `forensics query BUNDLE --name coverage`",
                          markup=False)
    if analysis.failed_commands.height:
        console.print(f"[yellow]{analysis.failed_commands.height} collection commands failed, timed out or "
                      f"were truncated:[/yellow]")
        for r in analysis.failed_commands.head(10).iter_rows(named=True):
            why = r["error"] or ("timed out" if r["timed_out"] else "truncated" if r["truncated"] else f"exit {r['exit_code']}")
            console.print(printable(f"   {r['host']}: {r['command']} ({why})"), markup=False)
    for e in analysis.errors:
        console.print(f"[red]error:[/red] {escape(printable(e))}")


def _one_line(text) -> str:
    """Text for one Markdown line or table cell: newlines folded, pipes escaped, and '<' escaped so
    that log text such as ``name=<unknown>`` or ``10.1.2.3<43122>`` is not taken for an HTML tag
    (which ticket renderers drop)."""
    return printable(" ".join((text or "").split())).replace("\\", "\\\\").replace("|", "\\|").replace("<", "\\<")


def render_markdown(analysis, max_findings: int = 12) -> str:
    """A ticket comment: at most ~60 lines."""
    f_rows = analysis.findings.to_dicts()
    by_id = {f["id"]: f for f in f_rows}
    out = [f"### forensics analyze: {len(f_rows)} findings on {analysis.hosts.height} hosts", ""]
    if not f_rows:
        out.append("No findings in what was parsed (some input files could not be parsed: below)."
                   if _failed_files(analysis) else "No findings: nothing abnormal detected.")
    roots = [f for f in f_rows if not f["caused_by"]]
    if roots:
        top = roots[0]
        out += [f"**Most likely root cause:** `{top['kind']}` ({LAYER_LABELS.get(top['layer'], top['layer'])}) on "
                f"{_one_line(_hosts(top))} {('`' + _one_line(top['subject']) + '`') if top['subject'] else ''}: {_one_line(top['summary'])}", "",
                f"*Do:* {_one_line(top['remediation'])}", "", f"*Confirm:* `{printable(' '.join((top['confirm'] or '').split())).replace('`', chr(39))}`", ""]
    if f_rows:
        out += ["| # | severity | kind | hosts | subject | window (UTC) | summary |", "|---|---|---|---|---|---|---|"]
        for i, f in enumerate(f_rows[:max_findings], 1):
            cause = f" (follows {by_id[f['caused_by']]['kind']})" if f["caused_by"] in by_id else ""
            summary = _one_line(f["summary"])
            out.append(f"| {i} | {f['severity']} | {f['kind']} | {_one_line(_hosts(f, 3))} | {_one_line(f['subject'])} | "
                       f"{_window(f)} | {summary}{cause} |")
        if len(f_rows) > max_findings:
            out.append(f"\n{len(f_rows) - max_findings} more findings: run `forensics analyze --format json`.")
    if analysis.coverage.height:
        cov = ", ".join(f"{r['source']} {r['files']}" + (f" ({r['failed_files']} failed)" if r.get("failed_files") else "")
                        for r in analysis.coverage.iter_rows(named=True))
        out += ["", f"Parsed files per source: {cov}."]
        failed = _failed_files(analysis)
        if failed:
            out.append(f"**{failed} input file{'s' if failed > 1 else ''} could not be parsed** (none of their lines are "
                       f"in the tables): see the `coverage` query.")
    if analysis.failed_commands.height:
        out.append(f"{analysis.failed_commands.height} collection commands failed or were truncated.")
    return "\n".join(out[:62]) + "\n"


def kinds_help() -> str:
    return ", ".join(sorted(KINDS))
