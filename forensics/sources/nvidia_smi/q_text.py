"""`nvidia-smi -q` / `-a` text (drivers 410 ... 580+), whole or partial (`-q -d PERFORMANCE,...`).

The output is an indented tree of "Key : Value" lines and section headers. Each line is placed on
its path from the GPU section ("Clocks Event Reasons" / "HW Slowdown" / "HW Thermal Slowdown"), and
the paths that matter are mapped to columns; the rest of the tree (BAR1, encoder stats, MIG device
subtrees, processes, "Clocks Event Reasons Counters", ...) is recognised structure, kept out of the
tables. Snapshots start at a marker line, at a repeated NVSMI LOG banner, or when a GPU section
repeats.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from forensics.layout import MARKER_PREFIX, parse_marker
from forensics.sources.nvidia_smi.common import (
    BadValue, Parts, active, ecc_key, finish_ecc, finish_power, identity, integer, integer32, num, pci_norm, pstate, q_timestamp, text, width,
    yes_no,
)

_KV = re.compile(r"^( *)(\S(?:.*?\S)?) +: ?(.*)$")
_GPU = re.compile(r"^GPU ([0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
_BANNER = re.compile(r"^`?=+\s*NVSMI LOG\s*=+`?$")  # (a backtick: the paste's inline code opened on it)


def _n(*units: str) -> Callable[[str], float | None]:
    return lambda v: num(v, units)


# path below the GPU header (lowercased) -> (column, converter)
EXACT: dict[tuple[str, ...], tuple[str, Callable[[str], Any]]] = {
    ("product name",): ("name", text),
    ("product architecture",): ("architecture", text),
    ("serial number",): ("serial", identity),
    ("gpu uuid",): ("uuid", text),
    ("vbios version",): ("vbios", text),
    ("persistence mode",): ("persistence_mode", text),
    ("mig mode", "current"): ("mig_mode", text),
    ("pci", "bus id"): ("pci_bus_id", pci_norm),
    ("pci", "gpu link info", "pcie generation", "max"): ("pcie_gen_max", integer32),
    ("pci", "gpu link info", "pcie generation", "current"): ("pcie_gen", integer32),
    ("pci", "gpu link info", "link width", "max"): ("pcie_width_max", width),
    ("pci", "gpu link info", "link width", "current"): ("pcie_width", width),
    ("pci", "tx throughput"): ("pcie_tx_kb_s", _n("KB/s")),
    ("pci", "rx throughput"): ("pcie_rx_kb_s", _n("KB/s")),
    ("fan speed",): ("fan_pct", _n("%")),
    ("performance state",): ("pstate", pstate),
    ("fb memory usage", "total"): ("mem_total_mib", _n("MiB")),
    ("fb memory usage", "used"): ("mem_used_mib", _n("MiB")),
    ("utilization", "gpu"): ("util_pct", _n("%")),
    ("utilization", "memory"): ("mem_util_pct", _n("%")),
    ("retired pages", "single bit ecc"): ("retired_pages_sbe", integer),
    ("retired pages", "double bit ecc"): ("retired_pages_dbe", integer),
    ("retired pages", "pending"): ("retired_pages_pending", yes_no),
    ("retired pages", "pending page blacklist"): ("retired_pages_pending", yes_no),
    ("remapped rows", "correctable error"): ("remapped_correctable", integer),
    ("remapped rows", "uncorrectable error"): ("remapped_uncorrectable", integer),
    ("remapped rows", "pending"): ("remap_pending", yes_no),
    ("remapped rows", "remapping failure occurred"): ("remap_failure", yes_no),
    ("temperature", "gpu current temp"): ("temp_c", _n("C")),
    ("temperature", "gpu"): ("temp_c", _n("C")),  # drivers before ~340 ("Gpu : 49 C")
    ("temperature", "memory current temp"): ("mem_temp_c", _n("C")),
    ("clocks", "graphics"): ("gr_clock_mhz", _n("MHz")),
    ("clocks", "sm"): ("sm_clock_mhz", _n("MHz")),
    ("clocks", "memory"): ("mem_clock_mhz", _n("MHz")),
    ("max clocks", "sm"): ("max_sm_clock_mhz", _n("MHz")),
}

# "Clocks Throttle Reasons" (drivers < 535) and "Clocks Event Reasons" (535+); nested keys such as
# "HW Slowdown" / "HW Thermal Slowdown" are matched on the last path element.
REASON_SECTIONS = {"clocks throttle reasons", "clocks event reasons"}
REASON_KEYS = {
    "idle": "reason_gpu_idle",
    "applications clocks setting": "reason_applications_clocks",
    "sw power cap": "reason_sw_power_cap",
    "hw slowdown": "reason_hw_slowdown",
    "hw thermal slowdown": "reason_hw_thermal_slowdown",
    "hw power brake slowdown": "reason_hw_power_brake",
    "sync boost": "reason_sync_boost",
    "sw thermal slowdown": "reason_sw_thermal_slowdown",
    "display clock setting": "reason_display_clocks",
}
POWER_SECTIONS = {"power readings", "gpu power readings"}
POWER_KEYS = {
    "power draw": "_p_draw",
    "average power draw": "_p_avg",
    "instantaneous power draw": "_p_inst",
    "enforced power limit": "_l_enf",
    "current power limit": "_l_cur",
    "power limit": "_l_plain",
}
# "Clocks Event Reasons Counters" (drivers 535+): cumulative microseconds per reason
COUNTER_KEYS = {
    "sw power capping": "clocks_event_sw_power_cap_us",
    "sync boost": "clocks_event_sync_boost_us",
    "sw thermal slowdown": "clocks_event_sw_thermal_us",
    "hw thermal slowdown": "clocks_event_hw_thermal_us",
    "hw power braking": "clocks_event_hw_power_brake_us",
}
ECC_CORRECTABLE = {"sram correctable", "dram correctable"}
ECC_UNCORRECTABLE = {"sram uncorrectable", "dram uncorrectable", "sram uncorrectable parity",
                     "sram uncorrectable sec-ded"}
# first path elements under which something is mapped (everything else is skipped quickly)
RELEVANT = ({p[0] for p in EXACT} | REASON_SECTIONS | POWER_SECTIONS
            | {"ecc errors", "clocks event reasons counters"})
# sections of a GPU block that open a pasted fragment without its GPU line
SECTIONS = frozenset(p[0] for p in EXACT if len(p) > 1) | REASON_SECTIONS | POWER_SECTIONS | {
    "ecc errors", "clocks event reasons counters", "max clocks", "applications clocks", "retired pages",
    "remapped rows", "temperature", "clocks", "utilization", "fb memory usage", "processes", "ecc mode"}
TOP_KEYS = {"timestamp", "driver version", "cuda version", "attached gpus", "attached units"}
# "Key : value" lines directly under a "GPU <bus id>" line (indent 4), drivers 410-580: a paste that starts
# with one of them begins inside a GPU record whose bus id line is above it
GPU_KEYS = frozenset({
    "product name", "product brand", "product architecture", "display mode", "display active", "display attached",
    "persistence mode", "addressing mode", "accounting mode", "accounting mode buffer size", "serial number",
    "gpu uuid", "gpu pdi", "minor number", "vbios version", "multigpu board", "board id", "board part number",
    "gpu part number", "fru part number", "platform info", "module id", "gpu c2c mode", "gsp firmware version",
    "fan speed", "performance state", "compute mode", "gpu reset status", "gpu recovery action"})
# the ones no other tool's "Key : value" output prints: enough, with two more GPU_KEYS, to say "nvidia-smi -q"
GPU_KEYS_STRONG = frozenset({"gpu uuid", "vbios version", "product brand", "minor number", "multigpu board",
                             "persistence mode", "display active", "accounting mode", "gpu part number",
                             "board part number", "product architecture", "accounting mode buffer size"})


def dedented(texts: list[str]) -> bool:
    """The paste's first line at column 0 is a GPU-level "Key : value" line: the record was pasted with its
    4-space indent taken off (an editor's dedent, a quote layer), so every line sits 4 columns left (lines
    above it, indented, are the tail of a section cut above the paste: "        Pending : N/A")."""
    for t in texts[:50]:
        if not t.strip() or t.startswith(MARKER_PREFIX) or t[:1] in (" ", "\t"):
            continue
        m = _KV.match(t.rstrip())
        return bool(m and not m.group(1) and m.group(2).lower() in GPU_KEYS)
    return False


def _assign(rec: dict[str, Any], path: tuple[str, ...], value: str) -> None:
    """Put one value of the tree into the GPU record (raises BadValue)."""
    hit = EXACT.get(path)
    if hit:
        col, conv = hit
        rec[col] = conv(value)
        return
    head, leaf = path[0], path[-1]
    if head in REASON_SECTIONS and leaf in REASON_KEYS:
        rec[REASON_KEYS[leaf]] = active(value)
    elif head == "clocks event reasons counters" and len(path) == 2 and leaf in COUNTER_KEYS:
        rec[COUNTER_KEYS[leaf]] = integer(value, ("us",))
    elif head in POWER_SECTIONS and len(path) == 2 and leaf in POWER_KEYS:
        rec[POWER_KEYS[leaf]] = num(value, ("W",))
    if head == "ecc errors" and len(path) >= 3:
        key = ecc_key(path[1:])
        count = integer(value) if key else None
        if count is not None:
            rec.setdefault("_ecc", []).append((*key, count))
    if head == "ecc errors" and len(path) >= 3 and path[1] in ("volatile", "aggregate"):
        kind = path[1]
        if len(path) == 3 and leaf in ECC_CORRECTABLE:
            rec.setdefault(f"_ecc_sbe_{kind}", []).append(integer(value))
        elif len(path) == 3 and leaf in ECC_UNCORRECTABLE:
            rec.setdefault(f"_ecc_dbe_{kind}", []).append(integer(value))
        elif len(path) == 4 and leaf == "total" and path[2] in ("single bit", "double bit"):
            rec[f"ecc_{'sbe' if path[2] == 'single bit' else 'dbe'}_{kind}"] = integer(value)


def _shape(raw: str) -> tuple | None:
    """(indent, rstripped line, lowercased key or section name, value or None for a section header)
    of one line; None for a blank one. Only indent and line matter for unindented lines."""
    line = raw.rstrip()
    body = line.lstrip(" ")
    if not body:
        return None
    ind = len(line) - len(body)
    if not ind:
        return 0, line, None, None
    i = body.find(" : ")
    if i < 0 and body.endswith(" :"):
        i = len(body) - 2
    if i > 0:
        return ind, line, body[:i].rstrip().lower(), body[i + 3:]
    return ind, line, body.lower(), None


def _effect(path: tuple[str, ...], value: str) -> tuple:
    """What _assign does with `value` at `path`: (error text or None, columns set, ECC parts appended)."""
    rec: dict[str, Any] = {}
    try:
        _assign(rec, path, value)
    except BadValue as exc:
        return f"{' / '.join(path)}: {exc}", (), ()
    sets = tuple((k, v) for k, v in rec.items() if not isinstance(v, list))
    adds = tuple((k, x) for k, v in rec.items() if isinstance(v, list) for x in v)
    return None, sets, adds


def parse(texts: list[str], ctx) -> Parts:
    out = Parts()
    up = out.unparsed
    snaps: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    gpu: dict[str, Any] | None = None
    pending: tuple[int, str, int] | None = None  # a section header not yet shown to have entries
    banners = 0
    fragments = 0
    cut_above = False  # inside the first, headless section of a paste that starts mid-record
    cut_lines = 0

    def new_snap(marker_ts=None) -> dict[str, Any]:
        s = {"marker_ts": marker_ts, "local": None, "driver": None, "cuda": None, "banner": False,
             "gpus": [], "pcis": set()}
        snaps.append(s)
        return s

    inds: list[int] = []   # the open sections / parent keys above the current line: indents ...
    names: list[str] = []  # ... and lowercased names
    # snapshots repeat most lines word for word: what a line holds, and what a value does to a GPU
    # record at a path, are worked out once per distinct text
    shapes: dict[str, tuple | None] = {}
    effects: dict[tuple, tuple] = {}
    shift = "    " if dedented(texts) else ""
    for ln, raw in enumerate(texts, start=1):
        shape = shapes.get(raw, 0)
        if shape == 0:
            shape = shapes[raw] = _shape(shift + raw if shift and raw.strip() else raw)
        if shape is None:
            continue
        ind, line, key, value = shape
        if pending is not None:
            if gpu is not None and ind > pending[2]:
                pending = None
            else:
                up.append((pending[0], pending[1], "section header without entries"))
                pending = None
        if ind:  # the hot path: a line inside a GPU section
            if cut_above:
                if ind > 4:  # still inside the section whose header is above the paste
                    cut_lines += 1
                    continue
                cut_above = False
            if gpu is None and cur is None and ind == 4 and (key in SECTIONS if value is None else key in GPU_KEYS):
                # a pasted block of one GPU section without its "GPU <bus id>" line ("-q | grep -A8 ..."), or a
                # paste that starts inside the GPU record at one of its own lines ("Product Name", "Serial Number")
                cur = new_snap()
                gpu = {"line_no": ln, "pci_bus_id": None}
                cur["gpus"].append(gpu)
                fragments += 1
            elif gpu is None and cur is None and ind >= 8 and ind % 4 == 0 and value is not None:
                # a paste that starts inside a GPU record: its first lines belong to a section whose header
                # (and the GPU's "GPU <bus id>" line) are above the paste, so their path is unknown: they are
                # -q lines of that GPU, counted (meta cut_lines), not placed; from its next section on the GPU
                # is read as a fragment of unknown bus id
                cur = new_snap()
                gpu = {"line_no": ln, "pci_bus_id": None}
                cur["gpus"].append(gpu)
                fragments += 1
                cut_above, cut_lines = True, 1
                continue
            if gpu is None:
                up.append((ln, raw, "indented line outside a GPU section"))
                continue
            while inds and inds[-1] >= ind:
                inds.pop()
                names.pop()
            if value is not None:
                if names[0] in RELEVANT if names else (key,) in EXACT:
                    path = (*names, key)
                    eff = effects.get((path, value))
                    if eff is None:
                        eff = effects[(path, value)] = _effect(path, value)
                    if eff[0] is not None:
                        up.append((ln, raw, eff[0]))
                    else:
                        for col, v in eff[1]:
                            gpu[col] = v
                        for col, v in eff[2]:
                            gpu.setdefault(col, []).append((ln, *v) if col == "_ecc" else v)
                inds.append(ind)
                names.append(key)
            else:
                inds.append(ind)
                names.append(key)
                pending = (ln, raw, ind)
            continue
        inds, names = [], []
        cut_above = False
        if line.startswith(MARKER_PREFIX):
            p = parse_marker(line)
            if p is None:
                up.append((ln, raw, "malformed forensics-sample marker line"))
                continue
            cur, gpu = new_snap(p[0]), None
            continue
        if _BANNER.match(line):
            banners += 1
            if cur is None or cur["banner"] or cur["gpus"] or cur["local"] is not None:
                cur = new_snap()
            cur["banner"] = True
            gpu = None
            continue
        m = _GPU.match(line)
        if m:
            pci = pci_norm(m.group(1))
            if cur is None or pci in cur["pcis"]:
                cur = new_snap()
            cur["pcis"].add(pci)
            gpu = {"line_no": ln, "pci_bus_id": pci}
            cur["gpus"].append(gpu)
            continue
        kv = _KV.match(line)
        key = kv.group(2).lower() if kv else None
        if kv and (cur is not None or key in TOP_KEYS):
            if cur is None or (key == "timestamp" and (cur["gpus"] or cur["local"] is not None)):
                cur = new_snap()
            gpu = None
            value = kv.group(3)
            try:
                if key == "timestamp":
                    cur["local"] = q_timestamp(value)
                elif key == "driver version":
                    cur["driver"] = text(value)
                elif key == "cuda version":
                    cur["cuda"] = text(value)
            except BadValue as exc:
                up.append((ln, raw, f"{key}: {exc}"))
            continue
        why = "unrecognised line" if cur is not None else "not nvidia-smi -q output (command or prompt line?)"
        up.append((ln, raw, why))
    if pending is not None:
        up.append((pending[0], pending[1], "section header without entries"))

    seen: set = set()
    for no, snap in enumerate(snaps):
        for idx, g in enumerate(snap["gpus"]):
            finish_power(g)
            finish_ecc(g)
            g.update(gpu=idx, sample_no=no, driver_version=snap["driver"], cuda_version=snap["cuda"],
                     _ts_utc=snap["marker_ts"], _ts_local=snap["local"])
            out.samples.append(g)
            out.add_ecc(g, len(out.samples) - 1)
            key = g.get("pci_bus_id") or g.get("uuid") or idx
            if key not in seen:
                seen.add(key)
                out.gpus.append(g)
    out.meta = {"variant": "q-text" if banners else "q-text-fragment" if fragments else "q-text-partial",
                "snapshots": sum(1 for s in snaps if s["gpus"])}
    if cut_lines:
        out.meta["cut_lines"] = cut_lines  # lines of a section cut off above the paste (read, not placed)
    drivers = sorted({s["driver"] for s in snaps if s["driver"]})
    if drivers:
        out.meta["driver_version"] = drivers[0] if len(drivers) == 1 else drivers
    return out
