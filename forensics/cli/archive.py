"""`forensics archive add|analyze|query|list`: the fleet archive (see :mod:`forensics.archive`)."""
from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from forensics.cli._common import CACHE_DIR, OutFormat, UserError, check_out_folder, emit_frame, query_params
from forensics.limits import QUERY_TIMEOUT_S

LAKE = typer.Argument(..., help="the lake folder")


class Engine(str, Enum):
    local = "local"
    ray = "ray"


def register(app: typer.Typer) -> None:
    archive = typer.Typer(help="A fleet archive: many incidents in one Parquet lake, queried with the same SQL.",
                          no_args_is_help=True)
    app.add_typer(archive, name="archive")

    @archive.command("add")
    def add_cmd(
        bundles: list[Path] = typer.Argument(..., help="bundle(s) to add: tar, tar.gz, tar.zst or directory"),
        to: Path = typer.Option(..., "--to", help="the lake folder (made if absent or empty)"),
        cache_dir: Optional[Path] = CACHE_DIR,
        quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress output"),
    ) -> None:
        """Add incidents to a lake (parsed once; the same bundle twice changes nothing)."""
        from forensics.archive import add

        say = None if quiet else (lambda m: print(f"archive: {m}", file=sys.stderr))
        for r in add(bundles, to, cache_dir=cache_dir, progress=say):
            if r.status == "added":
                print(f"{r.path}: added as incident {r.incident} ({r.date}, {len(r.hosts)} hosts)")
            else:
                print(f"{r.path}: already in the lake as incident {r.incident}; unchanged")

    @archive.command("analyze")
    def analyze_cmd(
        lake: Path = LAKE,
        engine: Engine = typer.Option(Engine.local, "--engine", help="local|ray: where the incidents are analysed"),
        ray_address: Optional[str] = typer.Option(None, "--ray-address", help="a Ray cluster (auto, ray://head:10001); "
                                                  "the lake must be at the same path on every node"),
        force: bool = typer.Option(False, "--force", help="analyse every incident again"),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress output"),
    ) -> None:
        """Run the detectors on the incidents not yet analysed by this tool (one task per incident)."""
        from forensics.archive import analyze
        from forensics.engine.executors import make_executor

        executor = make_executor(engine.value, ray_address)
        try:
            done = analyze(lake, executor=executor, force=force,
                           progress=None if quiet else (lambda m: print(f"archive: {m}", file=sys.stderr)))
        finally:
            executor.close()
        for d in done:
            print(f"{d['incident']} {d['name']}: {d['findings']} findings"
                  + (f", {len(d['errors'])} errors ({d['errors'][0]})" if d["errors"] else ""))
        if not done:
            print("archive: every incident is analysed already (use --force to analyse again)", file=sys.stderr)

    @archive.command("query")
    def query_cmd(
        lake: Path = LAKE,
        sql: Optional[str] = typer.Argument(None, help="one SELECT over incidents, findings and the tables; '-' reads standard input"),
        name: Optional[str] = typer.Option(None, "--name", "-n", help="a named fleet query (see --list)"),
        param: Optional[list[str]] = typer.Option(None, "--param", "-p", help="key=value for $key (repeatable)"),
        list_: bool = typer.Option(False, "--list", help="list the named fleet queries and the lake's relations"),
        fmt: OutFormat = typer.Option(OutFormat.table, "--format", help="table|csv|json|parquet"),
        out: Optional[Path] = typer.Option(None, "--out", "-o", help="write to this file instead of standard output"),
        timeout: float = typer.Option(QUERY_TIMEOUT_S, "--timeout", help="stop the query after this many seconds (0: no limit)"),
    ) -> None:
        """Read-only DuckDB SQL over every incident of a lake (confined to the lake's folder)."""
        from forensics.archive import fleet_queries, open_lake
        from forensics.archive.query import run_fleet_query
        from forensics.db import QueryError

        if list_:
            for q in fleet_queries().values():
                print(f"{q.name:<20} {q.description}")
                for p in q.params.values():
                    print(f"{'':<22}--param {p.describe()}")
            with open_lake(lake) as b:
                print("\nrelations: " + ", ".join(b.names))
            return
        if (sql is None) == (name is None):
            raise UserError("give exactly one of SQL or --name NAME (or --list)")
        check_out_folder(out)
        if sql == "-":
            sql = sys.stdin.read()
        b = open_lake(lake)
        b.timeout = timeout if timeout > 0 else None
        try:
            df = run_fleet_query(b, name, query_params(param)) if name is not None else b.sql(sql)
        except QueryError as exc:
            raise UserError(str(exc)) from None
        finally:
            b.close()
        emit_frame(df, fmt, out, title=name)

    @archive.command("list")
    def list_cmd(
        lake: Path = LAKE,
        fmt: OutFormat = typer.Option(OutFormat.table, "--format", help="table|csv|json|parquet"),
    ) -> None:
        """The lake's catalogue: one row per incident."""
        from forensics.archive import catalogue
        from forensics.archive.lake import check_lake

        emit_frame(catalogue(check_lake(lake)), fmt, None, title="incidents")
