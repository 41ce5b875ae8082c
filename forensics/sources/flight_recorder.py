"""PyTorch Flight Recorder dumps -> ``flight_recorder`` (one row per recorded collective) and
``flight_recorder_pg`` (one row per process group: last enqueued / started / completed sequence number).

A dump is what ``torch._C._distributed_c10d._dump_fr_trace`` (``_dump_nccl_trace`` before 2.8)
returns and ``TORCH_NCCL_DUMP_ON_TIMEOUT=1`` writes per rank: a pickle (protocol 2, written by
PyTorch's own pickler) of a dict ``{"version", "pg_config", "pg_status", "entries", ...}``, or the
same as JSON (``_dump_fr_trace_json``; numbers of ``pg_status`` there are strings). Each entry:
``record_id, pg_id, process_group (name, desc), collective_seq_id, p2p_seq_id, op_id,
profiling_name ("nccl:all_reduce", "gloo:broadcast"), time_created_ns, input_sizes, output_sizes,
state (scheduled | started | completed), time_discovered_started_ns, time_discovered_completed_ns,
retired, timeout_ms, is_p2p, duration_ms (with timing on), frames``.

The pickle is read with :func:`forensics.sources._safe_pickle.loads_plain`: its opcodes are checked
first and nothing that imports or calls is accepted, so a dump crafted to run code is refused (every
line of it goes to ``unparsed`` with the reason and ``meta["warning"]`` says it in one line) and
nothing in it runs. The rank is the dump's trailing number in its file name (``nccl_trace_rank_3``;
PyTorch writes none inside it); the process group's name (its GUID, shared by every member) comes
from the entries' ``process_group``, its local id from ``pg_id`` / the ``pg_status`` key.
Lines (the accounting unit of every source) have no meaning inside a pickle: a dump read whole
uses all of them, a refused one lists all of them as unparsed.

>>> import json
>>> from forensics.sources._base import ParseContext
>>> dump = {"version": "2.10", "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
...         "pg_status": {"0": {"last_enqueued_collective": 2, "last_started_collective": -1, "last_completed_collective": 1}},
...         "entries": [{"record_id": 0, "pg_id": 0, "process_group": ["0", "default_pg"], "collective_seq_id": 2,
...                      "p2p_seq_id": 0, "op_id": 2, "profiling_name": "nccl:all_reduce", "time_created_ns": 1724779239936775119,
...                      "input_sizes": [[3, 4]], "output_sizes": [[3, 4]], "state": "scheduled", "retired": False,
...                      "timeout_ms": 600000, "is_p2p": False}]}
>>> res = parse(json.dumps(dump).encode(), ParseContext(host="node01", file="nccl_trace_rank_1.json"))
>>> res.tables["flight_recorder"].select("rank", "pg_name", "collective_seq_id", "op_type", "state", "ts").rows()
[(1, '0', 2, 'ALLREDUCE', 'scheduled', datetime.datetime(2024, 8, 27, 17, 20, 39, 936775, tzinfo=zoneinfo.ZoneInfo(key='UTC')))]
>>> res.tables["flight_recorder_pg"].select("rank", "pg_id", "pg_name", "pg_desc", "last_enqueued", "last_completed").rows()
[(1, '0', '0', 'default_pg', 2, 1)]
"""
from __future__ import annotations

import datetime as dt
import json
import re

import polars as pl

from forensics import schema
from forensics.sources._base import ParseContext, ParseResult, Sniff, result, split_lines, unparsed_frame
from forensics.sources._bounded import float_or_none
from forensics.sources._safe_pickle import PickleRefused, loads_plain

NAME = "flight_recorder"
VERSION = 2  # 2: a duration_ms past a double's range (a JSON number of hundreds of digits, or 1e999) is null: an integer one lost the file (OverflowError), a decimal one read as inf
TABLES = ("flight_recorder", "flight_recorder_pg")
DESCRIPTION = ("PyTorch Flight Recorder dumps (pickle read without running it, or JSON): per rank the recent "
               "collectives (process group, sequence ids, op, sizes, state, times) and each group's last enqueued/completed")

