"""`forensics analyze` as a library call: open, align, detect, and gather what the report shows."""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field

import polars as pl


@dataclass
class Analysis:
    findings: pl.DataFrame
    hosts: pl.DataFrame
    coverage: pl.DataFrame
    failed_commands: pl.DataFrame
    errors: list[str] = field(default_factory=list)
    bundle_paths: list[str] = field(default_factory=list)
    bundle: object = field(default=None, repr=False, compare=False)  # the open bundle (reports read its views)

    def to_json(self) -> dict:
        from forensics.cli._common import frame_to_json_rows

        findings = frame_to_json_rows(self.findings)
        for f in findings:
            try:
                f["evidence"] = json.loads(f["evidence"]) if f["evidence"] else {}
            except (TypeError, ValueError):
                pass
        return {
            "bundles": self.bundle_paths,
            "findings": findings,
            "hosts": frame_to_json_rows(self.hosts),
            "coverage": frame_to_json_rows(self.coverage),
            "failed_commands": frame_to_json_rows(self.failed_commands),
            "errors": self.errors,
        }


def _safe(bundle, sql: str) -> pl.DataFrame:
    try:
        return bundle.sql(sql)
    except Exception:
        return pl.DataFrame()


def analyze_bundle(bundle, only: set[str] | None = None, since: dt.datetime | None = None,
                   until: dt.datetime | None = None, progress=None, paths: list[str] | None = None) -> Analysis:
    from forensics.detect.engine import run_all

    findings, errors = run_all(bundle, only=only, since=since, until=until, progress=progress)
    hosts = _safe(bundle, "SELECT host, kernel, driver_version, nccl_version, gpu_count, clock_offset_s, "
                          "clock_offset_confidence FROM hosts ORDER BY host")
    coverage = _safe(bundle, "SELECT source, count(*) AS files, sum(lines)::BIGINT AS lines, sum(unparsed)::BIGINT AS unparsed, "
                             "count(error) AS failed_files FROM coverage GROUP BY source ORDER BY source")
    failed = _safe(bundle, "SELECT host, name, array_to_string(argv, ' ') AS command, exit_code, timed_out, "
                           "truncated, error FROM commands WHERE coalesce(exit_code, -1) <> 0 OR timed_out "
                           "OR truncated OR error IS NOT NULL ORDER BY host, name")
    return Analysis(findings, hosts, coverage, failed, errors, paths or [], bundle)


def analyze_paths(paths, only=None, since=None, until=None, cache_dir=None, progress=False) -> Analysis:
    """Open (merging several bundles into one when more than one is given) and analyse.

    `progress`: False, True (progress bars on a terminal's stderr), or an object with
    ``parse(message)``, ``detect(rule_name)``, ``start_detection(total)`` and ``close()`` (see
    :mod:`forensics.report.progress`)."""
    from forensics.cli._common import UserError
    from forensics.db import open_bundle
    from forensics.report.progress import make_progress

    paths = [str(p) for p in paths]
    ui = make_progress(progress)
    try:
        try:
            target = paths[0] if len(paths) == 1 else merged_bundle(paths, cache_dir=cache_dir)
            if ui is not None:  # parse here, with progress; open_bundle then finds the tables current
                from forensics.bundle import load

                target = load(target, cache_dir=cache_dir, progress=ui.parse)
            bundle = open_bundle(target, cache_dir=cache_dir)
        except (OSError, ValueError) as exc:
            raise UserError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
        if ui is not None:
            from forensics.detect.rules import rules

            ui.start_detection(sum(1 for r in rules() if not only or r.kind in only))
        return analyze_bundle(bundle, only=only, since=since, until=until, paths=paths,
                              progress=ui.detect if ui is not None else None)
    finally:
        if ui is not None:
            ui.close()


def merged_bundle(paths: list[str], cache_dir=None):
    """One bundle merging several (node bundles, loose files), built once and kept in the cache.

    Node bundles of different hosts merge; the same host given twice is an error, as with
    `forensics bundle` without --merge."""
    import hashlib
    from pathlib import Path

    from forensics.bundle.build import build_bundle
    from forensics.bundle.cache import cache_root, file_sha256

    key = hashlib.sha256()
    for p in paths:
        q = Path(p)
        key.update(str(q.resolve()).encode())
        key.update(file_sha256(q).encode() if q.is_file() else str(q.stat().st_mtime_ns).encode())
    root = cache_root(cache_dir)
    root.mkdir(parents=True, exist_ok=True)
    out = root / f"merged-{key.hexdigest()[:20]}.tar"
    if not out.exists():
        build_bundle([Path(p) for p in paths], out)
    return out
