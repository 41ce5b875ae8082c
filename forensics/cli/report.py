"""`forensics report`: one self-contained HTML report (diagnosis, timeline, charts) to attach to a ticket."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from forensics.cli._common import BUNDLES, CACHE_DIR, QUIET, SINCE, UNTIL, UserError, time_window


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_cmd(
        bundles: list[Path] = BUNDLES,
        out: Path = typer.Option(..., "--out", "-o", help="HTML file to write (one file, works offline)"),
        title: Optional[str] = typer.Option(None, "--title", help="page title (default: the finding and host counts)"),
        cache_dir: Optional[Path] = CACHE_DIR,
        quiet: bool = QUIET,
        since: Optional[str] = SINCE,
        until: Optional[str] = UNTIL,
    ) -> None:
        """Write a self-contained HTML report: diagnosis, swimlane timeline, evidence, per-host charts, NCCL config, coverage."""
        from forensics.analysis import analyze_paths
        from forensics.cli._progress import terminal_progress

        if not out.parent.exists():  # before the analysis, not after it
            raise UserError(f"{out.parent}: no such directory")
        t0, t1 = time_window(since, until)
        analysis = analyze_paths(bundles, cache_dir=cache_dir, progress=terminal_progress(quiet), since=t0, until=t1)
        write_report(analysis, out, title, quiet)


def write_report(analysis, out: Path, title: str | None = None, quiet: bool = False) -> None:
    """Write the HTML report of `analysis` to `out` (shared by `report` and `analyze --report`)."""
    from forensics.report.html import write_html

    if not out.parent.exists():
        raise UserError(f"{out.parent}: no such directory")
    try:
        write_html(analysis, out, title=title)
    except OSError as exc:
        raise UserError(f"{out}: {exc.strerror or exc}") from None
    if not quiet:
        size = out.stat().st_size
        print(f"{out}: {analysis.findings.height} findings, {size / 1e6:.1f} MB (open it in any browser, works offline)",
              file=sys.stderr)
