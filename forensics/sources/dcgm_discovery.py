"""``dcgmi discovery -l`` -> ``dcgm_entities``: the GPUs, NVSwitches, ConnectX NICs and CPUs DCGM sees,
with their DCGM ids, names, PCI bus ids, UUIDs and CPU cores.

What dcgmi prints (DCGM 2.x to 4.x; ``dcgmi/Query.cpp``)::

    8 GPUs found.
    +--------+----------------------------------------------------------------------+
    | GPU ID | Device Information                                                   |
    +--------+----------------------------------------------------------------------+
    | 0      | Name: A100-SXM4-40GB                                                 |
    |        | PCI Bus ID: 00000000:07:00.0                                         |
    |        | Device UUID: GPU-1d82f4df-3cf9-150d-088b-52f18f8654e1                |
    +--------+----------------------------------------------------------------------+
    6 NvSwitches found.
    +-----------+
    | Switch ID |
    +-----------+
    | 11        |
    +-----------+

then, in newer versions, ``N ConnectX found.`` (one-column table) and ``N CPUs found.`` (``CPU ID``
rows with ``Name:`` and ``Cores:``). DCGM 4 says ``8 GPUs found (Active).`` and may add ``Status:``
lines and a ``(last known)`` suffix for GPUs that are not OK. Each section's printed count is kept
(``found``) beside the rows listed: a paste that lists fewer is visible. A GPU section after rows
starts the next run (outputs pasted one after the other; collector markers also do). dcgmi's
``Error:`` lines, prompts and other lines go to ``unparsed``.

>>> from forensics.sources import ParseContext
>>> sample = (b"1 GPU found.\\n+--------+------+\\n| GPU ID | Device Information |\\n+--------+------+\\n"
...           b"| 0      | Name: NVIDIA H100 80GB HBM3 |\\n|        | PCI Bus ID: 00000000:18:00.0 |\\n"
...           b"|        | Device UUID: GPU-34bf77d1-c686-6821-79a8-32d326c5039c |\\n+--------+------+\\n"
...           b"1 NvSwitch found.\\n+-----------+\\n| Switch ID |\\n+-----------+\\n| 8         |\\n+-----------+\\n")
>>> res = parse(sample, ParseContext(host="n1"))
>>> res.tables["dcgm_entities"].select("entity", "entity_id", "name", "pci_bus_id", "found").rows()
[('GPU', 0, 'NVIDIA H100 80GB HBM3', '00000000:18:00.0', 1), ('Switch', 8, None, None, 1)]
"""
from __future__ import annotations

import datetime as dt
import re

import polars as pl

from forensics.layout import MARKER_PREFIX
from forensics.sources._base import ParseContext, ParseResult, Sniff, drop_before_first_marker, head_text, leftover_reason, marker_split, result, split_lines, unparsed_rows

NAME = "dcgm_discovery"
VERSION = 1
TABLES = ("dcgm_entities",)
DESCRIPTION = "dcgmi discovery -l (DCGM 2.x-4.x): the GPUs (id, name, PCI bus id, UUID), NVSwitches, ConnectX NICs and CPUs DCGM sees"
SNIFF_PRIORITY = 30

_TS = pl.Datetime("us", "UTC")
_FOUND = re.compile(r"^\s*([0-9]{1,5}) (GPUs?|NvSwitch(?:es)?|ConnectX|CPUs?) found(?: \((All|Active)\))?\.\s*$")
_KIND = {"GPU": "GPU", "GPUs": "GPU", "NvSwitch": "Switch", "NvSwitches": "Switch", "ConnectX": "ConnectX", "CPU": "CPU",
         "CPUs": "CPU"}
_BORDER = re.compile(r"^\s*\+[-=+]+\+\s*$")
_ROW2 = re.compile(r"^\s*\|\s*([0-9]{0,9})\s*\|\s*(.*?)\s*\|\s*$")
_ROW1 = re.compile(r"^\s*\|\s*([0-9]{1,9})\s*\|\s*$")
_HEADERS = {"GPU ID", "CPU ID", "Switch ID", "ConnectX"}
_INFO = re.compile(r"^(Name|PCI Bus ID|Device UUID|Cores|Status|GPU Affinity): (.*?)(?: \(last known\))?$")
_KEYS = {"Name": "name", "PCI Bus ID": "pci_bus_id", "Device UUID": "uuid", "Cores": "cores", "Status": "status",
         "GPU Affinity": "gpu_affinity"}
_NOTE = "Note: Use -a flag to show all GPUs"
_PROMPT = re.compile(r"(?:^|[\s$#>/])dcgmi\s+discovery\b")


