"""`forensics query`, `forensics queries`, `forensics timeline`, `forensics export`."""
from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from forensics.cli._common import BUNDLE, CACHE_DIR, OutFormat, SINCE_HELP, Severity, UNTIL, UNTIL_HELP, UserError, check_out_folder, emit_frame, query_params, time_window
from forensics.limits import QUERY_TIMEOUT_S

TABLE_ROWS = 1000  # rows printed by --format table unless --limit says otherwise


class TimelineFormat(str, Enum):
    text = "text"
    json = "json"
    csv = "csv"


def _open(bundle: Path, cache_dir: Path | None):
    from forensics.db import BundleError, open_bundle

    try:
        return open_bundle(bundle, cache_dir=cache_dir)
    except (BundleError, ValueError, OSError) as exc:
        raise UserError(str(exc).splitlines()[0] if str(exc) else f"{bundle}: cannot be opened") from None


def _adhoc_value(text: str):
    """Typed value for a parameter of ad hoc SQL: integer, float, true/false, else the string."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "null":
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for item in values or [] for v in item.split(",") if v.strip()]


def register(app: typer.Typer) -> None:
    @app.command("query")
    def query_cmd(
        bundle: Path = BUNDLE,
        sql: Optional[str] = typer.Argument(None, help="one SELECT statement; '-' reads it from standard input"),
        file: Optional[Path] = typer.Option(None, "--file", "-f", help="read the SQL from this file"),
        name: Optional[str] = typer.Option(None, "--name", "-n", help="run a named query (see `forensics queries`)"),
        param: Optional[list[str]] = typer.Option(None, "--param", "-p", help="key=value for $key in the SQL (repeatable)"),
        fmt: OutFormat = typer.Option(OutFormat.table, "--format", help="table|csv|json|parquet"),
        out: Optional[Path] = typer.Option(None, "--out", "-o", help="write to this file instead of standard output"),
        limit: Optional[int] = typer.Option(None, "--limit", help=f"at most N rows (table output shows {TABLE_ROWS} by default)"),
        timeout: float = typer.Option(QUERY_TIMEOUT_S, "--timeout", help="stop the query after this many seconds (0: no limit)"),
        cache_dir: Optional[Path] = CACHE_DIR,
    ) -> None:
        """Run read-only DuckDB SQL over a bundle's tables and views (events, nic_rates, gpu_episodes, ...)."""
        from forensics.db import QueryError
        from forensics.db import named
        from forensics.detect.published import names_relations, publish

        given = sum(x is not None for x in (sql, file, name))
        if given != 1:
            raise UserError("give exactly one of SQL, --file F.sql or --name NAME")
        check_out_folder(out)
        params = query_params(param)
        nq = None
        if name is not None:
            try:
                nq = named.get(name)
            except QueryError as exc:
                raise UserError(str(exc)) from None
        elif file is not None:
            try:
                sql = file.read_text()
            except OSError as exc:
                raise UserError(f"{file}: {exc.strerror or exc}") from None
        elif sql == "-":
            sql = sys.stdin.read()
        b = _open(bundle, cache_dir)
        b.timeout = timeout if timeout > 0 else None
        try:
            if names_relations(nq.sql if nq is not None else sql):
                findings, errors = publish(b)
                print(f"forensics: findings computed on demand: {findings.height} findings"
                      + (f", {len(errors)} detector(s) failed (see analysis_params)" if errors else ""), file=sys.stderr)
            if nq is not None:
                df = b.query(nq.name, **params)
            else:
                df = b.sql(sql, **{k: _adhoc_value(v) for k, v in params.items()})
        except QueryError as exc:
            raise UserError(str(exc)) from None
        finally:
            b.close()
        if limit is not None:
            df = df.head(max(limit, 0))
        elif fmt is OutFormat.table and df.height > TABLE_ROWS:
            print(f"forensics: showing {TABLE_ROWS} of {df.height} rows (use --limit N or --format csv|json|parquet)",
                  file=sys.stderr)
            df = df.head(TABLE_ROWS)
        emit_frame(df, fmt, out, title=name)

    @app.command("queries")
    def queries_cmd(
        views: bool = typer.Option(False, "--views", help="also list the views and SQL macros every bundle has"),
    ) -> None:
        """List the named queries (queries/*.sql) with their descriptions and parameters."""
        from forensics.db import named

        for q in named.catalog().values():
            print(f"{q.name:<18} {q.description}")
            for p in q.params.values():
                print(f"{'':<20}--param {p.describe()}")
        if views:
            from forensics.db._build import view_files

            print("\nviews and macros (queries/views/):")
            for _, path in view_files():
                for item, desc in _view_docs(path):
                    print(f"  {item:<34} {desc}")

    @app.command("timeline")
    def timeline_cmd(
        bundle: Path = BUNDLE,
        host: Optional[list[str]] = typer.Option(None, "--host", help="only these hosts (repeat or comma-separate)"),
        since: Optional[str] = typer.Option(None, "--since", help="from this time (ISO-8601, UTC if no zone; aligned timeline)"),
        until: Optional[str] = UNTIL,
        kind: Optional[list[str]] = typer.Option(None, "--kind", help="only these event kinds; '*' wildcards (nccl_*)"),
        severity: Severity = typer.Option(Severity.info, "--severity", help="lowest severity shown: " + "|".join(s.value for s in Severity)),
        limit: Optional[int] = typer.Option(None, "--limit", help="at most N events"),
        fmt: TimelineFormat = typer.Option(TimelineFormat.text, "--format", help="text|json|csv"),
        cache_dir: Optional[Path] = CACHE_DIR,
    ) -> None:
        """The merged timeline of every host (clock-aligned), colour-coded by severity."""
        from forensics.db import QueryError

        t0, t1 = time_window(since, until)
        hosts = _split(host)
        kinds = [k.replace("*", "%") for k in _split(kind)]
        b = _open(bundle, cache_dir)
        try:
            df = b.sql(
                "SELECT ts_aligned, ts, ts_quality, host, severity, kind, subject, message, origin, file, line_no "
                "FROM events WHERE severity_rank(severity) >= severity_rank($sev) "
                "AND ($since IS NULL OR ts_aligned >= $since) AND ($until IS NULL OR ts_aligned < $until) "
                "AND (len($hosts) = 0 OR list_contains($hosts, host)) "
                "AND (len($kinds) = 0 OR list_bool_or([kind LIKE k FOR k IN $kinds])) "
                "ORDER BY ts_aligned NULLS LAST, host, file, line_no, kind"
                + (" LIMIT $limit" if limit is not None else ""),
                sev=severity.value, since=t0, until=t1, hosts=hosts, kinds=kinds,
                **({"limit": max(limit, 0)} if limit is not None else {}),
            )
        except QueryError as exc:
            raise UserError(str(exc)) from None
        finally:
            b.close()
        if fmt is not TimelineFormat.text:
            emit_frame(df, OutFormat(fmt.value))
            return
        _print_timeline(df)

    @app.command("export")
    def export_cmd(
        bundle: Path = BUNDLE,
        duckdb_file: Optional[Path] = typer.Option(None, "--duckdb", help="write a DuckDB database file with every table and view"),
        parquet_dir: Optional[Path] = typer.Option(None, "--parquet", help="write a Hive-partitioned Parquet dataset (DIR/<table>/host=<h>/)"),
        perfetto: Optional[Path] = typer.Option(None, "--perfetto", help="write the timeline and findings as a Chrome trace-event JSON for ui.perfetto.dev"),
        cache_dir: Optional[Path] = CACHE_DIR,
        quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress output (--perfetto parses and analyses the bundle)"),
        since: Optional[str] = typer.Option(None, "--since", help="--perfetto: " + SINCE_HELP),
        until: Optional[str] = typer.Option(None, "--until", help="--perfetto: " + UNTIL_HELP),
    ) -> None:
        """Export a bundle's tables and views for the DuckDB CLI or any SQL/dataframe tool, or its timeline for Perfetto."""
        from forensics.db import BundleError, _resolve
        from forensics.db.export import export_duckdb, export_parquet

        if sum(x is not None for x in (duckdb_file, parquet_dir, perfetto)) != 1:
            raise UserError("give exactly one of --duckdb FILE.duckdb, --parquet DIR or --perfetto TRACE.json")
        if perfetto is not None:
            _export_perfetto(bundle, perfetto, cache_dir, quiet, time_window(since, until))
            return
        if since is not None or until is not None:
            raise UserError("--since/--until apply to --perfetto only (--duckdb and --parquet export every row)")
        try:
            root = _resolve(bundle, cache_dir)
            analysis = _analysis_tables(root)
            if duckdb_file is not None:
                counts = export_duckdb(root, duckdb_file, extra=analysis)
                target = duckdb_file
            else:
                counts = export_parquet(root, parquet_dir, extra=analysis)
                target = parquet_dir
        except (BundleError, ValueError, OSError) as exc:
            raise UserError(str(exc).splitlines()[0] if str(exc) else "export failed") from None
        rows = sum(counts.values())
        print(f"{target}: {len(counts)} tables and views, {rows} rows", file=sys.stderr)


