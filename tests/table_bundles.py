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


def job_outputs(tar_path: Path):
    """(file name, source, data, parse result) of each file a simulated bundle holds in raw/nccl (the
    torchrun logs and Flight Recorder dumps `collect --nccl-log` copied), read by the source ingest
    routes it to."""
    import tarfile

    from forensics.ingest.host import routed_source
    from forensics.sources import ParseContext

    with tarfile.open(tar_path) as tf:
        for m in tf.getmembers():
            parts = m.name.split("/")
            if not (m.isfile() and parts[0] == "hosts" and parts[2:4] == ["raw", "nccl"]):
                continue
            data = tf.extractfile(m).read()
            src = routed_source("nccl", data)
            ctx = ParseContext(host=parts[1], file="/".join(parts[2:]), tz="UTC", year=2026)
            yield parts[-1], src, data, get(src).parse(data, ctx)
