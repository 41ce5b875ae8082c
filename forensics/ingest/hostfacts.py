"""What a host's own files say about it: host.json and commands.jsonl turned into each raw file's
ParseContext (time zone, boot time, capture time, hints), and the facts for the ``hosts`` table
gathered from the parsed frames as they stream past (GPU count, driver, CUDA and NCCL versions,
NUMA nodes). These facts are computed here only: the ``hosts`` view (queries/views/15_hosts.sql) and
``forensics info`` read them from the hosts table."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path, PurePosixPath
from typing import Any

import polars as pl

from forensics.ingest import collector_tables as ct
from forensics.sources import ParseContext, file_hints


def read_json(path: Path) -> tuple[dict, str | None]:
    if not path.is_file():
        return {}, f"{path.name} missing"
    try:
        obj = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
    except (ValueError, RecursionError) as exc:  # (a 5000-digit number, deep nesting)
        return {}, f"{path.name}: not valid JSON ({getattr(exc, 'msg', None) or type(exc).__name__})"
    if not isinstance(obj, dict):
        return {}, f"{path.name}: not a JSON object"
    return obj, None


class HostFacts:
    """Facts for the hosts table gathered from frames as they stream past."""

    def __init__(self):
        self.by_host: dict[str, dict[str, Any]] = {}

    def __call__(self, table: str, df: pl.DataFrame) -> None:
        if not df.height or "host" not in df.columns:
            return
        if table == "gpus":
            for host, part in df.partition_by("host", as_dict=True).items():
                d = self.by_host.setdefault(host[0], {})
                d.setdefault("gpus", set()).update(x for x in part["gpu"].to_list() if x is not None)
                for col in ("driver_version", "cuda_version"):
                    vals = [v for v in part[col].to_list() if v]
                    if vals and not d.get(col):
                        d[col] = vals[0]
        elif table == "numa_nodes":
            for host, part in df.partition_by("host", as_dict=True).items():
                d = self.by_host.setdefault(host[0], {})
                d.setdefault("nodes", set()).update(x for x in part["node"].to_list() if x is not None)
        elif table == "nccl_config":
            ver = df.filter(pl.col("key").is_in(["version", "nccl_version"]) & pl.col("value").is_not_null())
            for host, value in ver.select("host", "value").unique(subset="host", keep="first").iter_rows():
                self.by_host.setdefault(host, {}).setdefault("nccl_version", value)

    def for_host(self, host: str) -> dict:
        d = self.by_host.get(host, {})
        return {
            "driver_version": d.get("driver_version"), "cuda_version": d.get("cuda_version"),
            "nccl_version": d.get("nccl_version"),
            "gpu_count": len(d["gpus"]) if d.get("gpus") else None,
            "numa_nodes": len(d["nodes"]) if d.get("nodes") else None,
        }


def merge_facts(into: HostFacts, by_host: dict) -> None:
    for host, d in by_host.items():
        cur = into.by_host.setdefault(host, {})
        for k, v in d.items():
            if isinstance(v, set):
                cur.setdefault(k, set()).update(v)
            else:
                cur.setdefault(k, v)


def parse_context(host: str, rel: str, source: str, path: PurePosixPath | Path, info: dict, starts: dict[str, dt.datetime],
                  argvs: dict[str, list] | None = None) -> ParseContext:
    capture = starts.get(rel)
    boot = ct.parse_time(info.get("boot_time"))
    tz = info.get("timezone") if isinstance(info.get("timezone"), str) and info.get("timezone") else None
    if tz:
        try:
            from forensics.timeutil import check_zone

            check_zone(tz)
        except ValueError:
            tz = None
    wall = ct.parse_time((info.get("clock") or {}).get("wall")) if isinstance(info.get("clock"), dict) else None
    ref = capture or wall or boot
    hints: dict[str, Any] = {}
    files = info.get("files") if isinstance(info.get("files"), dict) else {}
    extra = files.get(rel) if isinstance(files.get(rel), dict) else None
    if extra is None:  # collector layout: the file name may say something (raw/ethtool/<iface>.txt)
        extra = {}
        hints.update(file_hints(source, path.name))
    if isinstance(extra.get("hints"), dict):
        hints.update(extra["hints"])
    if argvs and rel in argvs and "argv" not in hints:  # the command that wrote it (a stream's -d interval)
        hints["argv"] = argvs[rel]
    if extra.get("capture_time") and capture is None:
        capture = ct.parse_time(extra.get("capture_time"))
    # the year of times that print none (syslog, journal short): with this file's own capture time the
    # parsers take its year and roll a later month back to the year before (a capture on 2 January
    # holds December's lines); pinning year= here would put those lines eleven months in the future
    year = None if capture is not None else (ref.year if ref else None)
    if isinstance(hints.get("file_time"), str):  # a loose input's modification time, as the bundle noted it
        hints["file_time"] = ct.parse_time(hints["file_time"])
        if hints["file_time"] is None:
            del hints["file_time"]
    stated = hints.pop("year", None)  # --year of analyze/bundle for loose inputs: the user's word wins
    if isinstance(stated, int) and not isinstance(stated, bool) and 1970 <= stated <= 9999:
        year = stated
    return ParseContext(host=host, file=rel, tz=tz, boot_time=boot, capture_time=capture,
                        year=year, hints=hints)


def capture_argvs(entries: list[dict]) -> dict[str, list]:
    """The argv of the first command that wrote each raw file (commands.jsonl), as strings."""
    out: dict[str, list] = {}
    for e in sorted(entries, key=lambda e: str(e.get("start") or "")):
        rf, argv = e.get("raw_file"), e.get("argv")
        if isinstance(rf, str) and isinstance(argv, list) and rf not in out:
            out[rf] = [str(a) for a in argv[:64]]
    return out


def capture_starts(host: str, entries: list[dict]) -> dict[str, dt.datetime]:
    starts: dict[str, dt.datetime] = {}
    for e in entries:
        rf, start = e.get("raw_file"), ct.parse_time(e.get("start"))
        if isinstance(rf, str) and start is not None:
            if rf not in starts or start < starts[rf]:
                starts[rf] = start
    return starts
