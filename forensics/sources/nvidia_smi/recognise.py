"""Which of the six nvidia-smi outputs an input is (-q text, -q -x XML, --query-gpu CSV, topo -m, nvlink -gt,
the plain table).

The first decisive line decides; ``strict`` (sniffing a head of unknown origin) asks for more
evidence than parsing a file already given to this source.
"""
from __future__ import annotations

import re

from forensics.layout import MARKER_PREFIX
from forensics.sources._base import ParseContext, Sniff
from forensics.sources.nvidia_smi import compute_apps, csv_shapes, dmon, listing, nvlink, q_text, query_csv, table, topo

_BANNER = re.compile(r"^`?=+\s*NVSMI LOG\s*=+`?\s*$")
_GPU = re.compile(r"^GPU [0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]\s*$")
_KV_INDENTED = re.compile(r"^ {4}\S.* : ?")
_SECTION = re.compile(r"^ {4}[A-Z][A-Za-z0-9 ]*[A-Za-z]\s*$")
_KV_GPU = re.compile(r"^( {4}|)([A-Za-z][A-Za-z0-9 ./()-]*?[A-Za-z0-9)]) +: ")
_KV_DEEPER = re.compile(r"^ {8,}\S.*\S +: ?")
_XML = ("<?xml", "<nvidia_smi_log", "<!DOCTYPE nvidia_smi_log")
_STRONG_CSV = {"timestamp", "index", "uuid", "pci.bus_id", "pstate", "driver_version", "vbios_version"}


def _record_starts(texts: list[str], i: int) -> bool:
    """Line `i` and the next lines are "Key : value" lines of a GPU record's own level (at indent 4, or at 0
    where the paste lost its indent): three GPU_KEYS of the first six, one of them a GPU_KEYS_STRONG."""
    m = _KV_GPU.match(texts[i])
    if not m or m.group(2).lower() not in q_text.GPU_KEYS:
        return False
    ind = m.group(1)
    keys = []
    for x in texts[i:i + 12]:
        k = _KV_GPU.match(x)
        if k and k.group(1) == ind:
            keys.append(k.group(2).lower())
        if len(keys) == 6:
            break
    known = [k for k in keys if k in q_text.GPU_KEYS]
    return len(set(known)) >= 3 and any(k in q_text.GPU_KEYS_STRONG for k in known)


def _strong_header(fields: list[str]) -> bool:
    """A header this specific to nvidia-smi: a known dotted field, or two identity fields and nothing unknown."""
    known = [f in query_csv.SPECS or f in query_csv.OTHER_FIELDS for f in fields]
    if any(k and "." in f for f, k in zip(fields, known)):
        return True
    return all(known) and len(_STRONG_CSV & set(fields)) >= 2


def variant(texts: list[str], ctx: ParseContext | None, strict: bool = False) -> str | None:
    """'text' | 'xml' | 'csv' | 'csv-aligned' | 'topo' | 'nvlink' | 'table' | 'list' | 'dmon' from the first decisive line, or None."""
    return classify(texts, ctx, strict)[0]


