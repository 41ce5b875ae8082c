"""The reduce step: what needs every host at once, over the map step's outputs (see :mod:`forensics.engine`)."""
from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from forensics import schema
from forensics.detect.rules import WINDOW_TABLES, rules


def load_windows(con, outputs: list[dict]) -> dict[str, int]:
    """The map step's window tables, every group's, as the temporary tables of the same names the
    detectors' setup scripts would have made over all hosts; returns {table: rows}."""
    rows = {}
    for table in WINDOW_TABLES:
        parts = [pq.read_table(o["windows"][table]) for o in outputs]
        if not parts:  # a bundle without hosts: nothing to compare
            continue
        data = pa.concat_tables(parts, promote_options="permissive")
        con.register("_windows_in", data)
        try:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT * FROM _windows_in")
        finally:
            con.unregister("_windows_in")
        rows[table] = data.num_rows
    return rows


def reduce_findings(bundle, outputs: list[dict], only: set[str] | None = None,
                    anomaly: bool = True, params: dict | None = None) -> tuple[pl.DataFrame, list[str]]:
    """All findings, linked and ranked, from the map step's `outputs` (:func:`forensics.engine.mapstep.detect_group`'s)
    and the ``-- locality: cross`` detectors and anomaly model run here over the open `bundle`
    (all hosts, the same window [since, until) as the map's), with the detector parameters `params`
    (by name; the map's must be the same). Returns (findings, errors), as
    :func:`forensics.detect.engine.run_all`."""
    from forensics.detect.engine import _interrupted, finish, run_rule

    errors: list[str] = []
    for o in outputs:
        for e in o["errors"]:
            if e not in errors:
                errors.append(e)
    local = [pl.read_parquet(o["findings"]) for o in outputs]
    local = pl.concat(local) if local else schema.empty("findings")
    load_windows(bundle.con, outputs)
    frames = []
    for rule in rules():
        if only and rule.kind not in only:
            continue
        if rule.locality == "host":
            frames.append(local.filter(pl.col("detector") == rule.name))
            continue
        try:
            frames.append(run_rule(bundle, rule, params))
        except Exception as exc:
            if _interrupted(exc):
                raise KeyboardInterrupt from None
            errors.append(f"detector {rule.name}: {str(exc).splitlines()[0]}")
    findings = pl.concat([schema.conform(f, "findings") for f in frames]) if frames else schema.empty("findings")
    return finish(bundle, findings, errors, only, anomaly)
