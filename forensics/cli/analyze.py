"""`forensics analyze`: the ranked diagnosis of a bundle."""
from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from forensics.cli._common import BUNDLES, CACHE_DIR, FIELDS, INTERVAL, QUIET, SINCE, UNTIL, YEAR, Severity, UserError, time_window


class Engine(str, Enum):
    local = "local"
    ray = "ray"


class AnalyzeFormat(str, Enum):
    text = "text"
    json = "json"
    md = "md"


def register(app: typer.Typer) -> None:
    @app.command("analyze")
    def analyze_cmd(
        bundles: list[Path] = BUNDLES,
        fmt: AnalyzeFormat = typer.Option(AnalyzeFormat.text, "--format", help="text|json|md"),
        fail_on: Optional[Severity] = typer.Option(None, "--fail-on", help="exit 1 when a finding reaches this severity"),
        since: Optional[str] = SINCE,
        until: Optional[str] = UNTIL,
        only: Optional[list[str]] = typer.Option(None, "--only", help="only these finding kinds (repeat or comma-separate)"),
        cache_dir: Optional[Path] = CACHE_DIR,
        quiet: bool = QUIET,
        report: Optional[Path] = typer.Option(None, "--report", help="also write the self-contained HTML report to this file"),
        host: Optional[str] = typer.Option(None, "--host", help="host name for loose files whose content names none"),
        merge: bool = typer.Option(False, "--merge", help="combine inputs that bring the same host (as bundle --merge)"),
        tz: Optional[str] = typer.Option(None, "--tz", help="time zone of loose files' local times (e.g. Europe/Paris)"),
        fields: Optional[str] = FIELDS,
        interval: Optional[float] = INTERVAL,
        year: Optional[int] = YEAR,
        engine: Engine = typer.Option(Engine.local, "--engine", help="local (this machine) or ray (map per host group, reduce across hosts; needs forensics[ray]): the same findings"),
        ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster to run on (e.g. auto, ray://head:10001); default: a Ray started on this machine"),
        expect_tps: Optional[float] = typer.Option(
            None, "--expect-tokens-per-s", min=0.001, metavar="RATE",
            help="tokens/s per GPU the job should reach (a benchmark or healthy run of the same model): a training "
                 "log below it is a throughput_shortfall"),
    ) -> None:
        """Find which layer made the job slow, hung or dead: ranked findings with evidence and remediation."""
        from forensics.analysis import analyze_paths
        from forensics.cli._common import stated_hints
        from forensics.cli._progress import terminal_progress
        from forensics.detect.catalog import KINDS, severity_rank

        kinds = None
        if only:
            kinds = {k.strip() for item in only for k in item.split(",") if k.strip()}
            unknown = sorted(kinds - set(KINDS))
            if unknown:
                raise UserError(f"unknown finding kind(s) {', '.join(unknown)} (known: {', '.join(sorted(KINDS))})")
        if report is not None and not report.parent.exists():
            raise UserError(f"{report.parent}: no such directory")
        if tz:
            from forensics.timeutil import check_zone

            try:
                check_zone(tz)
            except ValueError as exc:
                raise UserError(f"--tz: {exc} (use an IANA name such as Europe/Paris or UTC)") from None
        unused = None
        if host or tz:
            from forensics.analysis import is_loose_input

            if not any(is_loose_input(p) for p in bundles):
                given = " and ".join(o for o, v in (("--host", host), ("--tz", tz)) if v)
                unused = (f"{given} not used: {'they apply' if host and tz else 'it applies'} to loose files only, and "
                          f"{'these inputs are bundles' if len(bundles) > 1 else f'{bundles[0]} is a bundle'} "
                          "(its hosts carry their own names and zones)")
        t0, t1 = time_window(since, until)
        if ray_address and engine is not Engine.ray:
            raise UserError("--ray-address goes with --engine ray")
        runner = None
        if engine is Engine.ray:
            from forensics.engine import MapReduce
            from forensics.engine.executors import RayExecutor

            runner = MapReduce(RayExecutor(ray_address))
        try:
            analysis = analyze_paths(bundles, only=kinds, since=t0, until=t1, cache_dir=cache_dir,
                                     progress=terminal_progress(quiet), host=host, tz=tz, hints=stated_hints(fields, interval, year),
                                     merge=merge, warn=lambda m: print(f"forensics: warning: {m}", file=sys.stderr),
                                     engine=runner, params={"expect_tokens_per_s": expect_tps} if expect_tps else None)
        finally:
            if runner is not None:
                runner.executor.close()
        if unused:
            print(f"forensics: warning: {unused}", file=sys.stderr)
        if report is not None:
            from forensics.cli.report import write_report

            write_report(analysis, report, quiet=quiet)
        if fmt is AnalyzeFormat.json:
            sys.stdout.write(json.dumps(analysis.to_json(), default=str, indent=1) + "\n")
        elif fmt is AnalyzeFormat.md:
            from forensics.report.summary import render_markdown

            sys.stdout.write(render_markdown(analysis))
        else:
            from rich.console import Console

            from forensics.report.summary import render_text

            console = Console(highlight=False, soft_wrap=True, emoji=False)
            for text, options in render_text(analysis):
                console.print(text, **options)
        if fail_on is not None:
            worst = max((severity_rank(s) for s in analysis.findings["severity"].to_list()), default=-1)
            if worst >= severity_rank(fail_on.value):
                raise typer.Exit(1)
