"""Fast fixed-width text formatting (printf ``%W.Df`` and ``%Wd``) for whole columns, with polars.

Values are non-negative (counters, rates, percentages); they are rounded to D decimals as integers
first, so the text is the same on every machine.
"""
from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl


def fixed(values, decimals: int, width: int = 0) -> pl.Series:
    """``%{width}.{decimals}f`` of each value (right-aligned)."""
    v = np.asarray(values, dtype=np.float64)
    v = np.where(np.isfinite(v), np.maximum(v, 0.0), 0.0)
    scale = 10 ** decimals
    q = pl.Series(np.floor(v * scale + 0.5).astype(np.int64))
    if decimals:
        s = (q // scale).cast(pl.String) + "." + (q % scale).cast(pl.String).str.zfill(decimals)
    else:
        s = q.cast(pl.String)
    return s.str.pad_start(width) if width else s


def integer(values, width: int = 0) -> pl.Series:
    q = pl.Series(np.asarray(values, dtype=np.int64))
    s = q.cast(pl.String)
    return s.str.pad_start(width) if width else s


def times(epoch_s, tz: str, fmt: str, unit: str = "us") -> pl.Series:
    """strftime (chrono syntax) of epoch seconds in zone `tz` (unit "ns" for %.9f stamps)."""
    scale = 1e9 if unit == "ns" else 1e6
    q = np.floor(np.asarray(epoch_s, dtype=np.float64) * scale).astype(np.int64)
    s = pl.Series(q).cast(pl.Datetime(unit, "UTC"))
    if tz != "UTC":
        s = s.dt.convert_time_zone(tz)
    return s.dt.strftime(fmt)


def local(t: float, tz: str) -> dt.datetime:
    from zoneinfo import ZoneInfo

    return dt.datetime.fromtimestamp(t, dt.timezone.utc).astimezone(ZoneInfo(tz))


def join_columns(cols: list[pl.Series], sep: str = "") -> pl.Series:
    """Concatenate string columns element-wise."""
    df = pl.DataFrame({f"c{i}": c for i, c in enumerate(cols)})
    return df.select(pl.concat_str([pl.col(f"c{i}") for i in range(len(cols))], separator=sep)).to_series()


def lines_bytes(lines: pl.Series | list[str]) -> bytes:
    if isinstance(lines, pl.Series):
        if lines.len() == 0:
            return b""
        return ("\n".join(lines.to_list()) + "\n").encode()
    return ("\n".join(lines) + "\n").encode() if lines else b""
