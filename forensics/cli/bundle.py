"""`forensics bundle`, `forensics info`, `forensics collect`, `forensics zipapp`."""
from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from forensics.cli._common import FIELDS, INTERVAL, YEAR, UserError
from forensics.cli.redact import KEEP, KEY_FILE, MAPPING_OUT, REDACT


class InfoFormat(str, Enum):
    text = "text"
    json = "json"


def _user_errors(fn, *args, **kwargs):
    from forensics.bundle.errors import BundleError

    try:
        return fn(*args, **kwargs)
    except BundleError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")) from None


def _warn(msg: str) -> None:
    print(f"forensics: warning: {msg}", file=sys.stderr)


def _say_redact(msg: str) -> None:
    print(f"redact: {msg}", file=sys.stderr)


def register(app: typer.Typer) -> None:
    @app.command("bundle")
    def bundle_cmd(
        inputs: List[Path] = typer.Argument(..., help="node bundles, sosreports, nvidia-bug-report.log.gz, loose files or directories"),
        out: Path = typer.Option(..., "--out", "-o", help="output bundle: .tar, .tar.gz/.tgz or .tar.zst"),
        host: Optional[str] = typer.Option(None, "--host", help="host name for loose inputs (default: from the content or directory name)"),
        tz: Optional[str] = typer.Option(None, "--tz", help="IANA time zone of loose inputs' local times"),
        fields: Optional[str] = FIELDS,
        interval: Optional[float] = INTERVAL,
        year: Optional[int] = YEAR,
        merge: bool = typer.Option(False, "--merge", help="combine inputs that bring the same host instead of refusing"),
        redact: bool = REDACT, key_file: Optional[Path] = KEY_FILE, keep: List[str] = KEEP, mapping_out: Optional[Path] = MAPPING_OUT,
    ) -> None:
        """Merge node bundles and turn loose outputs (files, directories, sosreports, bug reports) into one bundle."""
        from forensics.cli._common import stated_hints
        from forensics.importers.build import build_bundle
        from forensics.redact.hooks import redacting_build

        build_bundle = _user_errors(redacting_build, build_bundle, redact, key_file, keep, mapping_out, say=_say_redact)
        summary = _user_errors(build_bundle, inputs, out, host=host, tz=tz, merge=merge, warn=_warn,
                               hints=stated_hints(fields, interval, year))
        rows = sum(n for t, n in summary["rows"].items() if t not in ("coverage", "unparsed"))
        print(f"{out}: {len(summary['hosts'])} host(s) ({', '.join(summary['hosts'])}), {summary['files']} file(s), "
              f"{rows} rows, {summary['rows'].get('unparsed', 0)} unparsed lines, kind {summary['kind']}", file=sys.stderr)
        for t in summary.get("inputs", []):  # what each loose file was taken to be
            print(f"  {t['file']}: {t['source']} of host {t['host']} (confidence {t['confidence']:.2f}: {t['reason']})",
                  file=sys.stderr)
        for e in summary["errors"]:
            _warn(f"not parsed: {e['file']}: {e['error']}")

    @app.command("info")
    def info_cmd(
        bundle: Path = typer.Argument(..., help="bundle (archive or directory)"),
        fmt: InfoFormat = typer.Option(InfoFormat.text, "--format", help="text|json"),
    ) -> None:
        """Show a bundle's hosts, sources (samples, time spans), failed or truncated commands, format version."""
        from forensics.report.info import bundle_info, render_json, render_text

        info = _user_errors(bundle_info, bundle)
        sys.stdout.write(render_json(info) if fmt is InfoFormat.json else render_text(info))

    @app.command("collect")
    def collect_cmd(
        duration: float = typer.Option(60.0, "--duration", help="seconds to sample (0: one snapshot of each)"),
        interval: float = typer.Option(5.0, "--interval", help="seconds between samples"),
        out: Optional[Path] = typer.Option(None, "--out", "-o", help="bundle to write (.tar, .tar.gz, .tar.zst); default <host>-<UTC time>.tar.gz"),
        nccl_log: List[str] = typer.Option([], "--nccl-log", metavar="GLOB", help="NCCL log files to include (repeatable); default: $NCCL_DEBUG_FILE"),
        pid: List[int] = typer.Option([], "--pid", help="also record this process (repeatable)"),
        host: Optional[str] = typer.Option(None, "--host", help="host name to use in the bundle (default: short hostname)"),
        quiet: bool = typer.Option(False, "--quiet", help="no progress lines"),
        raw_only: bool = typer.Option(False, "--raw-only", help="do not parse into tables here (bundle/analyze do it later)"),
        zipapp: Optional[Path] = typer.Option(None, "--zipapp", help="instead of collecting, write the collector as a single-file zipapp"),
        redact: bool = REDACT, key_file: Optional[Path] = KEY_FILE, keep: List[str] = KEEP, mapping_out: Optional[Path] = MAPPING_OUT,
    ) -> None:
        """Capture this node's evidence (dmesg, ethtool -S, iostat, sar, numactl, nvidia-smi, NCCL logs, GPU processes)."""
        if zipapp is not None:
            _write_zipapp(zipapp)
            return
        from forensics.collect.main import run
        from forensics.ingest import ingest_bundle
        from forensics.redact.hooks import redacting_collect

        run = _user_errors(redacting_collect, run, redact, key_file, keep, mapping_out, say=_say_redact)
        code = _user_errors(run, duration, interval, str(out) if out else None, nccl_log, pid, host, quiet,
                            argv=["forensics", "collect"] + sys.argv[2:], raw_only=raw_only, parse_tables=ingest_bundle)
        if code:
            raise typer.Exit(code)

    @app.command("zipapp")
    def zipapp_cmd(out: Path = typer.Argument(Path("forensics-collect.pyz"), help="zipapp to write")) -> None:
        """Write the collector as a single-file zipapp: `python3 forensics-collect.pyz --duration 60` on any node."""
        _write_zipapp(out)


def _write_zipapp(out: Path) -> None:
    from forensics.collect.zipapp import build

    if not out.parent.is_dir():
        raise UserError(f"{out.parent}: no such directory")
    path = _user_errors(build, out)
    print(f"{path}: run it on a node with `python3 {path.name} --duration 60 --interval 5` (Python >= 3.8, no install)",
          file=sys.stderr)
