"""Tables from what the collector itself writes: host.json, commands.jsonl, raw/collector/processes.jsonl.

These are not tool outputs, so they have no parser module in ``forensics/sources``; their rows use
``source = "collector"`` and go through the same accounting (bad lines land in ``unparsed``).

>>> from forensics.sources import ParseContext
>>> line = (b'{"pid": 4242, "cmdline": ["python", "train.py"], "gpus": [0, 1], "gpu_uuids": ["GPU-a", "GPU-b"], '
...         b'"cpus_allowed_list": "0-2,8", "mems_allowed_list": "0", "env": {"NCCL_IB_HCA": "mlx5_0", "HOME": "/root"}}')
>>> res = parse_processes(line, ParseContext(host="node01", file="processes.jsonl"))
>>> res.tables["processes"].select("pid", "command", "gpus", "cpus_allowed", "mems_allowed").row(0)
(4242, 'python train.py', [0, 1], [0, 1, 2, 8], [0])
>>> res.tables["process_env"].select("key", "value").rows()
[('NCCL_IB_HCA', 'mlx5_0')]
>>> res.unparsed.select("line_no", "text", "reason").rows()
[(1, 'HOME', 'environment variable outside NCCL_*/CUDA_*/TORCH_NCCL_*/OMP_NUM_THREADS dropped (value not kept)')]
>>> parse_processes(b'{"pid": 1, "env": {"NCCL_IB_SECRET": "x", "TORCH_NCCL_API_KEY": "y", "NCCL_IB_PKEY": "1"}}',
...                 ParseContext(host="node01", file="p.jsonl")).tables["process_env"]["key"].to_list()
['NCCL_IB_PKEY']
"""
from __future__ import annotations

import datetime as dt
import json
import re
import shlex
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from forensics import schema
from forensics.collect.node import ENV_NAMES, env_allowed as collect_env_allowed
from forensics.sources._base import ParseContext, ParseResult, count_lines, result, unparsed_rows

SOURCE = "collector"
VERSION = 2  # 2: variables named like secrets dropped
_RANGE = re.compile(r"^\s*([0-9]+)(?:-([0-9]+))?(?::([0-9]+))?\s*$")
MAX_LIST = 1 << 16


def env_allowed(key: str) -> bool:
    """The collector's own filter (a bundle may come from an older or a foreign collector): allowed
    prefixes, and no secret word (PASSWORD, SECRET, TOKEN, KEY, CREDENTIAL) in the name."""
    return collect_env_allowed(key)


def parse_cpu_list(text: str | None) -> list[int] | None:
    """Kernel list format ("0-27,56-83", "0", "0-15:2") -> [ints]; None for empty or malformed."""
    if text is None:
        return None
    text = text.strip()
    if not text:
        return []
    out: list[int] = []
    for part in text.split(","):
        m = _RANGE.match(part)
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        step = int(m.group(3)) if m.group(3) else 1
        if hi < lo or step < 1 or len(out) + (hi - lo) // step > MAX_LIST:
            return None
        out.extend(range(lo, hi + 1, step))
    return out


def parse_time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        t = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t.replace(tzinfo=dt.timezone.utc) if t.tzinfo is None else t.astimezone(dt.timezone.utc)


def _json_lines(data: bytes):
    parts = data.decode("utf-8", errors="replace").split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    for i, text in enumerate(parts, start=1):
        yield i, text[:-1] if text.endswith("\r") else text


def _int_list(v: Any) -> list[int] | None:
    if v is None:
        return None
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise ValueError("not a list of integers")
    return v


def _str_list(v: Any) -> list[str] | None:
    if v is None:
        return None
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError("not a list of strings")
    return v