def _analysis_tables(root: Path) -> dict:
    """{"findings": ..., "analysis_params": ...} of a run of the detectors on the parsed bundle `root`."""
    from forensics.db import open_bundle
    from forensics.detect.published import params_frame
    from forensics.detect.engine import run_all

    b = open_bundle(root)
    try:
        findings, errors = run_all(b)
    finally:
        b.close()
    return {"findings": findings, "analysis_params": params_frame(errors=errors)}


def _export_perfetto(bundle: Path, out: Path, cache_dir: Path | None, quiet: bool = False, window=(None, None)) -> None:
    """The analysis' findings (as slices) and the bundle's timeline and series as a trace (progress
    bars for parsing and detection on a terminal unless `quiet`, as in `analyze`)."""
    from forensics.analysis import analyze_paths
    from forensics.cli._progress import terminal_progress
    from forensics.report.perfetto import write_trace

    if not out.parent.exists():
        raise UserError(f"{out.parent}: no such directory")
    # (derive="auto": the trace reads every NIC interface's rates, not only the classes detection reads)
    analysis = analyze_paths([bundle], cache_dir=cache_dir, progress=terminal_progress(quiet), derive="auto",
                             since=window[0], until=window[1])
    try:
        write_trace(analysis.bundle, out, analysis.findings)
    except OSError as exc:
        raise UserError(f"{out}: {exc.strerror or exc}") from None
    if not quiet:
        print(f"{out}: {analysis.findings.height} findings, {out.stat().st_size / 1e6:.1f} MB "
              "(open it in ui.perfetto.dev or chrome://tracing)", file=sys.stderr)


