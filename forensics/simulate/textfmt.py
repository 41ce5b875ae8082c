"""Fast fixed-width text for whole columns (printf ``%W.Df`` / ``%Wd`` semantics) with polars.

Values are non-negative (counters, rates, percentages); they are rounded to D decimals as integers
first (half away from zero), so the text is the same on every machine. A table of lines is built in
one polars ``select`` (its expressions run in parallel) and joined in Rust.
"""
from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl


def _clean(values) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64)
    return np.where(np.isfinite(v), np.maximum(v, 0.0), 0.0)


def F(name: str, decimals: int, width: int = 0) -> tuple:
    """Piece: ``%{width}.{decimals}f`` of numeric column `name`."""
    return ("f", name, decimals, width)


def I(name: str, width: int = 0) -> tuple:  # noqa: E743
    """Piece: ``%{width}d`` of numeric column `name` (floored)."""
    return ("i", name, 0, width)


def S(name: str, width: int = 0, left: bool = False) -> tuple:
    """Piece: string column `name`, right-aligned in `width` (left-aligned with left=True)."""
    return ("s", name, left, width)


def _fixed_expr(name: str, decimals: int, width: int) -> pl.Expr:
    # round half up on the scaled value, then let a Decimal cast print the fixed decimals
    scale = 10 ** decimals
    q = (pl.col(name) * scale + 0.5).floor()
    if decimals:
        s = (q / scale).cast(pl.Decimal(38, decimals)).cast(pl.String)
    else:
        s = q.cast(pl.Int64).cast(pl.String)
    return s.str.pad_start(width) if width else s


def _py(kind: str, x: float, decimals: int, width: int) -> str:
    if kind == "f":
        scale = 10 ** decimals
        q = int(np.floor(x * scale + 0.5))
        txt = f"{q // scale}.{q % scale:0{decimals}d}" if decimals else str(q)
    else:
        txt = str(int(np.floor(x)))
    return txt.rjust(width)


def lines(columns: dict, pieces: list) -> pl.Series:
    """One line per row. `columns`: name -> numeric array or list of str. `pieces`: literal strings
    and F()/I()/S() specs, concatenated in order. A numeric column holding one value throughout is
    formatted once (a literal), and runs of literals are folded."""
    data, const = {}, {}
    for k, v in columns.items():
        if isinstance(v, (list, pl.Series)) or (isinstance(v, np.ndarray) and v.dtype.kind in "OUS"):
            data[k] = v if isinstance(v, pl.Series) else pl.Series(v, dtype=pl.String)
        else:
            v = _clean(v)
            if len(v) and (v == v[0]).all():
                const[k] = float(v[0])
            data[k] = v
    parts: list = []
    for p in pieces:
        if isinstance(p, str):
            lit = p
        else:
            kind, name, a, width = p
            if kind in "fi" and name in const:
                lit = _py(kind, const[name], a, width)
            else:
                if kind == "f":
                    e = _fixed_expr(name, a, width)
                elif kind == "i":
                    e = pl.col(name).floor().cast(pl.Int64).cast(pl.String)
                    e = e.str.pad_start(width) if width else e
                else:
                    e = pl.col(name)
                    if width:
                        e = e.str.pad_end(width) if a else e.str.pad_start(width)
                parts.append(e)
                continue
        if parts and isinstance(parts[-1], str):
            parts[-1] += lit
        else:
            parts.append(lit)
    exprs = [pl.lit(x) if isinstance(x, str) else x for x in parts]
    return pl.DataFrame(data).select(pl.concat_str(exprs).alias("line")).to_series()


def blocks(data_lines: pl.Series, per_block: int, before: list[list[str]], after: list[str] | None = None) -> str:
    """Interleave: for block i, the lines before[i] then per_block data lines; then `after`."""
    n = len(before)
    k = per_block
    extra = len(before[0]) if n else 0
    total = n * (k + extra)
    out = np.empty(total, dtype=object)
    idx = (np.arange(n)[:, None] * (k + extra) + extra + np.arange(k)[None, :]).reshape(-1)
    out[idx] = data_lines.to_numpy()
    for j in range(extra):
        out[np.arange(n) * (k + extra) + j] = [b[j] for b in before]
    text = "\n".join(out.tolist())
    if after:
        text += "\n" + "\n".join(after)
    return text + "\n" if total or after else ""


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


def lines_bytes(lines: pl.Series | list[str]) -> bytes:
    if isinstance(lines, pl.Series):
        if lines.len() == 0:
            return b""
        return (lines.str.join("\n").item() + "\n").encode()
    return ("\n".join(lines) + "\n").encode() if lines else b""
