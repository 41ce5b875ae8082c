"""Signature rules: SQL files in queries/detectors/, each with its metadata in a comment header.

    -- kind: pfc_storm
    -- severity: critical
    -- description: one line
    -- param: min_pause_per_s = 1000   pause frames per second on one priority
    SELECT host, subject, start, "end", score, summary, evidence [, severity] FROM ...

Files named ``_*.sql`` are not rules: they create temporary views shared by the rules and the
anomaly model (:func:`prepare` runs them first).

A rule returns one row per finding: `host` (or `hosts` as a list), `subject`, `start`, `end`,
`score` in [0, 1], `summary`, `evidence` (JSON text); an optional `severity` column overrides the
header's. Thresholds are DuckDB named parameters (`$min_pause_per_s`) with the header's defaults.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from forensics.resources import data_dir

_HEADER = re.compile(r"^--\s*(\w+)\s*:\s*(.*?)\s*$")
_PARAM = re.compile(r"^(\w+)\s*=\s*(\S+)\s*(.*)$")


@dataclass
class Rule:
    name: str
    kind: str
    severity: str
    description: str
    sql: str
    path: Path
    params: dict[str, float | int | str] = field(default_factory=dict)
    param_help: dict[str, str] = field(default_factory=dict)


def _value(text: str):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text.strip("'\"")


def parse_rule(path: Path) -> Rule:
    meta: dict[str, str] = {}
    params: dict = {}
    helps: dict = {}
    for line in path.read_text().splitlines():
        m = _HEADER.match(line)
        if not m:
            if line.strip() and not line.startswith("--"):
                break
            continue
        key, value = m.groups()
        if key == "param":
            pm = _PARAM.match(value)
            if not pm:
                raise ValueError(f"{path.name}: bad param line {value!r}")
            params[pm.group(1)] = _value(pm.group(2))
            helps[pm.group(1)] = pm.group(3)
        else:
            meta[key] = value
    for required in ("kind", "severity", "description"):
        if required not in meta:
            raise ValueError(f"{path.name}: header lacks '-- {required}:'")
    return Rule(path.stem, meta["kind"], meta["severity"], meta["description"], path.read_text(), path, params, helps)


@lru_cache(maxsize=None)
def rules() -> tuple[Rule, ...]:
    d = data_dir("queries") / "detectors"
    return tuple(parse_rule(p) for p in sorted(d.glob("*.sql")) if not p.name.startswith("_"))


@lru_cache(maxsize=None)
def setup_scripts() -> tuple[tuple[str, str], ...]:
    """(name, SQL) of queries/detectors/_*.sql: temporary views shared by rules and the model."""
    d = data_dir("queries") / "detectors"
    return tuple((p.stem, p.read_text()) for p in sorted(d.glob("_*.sql")))


def prepare(con, cached: tuple[str, ...] | list[str] = ()) -> None:
    """Create the detectors' shared temporary views on a bundle connection.

    `cached`: the bundle's derived relations cached as Parquet (:attr:`forensics.db.Bundle.cached`).
    ``det_counter_names`` (the NIC counter names the setup scripts classify) reads the small cached
    nic_counter_summary when there is one instead of every row of nic_counters: it may lack counters
    that never got an interval, which have no nic_rates rows to classify anyway; and only those of
    the classes the setup scripts read from nic_rates (the others may not be cached yet).
    """
    from forensics.db.derived import NIC_HOT

    src = "nic_counter_summary" if "nic_summary" in cached else "nic_counters"
    hot = f" AND class IN ({', '.join(repr(c) for c in NIC_HOT)})" if src == "nic_counter_summary" else ""
    con.execute(f"CREATE OR REPLACE TEMP VIEW det_counter_names AS SELECT DISTINCT counter FROM {src} "
                f"WHERE counter IS NOT NULL{hot}")
    for _name, sql in setup_scripts():
        con.execute(sql)