def sniff(head: bytes) -> Sniff:
    text = head_text(head)
    lines = [ln for ln in text.splitlines()[:400] if ln.strip() and not ln.startswith(MARKER_PREFIX)]
    if not lines:
        return Sniff(0.0, "no lines")
    found = sum(1 for ln in lines if _FOUND.match(ln))
    info = sum(1 for ln in lines if (m := _ROW2.match(ln)) and _INFO.match(m.group(2)))
    if not found or not (info or any("Switch ID" in ln for ln in lines)):
        return Sniff(0.0, "no 'N GPUs found.' line with its device table")
    hits = sum(1 for ln in lines if _FOUND.match(ln) or _BORDER.match(ln) or _ROW2.match(ln) or _ROW1.match(ln))
    return Sniff(round(min(1.0, hits / len(lines) + 0.2), 3), f"{found} 'found' sections, {info} device lines")


class _State:
    def __init__(self, ts):
        self.ts, self.sample, self.kind, self.found = ts, -1, None, None
        self.cur: dict | None = None
        self.rows: list[dict] = []
        self.any_in_sample = False

    def section(self, kind: str, found: int) -> None:
        if kind == "GPU" and (self.sample < 0 or self.any_in_sample):
            self.sample += 1
            self.any_in_sample = False
        elif self.sample < 0:
            self.sample = 0
        self.kind, self.found, self.cur = kind, found, None

    def entity(self, line_no: int, eid: int) -> dict:
        row = {"line_no": line_no, "sample_no": max(self.sample, 0), "ts": self.ts, "entity": self.kind,
               "entity_id": eid, "found": self.found, "last_known": False}
        self.rows.append(row)
        self.any_in_sample = True
        self.cur = row
        return row


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    df = split_lines(data)
    n = df.height
    cap = ctx.capture_time
    if cap is not None and cap.tzinfo is None:
        cap = cap.replace(tzinfo=dt.timezone.utc)
    st = _State(cap)
    bad: list[tuple[int, str, str]] = []
    if n:
        df = marker_split(df)
        for line_no, text, is_marker, sample_no, sample_ts in drop_before_first_marker(df, bad).select(
                "line_no", "text", "is_marker", "sample_no", "sample_ts").iter_rows():
            if is_marker:
                st.ts, st.kind, st.any_in_sample = sample_ts, None, True  # the next GPU section opens a run
                continue
            _line(st, line_no, text, bad)
    cols = {"line_no": pl.Int64, "sample_no": pl.Int64, "ts": _TS, "entity": pl.String, "entity_id": pl.Int64,
            "name": pl.String, "pci_bus_id": pl.String, "uuid": pl.String, "cores": pl.String, "status": pl.String,
            "last_known": pl.Boolean, "found": pl.Int32}
    out = pl.DataFrame([{k: r.get(k) for k in cols} for r in st.rows], schema=cols, orient="row").with_columns(
        pl.when(pl.col("ts").is_not_null()).then(pl.lit("sampled")).otherwise(pl.lit("none")).alias("ts_quality"))
    variant = ("table" if st.rows or st.kind else "unrecognised") if n else "empty"
    return result(NAME, ctx, n, {"dcgm_entities": out}, [unparsed_rows(bad, ctx, NAME)] if bad else [],
                  variant=variant, runs=st.sample + 1)


def _line(st: _State, line_no: int, text: str, bad: list) -> None:
    s = text.strip()
    if not s or _BORDER.match(text):
        return
    m = _FOUND.match(text)
    if m:
        st.section(_KIND[m.group(2)], int(m.group(1)))
        return
    if s.startswith(_NOTE):
        return
    m1, m2 = _ROW1.match(text), _ROW2.match(text)
    if s.startswith("|") and s.strip("|").split("|")[0].strip() in _HEADERS:  # a table's column names
        return
    if st.kind is None:
        bad.append((line_no, text, "table row before any 'N ... found.' line" if (m1 or m2) else
                    leftover_reason(s, _PROMPT, "dcgmi discovery", "not dcgmi discovery output")))
        return
    if m1 and st.kind in ("Switch", "ConnectX"):
        st.entity(line_no, int(m1.group(1)))
        return
    if m2 and st.kind in ("GPU", "CPU"):
        if m2.group(1):
            st.entity(line_no, int(m2.group(1)))
        if st.cur is None:
            bad.append((line_no, text, "device line without its id row"))
            return
        info = m2.group(2)
        im = _INFO.match(info)
        if im:
            st.cur[_KEYS[im.group(1)]] = im.group(2)
            if info.endswith("(last known)"):
                st.cur["last_known"] = True
        elif info.startswith(("Error:", "Return:")):
            st.cur["status"] = ((st.cur.get("status") or "") + " " + info).strip()
        elif info:
            bad.append((line_no, text, "device line dcgmi discovery does not print"))
        return
    bad.append((line_no, text, leftover_reason(s, _PROMPT, "dcgmi discovery", "not a row of the section's table",
                                               error="dcgmi error message")))
