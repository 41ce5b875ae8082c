"""Command line: a thin typer app. Each module of this package registers its verbs.

A module ``forensics/cli/<area>.py`` defines ``register(app: typer.Typer) -> None``; modules are
discovered, so adding a verb never means editing this file.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

import typer

from forensics.cli._common import UserError

app = typer.Typer(
    name="forensics",
    help="Offline log and counter forensics for GPU training clusters.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _load() -> None:
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        mod.register(app)


_load()


def main() -> None:
    try:
        app()
    except UserError as exc:
        print(f"forensics: error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
