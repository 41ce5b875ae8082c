"""The shared timeline as a Chrome trace-event JSON that opens in the Perfetto UI (ui.perfetto.dev)
or chrome://tracing.

One process per host (sorted like the report: hosts of root causes first); named threads (tracks)
per GPU, per NIC, per NCCL rank or process, for the kernel log, and for findings; instant events
("i", thread scope) for kernel, NCCL and NIC messages, each on the track of its subject (an Xid
on its GPU's track, a pause-storm event on its port's); counter events ("C") for the sampled
series (GPU utilisation, SM clock, temperature, power; NIC pause frames per second per
direction, drops per second, throughput); findings as complete slices ("X") on "findings"
tracks, spread over as many tracks as needed so that slices on one track never overlap (the
trace-event importers want slices on a thread to nest). Times are microseconds on the aligned
(reference) clock. Counter series are thinned to at most `max_points` per track. The format is
the Trace Event Format (its JSON Object form: {"traceEvents": [...], "displayTimeUnit": ...}).

Memory is bounded whatever the bundle holds: :func:`write_trace` writes the events as they are made
(:data:`CHUNK` at a time) instead of building the whole trace first, and the series are thinned by
DuckDB (under its memory limit) and read :data:`BATCH_ROWS` rows at a time. Building the trace as
one list of dicts and one string held every event three times over: on 64 hosts x 8 GPUs x 1 h,
about 1.9 M counter events, the export peaked at 1,969 MiB.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Iterator

import polars as pl

from forensics.atomic import atomic_path, umask_mode
from forensics.report import eventsample

_SEV_COLOUR = {"critical": "terrible", "warning": "bad", "info": "good"}
_GPU_SUBJECT = re.compile(r"^gpu ?([0-9]+)$", re.I)
_RANK_SUBJECT = re.compile(r"^(rank|pid) ?([0-9]+)$", re.I)
CHUNK = 10_000          # events serialised per write
BATCH_ROWS = 65_536     # series rows read from DuckDB at a time

GPU_SQL = (  # the gpu_signals view (queries/views/48_gpu_signals.sql)
    "SELECT host, gpu, epoch_us(ts_aligned) AS t, util_pct, sm_clock_mhz, temp_c, power_w "
    "FROM gpu_signals ORDER BY host, gpu, t"
)
# the nic_signals view (queries/views/47_nic_signals.sql): the counters detection reads
NIC_SQL = (
    "SELECT host, iface, epoch_us(ts_aligned) AS t, max(rx_pause_per_s) AS rx_pause_per_s, "
    "max(tx_pause_per_s) AS tx_pause_per_s, sum(drops_per_s ORDER BY drops_per_s) AS drops_per_s, "
    "CASE WHEN count(rx_bytes_per_s) + count(tx_bytes_per_s) > 0 THEN "
    "(coalesce(max(rx_bytes_per_s), 0) + coalesce(max(tx_bytes_per_s), 0)) * 8 / 1e9 END AS gbit_per_s "
    "FROM nic_signals WHERE ts_aligned IS NOT NULL GROUP BY ALL ORDER BY host, iface, t"
)


def _finite(v) -> bool:
    return v is not None and not (isinstance(v, float) and not math.isfinite(v))


class _Trace:
    """Process and track ids; `events` holds the metadata events not yet handed out (:meth:`take`)."""

    def __init__(self, hosts: list[str]):
        self.events: list[dict] = []
        self.pid = {h: i + 1 for i, h in enumerate(hosts)}
        self.tids: dict[tuple[str, str], int] = {}
        self.next_tid: dict[str, int] = {}
        for i, h in enumerate(hosts):
            self.events.append({"ph": "M", "name": "process_name", "pid": self.pid[h], "tid": 0, "args": {"name": h}})
            self.events.append({"ph": "M", "name": "process_sort_index", "pid": self.pid[h], "tid": 0, "args": {"sort_index": i}})

    def tid(self, host: str, track: str) -> int:
        key = (host, track)
        if key not in self.tids:
            n = self.next_tid.get(host, 0) + 1
            self.next_tid[host] = n
            self.tids[key] = n
            self.events.append({"ph": "M", "name": "thread_name", "pid": self.pid[host], "tid": n, "args": {"name": track}})
        return self.tids[key]

    def take(self, event: dict | None = None) -> list[dict]:
        """The metadata events made since the last call (a new track is named before its first
        event), then `event`."""
        out, self.events = self.events, []
        if event is not None:
            out.append(event)
        return out


def _track(source: str, subject: str | None, nics: set[tuple[str, str]], host: str) -> str:
    subject = subject or ""
    m = _GPU_SUBJECT.match(subject)
    if m:
        return f"GPU{int(m.group(1))}"
    if source == "nccl":
        m = _RANK_SUBJECT.match(subject)
        return f"NCCL {m.group(1).lower()} {m.group(2)}" if m else "NCCL"
    if source == "ethtool" or (host, subject) in nics:
        return f"NIC {subject}" if subject else "NIC"
    if source == "dmesg":
        return "kernel"
    return f"{source} {subject}".strip()


def _lanes(findings: list[dict]) -> list[int]:
    """Track number per finding (greedy interval partitioning): no two slices on a track overlap."""
    ends: list[int] = []
    out = []
    for f in findings:
        for i, end in enumerate(ends):
            if f["_ts"] >= end:
                ends[i] = f["_ts"] + f["_dur"]
                out.append(i)
                break
        else:
            ends.append(f["_ts"] + f["_dur"])
            out.append(len(ends) - 1)
    return out


def build_trace(bundle, findings: pl.DataFrame | None = None, max_points: int = 2000) -> dict:
    """The whole trace as one object (for a small bundle; :func:`write_trace` streams it)."""
    other: dict = {}
    events = [e for chunk in _chunks(bundle, findings, max_points, other) for e in chunk]
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": other}


def _chunks(bundle, findings: pl.DataFrame | None, max_points: int, other: dict) -> Iterator[list[dict]]:
    """The trace's events in order, a list at a time (never the whole trace); `other` gets the
    trace's ``otherData`` once the last chunk is out."""
    findings = findings if findings is not None else pl.DataFrame()
    f_rows = findings.to_dicts() if findings.height else []
    hosts = bundle.sql("SELECT host FROM hosts ORDER BY host")["host"].to_list()
    extra = bundle.sql("SELECT DISTINCT host FROM events WHERE host IS NOT NULL")["host"].to_list()
    ordered: list[str] = []
    for f in sorted(f_rows, key=lambda f: f["caused_by"] is not None):
        ordered += [h for h in f["hosts"] or [] if h not in ordered]
    ordered += sorted((set(hosts) | set(extra)) - set(ordered))
    tr = _Trace(ordered)
    out: list[dict] = tr.take()

    ev, total = eventsample.load(bundle, "epoch_us(ts_aligned) AS t, host, source, kind, severity, subject, "
                                         "left(message, 500) AS message")
    nics = set()
    try:
        nics = {(r[0], r[1]) for r in bundle.sql("SELECT DISTINCT host, iface FROM nic_rates").iter_rows()}
    except Exception:  # noqa: BLE001 - a bundle without NIC counters
        pass
    for r in ev.iter_rows(named=True):
        if r["host"] not in tr.pid:
            continue
        tid = tr.tid(r["host"], _track(r["source"], r["subject"], nics, r["host"]))
        out += tr.take({"ph": "i", "s": "t", "name": r["kind"] or "event", "cat": r["source"] or "event",
                        "ts": int(r["t"]), "pid": tr.pid[r["host"]], "tid": tid,
                        "args": {"severity": r["severity"], "subject": r["subject"], "message": (r["message"] or "")[:500]}})
        if len(out) >= CHUNK:
            yield out
            out = []
    shown = ev.height
    del ev

    for sql, keys, label in ((GPU_SQL, ("gpu",), lambda k: f"GPU{k[0]}"),
                             (NIC_SQL, ("iface",), lambda k: f"NIC {k[0]}")):
        for host, key, part in _thinned(bundle, sql, keys, max_points):
            if host not in tr.pid:
                continue
            name = label(key)
            tid = tr.tid(host, name)
            values = [c for c in part.columns if c not in ("host", "t") + keys]
            for r in part.iter_rows(named=True):
                args = {k: round(float(r[k]), 3) for k in values if _finite(r[k])}
                if args:
                    out += tr.take({"ph": "C", "name": name, "ts": int(r["t"]), "pid": tr.pid[host], "tid": tid, "args": args})
            if len(out) >= CHUNK:
                yield out
                out = []

    timed = []
    for f in f_rows:
        if f["start"] is None:
            continue
        ts = int(f["start"].timestamp() * 1_000_000)
        end = int((f["end"] or f["start"]).timestamp() * 1_000_000)
        timed.append({**f, "_ts": ts, "_dur": max(1, end - ts)})
    for host in ordered:
        mine = sorted((f for f in timed if host in (f["hosts"] or [])), key=lambda f: (f["_ts"], -f["_dur"]))
        for f, lane in zip(mine, _lanes(mine)):
            tid = tr.tid(host, "findings" if lane == 0 else f"findings {lane + 1}")
            out += tr.take({"ph": "X", "name": f["kind"], "cat": "finding", "ts": f["_ts"], "dur": f["_dur"],
                            "pid": tr.pid[host], "tid": tid,
                            "cname": _SEV_COLOUR.get(f["severity"], "generic_work"),
                            "args": {"severity": f["severity"], "subject": f["subject"], "summary": f["summary"],
                                     "id": f["id"], "caused_by": f["caused_by"]}})
    if out:
        yield out
    other["generator"] = "forensics"
    if total > shown:
        other["events"] = f"{shown} of {total} (warning and critical first, info sampled evenly per host)"