def _view_docs(path: Path, full: bool = False) -> list[tuple[str, str]]:
    """(name, first sentence of its comment; the whole comment if `full`) of each view/macro a
    queries/views file defines for users (the internal ``raw.*`` helpers are left out)."""
    import re

    text = path.read_text()
    lines = text.splitlines()
    out = []
    defs = list(re.finditer(r"CREATE OR REPLACE (?:VIEW|MACRO) ((?:[a-z_]+\.)?[a-z_][a-z0-9_]*)(\([^)]*\))?", text))
    names = {m.group(1) for m in defs}
    for m in defs:
        name = m.group(1)
        if "." in name:
            continue
        desc = ""
        for i, line in enumerate(lines):
            if re.match(rf"--\s*{name}(\([^)]*\))?:", line):
                doc = [line.split(":", 1)[1].strip()]
                for nxt in lines[i + 1:]:
                    starts = re.match(r"--\s*([a-z_][a-z0-9_]*)(\([^)]*\))?:", nxt)
                    if not nxt.startswith("--") or (starts and starts.group(1) in names):
                        break
                    doc.append(nxt.lstrip("- ").strip())
                desc = " ".join(doc)
                break
        if full:
            out.append((name + (m.group(2) or ""), desc))
            continue
        first = re.split(r"(?<=[a-z0-9)%])\. ", desc)[0].rstrip(".")
        out.append((name + (m.group(2) or ""), first if len(first) <= 120 else first[:117].rsplit(" ", 1)[0] + " ..."))
    return out


def view_doc(name: str) -> tuple[str, str] | None:
    """(name with its arguments, whole comment) of the view or macro `name`, or None."""
    from forensics.db._build import view_files

    for _, path in view_files():
        for item, desc in _view_docs(path, full=True):
            if item.split("(")[0] == name:
                return item, desc
    return None


_STYLE = {"critical": "bold red", "warning": "yellow", "info": ""}
_TAG = {"critical": "CRIT", "warning": "WARN", "info": "info"}


def _print_timeline(df) -> None:
    from rich.console import Console
    from rich.text import Text

    from forensics.report.textsafe import printable

    console = Console(highlight=False, soft_wrap=True, markup=False, emoji=False)
    if df.height == 0:
        print("(no events)", file=sys.stderr)
        return
    hw = max(4, min(24, max(len(h or "") for h in df["host"])))
    kw = max(4, min(26, max(len(k or "") for k in df["kind"])))
    for r in df.iter_rows(named=True):
        t = r["ts_aligned"]
        if t is None:
            when = "(no time)".ljust(24)
        else:
            when = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
            when += "~" if r["ts_quality"] == "interpolated" else " "
        line = Text(f"{when} {printable(r['host']):<{hw}} {_TAG.get(r['severity'], '?'):<4} {printable(r['kind']):<{kw}} "
                    f"{printable(r['subject']) or '-':<10} {printable(r['message'])}", style=_STYLE.get(r["severity"], ""))
        console.print(line)
