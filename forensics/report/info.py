"""`forensics info`: what a bundle holds (hosts, sources with samples and time spans, failed commands)."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl

from forensics.ingest.load import load
from forensics.bundle.manifest import read_manifest
from forensics.layout import TABLES_DIR

TS_COLUMNS = ("ts", "start")


def _table(root: Path, table: str) -> pl.DataFrame | None:
    files = sorted((root / TABLES_DIR / table).glob("host=*/part-0.parquet"))
    if not files:
        return None
    return pl.read_parquet(files, hive_partitioning=False)


def _iso(v) -> str | None:
    return v.isoformat() if isinstance(v, dt.datetime) else None


def bundle_info(path: Path | str, cache_dir: Path | str | None = None) -> dict:
    root = load(path, cache_dir=cache_dir)
    man = read_manifest(root)
    out: dict = {
        "bundle": str(path), "format_version": man["format_version"], "kind": man.get("kind"),
        "created_by": man.get("created_by"), "created_at": man.get("created_at"),
        "redacted": man.get("redaction") is not None, "hosts": [], "sources": [], "commands": {}, "parse_errors": [],
    }
    hosts = _table(root, "hosts")
    for h in man["hosts"]:
        row = hosts.filter(pl.col("host") == h).row(0, named=True) if hosts is not None and hosts.filter(pl.col("host") == h).height else {}
        out["hosts"].append({
            "host": h, "hostname": row.get("hostname"), "kernel": row.get("kernel"), "timezone": row.get("timezone"),
            "boot_time": _iso(row.get("boot_time")), "driver_version": row.get("driver_version"),
            "gpu_count": row.get("gpu_count"), "numa_nodes": row.get("numa_nodes"),
        })
    cov = _table(root, "coverage")
    # time spans and sample counts per raw file (rows may carry another host than the file's folder)
    per_file: dict[str, dict] = {}
    for tdir in sorted((root / TABLES_DIR).iterdir()) if (root / TABLES_DIR).is_dir() else []:
        if not tdir.is_dir() or tdir.name in ("coverage", "unparsed", "hosts", "nics", "commands"):
            continue
        df = _table(root, tdir.name)
        if df is None or not df.height or "file" not in df.columns:
            continue
        ts = next((c for c in TS_COLUMNS if c in df.columns), None)
        aggs = [pl.len().alias("rows")]
        if ts:
            aggs += [pl.col(ts).min().alias("first"), pl.col(ts).max().alias("last")]
        if "sample_no" in df.columns:
            aggs.append(pl.col("sample_no").n_unique().alias("samples"))
        for r in df.group_by("file").agg(aggs).iter_rows(named=True):
            s = per_file.setdefault(r["file"], {"first": None, "last": None, "samples": 0})
            for k, fn in (("first", min), ("last", max)):
                if r.get(k) is not None:
                    s[k] = r[k] if s[k] is None else fn(s[k], r[k])
            s["samples"] = max(s["samples"], r.get("samples") or 0)
    if cov is not None:
        groups: dict[tuple[str, str], dict] = {}
        for r in cov.sort("host", "source", "file").iter_rows(named=True):
            g = groups.setdefault((r["host"], r["source"]), {"host": r["host"], "source": r["source"], "files": 0, "lines": 0,
                                                              "unparsed": 0, "skipped": 0, "errors": 0, "samples": 0, "rows": {},
                                                              "first": None, "last": None})
            g["files"] += 1
            g["lines"] += r["lines"] or 0
            g["unparsed"] += r["unparsed"] or 0
            g["skipped"] += r.get("skipped_lines") or 0  # (null in bundles parsed before the column)
            g["errors"] += 1 if r["error"] else 0
            for t, n in (json.loads(r["rows"]) if r["rows"] else {}).items():
                if n:
                    g["rows"][t] = g["rows"].get(t, 0) + n
            f = per_file.get(r["file"])
            if f:
                g["samples"] += f["samples"]
                for k, fn in (("first", min), ("last", max)):
                    if f[k] is not None:
                        g[k] = f[k] if g[k] is None else fn(g[k], f[k])
            if r["error"]:
                out["parse_errors"].append({"host": r["host"], "file": r["file"], "error": r["error"]})
        for g in groups.values():
            g["first"], g["last"] = _iso(g["first"]), _iso(g["last"])
            out["sources"].append(g)
    cmds = _table(root, "commands")
    if cmds is not None:
        bad = cmds.filter(pl.col("error").is_not_null() | (pl.col("exit_code").fill_null(0) != 0) | pl.col("truncated")
                          | pl.col("timed_out"))
        out["commands"] = {
            "run": cmds.height,
            "failed": cmds.filter(pl.col("error").is_not_null() | (pl.col("exit_code").fill_null(0) != 0) | pl.col("timed_out")).height,
            "truncated": cmds.filter(pl.col("truncated")).height,
            "problems": [
                {"host": r["host"], "name": r["name"], "argv": r["argv"], "exit_code": r["exit_code"], "error": r["error"],
                 "truncated": r["truncated"], "timed_out": r["timed_out"]}
                for r in bad.sort("host", "name").iter_rows(named=True)
            ],
        }
    return out


def render_text(info: dict) -> str:
    lines = [f"bundle {info['bundle']}: format {info['format_version']}, kind {info['kind']}, "
             f"created {info['created_at']} by {info['created_by']}" + (", redacted" if info["redacted"] else "")]
    lines.append(f"hosts ({len(info['hosts'])}):")
    for h in info["hosts"]:
        extra = ", ".join(f"{k} {h[k]}" for k in ("kernel", "timezone", "boot_time", "driver_version", "gpu_count") if h.get(k))
        lines.append(f"  {h['host']}" + (f"  ({extra})" if extra else ""))
    lines.append("sources:")
    lines.append(f"  {'host':<16} {'source':<11} {'files':>5} {'lines':>9} {'unparsed':>8} {'samples':>7}  rows / span")
    for s in info["sources"]:
        rows = ", ".join(f"{t} {n}" for t, n in sorted(s["rows"].items())) or "-"
        span = f"  {s['first']} .. {s['last']}" if s.get("first") else ""
        err = f"  [{s['errors']} file(s) not parsed]" if s.get("errors") else ""
        lines.append(f"  {s['host']:<16} {s['source']:<11} {s['files']:>5} {s['lines'] if s['lines'] is not None else '-':>9} "
                     f"{s['unparsed'] if s['unparsed'] is not None else '-':>8} {s['samples'] or '-':>7}  {rows}{span}{err}")
    c = info.get("commands") or {}
    if c:
        lines.append(f"commands: {c['run']} run, {c['failed']} failed, {c['truncated']} truncated")
        for p in c["problems"]:
            what = p["error"] or ("timed out" if p["timed_out"] else f"exit {p['exit_code']}" if p["exit_code"] else "")
            if p["truncated"]:
                what = (what + ", " if what else "") + "output truncated"
            lines.append(f"  {p['host']}: {p['name']}: {what}")
    for e in info["parse_errors"]:
        lines.append(f"not parsed: {e['file']}: {e['error']}")
    return "\n".join(lines) + "\n"


def render_json(info: dict) -> str:
    return json.dumps(info, indent=1, default=str) + "\n"
