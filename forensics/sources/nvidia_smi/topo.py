"""`nvidia-smi topo -m`: the GPU/NIC connection matrix with CPU / NUMA affinity columns.

Header: device columns (GPU0.., NIC0.. with a "NIC Legend" in 525+ drivers, or mlx5_0.. named
directly by older drivers) then "CPU Affinity", "NUMA Affinity", "GPU NUMA ID" (which of these
appear depends on the driver). Cells are tab separated; NIC rows end in empty cells; an "N/A" in a
numeric column is preceded by an extra empty cell ("0-31\\t\\tN/A"), which is folded away. The
Legend block ("X = Self", "SYS = ...") is structure. On a terminal nvidia-smi underlines the header row
with ANSI escapes ("\\t\\x1b[4mGPU0\\tCPU Affinity ...\\x1b[0m", kept by `script` and capture tools);
SGR sequences are read as nothing. Each matrix yields gpu_topo rows (one per
device x peer, names resolved through the NIC legend) and gpus rows (gpu, cpu_affinity, numa_node).
"""
from __future__ import annotations

import re
from typing import Any

from forensics.layout import MARKER_PREFIX, parse_marker
from forensics.sources.nvidia_smi.common import Parts, is_na

AFFINITY = {"cpu affinity": "cpu_affinity", "numa affinity": "numa_node", "gpu numa id": "gpu_numa_id"}
_DEV = re.compile(r"^(?:GPU[0-9]{1,4}|NIC[0-9]{1,4}|[A-Za-z][A-Za-z0-9_]{0,30}[0-9])$")
_LINK = re.compile(r"^(?:X|NV[0-9]+|[A-Z]{2,5}[0-9]*)$")
_LEGEND_ITEM = re.compile(r"^\s+\S+\s*=\s*\S")
_NIC_ITEM = re.compile(r"^\s+(NIC[0-9]+)\s*:\s*(\S+)\s*$")
_NODES = re.compile(r"^[0-9]{1,4}(?:[-,][0-9]{1,4}){1,16}$")  # NUMA Affinity "0-3" (several nodes)
_PHRASES = re.compile(r"CPU Affinity|NUMA Affinity|GPU NUMA ID")
_SGR = re.compile(r"\x1b\[[0-9;]*m")  # ANSI select-graphic-rendition (underline, reset)


def _plain(line: str) -> str:
    """`line` without ANSI SGR escapes (nvidia-smi underlines the header row on a terminal)."""
    return _SGR.sub("", line) if "\x1b" in line else line


def _split(line: str) -> list[str]:
    """Cells of a matrix line: tab separated (empty cells kept); whitespace separated when no tab."""
    if "\t" in line:
        return [c.strip() for c in line.split("\t")]
    return [m.group(0) for m in re.finditer(r"CPU Affinity|NUMA Affinity|GPU NUMA ID|\S+", line)]


def header(line: str) -> list[str] | None:
    """Column names of a topo -m header line, or None."""
    line = _plain(line)
    if not re.match(r"^\s*GPU[0-9]+\b", line):
        return None
    toks = [t for t in _split(line) if t]
    seen_aff = False
    for t in toks:
        if t.lower() in AFFINITY:
            seen_aff = True
        elif seen_aff or not _DEV.match(t):
            return None
    return toks


