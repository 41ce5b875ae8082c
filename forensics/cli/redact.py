"""`forensics redact`, and the ``--redact`` options that `collect` and `bundle` share with it."""
from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from forensics.cli._common import UserError

CLASS_HELP = "hostnames|ips|macs|gids|uuids|serials|users"
# Option declarations reused by `forensics collect` and `forensics bundle` (forensics/cli/bundle.py).
REDACT = typer.Option(False, "--redact", help="redact the bundle written (see `forensics redact`)")
KEY_FILE = typer.Option(None, "--key-file", metavar="F",
                        help="redaction key (read, or created with mode 0600); default "
                             "$FORENSICS_REDACT_KEY_FILE or ~/.config/forensics/redact.key")
KEEP = typer.Option([], "--keep", metavar="CLASS", help=f"leave a class as it is (repeatable or comma-separated): {CLASS_HELP}")
MAPPING_OUT = typer.Option(None, "--mapping-out", metavar="FILE",
                           help="write the original -> pseudonym map here (mode 0600; never inside the bundle)")


class Format(str, Enum):
    text = "text"
    json = "json"


def _warn(msg: str) -> None:
    print(f"forensics: warning: {msg}", file=sys.stderr)


def register(app: typer.Typer) -> None:
    @app.command("redact")
    def redact_cmd(
        bundle: Path = typer.Argument(..., help="bundle to redact (archive or directory)"),
        out: Path = typer.Option(..., "--out", "-o", help="redacted bundle to write: .tar, .tar.gz/.tgz or .tar.zst"),
        key_file: Optional[Path] = KEY_FILE,
        keep: List[str] = KEEP,
        mapping_out: Optional[Path] = MAPPING_OUT,
        reparse: bool = typer.Option(False, "--reparse", help="parse the redacted raw files into new tables "
                                                              "instead of rewriting the bundle's tables"),
        fmt: Format = typer.Option(Format.text, "--format", help="text|json (summary on stdout)"),
        quiet: bool = typer.Option(False, "--quiet", help="no progress lines"),
    ) -> None:
        """Replace host names, IP/IPv6 addresses, MACs, GIDs/GUIDs, UUIDs, serials and user names by keyed,
        consistent pseudonyms in every file, name and table of a bundle (the key stays local)."""
        from forensics.bundle.errors import BundleError
        from forensics.redact import redact

        def progress(msg: str) -> None:
            if not quiet:
                print(f"redact: {msg}", file=sys.stderr)

        try:
            summary = redact(bundle, out, key_file=key_file, keep=keep, mapping_out=mapping_out,
                             progress=progress, warn=_warn, reparse=reparse)
        except BundleError as exc:
            raise UserError(str(exc)) from None
        except OSError as exc:
            raise UserError(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": ")) from None
        if fmt is Format.json:
            sys.stdout.write(json.dumps(summary, sort_keys=True) + "\n")
            return
        counts = ", ".join(f"{n} {c}" for c, n in summary["counts"].items()) or "nothing found"
        print(f"{summary['out']}: {len(summary['hosts'])} host(s), {summary['files']} member(s) rewritten; "
              f"replaced {counts}; kept: {', '.join(summary['kept']) or 'none'}; key id {summary['key_id']} "
              f"({summary['key_file']}); {summary['seconds']} s", file=sys.stderr)
        if mapping_out:
            print(f"{mapping_out}: mapping written (keep it apart from the bundle)", file=sys.stderr)
