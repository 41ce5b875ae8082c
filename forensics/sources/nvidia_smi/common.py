"""Helpers shared by the nvidia-smi readers (-q text, -q -x XML, --query-gpu CSV, topo -m).

Value conversion follows one rule: the tokens nvidia-smi prints for "no value" ("N/A", "[N/A]",
"[Not Supported]", "Requested functionality has been deprecated", ...) become null on purpose;
anything else that does not convert is reported by the caller as an unparsed line.
"""
from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from forensics import schema
from forensics.sources._base import NULL_TOKENS, local_to_utc
from forensics.sources._bounded import bounded_int, float_or_none

SOURCE = "nvidia_smi"

# What nvidia-smi prints where a value is unavailable, beyond the project-wide tokens.
NA_TOKENS = frozenset(NULL_TOKENS) | {
    "Requested functionality has been deprecated",
    "[Requested functionality has been deprecated]",
    "Unknown",
    "[Unknown]",
    "[GPU requires reset]",
    "GPU requires reset",
    "[GPU is lost]",
    "GPU is lost",
    "[Not Available]",
}

# nvmlClocksEventReason bits (nvml.h: nvmlClocksEventReasonGpuIdle ... DisplayClockSetting).
REASON_BITS = {
    "reason_gpu_idle": 0x1,
    "reason_applications_clocks": 0x2,
    "reason_sw_power_cap": 0x4,
    "reason_hw_slowdown": 0x8,
    "reason_sync_boost": 0x10,
    "reason_sw_thermal_slowdown": 0x20,
    "reason_hw_thermal_slowdown": 0x40,
    "reason_hw_power_brake": 0x80,
    "reason_display_clocks": 0x100,
}
REASON_COLUMNS = tuple(REASON_BITS)

_PCI = re.compile(r"^([0-9A-Fa-f]{1,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-9A-Fa-f])$")
_PCI_NODOMAIN = re.compile(r"^([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-9A-Fa-f])$")
_NUM = re.compile(r"^(-?[0-9]+(?:\.[0-9]+)?)\s*([A-Za-z%/()]*)$")
_TS_Q = re.compile(r"^[A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}$")