def classify(texts: list[str], ctx: ParseContext | None, strict: bool = False) -> tuple[str | None, Sniff]:
    """(variant or None, how sure and why): the first decisive line decides; ``nvidia-smi -L`` lines decide only
    where no other output of the tool follows them (``-L`` pasted above the table is the table's paste)."""
    rows: list[str] = []
    seen = 0
    listed: int | None = None  # the first line of an nvidia-smi -L block
    for i, t in enumerate(texts):
        s = t.strip()
        if not s or t.startswith(MARKER_PREFIX):
            continue
        seen += 1
        if seen > 400:
            break
        if s.startswith(_XML):
            return "xml", Sniff(0.99, f"line {i + 1} opens an nvidia-smi -q -x XML document")
        if _BANNER.match(t):
            return "text", Sniff(0.99, f"line {i + 1} is the NVSMI LOG banner of nvidia-smi -q")
        if s[0] == "|":
            if table.banner(s) or table.gpu_header(s):
                return "table", Sniff(0.99, f"line {i + 1} is the NVIDIA-SMI banner or GPU header of the nvidia-smi table")
            if table.process_title(s) and any("Process name" in x for x in texts[i + 1:i + 3]):
                return "table", Sniff(0.9, f"line {i + 1} opens the Processes block of the nvidia-smi table")
        if nvlink.starts_here(texts, i, strict):
            return "nvlink", Sniff(0.95, f"line {i + 1} is a 'GPU n: ... (UUID: ...)' line followed by NVLink counters")
        if (s[0] == "#" or s[:2] == "\\#") and dmon.starts_here(texts, i):
            return "dmon", Sniff(0.95, f"line {i + 1} is the '# gpu ...' header of nvidia-smi dmon, its units line below")
        if listing.starts_here(texts, i):
            listed = i if listed is None else listed
            continue
        if _GPU.match(t):
            nxt = next((x for x in texts[i + 1:i + 4] if x.strip()), "")
            if not strict or _KV_INDENTED.match(nxt):
                return "text", Sniff(0.9, f"line {i + 1} opens a GPU section of nvidia-smi -q (no banner)")
        if _SECTION.match(t) and t.strip().lower() in q_text.SECTIONS:
            nxt = next((x for x in texts[i + 1:i + 4] if x.strip()), "")
            if _KV_DEEPER.match(nxt):
                return "text", Sniff(0.7, f"line {i + 1} opens a '{t.strip()}' block of nvidia-smi -q (no GPU line)")
        if _record_starts(texts, i):
            return "text", Sniff(0.75, f"line {i + 1} is a GPU's own line of nvidia-smi -q, with more below it "
                                       "(a paste that starts inside a GPU record: no banner, no GPU line)")
        h = topo.header(t)
        if h is not None:
            if not strict or any(x.lstrip(" ").startswith(h[0]) and x.lstrip(" ")[len(h[0]):len(h[0]) + 1] in ("\t", " ")
                                 for x in texts[i + 1:i + 4]):
                return "topo", Sniff(0.95, f"line {i + 1} is the header of an nvidia-smi topo -m matrix")
        c, end = None, i
        if "--query-" in s:
            whole, end = query_csv.continued(texts, i) if s.endswith("\\") else (s, i)
            c = query_csv.command_fields(whole)
        if c is not None:
            nxt = next((x for x in texts[end + 1:end + 4] if x.strip() and not re.match(query_csv.CAPTION_RE, x)), "")
            if nxt.count(",") == len(c[1]) - 1:
                return "csv", Sniff(0.9, f"line {i + 1} is an nvidia-smi --query-{c[0]} command with --format=csv,noheader "
                                         f"whose {len(c[1])} fields the rows below have")
        a = query_csv.aligned_header(t) if "  " in s and "," not in s else None
        if a is not None and (not strict or _strong_header(a)):
            nxt = next((x for x in texts[i + 1:i + 4] if x.strip()), "")
            if "," not in nxt and len(query_csv.aligned_cells(nxt)) == len(a):
                return "csv-aligned", Sniff(0.9, f"line {i + 1} is a --query-gpu CSV header re-aligned by column -t "
                                                 "(cells apart by spaces)")
        f = query_csv.header_fields(t)
        if f is not None and (not strict or _strong_header(f)):
            return "csv", Sniff(0.95, f"line {i + 1} is a --query-gpu CSV header")
        if compute_apps.header_fields(t) is not None:
            return "csv", Sniff(0.95, f"line {i + 1} is a --query-compute-apps CSV header")
        rows.append(t)
    if listed is not None:
        return "list", Sniff(0.9, f"line {listed + 1} is a 'GPU n: name (UUID: GPU-...)' line of nvidia-smi -L")
    if ctx is not None and (ctx.hints or {}).get("query_fields"):
        return "csv", Sniff(0.9, "--query-gpu CSV rows, fields as stated")
    rows = [r for r in rows if not re.search(query_csv.PROMPT_RE, r)]
    if not rows:
        return None, Sniff(0.0, "no nvidia-smi -q, -q -x, --query-gpu CSV, topo -m or nvlink line")
    fields, why = csv_shapes.infer(rows)
    if fields is not None:
        return "csv", Sniff(0.85, f"{len(rows)} CSV rows shaped like --query-gpu={','.join(fields)}")
    if csv_shapes.looks_like(rows):
        return "csv", Sniff(0.6, f"CSV rows with nvidia-smi value shapes, {why}: state --fields")
    if csv_shapes.columns(rows[:50]) is not None:  # consistent CSV, but nothing says it is nvidia-smi's
        return None, Sniff(0.0, f"CSV rows without header: {why} (state --fields if they are nvidia-smi --query-gpu)")
    return None, Sniff(0.0, "no nvidia-smi -q, -q -x, --query-gpu CSV, topo -m or nvlink line")