def _thinned(bundle, sql: str, keys: tuple[str, ...], max_points: int) -> Iterator[tuple[str, tuple, pl.DataFrame]]:
    """(host, key values, rows) per track of the series `sql` (ordered by host, keys, t), in that
    order: every step-th row of a track's n rows from its first, step = ceil(n / max_points).
    DuckDB thins (under its memory limit); the rows kept are read BATCH_ROWS at a time, so a track
    split over two batches is joined before it is handed out. A bundle without that table: none."""
    part = ", ".join(("host",) + keys)
    thin = (f"SELECT * EXCLUDE (_i, _n) FROM (SELECT *, row_number() OVER (PARTITION BY {part} ORDER BY t) - 1 AS _i, "
            f"count(*) OVER (PARTITION BY {part}) AS _n FROM ({sql})) "
            f"WHERE _i % greatest(1, ceil(_n / {int(max_points)}))::BIGINT = 0 ORDER BY {part}, t")
    try:
        reader = bundle.stream(thin, BATCH_ROWS)
    except Exception:  # noqa: BLE001 - a bundle without that table has no such counters
        return
    group = ["host", *keys]
    carry: pl.DataFrame | None = None
    for batch in reader:
        df = pl.from_arrow(batch)
        if carry is not None:
            df = pl.concat([carry, df], how="vertical_relaxed")
        if not df.height:
            continue
        # the last track of a batch may go on in the next one: held back until then
        last = df.row(-1, named=True)
        tail = pl.all_horizontal([pl.col(c).eq_missing(last[c]) for c in group])
        carry = df.filter(tail)
        for (host, *key), rows in df.filter(~tail).group_by(group, maintain_order=True):
            yield host, tuple(key), rows
    if carry is not None and carry.height:
        for (host, *key), rows in carry.group_by(group, maintain_order=True):
            yield host, tuple(key), rows


def write_trace(bundle, path: Path | str, findings: pl.DataFrame | None = None, max_points: int = 2000) -> Path:
    """The trace written to `path` as it is made (the same bytes as ``json.dumps(build_trace(...),
    separators=(",", ":"))``), atomically: a full disk leaves no half-written trace."""
    path = Path(path)
    dumps = json.JSONEncoder(default=str, allow_nan=False, separators=(",", ":")).encode
    other: dict = {}
    with atomic_path(path, mode=umask_mode()) as tmp, open(tmp, "w", encoding="ascii") as fh:
        fh.write('{"traceEvents":[')
        first = True
        for chunk in _chunks(bundle, findings, max_points, other):
            if chunk:
                fh.write(("" if first else ",") + dumps(chunk)[1:-1])
                first = False
        fh.write('],"displayTimeUnit":' + dumps("ms") + ',"otherData":' + dumps(other) + "}")
    return path
