"""Exports of an opened catalog: a DuckDB database file, or a Hive-partitioned Parquet dataset."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import duckdb

from forensics.atomic import atomic_path
from forensics.db import connect, guard
from forensics.errors import write_error
from forensics.db._build import quote_ident, quote_str


def export_duckdb(root: Path, out: Path, extra: dict | None = None) -> dict[str, int]:
    """Write ``out`` (.duckdb): schema raw with every parsed table (as tables), main with the same
    views and macros as an opened bundle; `extra` ({"findings": frame, "analysis_params": frame}, see
    :mod:`forensics.detect.published`) replaces those relations. Atomic: built beside `out`, then
    renamed. Returns row counts."""
    out = Path(out)
    if out.exists() and out.is_dir():
        raise ValueError(f"{out}: is a directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_path(out, prefix=f".{out.name}.", suffix=".partial", leftovers=(".wal",)) as tmp:
            os.unlink(tmp)  # DuckDB creates the file itself
            con, info = connect(root, materialize=True, database=tmp)
            try:
                _attach_extra(con, extra)
                _materialize_derived(con)
                counts = _counts(con)
                con.execute("CHECKPOINT")
            finally:
                guard.release(con)
    except (OSError, duckdb.Error) as exc:  # a full disk is the output's problem, said as such
        err = write_error(exc, out)
        if err is None:
            raise
        raise err from None
    return counts


def _materialize_derived(con) -> None:
    """The cached intermediate relations become tables of the file (no reference to the bundle's files)."""
    from forensics.db.derived import ITEMS

    for item in ITEMS:
        n = item.name
        con.execute(f"CREATE TABLE raw.{n}__m AS SELECT * FROM raw.{n}")
        con.execute(f"DROP VIEW raw.{n}")
        con.execute(f"ALTER TABLE raw.{n}__m RENAME TO {n}")


def _relations(con) -> list[tuple[str, bool]]:
    """(name, has a host column) of every relation of schema main."""
    rows = con.execute(
        "SELECT t.table_name, bool_or(c.column_name = 'host') FROM information_schema.tables t "
        "JOIN information_schema.columns c ON c.table_schema = t.table_schema AND c.table_name = t.table_name "
        "WHERE t.table_schema = 'main' GROUP BY t.table_name ORDER BY t.table_name"
    ).fetchall()
    return [(r[0], bool(r[1])) for r in rows]


def _counts(con) -> dict[str, int]:
    return {name: con.execute(f"SELECT count(*) FROM main.{quote_ident(name)}").fetchone()[0]
            for name, _ in _relations(con)}


def _attach_extra(con, extra: dict | None) -> None:
    if extra:
        from forensics.db._build import replace_with_frames

        replace_with_frames(con, extra)


def export_parquet(root: Path, out_dir: Path, extra: dict | None = None) -> dict[str, int]:
    """Write every table and view as ``out_dir/<name>/host=<host>/*.parquet`` (Hive partitions: the
    host is in the directory name, not in the files), relations without a host column (or without
    rows) as ``out_dir/<name>/part-0.parquet``, and ``out_dir/_export.json`` with the row counts.
    `out_dir` must not exist or be empty; it is built beside and renamed into place."""
    out_dir = Path(out_dir)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise ValueError(f"{out_dir}: exists and is not an empty directory")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".partial", dir=out_dir.parent))
    try:
        con, _ = connect(root)
        try:
            _attach_extra(con, extra)
            counts = {}
            for name, has_host in _relations(con):
                n = con.execute(f"SELECT count(*) FROM main.{quote_ident(name)}").fetchone()[0]
                counts[name] = n
                target = tmp / name
                target.mkdir()
                src = f"(SELECT * FROM main.{quote_ident(name)})"
                if has_host and n:
                    con.execute(f"COPY {src} TO {quote_str(str(target))} "
                                "(FORMAT parquet, COMPRESSION zstd, PARTITION_BY (host), OVERWRITE_OR_IGNORE)")
                else:
                    con.execute(f"COPY {src} TO {quote_str(str(target / 'part-0.parquet'))} (FORMAT parquet, COMPRESSION zstd)")
        finally:
            guard.release(con)
        (tmp / "_export.json").write_text(json.dumps({"rows": counts, "partitioning": "hive (host)"}, indent=1) + "\n")
        if out_dir.exists():
            out_dir.rmdir()
        os.replace(tmp, out_dir)
    except (OSError, duckdb.Error) as exc:  # a full disk is the output's problem, said as such
        shutil.rmtree(tmp, ignore_errors=True)
        err = write_error(exc, out_dir)
        if err is None:
            raise
        raise err from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return counts


__all__ = ["export_duckdb", "export_parquet"]
