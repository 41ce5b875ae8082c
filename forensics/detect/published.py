"""An analysis as relations of the bundle's catalog: ``findings`` and ``analysis_params``.

``forensics query`` (when the SQL names them) and ``forensics export --duckdb/--parquet`` run the
detectors on the opened bundle and put their result where the schema's empty ``findings`` table
was, so that ``SELECT count(*) FROM findings`` counts what ``forensics analyze`` reports. They are
computed on demand from the bundle's tables, never read from a stored earlier run, so they cannot
be stale or forged by the bundle.

``analysis_params`` says how the findings were made, one row per value: ``detector = '*'`` rows for
the run (``forensics_version``, ``only``, ``since``, ``until``, ``detectors``, ``errors``) and one row
per detector parameter (``detector``, ``kind``, ``param``, ``value`` as text, ``meaning``), the values
the run used (the header's default unless overridden).
"""
from __future__ import annotations

import datetime as dt
import json

import polars as pl

PARAMS_TABLE = "analysis_params"
RELATIONS = ("findings", PARAMS_TABLE)


def params_frame(only: set[str] | None = None, since: dt.datetime | None = None, until: dt.datetime | None = None,
                 overrides: dict | None = None, errors: list[str] | None = None) -> pl.DataFrame:
    """The ``analysis_params`` rows of a run of the detectors with these arguments."""
    from forensics import __version__
    from forensics.detect.rules import rules

    selected = [r for r in rules() if not only or r.kind in only]
    rows = [("*", None, "forensics_version", __version__, "version of the tool that ran the detectors"),
            ("*", None, "only", ",".join(sorted(only)) if only else None, "finding kinds asked for (NULL: all)"),
            ("*", None, "since", since.isoformat() if since else None, "window start on the aligned timeline: detection read only rows from here"),
            ("*", None, "until", until.isoformat() if until else None, "window end on the aligned timeline: detection read only rows before this"),
            ("*", None, "detectors", str(len(selected)), "signature rules run (the anomaly model besides)"),
            ("*", None, "errors", json.dumps(errors or []), "detectors that failed (their findings are missing)")]
    for r in selected:
        for name, default in r.params.items():
            value = (overrides or {}).get(name, default)
            rows.append((r.name, r.kind, name, str(value), r.param_help.get(name, "")))
    return pl.DataFrame(rows, schema={"detector": pl.String, "kind": pl.String, "param": pl.String,
                                      "value": pl.String, "meaning": pl.String}, orient="row")


def attach(con, findings: pl.DataFrame, params: pl.DataFrame) -> None:
    """Make `findings` and `params` the catalog's ``findings`` and ``analysis_params``."""
    from forensics.db._build import replace_with_frames

    replace_with_frames(con, {"findings": findings, PARAMS_TABLE: params})


def publish(bundle, only: set[str] | None = None, since: dt.datetime | None = None,
            until: dt.datetime | None = None, progress=None) -> tuple[pl.DataFrame, list[str]]:
    """Run the detectors on the opened `bundle` and attach their findings and parameters to its
    catalog (see the module docstring). Returns (findings, errors)."""
    from forensics.db.window import restrict
    from forensics.detect.engine import run_all

    restrict(bundle.con, since, until)
    findings, errors = run_all(bundle, only=only, progress=progress)
    attach(bundle.con, findings, params_frame(only, since, until, None, errors))
    return findings, errors


def names_relations(sql: str) -> bool:
    """Whether the SQL text reads ``findings`` or ``analysis_params`` (as a word)."""
    import re

    return re.search(r"\b(findings|analysis_params)\b", sql, re.IGNORECASE) is not None
