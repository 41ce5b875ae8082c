"""NVIDIA's Xid catalogue as tables: one row per Xid (mnemonic, description, the GPU generations it
applies to, NVIDIA's immediate and investigatory resolution buckets), one row per bucket (the
finding severity it means and the action to say) and the catalogue's decode of the NVLink5 Xids
144-150 (which sub code and error status call for which action). Read from the CSV files in ``data/`` beside this
module, whose comment header states their source, version and licence; the detectors see them as
the tables ``xid_catalog`` and ``xid_buckets`` (:func:`register`)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import polars as pl

_DATA = Path(__file__).resolve().parent / "data"
CATALOG_FILE = _DATA / "xid_catalog.csv"
BUCKETS_FILE = _DATA / "xid_buckets.csv"
NVLINK5_FILE = _DATA / "xid_nvlink5_decode.csv"
SEVERITIES = ("info", "warning", "critical")


def _read(path: Path, schema: dict) -> pl.DataFrame:
    return pl.read_csv(path, comment_prefix="#", schema_overrides=schema, infer_schema=False)


@lru_cache(maxsize=None)
def catalog() -> pl.DataFrame:
    """Every Xid of the catalogue (1-172), `xid` an integer, applicability columns as booleans."""
    df = _read(CATALOG_FILE, {})
    gens = [c for c in df.columns if c.startswith("applies_")]
    return df.with_columns(pl.col("xid").cast(pl.Int32),
                           *[(pl.col(c) == "YES").alias(c) for c in gens])


@lru_cache(maxsize=None)
def buckets() -> pl.DataFrame:
    """Immediate-action bucket -> finding severity and action."""
    return _read(BUCKETS_FILE, {})


@lru_cache(maxsize=None)
def nvlink5_decode() -> pl.DataFrame:
    """The catalogue's "Xid 144-150 Decode" sheet: per (Xid, sub code, intrInfo pattern, errorStatus) NVIDIA's
    recovery action, investigatory action, severity and fault origin (95 rows; see the file's header)."""
    return _read(NVLINK5_FILE, {}).with_columns(pl.col("xid").cast(pl.Int32))


def register(con) -> None:
    """Make ``xid_catalog``, ``xid_buckets`` and ``xid_nvlink5_decode`` queryable on a DuckDB connection."""
    con.register("xid_catalog", catalog())
    con.register("xid_buckets", buckets())
    con.register("xid_nvlink5_decode", nvlink5_decode())
