"""The plain ``nvidia-smi`` summary table (what the command prints with no option), drivers 4xx ... 580+,
and the older table of drivers 270-295 (``Nb.``, ``Volatile ECC SB / DB``; see _ROW1_OLD), and the Windows table
(``TCC/WDDM`` or ``Driver-Model`` where Linux prints ``Persistence-M``, 91 columns; see _DRIVER_MODELS).

Layout (the widths differ between drivers: 79 columns up to 52x, 89 from 530 on)::

    Mon Jan 20 10:18:26 2025                                   <- local time (optional in a paste)
    +-----------------------------------------------------------------------------------------+
    | NVIDIA-SMI 550.90.07              Driver Version: 550.90.07      CUDA Version: 12.4     |
    |-----------------------------------------+------------------------+----------------------+
    | GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
    | Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
    |                                         |                        |               MIG M. |  <- 450+
    |=========================================+========================+======================|
    |   0  NVIDIA H100 80GB HBM3          On  |   00000000:19:00.0 Off |                    0 |
    | N/A   27C    P0             72W /  700W |       1MiB /  81559MiB |      0%      Default |
    |                                         |                        |             Disabled |
    +-----------------------------------------+------------------------+----------------------+
    | Processes:                                                                              |
    |  GPU   GI   CI        PID   Type   Process name                              GPU Memory |
    |        ID   ID                                                               Usage      |
    |=========================================================================================|
    |    0   N/A  N/A     10734      C   python                                       160MiB |
    |  No running processes found                                                             |

Each GPU block gives one gpu_samples row (gpu = the index printed, pci_bus_id, fan_pct, temp_c, pstate,
power_w / power_limit_w, mem_used_mib / mem_total_mib, util_pct and the volatile uncorrectable ECC count
as ecc_dbe_volatile) and one gpus row (name, persistence and MIG mode, driver and CUDA version); each
process row one processes row (pid, command, gpus, gpu_mem_used_mib). The date line above the table is
local time (``ts_quality`` local); a new date line or banner after GPU rows starts a new sample
(``nvidia-smi -l`` / ``watch`` pasted one after the other). Borders, header rows, "No running processes
found" and the MIG devices block are structure; prompts and anything else are unparsed, one reason each.
A name nvidia-smi cut to fit ("NVIDIA GeForce ...") is kept as printed; "ERR!" (a reading that failed,
e.g. a fan) is a null on purpose, like "N/A".
"""
from __future__ import annotations

import re
from typing import Any

from forensics.layout import MARKER_PREFIX, parse_marker
from forensics.sources._bounded import float_or_none
from forensics.sources.nvidia_smi.common import BadValue, Parts, is_na, pci_norm, q_timestamp

BANNER = re.compile(r"^\|\s*NVIDIA-SMI\s+(\S+)\s+Driver Version:\s*(\S+)(?:\s+CUDA Version:\s*(\S+))?\s*\|\s*$")
_HEADER = re.compile(r"^\|\s*GPU\s+Name\s+.*(?:Persistence-M|TCC/WDDM|Driver-Model)\s*\|\s*Bus-Id\s")
_PROC_TITLE = re.compile(r"^\|\s*Processes:\s*\|\s*$")
_STRUCT = re.compile(
    r"^(?:`?[+|][-=+| ]*[+|]`?"                               # borders, separators, empty cells (a backtick: inline code)
    r"|`?\+[-=+]{2,}`?"                                        # a border the paste cut short
    r"|\|.*(?:Persistence-M|TCC/WDDM|Driver-Model|Pwr:Usage/Cap|MIG M\.|Memory-Usage|Process name|GPU Memory).*\|"  # header rows
    r"|\|\s*(?:GI\s+CI\s+)?ID\s+ID\b.*\|"                     # second header row of the process block
    r"|\|\s*No running processes found\s*\|"
    r"|\|\s*(?:MIG devices|Processes):\s*\|"
    r"|\|.*(?:BAR1-Usage|Shared\s*\||CE\s+ENC\s+DEC).*\|"      # MIG devices header rows
    r"|\|\s*Nb\.\s+Name\s*\|.*\||\|\s*Fan\s+Temp\s+Power Usage\s*/Cap\s*\|.*\|"  # header rows, drivers 270-295
    r"|\|\s*Compute processes:.*\||\|\s*[0-9]{1,3}\\?\.\s+(?:ERROR: )?Not Supported\s*\|"  # their process block
    r")\s*$")