MAX_ENTRIES = 1_000_000   # PyTorch's ring holds TORCH_NCCL_TRACE_BUFFER_SIZE entries (2,000 recommended)
_RANK = re.compile(r"([0-9]{1,7})(?:\.(?:pkl|pickle|json|bin))?$")
_KEYS = (b"entries", b"pg_config", b"pg_status")
# "nccl:all_reduce" -> ALLREDUCE, as the watchdog's OpType names it ("nccl:_allgather_base" -> _ALLGATHER_BASE)
_OP = {"all_reduce": "ALLREDUCE", "allreduce": "ALLREDUCE", "broadcast": "BROADCAST", "reduce": "REDUCE",
       "all_gather": "ALLGATHER", "allgather": "ALLGATHER", "reduce_scatter": "REDUCE_SCATTER",
       "all_to_all": "ALLTOALL", "alltoall": "ALLTOALL", "barrier": "BARRIER", "send": "SEND", "recv": "RECV",
       "gather": "GATHER", "scatter": "SCATTER"}


def sniff(head: bytes) -> Sniff:
    if head[:2] == b"\x80\x02" and sum(k in head[:4096] for k in _KEYS + (b"version",)) >= 2:
        return Sniff(0.95, "a protocol-2 pickle naming Flight Recorder keys (version, entries, pg_config, pg_status)")
    text = head[:4096].lstrip()
    # _dump_fr_trace_json sorts its keys: "comm_lib_version" and "entries" open the object and "version"
    # closes it, past the head of any dump of more than a few entries
    if text[:1] == b"{" and sum(b'"' + k + b'"' in text for k in _KEYS) >= 1 and (
            b'"version"' in text or text.startswith(b'{"comm_lib_version"')):
        return Sniff(0.9, "a JSON object with Flight Recorder keys (version or comm_lib_version, entries, pg_config or pg_status)")
    return Sniff(0.0, "neither a pickle nor JSON with Flight Recorder keys")


def _load(data: bytes):
    """The dump's plain data: JSON when it starts as a JSON object, else a pickle read by loads_plain."""
    if data.lstrip()[:1] != b"{":
        return loads_plain(data)
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise PickleRefused(f"not a Flight Recorder dump: neither a pickle nor JSON ({str(exc).splitlines()[0]})") from None


def _int(v) -> int | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v if -(1 << 63) <= v < (1 << 63) else None
    if isinstance(v, str) and re.fullmatch(r"-?[0-9]{1,18}", v.strip()):
        return int(v)
    if isinstance(v, float) and v == v and abs(v) < 9e18:
        return int(v)
    return None


def _str(v, limit: int = 4096) -> str | None:
    if v is None:
        return None
    s = v if isinstance(v, str) else json.dumps(v, default=str) if isinstance(v, (list, tuple, dict)) else str(v)
    return s[:limit]


