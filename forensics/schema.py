"""Table schemas (``schemas/<table>.json``) and conformance of frames to them.

Every table the project writes is described by one JSON file: its columns, their Arrow types,
units and meaning. Parsers build polars frames and call :func:`conform` so that what they emit is
exactly the schema: missing columns become typed nulls, extra columns are an error, and values
that do not cast are an error too (a parser must never rely on silent coercion).
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import TYPE_CHECKING

import polars as pl

from forensics.resources import data_dir

if TYPE_CHECKING:  # pyarrow is imported where an Arrow type is asked for: every command reads schemas, few need Arrow
    import pyarrow as pa

_SCALARS_PL = {
    "string": pl.String,
    "int32": pl.Int32,
    "int64": pl.Int64,
    "float64": pl.Float64,
    "bool": pl.Boolean,
}
_TS = re.compile(r"timestamp\[us, tz=UTC\]")
_LIST = re.compile(r"list<(\w+)>")


def polars_type(t: str) -> pl.DataType:
    if t in _SCALARS_PL:
        return _SCALARS_PL[t]
    if _TS.fullmatch(t):
        return pl.Datetime("us", "UTC")
    m = _LIST.fullmatch(t)
    if m:
        return pl.List(_SCALARS_PL[m.group(1)])
    raise ValueError(f"unknown schema type {t!r}")


@lru_cache(maxsize=None)
def _scalars_pa() -> dict[str, pa.DataType]:
    import pyarrow as pa

    return {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(), "float64": pa.float64(),
            "bool": pa.bool_()}


def arrow_type(t: str) -> pa.DataType:
    import pyarrow as pa

    scalars = _scalars_pa()
    if t in scalars:
        return scalars[t]
    if _TS.fullmatch(t):
        return pa.timestamp("us", tz="UTC")
    m = _LIST.fullmatch(t)
    if m:
        return pa.list_(scalars[m.group(1)])
    raise ValueError(f"unknown schema type {t!r}")


@lru_cache(maxsize=None)
def load(table: str) -> dict:
    """The JSON description of `table`."""
    path = data_dir("schemas") / f"{table}.json"
    if not path.is_file():
        raise KeyError(f"no schema for table {table!r}")
    return json.loads(path.read_text())


def table_names() -> list[str]:
    return sorted(p.stem for p in data_dir("schemas").glob("*.json"))


@lru_cache(maxsize=None)
def polars_schema(table: str) -> dict[str, pl.DataType]:
    return {c["name"]: polars_type(c["type"]) for c in load(table)["columns"]}


def arrow_schema(table: str) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([(c["name"], arrow_type(c["type"])) for c in load(table)["columns"]])


def empty(table: str) -> pl.DataFrame:
    """An empty frame with `table`'s columns (a clone of one built once: parsers ask for several per file)."""
    return _empty(table).clone()


@lru_cache(maxsize=None)
def _empty(table: str) -> pl.DataFrame:
    return pl.DataFrame(schema=polars_schema(table))


def conform(df: pl.DataFrame, table: str, **fill: object) -> pl.DataFrame:
    """Return `df` with exactly the columns and types of `table`.

    Keyword arguments fill columns that are absent or null (``host=..., source=..., file=...``).
    Unknown columns raise ``ValueError``; a value that does not cast raises too.
    """
    schema = polars_schema(table)
    extra = [c for c in df.columns if c not in schema]
    if extra:
        raise ValueError(f"{table}: columns not in schema: {extra}")
    exprs = []
    have = df.schema
    for name, dtype in schema.items():
        if name in have:
            e = pl.col(name)
            if name in fill and fill[name] is not None:
                e = e.fill_null(pl.lit(fill[name]))
            elif have[name] == dtype and repr(have[name]) == repr(dtype):
                exprs.append(e)  # already of its type: taken as it is (no cast to build: a fifth of a call's time)
                continue
            exprs.append(e.cast(dtype, strict=True).alias(name))
        else:
            value = fill.get(name)
            exprs.append(pl.lit(value, dtype=dtype).alias(name))
    return df.select(exprs)