_ROW1 = re.compile(r"^\|\s*([0-9]{1,3})\s+(.*?)\s+(On|Off|N/A|WDDM|TCC|MCDM)\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])"
                   r"\s+(On|Off|N/A)\s*\|\s*(\S+)\s*\|\s*$")
_ROW2 = re.compile(r"^\|\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*/\s*(\S+)\s*\|\s*(\S+)\s*/\s*(\S+)\s*\|\s*(\S+)\s+(\S.*?)\s*\|\s*$")
# the table of drivers 270-295 (2011-2012, "NVIDIA-SMI 2.290.10", "3.295.40"): "0." for the index, ECC as
# "SB / DB" (single- and double-bit volatile counts), "64 C", memory as "56%  577MB / 1023MB" (the memory
# in use as a share, then MB as printed: these drivers' unit for the same MiB, 1023MB on a 1 GiB card)
# A wiki page kept as Markdown writes the index "0\\." (the period escaped so it is not read as a list item:
# the Arch wiki's 290.10 / GeForce 8500 GT example in every language): read as "0.".
_ROW1_OLD = re.compile(r"^\|\s*([0-9]{1,3})\\?\.\s+(.*?)\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])"
                       r"\s+(On|Off|N/A)\s*\|\s*(\S+)\s+(\S+)\s*\|\s*$")
_ROW2_OLD = re.compile(r"^\|\s*(\S+)\s+(\S+ ?C|N/A)\s+(\S+)\s+(\S+)\s*/\s*(\S+)\s*\|\s*(?:\S+%|N/A)\s+(\S+)\s*/\s*(\S+)\s*\|"
                       r"\s*(\S+)\s+(\S.*?)\s*\|\s*$")
_ROW3 = re.compile(r"^\|\s+\|\s+\|\s*(\S.*?)\s*\|\s*$")
_MIG_ROW = re.compile(r"^\|\s*[0-9]+\s+[0-9]+\s+[0-9]+\s+[0-9]+\s*\|")  # a MIG devices row: structure
_MIG_ROW2 = re.compile(r"^\|\s+\|\s*[0-9]+MiB\s*/\s*[0-9]+MiB\s*\|")
_PROC = re.compile(r"^\|\s*([0-9]{1,3})\s+(?:(\S+)\s+(\S+)\s+)?([0-9]{1,10})\s+(C\+G|C|G|M\+C|M)\s+(.*?)\s+([0-9]+MiB|N/A)\s*\|\s*$")
_DATE = re.compile(r"^\s*([A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4})\s*$")
_ERR = ("ERR!", "[ERR!]")
# On Windows the column of Persistence-M is the driver model: the header says "TCC/WDDM" (drivers 5xx) or
# "Driver-Model" (560+), the GPU line "WDDM", "TCC" or "MCDM" (nvidia-smi -q "Driver Model", Windows only)
_DRIVER_MODELS = ("WDDM", "TCC", "MCDM")
# nvidia-smi draws the table 79 or 89 columns wide and cuts long process names; a longer line is not the table's
# (and is never given to the patterns below, whose backtracking would grow with its length)
MAX_LINE = 512


def banner(line: str) -> bool:
    """Is `line` the 'NVIDIA-SMI x  Driver Version: y' line of the table?"""
    return line.startswith("|") and len(line) <= MAX_LINE and BANNER.match(line) is not None


def gpu_header(line: str) -> bool:
    """Is `line` the '| GPU  Name ... Persistence-M | Bus-Id ...' header (a paste that starts below the banner)?"""
    return line.startswith("|") and len(line) <= MAX_LINE and _HEADER.match(line) is not None


