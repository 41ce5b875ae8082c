"""A host's NIC interval rows built in its parse worker, for the first open to take as they are.

``raw.nic_interval_rows`` and ``raw.nic_summary`` (the relations behind ``nic_rates`` and
``nic_counter_summary``) are cached by :mod:`forensics.db.derived` per nic_counters file. The first
open of a freshly parsed bundle used to build them all there, one host file after the other, after
every host was parsed. :func:`prebuild` builds the "hot" part of one host's file (the counter classes
detection reads, :data:`HOT`) in the worker that has just written it, while the other workers parse,
from the hot counters' rows the worker kept in memory as they went to the sink (:class:`HotRows`), not
by reading the file back; the result lands in ``tables/_derived/nic-host/host=<host>/`` with a stamp
naming the nic_counters file it was built from (size, modification time) and the SQL definitions it
follows. The open takes a stamped part only where the file is still that file and the definitions
are the same (:func:`prebuilt`), and builds the rest as before, so that the relations are those of
the SQL definitions whatever happened (a test checks them row for row).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import polars as pl
import pyarrow as pa

from forensics import schema
from forensics.ingest.sink import partition_name
from forensics.resources import data_dir

#: the counter classes of the "hot" part (forensics.db.derived.NIC_HOT; checked equal by a test)
HOT = ("bytes", "drop", "error", "link", "pause", "storm")
FOLDER = ("_derived", "nic-host")  # under tables/
STAMP = "_stamp.json"
VERSION = 1
#: a host with fewer nic_counters rows is left to the open (which builds nothing for a bundle under
#: 1,000,000 rows: forensics.db.derived.ITEMS); a simulated host-hour has 1.29 M
MIN_ROWS = 100_000
STRINGS = ("host", "iface", "counter", "raw_name", "file", "ts_quality")


def definitions() -> str:
    """Hash of what the hot part is computed from: the view files (counter classes, deltas) and this version."""
    h = hashlib.sha1(f"nic-host|{VERSION}".encode())
    for p in sorted(data_dir("queries").joinpath("views").glob("*.sql")):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


_classes: dict[str, str] = {}


def _classify(names: list[str]) -> dict[str, str]:
    """nic_counter_class() of each name, by the SQL macro itself (a DuckDB connection of this process)."""
    new = [n for n in names if n not in _classes]
    if new:
        from forensics.nic_intervals import counter_classes

        _classes.update(counter_classes(_connection(), new))
    return {n: _classes[n] for n in names}


_con = None


def _connection():
    global _con
    if _con is None:
        import duckdb

        _con = duckdb.connect(":memory:", config={"threads": 1})  # (a few hundred names: no pool of threads)
        _con.execute(data_dir("queries").joinpath("views", "00_macros.sql").read_text())
    return _con


class HotRows:
    """A TableSink listener that keeps the nic_counters rows of `host` with a hot counter, in sink order.
    Rows of another host (or none) in a frame make it give up: that host's file is left to the open."""

    def __init__(self, host: str):
        self.host = host
        self.frames: list[pl.DataFrame] = []
        self.pending: list[pl.DataFrame] = []  # the rows before the MIN_ROWS-th, not yet classified
        self.rows = 0
        self.off = False

    def __call__(self, table: str, df: pl.DataFrame) -> None:
        if table != "nic_counters" or self.off or not df.height:
            return
        hosts = df.get_column("host")
        if hosts.null_count() or hosts.min() != self.host or hosts.max() != self.host:
            self.off, self.frames, self.pending = True, [], []
            return
        if list(df.schema.items()) != list(schema.polars_schema("nic_counters").items()):
            df = schema.conform(df, "nic_counters")  # as the sink writes it
        from forensics.nic_intervals import NIC_COLUMNS

        self.rows += df.height
        if self.rows < MIN_ROWS:  # (kept whole: prebuild() leaves a smaller host to the open, and the
            self.pending.append(df.select(NIC_COLUMNS))  # classes need a DuckDB of this process)
            return
        for frame in [*self.pending, df.select(NIC_COLUMNS)]:
            names = frame.get_column("counter").drop_nulls().unique().to_list()
            cls = _classify(names)
            hot = [n for n in names if cls[n] in HOT]
            if hot:
                self.frames.append(frame.filter(pl.col("counter").is_in(hot)))
        self.pending = []

    def table(self) -> pa.Table:
        """The kept rows as nic_intervals() takes them: strings dictionary-encoded (polars' categorical
        cast, then Arrow without copying: a host-hour's 0.50 M hot rows 79 CPU ms, where Arrow's own
        dictionary_encode took 137 and the open's read of them from the file 195)."""
        df = pl.concat(self.frames, how="vertical") if len(self.frames) > 1 else self.frames[0]
        return df.with_columns(pl.col(list(STRINGS)).cast(pl.Categorical)).to_arrow()


def prebuild(out: Path, host: str, kept: HotRows) -> None:
    """The hot part of `host`'s nic_counters file under `out` (a worker's tables folder), from `kept`."""
    from forensics.nic_intervals import INTERVAL_DICT_COLUMNS, SUMMARY_INPUT, nic_intervals, nic_summary
    import pyarrow.parquet as pq

    part = f"host={partition_name(host, host)}"
    src = out / "nic_counters" / part / "part-0.parquet"
    if kept.off or not kept.frames or kept.rows < MIN_ROWS or not src.is_file():
        return
    table = kept.table()
    intervals = nic_intervals(table, classes=lambda names: _classify(names), only=HOT)
    summary = nic_summary(intervals.select(SUMMARY_INPUT))
    folder = out.joinpath(*FOLDER, part)
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(intervals, folder / "intervals-hot.parquet", compression="zstd", row_group_size=128 * 1024,
                   use_dictionary=INTERVAL_DICT_COLUMNS)
    pq.write_table(summary, folder / "summary-hot.parquet", compression="zstd")
    st = src.stat()
    (folder / STAMP).write_text(json.dumps({"source": f"nic_counters/{part}/part-0.parquet", "size": st.st_size,
                                            "mtime_ns": st.st_mtime_ns, "definitions": definitions()}))


def move(work: Path, tables: Path) -> None:
    """A worker's built parts into the bundle's tables folder (a host's part already there: left out)."""
    src = work.joinpath(*FOLDER)
    try:
        names = sorted(os.listdir(src))
    except FileNotFoundError:
        return
    dest = tables.joinpath(*FOLDER)
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        try:
            os.rename(src / name, dest / name)
        except OSError:
            pass  # (the same host from two workers: the open checks the file and builds it)


def prebuilt(path: Path, definitions_hash: str) -> tuple[Path, Path] | None:
    """(intervals, summary) built by the parse worker from nic_counters file `path` (under tables/), or
    None unless its stamp names this very file (size, modification time) and these definitions."""
    tables = path.parent.parent.parent
    folder = tables.joinpath(*FOLDER, path.parent.name)
    try:
        stamp = json.loads((folder / STAMP).read_text())
        st = path.stat()
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("source") != path.relative_to(tables).as_posix() \
            or stamp.get("size") != st.st_size or stamp.get("mtime_ns") != st.st_mtime_ns \
            or stamp.get("definitions") != definitions_hash:
        return None
    files = folder / "intervals-hot.parquet", folder / "summary-hot.parquet"
    return files if all(f.is_file() for f in files) else None