def parse_processes(data: bytes, ctx: ParseContext) -> ParseResult:
    """raw/collector/processes.jsonl -> processes, process_env (only the allowed variables)."""
    procs: list[dict] = []
    envs: list[dict] = []
    bad: list[tuple[int, str, str]] = []
    lines = count_lines(data)
    for line_no, text in _json_lines(data):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError) as exc:  # (a 5000-digit number, deep nesting)
            bad.append((line_no, text, f"not a JSON object: {getattr(exc, 'msg', None) or type(exc).__name__}"))
            continue
        try:
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
            pid = obj.get("pid")
            if not isinstance(pid, int) or isinstance(pid, bool):
                raise ValueError("pid missing or not an integer")
            cmd = obj.get("cmdline")
            if isinstance(cmd, list) and all(isinstance(x, str) for x in cmd):
                command = " ".join(x if x and not re.search(r"\s", x) else shlex.quote(x) for x in cmd)
            elif cmd is None or isinstance(cmd, str):
                command = cmd
            else:
                raise ValueError("cmdline is neither a list of strings nor a string")
            cpus = obj.get("cpus_allowed_list")
            mems = obj.get("mems_allowed_list")
            if cpus is not None and not isinstance(cpus, str) or mems is not None and not isinstance(mems, str):
                raise ValueError("cpus/mems_allowed_list must be strings")
            env = obj.get("env") or {}
            if not isinstance(env, dict):
                raise ValueError("env is not an object")
            row = {
                "line_no": line_no, "pid": pid, "command": command,
                "gpus": _int_list(obj.get("gpus")), "gpu_uuids": _str_list(obj.get("gpu_uuids")),
                "cpus_allowed": parse_cpu_list(cpus), "mems_allowed": parse_cpu_list(mems),
                "cpus_allowed_list": cpus, "mems_allowed_list": mems,
            }
        except ValueError as exc:
            bad.append((line_no, text[:4096], str(exc)))
            continue
        if row["cpus_allowed"] is None and cpus:
            bad.append((line_no, cpus, "Cpus_allowed_list not in kernel list format"))
        if row["mems_allowed"] is None and mems:
            bad.append((line_no, mems, "Mems_allowed_list not in kernel list format"))
        procs.append(row)
        for key, value in sorted(env.items()):
            if not env_allowed(key):
                why = ("named like a secret" if key.startswith(("NCCL_", "CUDA_", "TORCH_NCCL_")) or key in ENV_NAMES
                       else "outside NCCL_*/CUDA_*/TORCH_NCCL_*/OMP_NUM_THREADS")
                bad.append((line_no, key, f"environment variable {why} dropped (value not kept)"))
                continue
            envs.append({"line_no": line_no, "pid": pid, "key": key, "value": value if isinstance(value, str) else json.dumps(value)})
    # one line may be reported more than once above (bad lists, dropped keys): keep the first reason
    seen: set[int] = set()
    bad_unique = []
    for r in sorted(bad, key=lambda r: r[0]):
        if r[0] not in seen:
            seen.add(r[0])
            bad_unique.append(r)
    tables = {
        "processes": pl.DataFrame(procs, schema={k: v for k, v in schema.polars_schema("processes").items()
                                                 if k in ("line_no", "pid", "command", "gpus", "gpu_uuids", "cpus_allowed",
                                                          "mems_allowed", "cpus_allowed_list", "mems_allowed_list")}),
        "process_env": pl.DataFrame(envs, schema={"line_no": pl.Int64, "pid": pl.Int64, "key": pl.String, "value": pl.String}),
    }
    return result(SOURCE, ctx, lines, tables, unparsed_rows(bad_unique, ctx, SOURCE))


_COMMAND_TEXT = ("name", "source", "error", "stderr_tail", "raw_file")


def _string_lists(name: str, values: list[list[str] | None]) -> pl.Series:
    """A List(String) column built through Arrow offsets: a tenth of the CPU of pl.Series(values), which
    converts each row's list on its own (40 of the 100 ms of a host-hour's 3,758 commands)."""
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum([0 if v is None else len(v) for v in values], out=offsets[1:])
    flat = pa.array([x for v in values if v is not None for x in v], pa.large_string())
    mask = pa.array([v is None for v in values], pa.bool_())
    return pl.Series(name, pa.LargeListArray.from_arrays(pa.array(offsets), flat, mask=mask)).cast(pl.List(pl.String))


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_US = dt.timedelta(microseconds=1)