def process_title(line: str) -> bool:
    """Is `line` the '| Processes: |' title (a paste of the process block alone)?"""
    return line.startswith("|") and len(line) <= MAX_LINE and _PROC_TITLE.match(line) is not None


def _num(value: str, unit: str) -> float | None:
    """'72W' -> 72.0 for unit 'W'; N/A and ERR! -> None; anything else BadValue."""
    v = value.strip()
    if is_na(v) or v in _ERR:
        return None
    if v.endswith(unit) and re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", v[:-len(unit)]):
        return float_or_none(v[:-len(unit)])  # (past a double's range: none, not inf)
    raise BadValue(f"not a number in {unit}: {v[:40]!r}")


def _mb(value: str) -> str:
    """'577MB' (the old table's memory) as the MiB it is: '577MiB'."""
    return value[:-2] + "MiB" if value.endswith("MB") and not value.endswith("MiB") else value


def _int(value: str) -> int | None:
    v = value.strip()
    if is_na(v) or v in _ERR:
        return None
    if v.isdigit() and len(v) <= 18:
        return int(v)
    raise BadValue(f"not a count: {v[:40]!r}")


def _mode(value: str) -> str | None:
    """Persistence 'On'/'Off' as -q prints it ('Enabled'/'Disabled'); a Windows driver model (WDDM, TCC, MCDM,
    printed in that column on Windows, where persistence mode does not exist) is no persistence mode: None."""
    return None if is_na(value) or value in _DRIVER_MODELS else {"On": "Enabled", "Off": "Disabled"}[value]


