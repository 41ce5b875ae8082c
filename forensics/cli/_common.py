"""Options and output helpers shared by every command."""
from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path

import polars as pl
import typer

from forensics.errors import UserError
from forensics.frames import frame_to_json_rows, jsonable

__all__ = ["OutFormat", "UserError", "emit_frame", "frame_to_json_rows"]


class OutFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    parquet = "parquet"


def _nested(t: pl.DataType) -> bool:
    return t.is_nested() or isinstance(t, pl.Object)


def flat_for_csv(df: pl.DataFrame) -> pl.DataFrame:
    """`df` with every nested column (lists, arrays, structs, DuckDB MAPs) as JSON text, durations in seconds."""
    cols = []
    for c, t in df.schema.items():
        if _nested(t):
            cols.append(pl.Series(c, [None if v is None else json.dumps(jsonable(v), default=str)
                                      for v in df[c].to_list()], dtype=pl.String))
        elif isinstance(t, pl.Duration):
            cols.append(df[c].dt.total_microseconds().cast(pl.Float64) / 1e6)
        elif isinstance(t, pl.Binary):
            cols.append(pl.Series(c, [None if v is None else v.hex() for v in df[c].to_list()], dtype=pl.String))
    return df.with_columns(cols) if cols else df


def check_out_folder(out: Path | None) -> None:
    """Refuse an output file whose folder is missing or not a folder (before any work is done)."""
    if out is not None and not out.parent.is_dir():
        what = "is not a folder" if out.parent.exists() else "does not exist"
        raise UserError(f"{out}: {out.parent} {what}")


def _write(out: Path | None, write) -> None:
    """Run `write(path_or_file)` for `out` or standard output; a folder that is missing or not
    writable is one UserError line."""
    if out is None:
        write(None)
        return
    check_out_folder(out)
    try:
        write(out)
    except PermissionError:
        raise UserError(f"{out}: permission denied (cannot write there)") from None
    except IsADirectoryError:
        raise UserError(f"{out}: is a directory") from None
    except OSError as exc:
        raise UserError(f"{out}: cannot write: {exc.strerror or exc}") from None


def emit_frame(df: pl.DataFrame, fmt: OutFormat, out: Path | None = None, title: str | None = None) -> None:
    """Write `df` to `out` (or stdout) in the chosen format (tables: see :mod:`forensics.cli._table`)."""
    if fmt is OutFormat.parquet:
        if out is None:
            raise UserError("--format parquet needs --out FILE")
        _write(out, lambda p: df.write_parquet(p, compression="zstd"))
        return
    if fmt is OutFormat.json:
        text = json.dumps(frame_to_json_rows(df), default=str) + "\n"
    elif fmt is OutFormat.csv:
        text = flat_for_csv(df).write_csv()
    else:
        from forensics.cli._table import emit_table

        if out is None:
            emit_table(df, title=title)
            return

        def table_to(p: Path) -> None:
            with open(p, "w") as fh:
                emit_table(df, title=title, file=fh, terminal=False)

        _write(out, table_to)
        return
    _write(out, lambda p: sys.stdout.write(text) if p is None else p.write_text(text))


def stated_hints(fields: str | None, interval: float | None, year: int | None = None) -> dict:
    """Parser hints from --fields / --interval (checked by the nvidia-smi source) and --year (the year of
    loose inputs' times printed without one); a bad one is a UserError."""
    out = {"year": int(year)} if year is not None else {}
    if fields is None and interval is None:
        return out
    from forensics.sources.nvidia_smi.query_csv import stated_hints as check

    try:
        return {**check(fields, interval), **out}
    except ValueError as exc:
        raise UserError(str(exc)) from None


SINCE_HELP = "only the window from this time on the aligned timeline (ISO-8601, UTC if no zone); detection reads only that window"
UNTIL_HELP = "only the window before this time (aligned timeline)"

# options several commands take, declared once (same flag, same help everywhere)
BUNDLE = typer.Argument(..., help="bundle: tar, tar.gz, tar.zst or directory")
BUNDLES = typer.Argument(..., help="bundle(s): tar, tar.gz, tar.zst or directory; several are merged")
CACHE_DIR = typer.Option(None, "--cache-dir", help="where parsed tables are cached (default ~/.cache/forensics)")
QUIET = typer.Option(False, "--quiet", "-q", help="no progress output")
SINCE = typer.Option(None, "--since", help=SINCE_HELP)
UNTIL = typer.Option(None, "--until", help=UNTIL_HELP)
FIELDS = typer.Option(None, "--fields", help="nvidia-smi --query-gpu field list of a noheader CSV (e.g. index,utilization.gpu); "
                      "wins over recognition by shape")
YEAR = typer.Option(None, "--year", min=1970, max=9999,
                    help="year of times printed without one (syslog, journalctl short, PyTorch glog lines)")
INTERVAL = typer.Option(None, "--interval", help="seconds between the samples of an input that prints no time "
                        "(e.g. a loop of nvidia-smi --query-gpu)")


def query_params(items: list[str] | None) -> dict[str, str]:
    """{key: value} of repeated ``--param key=value`` options; a malformed one is a UserError."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--param {item!r}: use --param key=value")
        out[key.strip()] = value
    return out


def time_window(since: str | None, until: str | None):
    """(since, until) of --since/--until as UTC datetimes; a bad time is a UserError."""
    from forensics.timeutil import parse_when

    try:
        return (parse_when(since) if since else None, parse_when(until) if until else None)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _severity_enum():
    from enum import Enum

    from forensics.detect.catalog import SEVERITIES

    return Enum("Severity", {s: s for s in SEVERITIES}, type=str)


Severity = _severity_enum()  # the findings schema's severities, in increasing order (--fail-on, --severity)
