"""Named queries: ``queries/<name>.sql`` with a description and typed, defaulted parameters.

A named query file starts with comment lines::

    -- PFC pause frames per second per host, port and priority, busiest first.
    -- @param min_rate DOUBLE = 0      only intervals with at least this many pause frames/s
    -- @param host VARCHAR = NULL      only this host
    -- @param at TIMESTAMPTZ           the moment (required: no default)
    SELECT ... WHERE rate_per_s >= $min_rate AND ($host IS NULL OR host = $host)

The first comment line is the description (``forensics queries``). Parameter types: VARCHAR,
DOUBLE, BIGINT, BOOLEAN, TIMESTAMPTZ (ISO-8601; naive means UTC); a default of NULL means "not
set". Values given on the command line (``--param key=value``) are converted to the declared type.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forensics.db.safety import QueryError
from forensics.resources import data_dir
from forensics.timeutil import parse_when

_PARAM = re.compile(r"^--\s*@param\s+([A-Za-z_][A-Za-z0-9_]*)\s+([A-Za-z]+)(?:\s*=\s*(\S+))?\s*(.*)$")
TYPES = ("VARCHAR", "DOUBLE", "BIGINT", "BOOLEAN", "TIMESTAMPTZ")
_REQUIRED = object()


@dataclass
class Param:
    name: str
    type: str
    default: Any = _REQUIRED
    help: str = ""

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def convert(self, text: str | None) -> Any:
        """The value of `text` for this parameter's type (None/NULL -> None)."""
        if text is None or text.upper() == "NULL":
            return None
        try:
            if self.type == "DOUBLE":
                return float(text)
            if self.type == "BIGINT":
                return int(text)
            if self.type == "BOOLEAN":
                low = text.lower()
                if low not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(text)
                return low in ("true", "1", "yes")
            if self.type == "TIMESTAMPTZ":
                return parse_when(text)
        except ValueError:
            raise QueryError(f"parameter {self.name}: {text!r} is not a valid {self.type}") from None
        return text

    def describe(self) -> str:
        d = "required" if self.required else f"default {self.default_text}"
        return f"{self.name} ({self.type}, {d})" + (f": {self.help}" if self.help else "")

    @property
    def default_text(self) -> str:
        if self.required:
            return ""
        if self.default is None:
            return "NULL"
        if isinstance(self.default, dt.datetime):
            return self.default.isoformat()
        return str(self.default)


@dataclass
class NamedQuery:
    name: str
    path: Path
    description: str
    sql: str
    params: dict[str, Param] = field(default_factory=dict)

    def bind(self, given: dict[str, str | Any]) -> dict[str, Any]:
        """Parameter values for DuckDB from `given` (strings are converted), defaults filled."""
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            known = ", ".join(self.params) or "none"
            raise QueryError(f"query {self.name}: unknown parameter {', '.join(unknown)} (parameters: {known})")
        out = {}
        for name, p in self.params.items():
            if name in given:
                v = given[name]
                out[name] = p.convert(v) if isinstance(v, str) or v is None else v
            elif p.required:
                raise QueryError(f"query {self.name}: parameter {name} is required (--param {name}=VALUE)")
            else:
                out[name] = p.default
        return out


def parse_file(path: Path) -> NamedQuery:
    text = path.read_text()
    description = ""
    params: dict[str, Param] = {}
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if not s.startswith("--"):
            break
        m = _PARAM.match(s)
        if m:
            name, typ, default, help_ = m.group(1), m.group(2).upper(), m.group(3), m.group(4).strip()
            if typ not in TYPES:
                raise ValueError(f"{path.name}: parameter {name} has unknown type {typ} (use {', '.join(TYPES)})")
            p = Param(name, typ, help=help_.lstrip("-: ").strip())
            if default is not None:
                p.default = p.convert(default)
            params[name] = p
        elif not description:
            description = s.lstrip("-").strip()
    if not description:
        raise ValueError(f"{path.name}: the first comment line must describe the query")
    return NamedQuery(path.stem, path, description, text, params)


def catalog() -> dict[str, NamedQuery]:
    """Every named query of ``queries/*.sql`` (not detectors or views), by name."""
    out = {}
    for p in sorted(data_dir("queries").glob("*.sql")):
        q = parse_file(p)
        out[q.name] = q
    return out


def get(name: str) -> NamedQuery:
    cat = catalog()
    if name not in cat:
        raise QueryError(f"no named query {name!r} (see `forensics queries`; known: {', '.join(cat)})")
    return cat[name]