def parse(texts: list[str], ctx) -> Parts:
    out = Parts()
    up = out.unparsed
    snaps: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    gpu: dict[str, Any] | None = None  # the GPU block being read, until its MIG M. line
    step = 0  # which line of the GPU block comes next: 2 (Fan/Temp ...) or 3 (MIG M.)
    in_procs = False

    def new_snap(marker_ts=None) -> dict[str, Any]:
        s = {"marker_ts": marker_ts, "local": None, "driver": None, "cuda": None, "gpus": [], "procs": []}
        snaps.append(s)
        return s

    for ln, raw in enumerate(texts, start=1):
        line = raw.strip()  # (a table pasted indented, as a Markdown code block)
        if not line.strip():
            continue
        if len(line) > MAX_LINE:
            up.append((ln, raw, f"line longer than {MAX_LINE} characters: not the nvidia-smi table"))
            gpu, step = None, 0
            continue
        if line.startswith(MARKER_PREFIX):
            p = parse_marker(line)
            if p is None:
                up.append((ln, raw, "malformed forensics-sample marker line"))
            else:
                cur, gpu, in_procs = new_snap(p[0]), None, False
            continue
        if gpu is not None and step == 2:
            m = _ROW2_OLD.match(line) if gpu.get("_old") else _ROW2.match(line)
            if m:
                fan, temp, perf, pwr, cap, used, total, util, _compute = m.groups()
                if gpu.get("_old"):  # "64 C", "577MB"
                    temp, used, total = temp.replace(" ", ""), _mb(used), _mb(total)
                try:
                    fan_v = _num(fan, "%")
                    temp_v = _num(temp, "C")
                    ps = None if is_na(perf) or perf in _ERR else perf
                    if ps is not None and not re.fullmatch(r"P[0-9]{1,2}", ps):
                        raise BadValue(f"not a performance state: {ps[:20]!r}")
                    vals = {"fan_pct": fan_v, "temp_c": temp_v, "pstate": ps, "power_w": _num(pwr, "W"),
                            "power_limit_w": _num(cap, "W"), "mem_used_mib": _num(used, "MiB"),
                            "mem_total_mib": _num(total, "MiB"), "util_pct": _num(util, "%")}
                except BadValue as exc:
                    up.append((ln, raw, f"GPU {gpu['gpu']} state line: {exc}"))
                else:
                    gpu.update(vals)
                step = 0 if gpu.pop("_old", False) else 3  # (no MIG M. line in the old table)
                if step == 0:
                    gpu = None
                continue
            gpu, step = None, 0
        if gpu is not None and step == 3:
            step = 0
            m = _ROW3.match(line)
            if m:
                gpu["_mig"] = None if is_na(m.group(1)) else m.group(1)
                gpu = None
                continue
            gpu = None
        m = BANNER.match(line) if line.startswith("|") else None
        if m:
            if cur is None or cur["gpus"] or cur["procs"] or cur["driver"] is not None:
                cur = new_snap()  # (a date line just above belongs to this banner's sample)
            cur["driver"], cur["cuda"] = m.group(2), m.group(3)
            in_procs = False
            continue
        m = _DATE.match(line)
        if m:
            try:
                local = q_timestamp(m.group(1))
            except BadValue as exc:
                up.append((ln, raw, str(exc)))
                continue
            if cur is None or cur["gpus"] or cur["procs"] or cur["local"] is not None or cur["driver"] is not None:
                cur = new_snap()
            cur["local"] = local
            in_procs = False
            continue
        if line[:1] in ("|", "+") or line[:2] in ("`+", "`|"):
            if _STRUCT.match(line):
                if "Processes:" in line or "Process name" in line:
                    in_procs = True
                elif "Persistence-M" in line or "TCC/WDDM" in line or "Driver-Model" in line:
                    in_procs = False
                continue
            if not in_procs:
                m = _ROW1.match(line)
                old = m is None  # drivers 270-295: no persistence column, ECC as single / double bit
                if old:
                    m = _ROW1_OLD.match(line)
                if m:
                    if old:
                        idx, name, bus, _disp, _sb, ecc = m.groups()
                        persist = None
                    else:
                        idx, name, persist, bus, _disp, ecc = m.groups()
                    try:
                        rec = {"line_no": ln, "gpu": int(idx), "pci_bus_id": pci_norm(bus), "name": name.strip(),
                               "persistence_mode": None if old else _mode(persist), "ecc_dbe_volatile": _int(ecc)}
                    except BadValue as exc:
                        up.append((ln, raw, f"GPU line: {exc}"))
                        continue
                    if old:
                        rec["_old"] = True
                    if persist in _DRIVER_MODELS:
                        out.meta.setdefault("driver_model", persist)
                    if cur is None:
                        cur = new_snap()
                    cur["gpus"].append(rec)
                    gpu, step = rec, 2
                    continue
            m = _PROC.match(line)
            if m and (in_procs or m.group(2) is not None):
                gidx, _gi, _ci, pid, _type, name, mem = m.groups()
                if cur is None:
                    cur = new_snap()
                cur["procs"].append({"line_no": ln, "pid": int(pid), "command": name.strip(), "gpus": [int(gidx)],
                                     "gpu_mem_used_mib": None if mem == "N/A" else float_or_none(mem[:-3])})
                in_procs = True
                continue
            if _MIG_ROW.match(line) or _MIG_ROW2.match(line):
                continue
            up.append((ln, raw, "table line not understood"))
            continue
        up.append((ln, raw, "not nvidia-smi output (command or prompt line?)"))

    seen: set = set()
    for no, snap in enumerate(snaps):
        for g in snap["gpus"]:
            g.pop("_old", None)
            g.update(sample_no=no, driver_version=snap["driver"], cuda_version=snap["cuda"],
                     mig_mode=g.pop("_mig", None), _ts_utc=snap["marker_ts"], _ts_local=snap["local"])
            out.samples.append(g)
            key = g.get("pci_bus_id") or g["gpu"]
            if key not in seen:
                seen.add(key)
                out.gpus.append(g)
        out.processes.extend(snap["procs"])
    out.meta = {"variant": "smi-table", "snapshots": sum(1 for s in snaps if s["gpus"]), **out.meta}
    drivers = sorted({s["driver"] for s in snaps if s["driver"]})
    if drivers:
        out.meta["driver_version"] = drivers[0] if len(drivers) == 1 else drivers
    return out
