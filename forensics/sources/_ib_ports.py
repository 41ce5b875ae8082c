"""The ``ib_ports`` rows of :mod:`forensics.sources.infiniband`: a port's state, physical state, rate and
LIDs as ibstat, ibstatus and the sysfs port attribute files print them, built up row by row; a helper of
that parser (as :mod:`forensics.sources._ib_gids` is for its GID tables)."""
from __future__ import annotations

import re

import polars as pl

from forensics.sources._bounded import float_or_none, int_or_none

TS = pl.Datetime("us", "UTC")

_STATE_NAMES = {"down": "DOWN", "initializing": "INIT", "init": "INIT", "armed": "ARMED", "active": "ACTIVE",
                "active_defer": "ACTIVE_DEFER", "active defer": "ACTIVE_DEFER"}
_RATE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(?:\s*Gb/sec)?(?:\s*\(([0-9]+X)\s*([A-Z]+)?\))?\s*$")
_NUM_STATE = re.compile(r"^(?:[0-9]+:\s*)?(.*?)\s*$")


def _state(text: str | None) -> str | None:
    if text is None:
        return None
    name = _NUM_STATE.match(text).group(1)
    return _STATE_NAMES.get(name.lower(), name.upper() or None)


def _phys(text: str | None) -> str | None:
    if text is None:
        return None
    return _NUM_STATE.match(text).group(1) or None


def _lid(text: str | None) -> int | None:
    if not text:
        return None
    if not text.lower().startswith("0x"):
        return int_or_none(text, 0, (1 << 31) - 1)
    try:
        v = int(text, 16)  # (int() reads any length in a power-of-two base)
    except ValueError:
        return None
    return v if 0 <= v < (1 << 31) else None


def _rate(text: str | None) -> tuple[float | None, str | None, str | None]:
    m = _RATE.match(text or "")
    if not m:
        return None, None, None
    return float_or_none(m.group(1)), m.group(2), m.group(3)  # (past a double's range: no rate, not inf)


class Ports:
    """Rows of ``ib_ports`` built up line by line (ibstat, ibstatus, sysfs attribute files)."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.cur: dict | None = None

    def open(self, **row) -> dict:
        self.cur = dict(row)
        self.rows.append(self.cur)
        return self.cur

    def frame(self) -> pl.DataFrame:
        cols = {"line_no": pl.Int64, "sample_no": pl.Int64, "ts": TS, "ts_quality": pl.String, "device": pl.String,
                "port": pl.Int32, "tool": pl.String, "state": pl.String, "phys_state": pl.String,
                "rate_gbps": pl.Float64, "width": pl.String, "speed": pl.String, "base_lid": pl.Int32,
                "sm_lid": pl.Int32, "link_layer": pl.String, "port_guid": pl.String, "node_guid": pl.String,
                "ca_type": pl.String, "firmware": pl.String}
        return pl.DataFrame([{k: r.get(k) for k in cols} for r in self.rows], schema=cols, orient="row")


def sysfs_ports(attrs: pl.DataFrame, ports: Ports, has_markers: bool, cap) -> None:
    """The sysfs ``ib_ports`` rows of attribute lines (``infiniband._only_sysfs_attrs``) added to `ports` as the
    state machine adds them: one per (sample, device, port) at its first line, each attribute's last line
    wins; a distinct (attribute, value) is read once."""
    opened: dict[tuple, dict] = {}
    fields: dict[tuple[str, str], dict] = {}
    for line_no, sample_no, sample_ts, dev, port, name, value in attrs.iter_rows():
        port_no = int(port)
        row = opened.get((sample_no, dev, port_no))
        if row is None:
            ts = sample_ts if has_markers else cap
            row = opened[(sample_no, dev, port_no)] = ports.open(
                line_no=line_no, tool="sysfs", device=dev, port=port_no, sample_no=sample_no, ts=ts,
                ts_quality="sampled" if ts is not None else "none")
        got = fields.get((name, value))
        if got is None:
            got = fields[(name, value)] = {}
            port_key(got, name, value)
        row.update(got)


# a port's "key: value" lines, compared in lower case with "_" as " ": ibstat prints "State", "Physical
# state", "Rate", "Base lid", "SM lid", "Port GUID", "Link layer"; ibstatus "state", "phys state",
# "rate", "base lid", "sm lid", "link_layer"; sysfs the attributes state, phys_state, rate, link_layer
_PORT_FIELDS = {"state": ("state", _state), "physical state": ("phys_state", _phys), "phys state": ("phys_state", _phys),
                "base lid": ("base_lid", _lid), "sm lid": ("sm_lid", _lid), "port guid": ("port_guid", None),
                "link layer": ("link_layer", None)}


def port_key(row: dict | None, key: str, value: str, width: bool = True) -> None:
    """One "key: value" line of the port `row`; `width`: the rate's width and speed too (ibstat
    prints the rate alone)."""
    if row is None:
        return
    k = key.lower().replace("_", " ")
    if k == "rate":
        rate = _rate(value)
        if width:
            row["rate_gbps"], row["width"], row["speed"] = rate
        else:
            row["rate_gbps"] = rate[0]
        return
    field = _PORT_FIELDS.get(k)
    if field is not None:
        row[field[0]] = field[1](value) if field[1] else value