def parse(texts: list[str], ctx) -> Parts:
    out = Parts()
    up = out.unparsed
    topo: list[dict[str, Any]] = []
    matrices = 0
    cols: list[str] | None = None
    ndev = 0
    rows: list[tuple[int, str, list[str], list[str]]] = []
    legend: dict[str, str] = {}
    in_legend = False
    prev_legend: str | None = None  # the last legend item line, for lines a narrow terminal wrapped
    seen_gpu: set[int] = set()

    def row_indent(line: str) -> int | None:
        """Matrix rows pasted indented (a Markdown code block): their indent, when it is the header's."""
        body = line.lstrip(" ")
        return len(line) - len(body) if hdr_indent is not None and len(line) - len(body) <= hdr_indent + 4 and \
            body[:1] != "" and (body.startswith(tuple(cols[:ndev])) if cols else False) else None
    hdr_indent: int | None = None

    def flush() -> None:
        nonlocal rows, legend
        if cols is None:
            return
        devs = cols[:ndev]
        aff_cols = [AFFINITY[c.lower()] for c in cols[ndev:]]
        for ln, raw, cells, aff in rows:
            dev = cells[0]
            rname = legend.get(dev, dev)
            for peer, link in zip(devs, cells[1:1 + ndev]):
                topo.append({"line_no": ln, "device": rname, "peer": legend.get(peer, peer), "link": link})
            if dev.startswith("GPU") and dev[3:].isdigit() and len(dev) <= 7:
                vals = dict(zip(aff_cols, aff))
                g = {"line_no": ln, "gpu": int(dev[3:])}
                cpu = vals.get("cpu_affinity")
                g["cpu_affinity"] = None if is_na(cpu) else cpu
                numa = vals.get("numa_node")
                g["numa_node"] = int(numa) if numa is not None and numa.isdigit() and len(numa) < 7 else None
                if g["gpu"] not in seen_gpu:
                    seen_gpu.add(g["gpu"])
                    out.gpus.append(g)
        rows, legend = [], {}

    for ln, raw in enumerate(texts, start=1):
        line = _plain(raw.rstrip("\n"))
        if not line.strip():
            continue
        if line.startswith(MARKER_PREFIX):
            flush()
            cols, in_legend = None, False
            if parse_marker(line) is None:
                up.append((ln, raw, "malformed forensics-sample marker line"))
            continue
        h = header(line)
        if h is not None:
            flush()
            cols = h
            hdr_indent = len(line) - len(line.lstrip(" "))
            ndev = sum(1 for c in h if c.lower() not in AFFINITY)
            matrices += 1
            in_legend = False
            continue
        if cols is not None and (not line[:1].isspace() or row_indent(line) is not None):
            cells = _split(line.lstrip(" ") if line[:1] == " " else line)
            if cells and cells[0] in cols[:ndev]:
                links = cells[1:1 + ndev]
                if len(links) < ndev or not all(_LINK.match(c) for c in links):
                    bad = next((c for c in links if not _LINK.match(c)), None)
                    what = f"a damaged cell {bad[:20]!r} among them" if bad is not None else f"only {len(links)}"
                    up.append((ln, raw, f"matrix row does not have {ndev} link cells (X, NV#, PIX, PXB, PHB, NODE, "
                                        f"SYS ...): {what} (cells cut or shifted when copied?)"))
                    continue
                aff = cells[1 + ndev:]
                n_aff = len(cols) - ndev
                if len(aff) > n_aff:  # "0-31\t\tN/A": an empty cell printed before N/A
                    for k in range(1, len(aff)):
                        if aff[k] == "N/A" and aff[k - 1] == "":
                            del aff[k - 1]
                            break
                aff = aff[:n_aff]
                numa_i = [AFFINITY[c.lower()] for c in cols[ndev:]].index("numa_node") if any(
                    c.lower() == "numa affinity" for c in cols[ndev:]) else None
                if cells[0].startswith("GPU") and numa_i is not None and numa_i < len(aff):
                    v = aff[numa_i]
                    if not (v == "" or is_na(v) or (v.isdigit() and len(v) < 7) or _NODES.match(v)):
                        up.append((ln, raw, f"NUMA Affinity is not a node number: {v[:40]!r}"))
                        continue
                rows.append((ln, raw, cells, aff))
                continue
        stripped = line.strip()
        if stripped in ("Legend:", "NIC Legend:"):
            in_legend = True
            continue
        if in_legend:
            m = _NIC_ITEM.match(line)
            if m:
                legend[m.group(1)] = m.group(2)
                prev_legend = None
                continue
            if _LEGEND_ITEM.match(line):
                prev_legend = raw
                continue
            if prev_legend is not None and len(prev_legend.rstrip()) >= 60 and "=" not in line and len(line) < 100:
                prev_legend = raw  # a legend line wrapped by a narrow terminal or mail client
                continue
        up.append((ln, raw, "not part of nvidia-smi topo -m output" if cols is None else "unrecognised line in topo -m output"))
    flush()
    out.meta = {"variant": "topo-m", "matrices": matrices}
    out.topo = topo
    return out