@dataclass
class Parts:
    """What a line reader (-q text, -q -x XML, topo -m, nvlink) hands back: rows per table, unparsed lines, facts."""

    samples: list[dict[str, Any]] = field(default_factory=list)
    gpus: list[dict[str, Any]] = field(default_factory=list)
    unparsed: list[tuple[int, str, str]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    topo: list[dict[str, Any]] = field(default_factory=list)
    processes: list[dict[str, Any]] = field(default_factory=list)
    # ECC counts, flat: the index of their GPU record in `samples`, then line, scope, location, error, count
    ecc: tuple[list, ...] = field(default_factory=lambda: ([], [], [], [], [], []))

    def add_ecc(self, rec: dict[str, Any], row: int) -> None:
        """Move the ECC counts [(line, scope, location, error, count)] of GPU record `rec` (samples[row])
        into the flat ECC columns."""
        counts = rec.pop("_ecc", None)
        if counts:
            self.ecc[0].extend([row] * len(counts))
            for col, values in zip(self.ecc[1:], zip(*counts)):
                col.extend(values)


class BadValue(ValueError):
    """A value that is neither a 'not available' token nor convertible."""


def is_na(value: str | None) -> bool:
    return value is None or value.strip() in NA_TOKENS


def pci_norm(value: str | None) -> str | None:
    """'00000000:18:00.0' -> '0000:18:00.0' (lowercase hex, 4-digit domain); None stays None.

    >>> pci_norm("00000000:C1:00.0"), pci_norm("0000:18:00.0"), pci_norm("18:00.0")
    ('0000:c1:00.0', '0000:18:00.0', '0000:18:00.0')
    """
    if is_na(value):
        return None
    v = value.strip()
    m = _PCI.match(v)
    if m:
        dom, bus, dev, fn = m.groups()
        return f"{int(dom, 16):04x}:{bus.lower()}:{dev.lower()}.{fn.lower()}"
    m = _PCI_NODOMAIN.match(v)
    if m:
        bus, dev, fn = m.groups()
        return f"0000:{bus.lower()}:{dev.lower()}.{fn.lower()}"
    raise BadValue(f"not a PCI bus id: {v[:60]!r}")


def num(value: str | None, units: tuple[str, ...] = ()) -> float | None:
    """'70.44 W' -> 70.44 (when 'W' is an allowed unit); N/A tokens -> None; else BadValue."""
    if is_na(value):
        return None
    m = _NUM.match(value.strip())
    if not m or (m.group(2) and m.group(2) not in units):
        raise BadValue(f"not a number{' in ' + '/'.join(units) if units else ''}: {value.strip()[:60]!r}")
    return float_or_none(m.group(1))  # (past a double's range, a run of hundreds of digits: none, not inf)


def integer(value: str | None, units: tuple[str, ...] = (), bits: int = 64) -> int | None:
    """'4' -> 4 (a count or generation); N/A tokens -> None; fractions or overflow -> BadValue."""
    if is_na(value):
        return None
    v = value.strip()
    m = _NUM.match(v)
    if not m or "." in m.group(1) or (m.group(2) and m.group(2) not in units):
        raise BadValue(f"not an integer: {v[:60]!r}")
    b = bounded_int(m.group(1), -(1 << (bits - 1)), (1 << (bits - 1)) - 1, signed=True)
    if not b.ok:
        raise BadValue(f"integer out of range: {v[:60]!r}")
    return b.value


def integer32(value: str | None) -> int | None:
    return integer(value, bits=32)


def width(value: str | None) -> int | None:
    """PCIe link width '16x' -> 16."""
    if is_na(value):
        return None
    v = value.strip()
    if v.endswith("x"):
        v = v[:-1]
    b = bounded_int(v, 0, 999_999)
    if not b.ok:
        raise BadValue(f"not a link width: {value.strip()[:60]!r}")
    return b.value


def yes_no(value: str | None) -> bool | None:
    if is_na(value):
        return None
    v = value.strip().lower()
    if v in ("yes", "true", "enabled"):
        return True
    if v in ("no", "false", "disabled"):
        return False
    raise BadValue(f"not Yes/No: {value.strip()[:60]!r}")


def active(value: str | None) -> bool | None:
    """Clock event reason state: 'Active' -> True, 'Not Active' -> False."""
    if is_na(value):
        return None
    v = value.strip().lower()
    if v == "active":
        return True
    if v == "not active":
        return False
    raise BadValue(f"not Active/Not Active: {value.strip()[:60]!r}")


def pstate(value: str | None) -> str | None:
    if is_na(value):
        return None
    v = value.strip()
    if not re.fullmatch(r"P[0-9]{1,2}", v):
        raise BadValue(f"not a performance state: {v[:60]!r}")
    return v


def text(value: str | None) -> str | None:
    if is_na(value):
        return None
    return value.strip()


_MASKED = re.compile(r"^[Xx*#]{4,}$")


def identity(value: str | None) -> str | None:
    """A serial number as text; one masked before posting (``XXXXXXXXXXXX``) is no serial: None, so that two
    masked boards never share one."""
    v = text(value)
    return None if v is None or _MASKED.match(v) else v


def q_timestamp(value: str) -> dt.datetime:
    """The Timestamp of -q / -q -x output ('Mon Nov  5 14:50:59 2018', local time) as a naive datetime."""
    v = " ".join(value.split())
    if not _TS_Q.match(v):
        raise BadValue(f"not a timestamp: {value.strip()[:60]!r}")
    try:
        return dt.datetime.strptime(v, "%a %b %d %H:%M:%S %Y")
    except ValueError as exc:
        raise BadValue(f"not a timestamp: {value.strip()[:60]!r}") from exc


def finish_power(rec: dict[str, Any]) -> None:
    """Fold the power fields of old and new drivers into power_w / power_limit_w.

    power_w: 'Average Power Draw' (555+, what --query-gpu power.draw reports) else 'Power Draw'
    else 'Instantaneous Power Draw'; power_limit_w: 'Enforced Power Limit' (old) else
    'Current Power Limit' (new) else 'Power Limit'.
    """
    for out, keys in (("power_w", ("_p_avg", "_p_draw", "_p_inst")),
                      ("power_limit_w", ("_l_enf", "_l_cur", "_l_plain"))):
        val = None
        for k in keys:
            if val is None and rec.get(k) is not None:
                val = rec[k]
            rec.pop(k, None)
        if val is not None:
            rec[out] = val


def finish_ecc(rec: dict[str, Any]) -> None:
    """Sum the per-memory ECC parts (SRAM + DRAM) collected as lists into the total columns."""
    for col in ("ecc_sbe_volatile", "ecc_dbe_volatile", "ecc_sbe_aggregate", "ecc_dbe_aggregate"):
        parts = rec.pop("_" + col, None)
        if rec.get(col) is None and parts:
            vals = [p for p in parts if p is not None]
            if vals:
                rec[col] = sum(vals)


def ecc_table(samples: pl.DataFrame, ecc: tuple[list, ...]) -> pl.DataFrame:
    """gpu_ecc: the flat ECC columns of Parts, each count with its GPU record's keys and time (from the
    timed gpu_samples frame, row for row as Parts.samples)."""
    if not ecc[0]:
        return frame("gpu_ecc", [])
    counts = pl.DataFrame({"_row": pl.Series(ecc[0], dtype=pl.UInt32), "line_no": pl.Series(ecc[1], dtype=pl.Int64),
                           "scope": ecc[2], "location": ecc[3], "error": ecc[4],
                           "count": pl.Series(ecc[5], dtype=pl.Int64)})
    keys = [c for c in ("sample_no", "ts", "ts_quality", "gpu", "uuid", "pci_bus_id") if c in samples.columns]
    return counts.join(samples.select(keys).with_row_index("_row"), on="_row", how="left").drop("_row")


@lru_cache(maxsize=4096)
def ecc_key(path: tuple[str, ...]) -> tuple[str, str, str] | None:
    """(scope, location, error) of an ECC count at `path` below "ECC Errors" (text, lowercased words)
    or ``ecc_errors`` (XML, words joined by _); None for what is not a count.

    >>> ecc_key(("volatile", "dram correctable")), ecc_key(("aggregate", "sram_uncorrectable_secded"))
    (('volatile', 'dram', 'correctable'), ('aggregate', 'sram', 'uncorrectable_sec_ded'))
    >>> ecc_key(("volatile", "single bit", "device memory")), ecc_key(("aggregate uncorrectable sram sources", "sram l2"))
    (('volatile', 'device_memory', 'correctable'), ('aggregate', 'sram_l2', 'uncorrectable'))
    """
    norm = [p.replace("-", "_").replace(" ", "_") for p in path]
    if len(norm) == 2 and norm[0] == "aggregate_uncorrectable_sram_sources":
        return "aggregate", norm[1], "uncorrectable"
    if not norm or norm[0] not in ("volatile", "aggregate"):
        return None
    if len(norm) == 2:
        mem, _, err = norm[1].partition("_")
        err = {"correctable": "correctable", "uncorrectable": "uncorrectable",
               "uncorrectable_parity": "uncorrectable_parity", "uncorrectable_sec_ded": "uncorrectable_sec_ded",
               "uncorrectable_secded": "uncorrectable_sec_ded"}.get(err)
        return (norm[0], mem, err) if mem in ("sram", "dram") and err else None
    if len(norm) == 3 and norm[1] in ("single_bit", "double_bit"):
        return norm[0], norm[2], "correctable" if norm[1] == "single_bit" else "uncorrectable"
    return None


def frame(table: str, rows: list[dict[str, Any]], extra: dict[str, pl.DataType] | None = None) -> pl.DataFrame:
    """Rows (dicts with any subset of the table's columns) as a typed frame."""
    cols = dict(schema.polars_schema(table))
    if extra:
        cols.update(extra)
    keep = {k: v for k, v in cols.items() if any(k in r for r in rows)} if rows else {}
    if not rows:
        return pl.DataFrame(schema={k: v for k, v in cols.items() if k in ("line_no",)})
    data = {k: [r.get(k) for r in rows] for k in keep}
    return pl.DataFrame({k: pl.Series(k, v, dtype=keep[k]) for k, v in data.items()})


def add_time(df: pl.DataFrame, tz: str | None, capture: dt.datetime | None, prefer_local: bool) -> pl.DataFrame:
    """Fill ts / ts_quality from helper columns _ts_utc (marker time, 'sampled') and _ts_local
    (naive local time printed by nvidia-smi, converted with `tz`, 'local'); fall back to the capture
    time ('sampled') or null ('none'). `prefer_local` decides which of the two comes first."""
    if df.height == 0:
        return df.drop([c for c in ("_ts_utc", "_ts_local") if c in df.columns])
    utc_t = pl.Datetime("us", "UTC")
    if "_ts_utc" not in df.columns:
        df = df.with_columns(pl.lit(None, dtype=utc_t).alias("_ts_utc"))
    if "_ts_local" not in df.columns:
        df = df.with_columns(pl.lit(None, dtype=pl.Datetime("us")).alias("_ts_local"))
    df = df.with_columns(pl.col("_ts_utc").cast(utc_t), pl.col("_ts_local").cast(pl.Datetime("us")))
    local = local_to_utc(pl.col("_ts_local"), tz)
    first, second = (local, pl.col("_ts_utc")) if prefer_local else (pl.col("_ts_utc"), local)
    q_first, q_second = ("local", "sampled") if prefer_local else ("sampled", "local")
    if capture is not None and capture.tzinfo is None:
        capture = capture.replace(tzinfo=dt.timezone.utc)
    cap = pl.lit(capture, dtype=utc_t) if capture is not None else pl.lit(None, dtype=utc_t)
    df = df.with_columns(
        pl.when(first.is_not_null()).then(pl.lit(q_first))
        .when(second.is_not_null()).then(pl.lit(q_second))
        .when(cap.is_not_null()).then(pl.lit("sampled"))
        .otherwise(pl.lit("none")).alias("ts_quality"),
        pl.coalesce(first, second, cap).alias("ts"),
    )
    return df.drop("_ts_utc", "_ts_local")
