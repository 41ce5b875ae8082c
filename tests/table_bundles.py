"""Build small parsed-tables bundle directories from real fixtures or frames, for detector tests."""
from __future__ import annotations

from pathlib import Path

import polars as pl

from fixture_cases import FIXTURES, context_for
from forensics import schema
from forensics.layout import table_path
from forensics.sources import get


def write_tables(root: Path, frames: dict[str, list[pl.DataFrame]]) -> Path:
    """Write frames (each conforming to its table's schema) as tables/<table>/host=<h>/part-0.parquet."""
    for table, dfs in frames.items():
        df = pl.concat([schema.conform(d, table) for d in dfs])
        for host in df["host"].unique().to_list():
            p = root / table_path(table, host)
            p.parent.mkdir(parents=True, exist_ok=True)
            df.filter(pl.col("host") == host).write_parquet(p)
    return root


def from_fixtures(root: Path, items: list[tuple[str, str, str]]) -> Path:
    """items: (host, source, fixture file name under tests/fixtures/<source>/)."""
    frames: dict[str, list[pl.DataFrame]] = {}
    for host, source, name in items:
        f = FIXTURES / source / name
        ctx = context_for(f)
        ctx.host = host
        res = get(source).parse(f.read_bytes(), ctx)
        for t, df in res.tables.items():
            frames.setdefault(t, []).append(df.with_columns(pl.lit(host).alias("host")))
    return write_tables(root, frames)
