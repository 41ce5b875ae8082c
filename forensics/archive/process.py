"""Analysing a lake's incidents: the detectors on every incident not yet analysed by this tool and
these detectors, one task per incident on an executor (:mod:`forensics.engine.executors`: serial
here, or Ray tasks that read the lake's folder, which every node must see at the same path)."""
from __future__ import annotations

import hashlib
from pathlib import Path

from forensics.archive.lake import (
    FINDINGS_DIR, PART, catalogue, check_lake, incident_dir, tool_version, write_frame_atomic, write_row,
)


def analysis_stamp() -> str:
    """The tool version and a digest of the detectors' SQL: findings made by another are out of date."""
    from forensics.resources import data_dir

    h = hashlib.sha256()
    for p in sorted(data_dir("queries").glob("detectors/*")):
        if p.is_file():
            h.update(p.name.encode() + b"\0" + p.read_bytes())
    return f"{tool_version()} detectors {h.hexdigest()[:12]}"


def analyze_incident(folder: str) -> dict:
    """Run the detectors on the incident at `folder` (its ``tables/``) and write
    ``findings/part-0.parquet`` there, atomically; returns its count and error lines (a map task)."""
    from forensics.analysis import analyze_bundle
    from forensics.db import open_bundle

    with open_bundle(folder) as bundle:
        result = analyze_bundle(bundle)
        findings = result.findings
    out = Path(folder) / FINDINGS_DIR
    out.mkdir(exist_ok=True)
    write_frame_atomic(findings, out / PART)
    return {"findings": findings.height, "errors": list(result.errors)}


def analyze(lake: Path | str, executor=None, force: bool = False, progress=None) -> list[dict]:
    """Analyse every incident of `lake` whose findings are missing or were made by another tool or
    other detectors (every one with `force`); returns one dict per incident analysed (incident,
    findings, errors). `executor`: None (serially here) or one of :mod:`forensics.engine.executors`."""
    from forensics.engine.executors import SerialExecutor

    lake = check_lake(lake)
    stamp = analysis_stamp()
    cat = catalogue(lake)
    todo = [r for r in cat.iter_rows(named=True) if force or r["analyzed_by"] != stamp]
    if not todo:
        return []
    if progress:
        progress(f"analysing {len(todo)} of {cat.height} incidents")
    executor = executor or SerialExecutor()
    outputs = executor.map(analyze_incident, [(str(incident_dir(lake, r["date"], r["incident"])),) for r in todo])
    done = []
    for row, out in zip(todo, outputs):
        write_row(lake, {**row, "analyzed_by": stamp, "findings": out["findings"], "errors": out["errors"]})
        done.append({"incident": row["incident"], "name": row["name"], **out})
    return done
