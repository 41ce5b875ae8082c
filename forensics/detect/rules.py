"""Signature rules: SQL files in queries/detectors/, each declaring itself in a comment header.

    -- kind: pfc_storm
    -- layer: nic_fabric
    -- severity: critical
    -- root_rank: 13
    -- caused_by: pfc_storm@path, link_flap@host
    -- confirm: ethtool -S <iface> | grep -iE 'pause|pfc'
    -- remediation: what to do
    -- description: one line
    -- source: where the thresholds come from
    -- param: min_pause_per_s = 1000   pause frames per second on one priority
    -- locality: host
    SELECT host, subject, start, "end", score, summary, evidence [, severity] FROM ...

`layer`, `root_rank` (lower = more likely the root cause), `caused_by`, `confirm` and
`remediation` belong to the kind: a second detector of a kind (``packet_drops_snapshot.sql``) says
``-- variant_of: pfc_storm`` instead and declares only its own severity, description, source and
params. `caused_by` lists ``<kind>@<scope>``: the cause must share a host (`host`), be on the
finding's path (`path`: same host, an NCCL peer, or the port sending pauses to this one) or may be
anywhere in the bundle (`any`); ``none`` for a kind nothing causes. The anomaly model declares its
kind the same way in ``anomaly.model`` (a header without SQL). The finding catalogue
(:mod:`forensics.detect.catalog`) and causality are built from these headers.

`locality` says what rows a detector needs, for engines that split the work (:mod:`forensics.engine`):
``host`` = every finding is computed from one host's rows only (its SQL partitions by host), so it
can run where that host is parsed, on that host's tables; ``cross`` = it compares or aggregates
hosts (peer medians, settings differing across hosts, a collective's ranks): it runs once over all
hosts, reading the views and only the per-host window tables of :data:`WINDOW_TABLES`. A file
without it counts as ``cross`` (always correct, never split); the conformance test asks every file
to declare it.

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
_CAUSE = re.compile(r"^(\w+)@(\w+)$")
USED_PARAM = re.compile(r"\$(\w+)")


def used_params(sql: str) -> set[str]:
    """The named parameters (``$name``) a detector's SQL uses; its ``--`` comment lines (the header's
    confirm/remediation text may show a shell ``$iface``) are not SQL and name none."""
    return set(USED_PARAM.findall("\n".join(l for l in sql.splitlines() if not l.lstrip().startswith("--"))))

RULE_FIELDS = ("kind", "severity", "description", "source")  # every detector file
KIND_FIELDS = ("layer", "root_rank", "caused_by", "confirm", "remediation")  # once per kind
SCOPES = ("host", "path", "any")
LOCALITIES = ("host", "cross")  # `-- locality:` of a detector
#: the setup scripts' tables (queries/detectors/_*.sql) that a `cross` detector may read: the small
#: per host x 30 s window tables, the per host x 10 s GPU buckets (straggler) and capture spans that a
#: split engine carries from map to reduce
WINDOW_TABLES = ("det_gpu_windows", "det_host_windows", "det_gpu_buckets", "det_nic_windows", "det_capture")


@dataclass(frozen=True)
class Cause:
    kind: str
    scope: str  # host | path | any


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
    source: str = ""
    variant_of: str | None = None
    # the kind's fields: declared by its main detector only (None on a variant)
    layer: str | None = None
    root_rank: int | None = None
    caused_by: tuple[Cause, ...] | None = None
    confirm: str | None = None
    remediation: str | None = None
    locality: str = "cross"  # host | cross (see the module docstring)
    locality_declared: bool = False


def _value(text: str):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text.strip("'\"")


def _causes(name: str, text: str) -> tuple[Cause, ...]:
    if text.strip() == "none":
        return ()
    out = []
    for item in text.split(","):
        m = _CAUSE.match(item.strip())
        if not m or m.group(2) not in SCOPES:
            raise ValueError(f"{name}: caused_by item {item.strip()!r} is not <kind>@{'|'.join(SCOPES)}")
        out.append(Cause(m.group(1), m.group(2)))
    return tuple(out)


def parse_rule(path: Path) -> Rule:
    """The detector (or ``*.model`` declaration) at `path`; ValueError naming the file when its
    header is incomplete, has an unknown field, or a variant declares its kind's fields."""
    meta: dict[str, str] = {}
    params: dict = {}
    helps: dict = {}
    text = path.read_text()
    for line in text.splitlines():
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
        elif key in RULE_FIELDS or key in KIND_FIELDS or key in ("variant_of", "locality"):
            if key in meta:
                raise ValueError(f"{path.name}: '-- {key}:' declared twice")
            meta[key] = value
        else:
            raise ValueError(f"{path.name}: unknown header field '-- {key}:'")
    variant = meta.get("variant_of")
    locality = meta.get("locality", "cross")
    if locality not in LOCALITIES:
        raise ValueError(f"{path.name}: locality {locality!r} is not {' or '.join(LOCALITIES)}")
    required = RULE_FIELDS + (() if variant else KIND_FIELDS)
    for key in required:
        if not meta.get(key):
            raise ValueError(f"{path.name}: header lacks '-- {key}:'")
    if variant:
        extra = [k for k in KIND_FIELDS if k in meta]
        if extra:
            raise ValueError(f"{path.name}: a variant of {variant} declares its kind's {', '.join(extra)} "
                             f"(declare them once, in {variant}.sql)")
        if variant != meta["kind"]:
            raise ValueError(f"{path.name}: variant_of {variant} but kind {meta['kind']}")
    kind_fields = {}
    if not variant:
        try:
            rank = int(meta["root_rank"])
        except ValueError:
            raise ValueError(f"{path.name}: root_rank {meta['root_rank']!r} is not an integer") from None
        kind_fields = dict(layer=meta["layer"], root_rank=rank, caused_by=_causes(path.name, meta["caused_by"]),
                           confirm=meta["confirm"], remediation=meta["remediation"])
    sql = text if path.suffix == ".sql" else ""
    return Rule(path.stem, meta["kind"], meta["severity"], meta["description"], sql, path, params, helps,
                source=meta["source"], variant_of=variant, locality=locality, locality_declared="locality" in meta,
                **kind_fields)


@lru_cache(maxsize=None)
def rules() -> tuple[Rule, ...]:
    d = data_dir("queries") / "detectors"
    return tuple(parse_rule(p) for p in sorted(d.glob("*.sql")) if not p.name.startswith("_"))


@lru_cache(maxsize=None)
def declarations() -> tuple[Rule, ...]:
    """Every detector's header: the rules and the ``*.model`` declarations (the anomaly model)."""
    d = data_dir("queries") / "detectors"
    return rules() + tuple(parse_rule(p) for p in sorted(d.glob("*.model")))


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
    from forensics.detect.xid_catalog import register

    register(con)  # NVIDIA's Xid catalogue, read by gpu_xid
    for _name, sql in setup_scripts():
        con.execute(sql)
