"""Frames as plain data: rows of a polars frame as JSON-ready dicts (times as ISO strings, durations in seconds)."""
from __future__ import annotations

import datetime as dt
from typing import Any

import polars as pl


def jsonable(v: Any) -> Any:
    """`v` as JSON data: times as ISO strings, durations in seconds, bytes as hex, map keys as strings."""
    if hasattr(v, "isoformat"):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return v.total_seconds()
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    return v


def frame_to_json_rows(df: pl.DataFrame) -> list[dict]:
    return [{k: jsonable(v) for k, v in row.items()} for row in df.iter_rows(named=True)]
