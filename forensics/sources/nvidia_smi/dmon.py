"""``nvidia-smi dmon [-s pucvmet] [-d N] [-c N]``: one line per GPU and monitoring cycle under two ``#`` header lines.

Layout, as printed by the drivers seen (367 ... 550)::

    # gpu   pwr  gtemp  mtemp    sm   mem   enc   dec   jpg   ofa  mclk  pclk
    # Idx     W      C      C     %     %     %     %     %     %   MHz   MHz
        0   165     44     41    18     6     0     0     0     0  2619  1410

(older drivers print ``temp`` for ``gtemp`` and no ``mtemp``/``jpg``/``ofa``; ``-s`` chooses the column groups;
the two header lines come again every screenful). A metric the device does not report is ``-``. A Markdown paste
may escape the ``#`` as ``\\#``. Each row is one gpu_samples row: ``pwr`` -> power_w, ``gtemp``/``temp`` -> temp_c,
``mtemp`` -> mem_temp_c, ``sm`` -> util_pct, ``mem`` -> mem_util_pct (memory controller busy %), ``mclk`` ->
mem_clock_mhz, ``pclk`` -> gr_clock_mhz (processor clock), ``fb`` -> mem_used_mib (MB used), ``rxpci``/``txpci``
(MB/s) -> pcie_rx_kb_s/pcie_tx_kb_s (x 1024), ``sbecc``/``dbecc`` -> ecc_sbe_aggregate/ecc_dbe_aggregate (the man
page: "aggregated single bit, double bit ecc errors"). Other columns (enc, dec, jpg, ofa, bar1, pviol, tviol, pci,
ccpm) have no gpu_samples column and are left out. A cycle (``sample_no``) ends where a GPU index comes again;
dmon prints no time: ts is the capture time for the first cycle where known, else null.
"""
from __future__ import annotations

import re

from forensics.layout import MARKER_PREFIX
from forensics.sources.nvidia_smi.common import Parts

_HEAD = re.compile(r"^\\?# ?gpu( +[a-z0-9]{2,6}){2,30} *$")
_UNITS = re.compile(r"^\\?# ?Idx( +[A-Za-z%/]{1,6}){2,30} *$")
_SCALE = {"rxpci": 1024.0, "txpci": 1024.0}
COLUMNS = {"pwr": "power_w", "gtemp": "temp_c", "temp": "temp_c", "mtemp": "mem_temp_c", "sm": "util_pct",
           "mem": "mem_util_pct", "mclk": "mem_clock_mhz", "pclk": "gr_clock_mhz", "fb": "mem_used_mib",
           "rxpci": "pcie_rx_kb_s", "txpci": "pcie_tx_kb_s", "sbecc": "ecc_sbe_aggregate",
           "dbecc": "ecc_dbe_aggregate"}
_INTS = {"ecc_sbe_aggregate", "ecc_dbe_aggregate"}
_NUM = re.compile(r"^[0-9]{1,12}(?:\.[0-9]{1,6})?$")


def header(line: str) -> list[str] | None:
    """The column names of a dmon header line (``# gpu pwr ...``, ``\\#`` escaped too), or None."""
    if len(line) > 400 or not _HEAD.match(line.strip()):
        return None
    return line.strip().lstrip("\\").lstrip("#").split()


def starts_here(texts: list[str], i: int) -> bool:
    """texts[i] is a dmon header line and a units line (``# Idx W C ...``) follows it."""
    if header(texts[i]) is None:
        return False
    nxt = next((x for x in texts[i + 1:i + 3] if x.strip()), "")
    return len(nxt) <= 400 and bool(_UNITS.match(nxt.strip()))


def parse(texts: list[str], ctx) -> Parts:
    out = Parts()
    cols: list[str] | None = None
    sample, seen = 0, set()
    for ln, line in enumerate(texts, start=1):
        s = line.strip()
        if not s or line.startswith(MARKER_PREFIX):
            continue
        h = header(line)
        if h is not None:
            cols = h
            continue
        if len(s) <= 400 and _UNITS.match(s):
            continue
        toks = s.split() if len(s) <= 400 else []
        if cols is None or len(toks) != len(cols) or not toks[0].isdigit() or len(toks[0]) > 4:
            why = ("line before the dmon header (# gpu ...)" if cols is None else
                   f"not a dmon row of the {len(cols)} columns of its header")
            out.unparsed.append((ln, line, why))
            continue
        row: dict = {"line_no": ln}
        bad = False
        for name, tok in zip(cols[1:], toks[1:]):
            col = COLUMNS.get(name)
            if tok == "-":
                continue
            if not _NUM.match(tok):
                bad = True
                break
            if col is None:
                continue
            v = float(tok) * _SCALE.get(name, 1.0)
            row[col] = int(v) if col in _INTS else v
        if bad:
            out.unparsed.append((ln, line, "a dmon value is neither a number nor '-'"))
            continue
        gpu = int(toks[0])
        if gpu in seen:
            sample, seen = sample + 1, set()
        seen.add(gpu)
        row.update(sample_no=sample, gpu=gpu)
        out.samples.append(row)
    out.meta = {"variant": "dmon", "cycles": sample + 1 if out.samples else 0}
    return out
