"""`forensics parse`, `forensics sources`, `forensics schema`."""
from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from forensics.limits import MAX_LINE_BYTES

from forensics.cli._common import FIELDS, INTERVAL, YEAR, UserError


class ParseFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


def register(app: typer.Typer) -> None:
    @app.command("parse")
    def parse_cmd(
        files: list[Path] = typer.Argument(..., help="raw tool outputs to parse", exists=False),
        source: Optional[str] = typer.Option(None, "--source", help="source name; default: recognised by content"),
        host: Optional[str] = typer.Option(None, "--host", help="host name for rows that carry none"),
        tz: Optional[str] = typer.Option(None, "--tz", help="IANA zone of local times in the input (default UTC)"),
        out: Optional[Path] = typer.Option(None, "--out", help="write DIR/<table>.parquet (with unparsed.parquet)"),
        fmt: ParseFormat = typer.Option(ParseFormat.table, "--format", help="table|json|csv"),
        year: Optional[int] = YEAR,
        fields: Optional[str] = FIELDS,
        interval: Optional[float] = INTERVAL,
    ) -> None:
        """Parse raw outputs of dmesg, ethtool -S, iostat, sar, numactl -H, nvidia-smi or NCCL logs."""
        from forensics.cli._common import OutFormat, emit_frame, stated_hints
        from forensics.ingest.files import parse_file

        if tz:
            from forensics.timeutil import check_zone

            try:
                check_zone(tz)
            except ValueError as exc:
                raise UserError(f"--tz: {exc} (use an IANA name such as Europe/Paris or UTC)") from None
        hints = stated_hints(fields, interval)
        failed = 0
        for f in files:
            try:
                summary, tables = parse_file(f, source=source, host=host, tz=tz, out_dir=out, year=year, hints=hints)
            except (OSError, ValueError, KeyError) as exc:
                print(f"forensics: error: {f}: {exc}", file=sys.stderr)
                failed += 1
                continue
            if out is None and fmt is not ParseFormat.json:
                for t, df in tables.items():
                    if fmt is ParseFormat.csv:
                        sys.stdout.write(f"# table {t}\n")
                    emit_frame(df, OutFormat(fmt.value), title=t)
            if summary.get("warning"):
                print(f"forensics: warning: {f}: {summary['warning']}", file=sys.stderr)
            if summary.get("note"):
                print(f"forensics: note: {f}: {summary['note']}", file=sys.stderr)
            if summary.get("truncated_lines"):
                print(f"forensics: warning: {f}: {summary['truncated_lines']} line(s) longer than "
                      f"{MAX_LINE_BYTES >> 10} KiB cut (first {MAX_LINE_BYTES >> 10} KiB kept and marked)", file=sys.stderr)
            if fmt is ParseFormat.json:
                sys.stdout.write(json.dumps(summary) + "\n")
            else:
                print(
                    f"{summary['file']}: source={summary['source']} lines={summary['lines']} "
                    f"unparsed={summary['unparsed']} skipped={summary['skipped']} rows={summary['rows']} "
                    f"confidence={summary['confidence']:.2f} ({summary['recognition']})",
                    file=sys.stderr,
                )
        if failed:
            raise typer.Exit(2)

    @app.command("sources")
    def sources_cmd() -> None:
        """List the source parsers and the tables each produces."""
        from forensics.sources import registry

        for name, mod in registry().items():
            print(f"{name:<11} v{mod.VERSION}  {', '.join(mod.TABLES):<40} {mod.DESCRIPTION}")

    @app.command("schema")
    def schema_cmd(table: Optional[str] = typer.Argument(None, help="table name; all tables when omitted")) -> None:
        """Print table schemas (columns, types, units, meaning)."""
        from forensics import schema

        names = [table] if table else schema.table_names()
        for name in names:
            try:
                s = schema.load(name)
            except KeyError as exc:
                from forensics.cli.query import view_doc

                doc = view_doc(name)
                if doc is None:
                    raise UserError(f"{exc.args[0]} (tables: `forensics schema`; views and macros: "
                                    "`forensics queries --views`)") from None
                print(f"{doc[0]}: a view (or macro) every bundle has, derived from the tables: {doc[1]}")
                print(f"  columns: forensics query BUNDLE \"DESCRIBE {name}\"; all views and macros: "
                      "forensics queries --views")
                continue
            print(f"{name}: {s['description']}")
            for c in s["columns"]:
                unit = f" [{c['unit']}]" if c.get("unit") else ""
                print(f"  {c['name']:<28} {c['type']:<22}{unit} {c['description']}")
            print()
