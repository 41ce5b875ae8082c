"""Rewriting a bundle's Parquet tables in place of parsing the redacted raw files again.

When the bundle's ``tables/`` were built by the current parsers, every string value of every table
(and every string inside list columns: ``argv``, ``gpu_uuids``) goes through the same
:class:`~forensics.redact.rewrite.Rewriter` as the raw files, one distinct value at a time, and the
partition folders (``host=<host>``) are renamed like every other member. Since a replacement never
adds or removes a line, rows keep their ``line_no`` provenance, and since a parser copies the
identifiers it reads (a host prefix, an address, a UUID) the rewritten tables equal the tables the
parsers give on the redacted raw files (a test checks this on a simulated bundle). It costs a small
fraction of a new ingest on big bundles.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from forensics.bundle.write import tree_files
from forensics.redact.rewrite import Rewriter


BATCH_ROWS = 1 << 17  # rows rewritten at a time: memory bounded however big the table (1 << 20 rows
# of kernel_log took 1.4 GB, 1 << 17 0.45 GB and less CPU)


def rewrite_parquet(src: Path, dest: Path, rw: Rewriter) -> None:
    """`src` with every string value rewritten, to `dest`, BATCH_ROWS rows at a time."""
    f = pq.ParquetFile(src)
    arrow_schema = f.schema_arrow
    dest.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(dest, arrow_schema, compression="zstd") as w:
        for batch in f.iter_batches(batch_size=BATCH_ROWS):
            w.write_table(_rewrite(pa.Table.from_batches([batch], arrow_schema), rw).cast(arrow_schema))
        if f.metadata.num_row_groups == 0:
            w.write_table(arrow_schema.empty_table())


def _rewrite(table: pa.Table, rw: Rewriter) -> pa.Table:
    df = pl.from_arrow(table)
    uniques: dict[str, list[str]] = {}
    for name, dtype in df.schema.items():
        if dtype == pl.String:
            uniques[name] = df[name].drop_nulls().unique().to_list()
        elif isinstance(dtype, pl.List) and dtype.inner == pl.String:
            uniques[name] = df[name].explode().drop_nulls().unique().to_list()
    flat = [v for vals in uniques.values() for v in vals]
    new = dict(zip(flat, rw.strings(flat)))  # one batch of values for the whole batch of rows
    exprs = []
    for name, vals in uniques.items():
        old = [v for v in vals if new[v] != v]
        if not old:
            continue
        repl = [new[v] for v in old]
        if df.schema[name] == pl.String:
            exprs.append(pl.col(name).replace(old, repl))
        else:
            exprs.append(pl.col(name).list.eval(pl.element().replace(old, repl)))
    return df.with_columns(exprs).to_arrow() if exprs else table


def unreadable(tables: Path) -> tuple[str, str] | None:
    """(file, why) of the first file of a bundle's ``tables/`` that is not a readable Parquet file
    (its footer and schema), None when all are: a bundle may ship anything there."""
    if not tables.is_dir():
        return None
    for rel, p in tree_files(tables, strict=False):
        if not rel.endswith(".parquet"):
            continue
        try:
            pq.ParquetFile(p).schema_arrow
        except Exception as exc:  # noqa: BLE001 - whatever pyarrow makes of garbage
            why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            return f"{tables.name}/{rel}", why
    return None


def table_jobs(src: Path, dest: Path, rw: Rewriter, prefix: str = "tables") -> list[tuple[str, str, str]]:
    """(kind, source file, target file) for every file of the tree ``src`` (a bundle's tables/),
    the target named by the rewritten path (``host=<pseudonym>``) under ``dest``."""
    rels = [rel for rel, _ in tree_files(src, strict=False)]
    targets = rw.strings([f"{prefix}/{r}" for r in rels])
    return [("parquet" if rel.endswith(".parquet") else "raw", str(src / rel), str(dest / target[len(prefix) + 1:]))
            for rel, target in zip(rels, targets)]