def _ts(ns) -> dt.datetime | None:
    n = _int(ns)
    if not n or n <= 0:  # the JSON form writes 0 for "not discovered"
        return None
    return dt.datetime.fromtimestamp(n // 1_000_000_000, dt.timezone.utc) + dt.timedelta(microseconds=(n % 1_000_000_000) // 1000)


def _op(name: str | None) -> str | None:
    if not name:
        return None
    op = name.split(":", 1)[-1].strip()
    base = op.lstrip("_")
    return ("_" * (len(op) - len(base))) + _OP.get(base, base.replace("_", "").upper()) if base else None


def _top_frame(frames) -> str | None:
    if isinstance(frames, (list, tuple)) and frames and isinstance(frames[0], dict):
        f = frames[0]
        return _str(f"{f.get('name')} at {f.get('filename')}:{f.get('line')}", 512)
    return None


def _rows(dump: dict, rank: int | None) -> tuple[list[dict], list[dict], list[str]]:
    notes = []
    entries = dump.get("entries") or []
    if not isinstance(entries, (list, tuple)):
        entries, notes = [], ["'entries' is not a list: no collectives read"]
    if len(entries) > MAX_ENTRIES:
        notes.append(f"{len(entries):,} entries: the first {MAX_ENTRIES:,} read")
        entries = entries[:MAX_ENTRIES]
    version = _str(dump.get("version"), 32)
    names: dict[str, tuple[str | None, str | None]] = {}
    rows = []
    for k, e in enumerate(entries, 1):
        if not isinstance(e, dict):
            notes.append(f"entry {k} is not a dict")
            continue
        pg = e.get("process_group")
        pg_name, pg_desc = (_str(pg[0], 256), _str(pg[1], 256)) if isinstance(pg, (list, tuple)) and len(pg) >= 2 else (None, None)
        pg_id = _str(e.get("pg_id"), 64)
        if pg_id is not None and pg_name is not None:
            names.setdefault(pg_id, (pg_name, pg_desc))
        prof = _str(e.get("profiling_name"), 256)
        dur = e.get("duration_ms")
        rows.append({
            "entry_no": k, "rank": rank, "version": version, "record_id": _int(e.get("record_id")),
            "pg_id": pg_id, "pg_name": pg_name, "pg_desc": pg_desc,
            "collective_seq_id": _int(e.get("collective_seq_id")), "p2p_seq_id": _int(e.get("p2p_seq_id")),
            "op_id": _int(e.get("op_id")), "profiling_name": prof, "op_type": _op(prof),
            "is_p2p": bool(e["is_p2p"]) if isinstance(e.get("is_p2p"), bool) else None,
            "state": _str(e.get("state"), 32), "retired": bool(e["retired"]) if isinstance(e.get("retired"), bool) else None,
            "timeout_ms": _int(e.get("timeout_ms")),
            "duration_ms": float_or_none(dur) if isinstance(dur, (int, float)) else None,  # (past a double: none)
            "ts": _ts(e.get("time_created_ns")), "started_ts": _ts(e.get("time_discovered_started_ns")),
            "completed_ts": _ts(e.get("time_discovered_completed_ns")),
            "input_sizes": _str(e.get("input_sizes")), "output_sizes": _str(e.get("output_sizes")),
            "input_dtypes": _str(e.get("input_dtypes")), "top_frame": _top_frame(e.get("frames")),
        })
    config = dump.get("pg_config") if isinstance(dump.get("pg_config"), dict) else {}
    status = dump.get("pg_status") if isinstance(dump.get("pg_status"), dict) else {}
    pgs = []
    for pg_id, st in status.items():
        if not isinstance(st, dict):
            continue
        pg_id = _str(pg_id, 64)
        name, desc = names.get(pg_id, (None, None))
        cfg = config.get(name) if name is not None and isinstance(config.get(name), dict) else {}
        pgs.append({"rank": rank, "version": version, "pg_id": pg_id,
                    "pg_name": name if name is not None else pg_id, "pg_desc": desc or _str(cfg.get("desc"), 256) or None,
                    "group_ranks": _str(cfg.get("ranks"), 65536) if cfg else None,
                    "last_enqueued": _int(st.get("last_enqueued_collective")),
                    "last_started": _int(st.get("last_started_collective")),
                    "last_completed": _int(st.get("last_completed_collective"))})
    return rows, pgs, notes


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    lines = split_lines(data)
    empty = {t: pl.DataFrame(schema=schema.polars_schema(t)) for t in TABLES}
    try:
        dump = _load(data) if data.strip() else None
    except PickleRefused as exc:
        reason = str(exc)
        return result(NAME, ctx, lines.height, empty, unparsed_frame(lines, reason, ctx, NAME), warning=reason)
    if not isinstance(dump, dict) or not any(k in dump for k in ("entries", "pg_status")):
        reason = "not a Flight Recorder dump (no 'entries' or 'pg_status')"
        return result(NAME, ctx, lines.height, empty, unparsed_frame(lines, reason, ctx, NAME),
                      **({"warning": reason} if lines.height else {}))
    m = _RANK.search((ctx.file or "").rsplit("/", 1)[-1])
    rank = int(m.group(1)) if m else None
    rows, pgs, notes = _rows(dump, rank)
    tables = {"flight_recorder": pl.DataFrame(rows, infer_schema_length=None) if rows else empty["flight_recorder"],
              "flight_recorder_pg": pl.DataFrame(pgs, infer_schema_length=None) if pgs else empty["flight_recorder_pg"]}
    if rows:  # time_created_ns is the rank's system clock in ns since the epoch: an absolute UTC time
        tables["flight_recorder"] = tables["flight_recorder"].with_columns(
            pl.when(pl.col("ts").is_not_null()).then(pl.lit("exact")).otherwise(pl.lit("none")).alias("ts_quality"))
    meta = {"warning": "; ".join(notes)} if notes else {}
    if rank is None:
        meta["warning"] = "; ".join(notes + ["no rank in the file name (PyTorch writes <prefix><rank>): rank left null"])
    return result(NAME, ctx, lines.height, tables, None, **meta)