def _times(name: str, values: list[dt.datetime | None], dtype: pl.DataType) -> pl.Series:
    """UTC datetimes (of :func:`parse_time`) as a `dtype` column through their microseconds since the epoch: a
    seventh of the CPU of pl.Series(values), which converts each aware datetime on its own (0.74 of a host's
    7.5 ms of commands.jsonl, for each of start and end)."""
    if dtype != pl.Datetime("us", "UTC"):  # (the schema's type of both columns; another: the plain conversion)
        return pl.Series(name, values, dtype=dtype)
    return pl.Series(name, [None if t is None else (t - _EPOCH) // _US for t in values], dtype=pl.Int64).cast(dtype)


def parse_commands(data: bytes, ctx: ParseContext) -> tuple[pl.DataFrame, pl.DataFrame, list[dict]]:
    """commands.jsonl -> (commands rows, unparsed rows, the entries as dicts). Rows are gathered as
    columns (a frame from per-row dicts cost half of the parse)."""
    cols: dict[str, list] = {k: [] for k in ("argv", "start", "end", "exit_code", "bytes", "truncated", "timed_out",
                                              *_COMMAND_TEXT)}
    entries, bad = [], []
    for line_no, text in _json_lines(data):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
            argv = obj.get("argv")
            if argv is not None and not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
                raise ValueError("argv is not a list of strings")
            exit_code = obj.get("exit_code")
            if exit_code is not None and (not isinstance(exit_code, int) or isinstance(exit_code, bool)
                                          or not -(2 ** 31) <= exit_code < 2 ** 31):
                raise ValueError("exit_code is not an integer (32-bit)")
            nbytes = obj.get("bytes")
            if nbytes is not None and (not isinstance(nbytes, int) or isinstance(nbytes, bool)
                                       or not 0 <= nbytes < 2 ** 63):
                raise ValueError("bytes is not a byte count")

            start, end = parse_time(obj.get("start")), parse_time(obj.get("end"))
            texts = [v if isinstance(v, str) else (None if v is None else str(v)) for v in map(obj.get, _COMMAND_TEXT)]
            for key, v in zip(_COMMAND_TEXT, texts):  # (nothing below can fail: a row is added whole)
                cols[key].append(v)
            cols["argv"].append(argv)
            cols["start"].append(start)
            cols["end"].append(end)
            cols["exit_code"].append(exit_code)
            cols["bytes"].append(nbytes)
            cols["truncated"].append(bool(obj.get("truncated")))
            cols["timed_out"].append(bool(obj.get("timed_out")))
            entries.append(obj)
        except (ValueError, RecursionError) as exc:  # (a 5000-digit number, deep nesting)
            why = "nested too deeply" if isinstance(exc, RecursionError) else str(getattr(exc, "msg", exc)).split(";")[0][:120]
            bad.append((line_no, text[:4096], f"bad commands.jsonl entry: {why}"))
    types = schema.polars_schema("commands")
    n = len(cols["argv"])
    df = pl.DataFrame([_string_lists("argv", cols["argv"]) if name == "argv"
                       else _times(name, cols[name], dtype) if name in ("start", "end")
                       else pl.Series(name, [ctx.host] * n if name == "host" else cols[name], dtype=dtype)
                       for name, dtype in types.items()])
    df = schema.conform(df, "commands", host=ctx.host)
    return df, unparsed_rows(bad, ctx, SOURCE), entries


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _float(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def nics_frame(host: str, info: dict) -> pl.DataFrame:
    rows = []
    for nic in info.get("nics") or []:
        if not isinstance(nic, dict) or not isinstance(nic.get("iface"), str):
            continue
        numa = _int(nic.get("numa_node"))
        rows.append({
            "host": host, "iface": nic["iface"], "pci_addr": _str(nic.get("pci_addr")),
            "numa_node": None if numa is None or numa < 0 else numa, "driver": _str(nic.get("driver")),
            "rdma_dev": _str(nic.get("rdma_dev")), "mac": _str(nic.get("mac")), "mtu": _int(nic.get("mtu")),
            "speed_mbps": _int(nic.get("speed_mbps")) if (_int(nic.get("speed_mbps")) or 0) >= 0 else None,
            "operstate": _str(nic.get("operstate")),
        })
    return schema.conform(pl.DataFrame(rows, schema=schema.polars_schema("nics")), "nics")


def hosts_frame(host: str, info: dict, derived: dict) -> pl.DataFrame:
    clock = info.get("clock") if isinstance(info.get("clock"), dict) else {}
    row = {
        "host": host, "hostname": _str(info.get("hostname")), "kernel": _str(info.get("kernel")),
        "boot_time": parse_time(info.get("boot_time")), "timezone": _str(info.get("timezone")),
        "utc_offset_s": _int(info.get("utc_offset_s")), "clock_wall": parse_time(clock.get("wall")),
        "clock_monotonic_s": _float(clock.get("monotonic_s")), "ntp_offset_s": _float(clock.get("ntp_offset_s")),
        "driver_version": derived.get("driver_version"), "cuda_version": derived.get("cuda_version"),
        "nccl_version": derived.get("nccl_version"), "gpu_count": derived.get("gpu_count"),
        "numa_nodes": derived.get("numa_nodes"), "clock_offset_s": None, "clock_offset_confidence": None,
        "clock_offset_method": None,
    }
    return schema.conform(pl.DataFrame([row], schema=schema.polars_schema("hosts")), "hosts")
