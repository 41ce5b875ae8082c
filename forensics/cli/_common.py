"""Options and output helpers shared by every command."""
from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Any

import polars as pl


class UserError(Exception):
    """An error caused by the user's input: printed as one line, exit code 2 (or as given)."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code


class OutFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    parquet = "parquet"


def _jsonable(v: Any) -> Any:
    if hasattr(v, "isoformat"):
        return v.isoformat()
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    return v


def frame_to_json_rows(df: pl.DataFrame) -> list[dict]:
    return [{k: _jsonable(v) for k, v in row.items()} for row in df.iter_rows(named=True)]


def emit_frame(df: pl.DataFrame, fmt: OutFormat, out: Path | None = None, title: str | None = None) -> None:
    """Write `df` to `out` (or stdout) in the chosen format."""
    if fmt is OutFormat.parquet:
        if out is None:
            raise UserError("--format parquet needs --out FILE")
        df.write_parquet(out, compression="zstd")
        return
    if fmt is OutFormat.json:
        text = json.dumps(frame_to_json_rows(df), default=str) + "\n"
    elif fmt is OutFormat.csv:
        flat = df.with_columns(
            [pl.col(c).cast(pl.List(pl.String)).list.join(",") for c, t in df.schema.items() if isinstance(t, pl.List)]
        )
        text = flat.write_csv()
    else:
        text = None
    if text is not None:
        if out:
            out.write_text(text)
        else:
            sys.stdout.write(text)
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(file=open(out, "w") if out else sys.stdout, width=None if out is None else 200)
    table = Table(title=title, show_lines=False)
    for c in df.columns:
        table.add_column(c, overflow="fold")
    for row in df.iter_rows():
        table.add_row(*["" if v is None else str(v) for v in row])
    console.print(table)
