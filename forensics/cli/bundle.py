"""`forensics bundle`, `forensics info`, `forensics collect`, `forensics zipapp`."""
from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from forensics.cli._common import UserError


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


def register(app: typer.Typer) -> None:
    @app.command("bundle")
    def bundle_cmd(
        inputs: List[Path] = typer.Argument(..., help="node bundles, sosreports, nvidia-bug-report.log.gz, loose files or directories"),
        out: Path = typer.Option(..., "--out", "-o", help="output bundle: .tar, .tar.gz/.tgz or .tar.zst"),
        host: Optional[str] = typer.Option(None, "--host", help="host name for loose inputs (default: from the content or directory name)"),
        tz: Optional[str] = typer.Option(None, "--tz", help="IANA time zone of loose inputs' local times"),
        merge: bool = typer.Option(False, "--merge", help="combine inputs that bring the same host instead of refusing"),
    ) -> None:
        """Merge node bundles and turn loose outputs (files, directories, sosreports, bug reports) into one bundle."""
        from forensics.bundle.build import build_bundle

        summary = _user_errors(build_bundle, inputs, out, host=host, tz=tz, merge=merge, warn=_warn)
        rows = sum(n for t, n in summary["rows"].items() if t not in ("coverage", "unparsed"))
        print(f"{out}: {len(summary['hosts'])} host(s) ({', '.join(summary['hosts'])}), {summary['files']} file(s), "
              f"{rows} rows, {summary['rows'].get('unparsed', 0)} unparsed lines, kind {summary['kind']}", file=sys.stderr)
        for e in summary["errors"]:
            _warn(f"not parsed: {e['file']}: {e['error']}")

    @app.command("info")
    def info_cmd(
        bundle: Path = typer.Argument(..., help="bundle (archive or directory)"),
        fmt: InfoFormat = typer.Option(InfoFormat.text, "--format", help="text|json"),
    ) -> None:
        """Show a bundle's hosts, sources (samples, time spans), failed or truncated commands, format version."""
        from forensics.bundle.info import bundle_info, render_json, render_text

        info = _user_errors(bundle_info, bundle)
        sys.stdout.write(render_json(info) if fmt is InfoFormat.json else render_text(info))
