"""Helpers for SQL-layer tests: write small parsed bundles (tables/<table>/host=<h>/part-0.parquet)
that conform exactly to schemas/*.json, so views can be checked on known rows."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from forensics import schema

T0 = dt.datetime(2026, 11, 30, 10, 0, 0, tzinfo=dt.timezone.utc)


def at(seconds: float) -> dt.datetime:
    """T0 + seconds (aware UTC)."""
    return T0 + dt.timedelta(seconds=seconds)


def write_table(root: Path, table: str, rows: list[dict] | pl.DataFrame) -> None:
    """Write rows (dicts with a 'host' key) as the bundle's Parquet partitions of `table`."""
    df = rows if isinstance(rows, pl.DataFrame) else pl.DataFrame(rows, infer_schema_length=None)
    cols = schema.polars_schema(table)
    fill = {k: v for k, v in {"source": "test", "file": f"raw/{table}.txt"}.items() if k in cols}
    if "line_no" in cols and "line_no" not in df.columns:
        df = df.with_row_index("line_no", offset=1).with_columns(pl.col("line_no").cast(pl.Int64))
    df = schema.conform(df, table, **fill)
    for (host,), part in df.group_by(["host"], maintain_order=True):
        d = root / "tables" / table / f"host={host}"
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(part.to_arrow().cast(schema.arrow_schema(table)), d / "part-0.parquet")


def bundle_dir(tmp_path: Path, tables: dict[str, list[dict] | pl.DataFrame]) -> Path:
    root = tmp_path / "bundle"
    (root / "tables").mkdir(parents=True, exist_ok=True)
    for t, rows in tables.items():
        write_table(root, t, rows)
    return root


def test_kit_writes_conforming_partitions(tmp_path):
    root = bundle_dir(tmp_path, {"kernel_log": [{"host": "n1", "message": "x"}, {"host": "n2", "message": "y"}]})
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.parquet"))
    assert files == ["tables/kernel_log/host=n1/part-0.parquet", "tables/kernel_log/host=n2/part-0.parquet"]
    assert pq.read_schema(root / files[0]).equals(schema.arrow_schema("kernel_log"))
