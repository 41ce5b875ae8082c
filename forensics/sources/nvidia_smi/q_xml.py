"""`nvidia-smi -q -x` XML (DTD nvsmi_device_v10 ... v13), one or more documents per file.

Documents are separated by marker lines or by a new `<?xml` declaration (`-q -x -l N`). Hostile
XML is refused before parsing: a DOCTYPE with an internal subset or any `<!ENTITY` declaration sends
the document's lines to unparsed (no entity expansion, no external entities). A malformed or
truncated document keeps the GPUs completed before the error; the lines from the first incomplete
GPU (or the error) on go to unparsed with the parser's message. A document cut short (the input ends
inside it: a paste that stopped mid-way) also gives the GPU it was cut inside a row, from that GPU's
elements that were complete before the cut (an element the cut left open gives nothing); only the lines
from the cut on are unparsed, and meta["cut"] says where the document was cut and which GPU is partial.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any, Callable

from forensics.layout import MARKER_PREFIX, parse_marker
from forensics.sources.nvidia_smi.common import (
    REASON_COLUMNS, BadValue, Parts, active, ecc_key, finish_ecc, finish_power, integer, integer32, num, pci_norm, pstate,
    q_timestamp, text, width, yes_no,
)

_HOSTILE = re.compile(r"<!ENTITY|<!DOCTYPE[^>]*\[")
_GPU_OPEN = re.compile(r"<gpu[\s>/]")
_SUFFIX = {
    "gpu_idle": "reason_gpu_idle",
    "applications_clocks_setting": "reason_applications_clocks",
    "sw_power_cap": "reason_sw_power_cap",
    "hw_slowdown": "reason_hw_slowdown",
    "hw_thermal_slowdown": "reason_hw_thermal_slowdown",
    "hw_power_brake_slowdown": "reason_hw_power_brake",
    "sync_boost": "reason_sync_boost",
    "sw_thermal_slowdown": "reason_sw_thermal_slowdown",
    "display_clocks_setting": "reason_display_clocks",
}
assert set(_SUFFIX.values()) == set(REASON_COLUMNS)


def _n(*units: str) -> Callable[[str], float | None]:
    return lambda v: num(v, units)


# element path below <gpu> -> (column, converter); the first path present wins per column
FIELDS: list[tuple[str, str, Callable[[str], Any]]] = [
    ("product_name", "name", text),
    ("product_architecture", "architecture", text),
    ("serial", "serial", text),
    ("uuid", "uuid", text),
    ("vbios_version", "vbios", text),
    ("persistence_mode", "persistence_mode", text),
    ("mig_mode/current_mig", "mig_mode", text),
    ("pci/pci_bus_id", "pci_bus_id", pci_norm),
    ("pci/pci_gpu_link_info/pcie_gen/max_link_gen", "pcie_gen_max", integer32),
    ("pci/pci_gpu_link_info/pcie_gen/current_link_gen", "pcie_gen", integer32),
    ("pci/pci_gpu_link_info/link_widths/max_link_width", "pcie_width_max", width),
    ("pci/pci_gpu_link_info/link_widths/current_link_width", "pcie_width", width),
    ("pci/tx_util", "pcie_tx_kb_s", _n("KB/s")),
    ("pci/rx_util", "pcie_rx_kb_s", _n("KB/s")),
    ("fan_speed", "fan_pct", _n("%")),
    ("performance_state", "pstate", pstate),
    ("fb_memory_usage/total", "mem_total_mib", _n("MiB")),
    ("fb_memory_usage/used", "mem_used_mib", _n("MiB")),
    ("utilization/gpu_util", "util_pct", _n("%")),
    ("utilization/memory_util", "mem_util_pct", _n("%")),
    ("ecc_errors/volatile/single_bit/total", "ecc_sbe_volatile", integer),
    ("ecc_errors/volatile/double_bit/total", "ecc_dbe_volatile", integer),
    ("ecc_errors/aggregate/single_bit/total", "ecc_sbe_aggregate", integer),
    ("ecc_errors/aggregate/double_bit/total", "ecc_dbe_aggregate", integer),
    ("retired_pages/multiple_single_bit_retirement/retired_count", "retired_pages_sbe", integer),
    ("retired_pages/double_bit_retirement/retired_count", "retired_pages_dbe", integer),
    ("retired_pages/pending_retirement", "retired_pages_pending", yes_no),
    ("retired_pages/pending_blacklist", "retired_pages_pending", yes_no),
    ("remapped_rows/remapped_row_corr", "remapped_correctable", integer),
    ("remapped_rows/remapped_row_unc", "remapped_uncorrectable", integer),
    ("remapped_rows/remapped_row_pending", "remap_pending", yes_no),
    ("remapped_rows/remapped_row_failure", "remap_failure", yes_no),
    ("temperature/gpu_temp", "temp_c", _n("C")),
    ("temperature/memory_temp", "mem_temp_c", _n("C")),
    ("clocks/graphics_clock", "gr_clock_mhz", _n("MHz")),
    ("clocks/sm_clock", "sm_clock_mhz", _n("MHz")),
    ("clocks/mem_clock", "mem_clock_mhz", _n("MHz")),
    ("max_clocks/sm_clock", "max_sm_clock_mhz", _n("MHz")),
]
for _suffix, _col in (("sw_power_cap", "clocks_event_sw_power_cap_us"), ("sync_boost", "clocks_event_sync_boost_us"),
                      ("sw_therm_slowdown", "clocks_event_sw_thermal_us"),
                      ("hw_therm_slowdown", "clocks_event_hw_thermal_us"),
                      ("hw_power_brake", "clocks_event_hw_power_brake_us")):
    FIELDS.append((f"clocks_event_reasons_counters/clocks_event_reasons_counters_{_suffix}", _col,
                   lambda v: integer(v, ("us",))))
for _sec in ("power_readings", "gpu_power_readings"):
    FIELDS += [
        (f"{_sec}/average_power_draw", "_p_avg", _n("W")),
        (f"{_sec}/power_draw", "_p_draw", _n("W")),
        (f"{_sec}/instant_power_draw", "_p_inst", _n("W")),
        (f"{_sec}/enforced_power_limit", "_l_enf", _n("W")),
        (f"{_sec}/current_power_limit", "_l_cur", _n("W")),
        (f"{_sec}/power_limit", "_l_plain", _n("W")),
    ]
for _sec in ("clocks_event_reasons/clocks_event_reason_", "clocks_throttle_reasons/clocks_throttle_reason_"):
    FIELDS += [(_sec + suffix, col, active) for suffix, col in _SUFFIX.items()]

ECC_PARTS = {
    "sbe": ("sram_correctable", "dram_correctable"),
    "dbe": ("sram_uncorrectable", "dram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded"),
}


def _value(el: ET.Element | None) -> str | None:
    """Text of a leaf element; None when absent or when it has children (a structure, not a value)."""
    if el is None or len(el):
        return None
    return (el.text or "").strip()


def _segments(texts: list[str]) -> list[tuple[int, int, Any]]:
    """(first index, end index, marker ts) of each document: split at markers and `<?xml` lines."""
    segs: list[tuple[int, int, Any]] = []
    start, ts = 0, None
    for i, t in enumerate(texts):
        if t.startswith(MARKER_PREFIX):
            segs.append((start, i, ts))
            p = parse_marker(t)
            start, ts = i + 1, (p[0] if p else None)
        elif t.lstrip().startswith("<?xml") and i > start and any(x.strip() for x in texts[start:i]):
            segs.append((start, i, ts))
            start = i
    segs.append((start, len(texts), ts))
    return [s for s in segs if s[1] > s[0]]


def parse(texts: list[str], ctx) -> Parts:
    out = Parts()
    claimed: set[int] = set()
    docs = 0
    mig = 0
    for i, t in enumerate(texts):
        if t.startswith(MARKER_PREFIX) and parse_marker(t) is None:
            out.unparsed.append((i + 1, t, "malformed forensics-sample marker line"))
            claimed.add(i + 1)
    sample_no = -1
    cuts: list[dict[str, Any]] = []
    for a, b, marker_ts in _segments(texts):
        seg = texts[a:b]
        if not any(x.strip() for x in seg):
            continue
        j0 = next((j for j, x in enumerate(seg) if x.lstrip().startswith("<")), len(seg))
        for j in range(j0):  # a shell prompt / command line pasted above the document
            if seg[j].strip() and a + j + 1 not in claimed:
                out.unparsed.append((a + j + 1, seg[j], "not XML (command or prompt line?)"))
                claimed.add(a + j + 1)
        a, seg = a + j0, seg[j0:]
        if not seg:
            continue
        sample_no += 1

        def reject(first: int, reason: str) -> None:
            for j in range(max(first, 0), len(seg)):
                ln = a + j + 1
                if seg[j].strip() and ln not in claimed:
                    out.unparsed.append((ln, seg[j], reason))
                    claimed.add(ln)

        doc = "\n".join(seg)
        if _HOSTILE.search(doc):
            reject(0, "XML with a DOCTYPE internal subset or ENTITY declaration refused (no entity expansion)")
            continue
        gpu_lines = [j for j, x in enumerate(seg) if _GPU_OPEN.search(x)]
        parser = ET.XMLPullParser(events=("start", "end"))
        head: dict[str, Any] = {}
        depth, n_started, n_done, root_ok = 0, 0, 0, None
        open_gpu: ET.Element | None = None  # the <gpu> started and not ended (where a cut leaves it)
        ended: set[int] = set()  # ids of the elements under an open <gpu> that were complete
        error: str | None = None
        err_line = 0
        close_error: ET.ParseError | None = None
        parser.feed(doc)  # a syntax error is queued among the events and raised by read_events
        try:
            parser.close()
        except ET.ParseError as exc:  # e.g. truncated: "no element found"
            close_error = exc
        try:
            for event, el in parser.read_events():
                if event == "start":
                    depth += 1
                    if depth == 1:
                        root_ok = el.tag == "nvidia_smi_log"
                        if not root_ok:
                            break
                    elif depth == 2 and el.tag == "gpu":
                        n_started += 1
                        open_gpu = el
                        ended.clear()
                    continue
                if depth > 2 and open_gpu is not None:
                    ended.add(id(el))
                if depth == 2 and root_ok:
                    if el.tag == "gpu":
                        open_gpu = None
                        start_j = gpu_lines[n_done] if n_done < len(gpu_lines) else 0
                        rec = _gpu(el, start_j, a, seg, out, claimed)
                        mig += len(el.findall("mig_devices/mig_device"))
                        rec.update(gpu=n_done, sample_no=sample_no, _ts_utc=marker_ts, **head)
                        out.samples.append(rec)
                        n_done += 1
                        el.clear()
                    elif el.tag in ("timestamp", "driver_version", "cuda_version"):
                        v = _value(el)
                        if el.tag == "timestamp":
                            try:
                                head["_ts_local"] = q_timestamp(v) if v else None
                            except BadValue:
                                head["_ts_local"] = None
                        else:
                            head["driver_version" if el.tag == "driver_version" else "cuda_version"] = text(v)
                depth -= 1
        except ET.ParseError as exc:
            close_error = exc
        if close_error is not None and root_ok is not False:
            error = str(close_error)
            err_line = close_error.position[0] if getattr(close_error, "position", None) else 1
        if root_ok is False:
            reject(0, "XML document is not an nvidia-smi log (root element is not <nvidia_smi_log>)")
            continue
        if error is None and root_ok is None:
            reject(0, "no XML element found")
            continue
        if error is not None:
            cut = err_line - 1
            partial = None
            if open_gpu is not None and n_started > n_done and _cut_short(close_error, seg):
                # the input ends inside this GPU: its complete elements are a row, the rest is unparsed
                _prune(open_gpu, ended)
                start_j = gpu_lines[n_done] if n_done < len(gpu_lines) else 0
                rec = _gpu(open_gpu, start_j, a, seg, out, claimed)
                rec.update(gpu=n_done, sample_no=sample_no, _ts_utc=marker_ts, **head)
                out.samples.append(rec)
                partial = n_done
                cuts.append({"line_no": a + cut + 1, "partial_gpu": partial, "gpus_whole": n_done,
                             "note": "the document ends mid-way (cut short): the GPU it was cut inside is read "
                                     "from its elements complete before the cut"})
                n_done += 1
            elif n_started > n_done and n_done < len(gpu_lines):
                cut = min(cut, gpu_lines[n_done])
            reject(cut, f"malformed or truncated XML: {error}")
        docs += 1
    # inventory rows: first sighting of each GPU
    seen: set = set()
    for row, rec in enumerate(out.samples):
        finish_power(rec)
        finish_ecc(rec)
        if "_ecc" in rec:
            rec["_ecc"] = [(rec["line_no"], *e) for e in rec["_ecc"]]
            out.add_ecc(rec, row)
        key = rec.get("pci_bus_id") or rec.get("uuid") or rec.get("gpu")
        if key not in seen:
            seen.add(key)
            out.gpus.append(rec)
    out.meta = {"variant": "q-xml", "snapshots": docs}
    if cuts:
        out.meta["cut"] = cuts
    if mig:
        out.meta["mig_devices"] = mig
    return out


def _cut_short(exc: ET.ParseError | None, seg: list[str]) -> bool:
    """Whether the parse error is the document's end coming too soon (expat's "no element found" or an
    "unclosed token" on its last line with text), not a syntax error inside it."""
    if exc is None:
        return False
    msg = str(exc)
    if msg.startswith("no element found"):
        return True
    last = max((j for j, x in enumerate(seg) if x.strip()), default=-1)
    line = exc.position[0] if getattr(exc, "position", None) else 0
    return msg.startswith("unclosed token") and line - 1 == last


def _prune(el: ET.Element, ended: set[int]) -> None:
    """Drop from `el` every element below it that the cut left open (its end never came), keeping the complete
    elements inside an open one (``<temperature>`` cut after its complete ``<gpu_temp>``)."""
    for child in list(el):
        _prune(child, ended)
        if id(child) not in ended and not len(child):
            el.remove(child)


def _gpu(el: ET.Element, start_j: int, a: int, seg: list[str], out: Parts, claimed: set[int]) -> dict[str, Any]:
    rec: dict[str, Any] = {"line_no": a + start_j + 1}

    def bad(tag: str, raw: str, exc: BadValue) -> None:
        needle = f"<{tag}>{raw}</{tag}>" if raw else f"<{tag}>"
        for j in range(start_j, len(seg)):
            if needle in seg[j] and a + j + 1 not in claimed:
                claimed.add(a + j + 1)
                out.unparsed.append((a + j + 1, seg[j], f"{tag}: {exc}"))
                return

    try:
        rec["pci_bus_id"] = pci_norm(el.get("id"))
    except BadValue as exc:
        bad("gpu", "", exc)
    for path, col, conv in FIELDS:
        if rec.get(col) is not None:
            continue
        sub = el.find(path)
        raw = _value(sub)
        if raw is None:
            continue
        try:
            rec[col] = conv(raw)
        except BadValue as exc:
            bad(path.rsplit("/", 1)[-1], raw, exc)
    for kind in ("volatile", "aggregate"):
        for short, leaves in ECC_PARTS.items():
            col = f"ecc_{short}_{kind}"
            if rec.get(col) is not None:
                continue
            parts = []
            for leaf in leaves:
                raw = _value(el.find(f"ecc_errors/{kind}/{leaf}"))
                if raw is None:
                    continue
                try:
                    parts.append(integer(raw))
                except BadValue as exc:
                    bad(leaf, raw, exc)
            if parts:
                rec["_" + col] = parts
    ecc = el.find("ecc_errors")
    for leaf_path, leaf in _leaves(ecc) if ecc is not None else ():
        key = ecc_key(leaf_path)
        raw = _value(leaf)
        if key is None or raw is None:
            continue
        try:
            count = integer(raw)
        except BadValue:
            continue  # (the total columns above report a bad value once)
        if count is not None:
            rec.setdefault("_ecc", []).append((*key, count))
    return rec


def _leaves(el: ET.Element, path: tuple[str, ...] = ()):
    """(path of tags below `el`, element) of every leaf element under `el`."""
    for child in el:
        p = (*path, child.tag)
        if len(child):
            yield from _leaves(child, p)
        else:
            yield p, child
