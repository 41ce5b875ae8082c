"""The field list of a `--query-gpu ... --format=csv,noheader[,nounits]` capture, recognised by shape.

Without a header the fields must come from somewhere. The user may state them (``--fields``, the
``query_fields`` hint; that always wins), otherwise they are recognised here, or not at all:

* a column whose every value has a shape only one field prints is that field: a nvidia-smi
  timestamp (``2025/03/18 19:59:42.940``) is ``timestamp``, a PCI bus id ``pci.bus_id``, ``GPU-...``
  ``uuid``, ``P0`` ``pstate``, a dotted driver version (``555.42.06``) ``driver_version``, a product
  name (``NVIDIA A100-SXM4-40GB``, ``Tesla V100...``) ``name``;
* the other columns (``100 %``, ``40960 MiB``, ``70.44 W``, ``1980 MHz``, bare numbers) could be one of
  several fields each (``%`` is utilization.gpu, utilization.memory or fan.speed), so they are taken
  only when they match, in order and shape, the rest of one of the field lists in ``CATALOGUE``:
  lists seen in real captures and scripts (provenance beside each). When two lists fit with different
  fields, or none fits, the capture is reported as not recognised, with the shapes that were seen.

``index`` must look like one: integers from 0, no gaps (a temperature column of 40-odd does not);
``memory.total`` must be at least ``memory.used``/``free`` on every row (so the lists that differ only in
their order, ``used,total`` and ``total,used``, are told apart by the values, or not at all).
Rows of bare numbers (``nounits`` without units anywhere, ``0, 100``) fit too many lists: not recognised.
"""
from __future__ import annotations

import re

from forensics.sources._bounded import float_or_none

# Field lists seen in real noheader captures (canonical names: aliases folded as query_csv.canonical does).
CATALOGUE: tuple[tuple[str, ...], ...] = (
    # NVIDIA's documented example query, used as-is by HPC job scripts (NormanTUD/OmniOpt gpu_usage_*.csv)
    ("timestamp", "name", "pci.bus_id", "driver_version", "pstate", "pcie.link.gen.max", "pcie.link.gen.current",
     "temperature.gpu", "utilization.gpu", "utilization.memory", "memory.total", "memory.free", "memory.used"),
    # the one-liner of engineers watching utilisation pulse (../shared/seeds 004); with timestamp first too
    ("index", "utilization.gpu"),
    # GPU-to-NIC mapping notes (`--query-gpu=index,pci.bus_id --format=csv,noheader`, 8x GPU node)
    ("index", "pci.bus_id"),
    # gpustack worker detector docstring (`--query-gpu=index,name,memory.total,memory.used,utilization.gpu,
    # temperature.gpu --format=csv,noheader`, 2x RTX 4080 SUPER)
    ("index", "name", "memory.total", "memory.used", "utilization.gpu", "temperature.gpu"),
    # a training log's GPU check (`--query-gpu=memory.used,utilization.gpu,temperature.gpu --format=csv,noheader`)
    ("memory.used", "utilization.gpu", "temperature.gpu"),
    # anderskm/gputil (GPUtil.getGPUs, `--format=csv,noheader,nounits`)
    ("index", "uuid", "utilization.gpu", "memory.total", "memory.used", "memory.free", "driver_version", "name",
     "serial", "display_active", "display_mode", "temperature.gpu"),
    # pmav99/nvsmi issue #4 (GPUtil's list plus power)
    ("index", "uuid", "utilization.gpu", "memory.total", "memory.used", "memory.free", "driver_version", "name",
     "serial", "display_active", "display_mode", "temperature.gpu", "power.draw", "enforced.power.limit"),
    # ethereum-mining/ethminer issue #251 (monitoring suggestion)
    ("timestamp", "index", "pci.bus_id", "name", "pstate", "power.limit", "power.draw", "temperature.gpu",
     "fan.speed", "clocks.gr", "clocks.mem"),
    # aristocratos/bpytop issue #26
    ("name", "fan.speed", "memory.total", "memory.used", "utilization.gpu", "temperature.gpu", "power.draw",
     "clocks.gr", "clocks.mem"),
    # Quake4/MindMiner issue #627
    ("name", "utilization.gpu", "utilization.memory", "temperature.gpu", "power.draw", "power.limit", "fan.speed",
     "clocks.gr", "clocks.mem", "power.default_limit"),
    # GPU checks pasted in project notes (tests/fixtures/nvidia_smi: csv-noheader-index-*-{4,8}gpu):
    # a vLLM deadlock note, a training host's "GPU" section, an experiment's A100 inventory
    ("index", "memory.used", "utilization.gpu"),
    ("index", "memory.used", "memory.total", "utilization.gpu"),
    ("index", "name", "memory.total", "memory.used", "utilization.gpu"),
    # prasanthrangan/hyprdots issue #388 (gpuinfo.sh, `--format=csv,noheader,nounits`)
    ("temperature.gpu", "utilization.gpu", "clocks.gr", "clocks.max.gr", "power.draw", "power.max_limit"),
)

_NUM = r"-?[0-9]+(?:\.[0-9]+)?"
# value class -> pattern; a value is of every class whose pattern it matches
CLASSES: dict[str, re.Pattern] = {
    "ts": re.compile(r"^[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?$"),
    "pci": re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$"),
    "uuid": re.compile(r"^(?:GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$"),
    "pstate": re.compile(r"^P[0-9]{1,2}$"),
    "driver": re.compile(r"^[1-9][0-9]{2}\.[0-9]{1,3}\.[0-9]{1,3}$"),  # 555.42.06 (398.82 could be a power)
    "driver2": re.compile(r"^[1-9][0-9]{2}\.[0-9]{2}$"),
    "name": re.compile(r"^(?:NVIDIA|Tesla|GeForce|Quadro|TITAN|Titan|GRID|RTX|GH|GB)\b.*$"),
    "pct": re.compile(rf"^{_NUM} %$"),
    "mib": re.compile(rf"^{_NUM} MiB$"),
    "w": re.compile(rf"^{_NUM} W$"),
    "mhz": re.compile(rf"^{_NUM} MHz$"),
    "int": re.compile(r"^[0-9]+$"),
    "float": re.compile(rf"^{_NUM}$"),
    "hex": re.compile(r"^0x[0-9a-fA-F]+$"),
    "flag": re.compile(r"^(?:Active|Not Active)$"),
    "state": re.compile(r"^(?:Enabled|Disabled|Yes|No|Default|Exclusive_Process|Prohibited)$"),
    "text": re.compile(r"^.*[A-Za-z].*$"),
}
# classes whose values only one field prints -> that field
SELF = {"ts": "timestamp", "pci": "pci.bus_id", "uuid": "uuid", "pstate": "pstate", "driver": "driver_version",
        "name": "name"}
SELF_FIELDS = frozenset(SELF.values())
# classes a unit-bearing or numeric field accepts (units or nounits)
_UNIT = {"%": ("pct", "int", "float"), "MiB": ("mib", "int", "float"), "W": ("w", "float", "int"),
         "MHz": ("mhz", "int", "float")}
# nvidia-smi's own shapes: a capture with one of these is nvidia-smi's, even when its fields stay unknown
DISTINCT = ("ts", "pci", "uuid", "pstate", "driver", "name", "pct", "mib", "w", "mhz")
_NA = {"N/A", "[N/A]", "[Not Supported]", "Not Supported", "[Unknown Error]", "Unknown Error", ""}


def field_classes(field: str) -> tuple[str, ...]:
    """Value classes a field prints."""
    if field in ("index", "count", "serial") or field.startswith(("temperature.", "pcie.link.", "ecc.errors.",
                                                                   "retired_pages.", "remapped_rows.")):
        if field.endswith((".pending", ".failure")):
            return ("state",)
        return ("int",)
    if field.startswith(("utilization.", "fan.")):
        return _UNIT["%"]
    if field.startswith("memory."):
        return _UNIT["MiB"]
    if "power" in field and "management" not in field:
        return _UNIT["W"]
    if field.startswith("clocks.") or field.startswith("clocks_"):
        if field.endswith(".active"):
            return ("hex",)
        if field.startswith("clocks_event_reasons."):
            return ("flag",)
        return _UNIT["MHz"]
    if field in ("display_active", "display_mode", "persistence_mode", "compute_mode"):
        return ("state",)
    if field == "driver_version":
        return ("driver", "driver2")
    if field == "name":
        return ("name", "text")
    for cls, f in SELF.items():
        if f == field:
            return (cls,)
    return ("text", "int", "float")


def _classes(value: str) -> set[str]:
    return {c for c, rx in CLASSES.items() if rx.match(value)}


def _plausible(field: str, values: list[str]) -> bool:
    """Values a field can really take: index 0..n without gaps, percentages up to 100."""
    nums = [x for v in values if re.match(_NUM, v) and (x := float_or_none(re.match(_NUM, v).group(0))) is not None]
    if field == "index":
        ints = sorted({int(x) for x in nums})
        return bool(ints) and ints == list(range(len(ints)))
    if field.startswith(("utilization.", "fan.")):
        return all(0 <= x <= 100 for x in nums)
    if field.startswith("temperature."):
        return all(0 <= x <= 150 for x in nums)
    return True


def columns(rows: list[str]) -> list[list[str]] | None:
    """The rows' cells by column (values stripped), or None when the rows differ in field count."""
    cells = [[c.strip() for c in r.split(",")] for r in rows if r.strip()]
    if not cells or len({len(c) for c in cells}) != 1:
        return None
    return [list(col) for col in zip(*cells)]


def _column_class(col: list[str]) -> set[str]:
    """Classes every (available) value of a column belongs to."""
    vals = [v for v in col if v not in _NA]
    if not vals:
        return {"na"}
    common = _classes(vals[0])
    for v in vals[1:]:
        common &= _classes(v)
        if not common:
            break
    return common


def _fits(field: str, col: list[str], cls: set[str]) -> bool:
    return ("na" in cls or bool(cls & set(field_classes(field)))) and _plausible(field, [v for v in col if v not in _NA])


def _consistent(fields: dict[str, list[str]]) -> bool:
    """Relations between fields a list names: memory.total is at least memory.used / free / reserved."""
    total = fields.get("memory.total")
    if total is None:
        return True
    tot = [_number(v) for v in total]
    for other in ("memory.used", "memory.free", "memory.reserved"):
        for t, v in zip(tot, fields.get(other, ())):
            x = _number(v)
            if t is not None and x is not None and x > t:
                return False
    return True


def _number(v: str) -> float | None:
    m = re.match(_NUM, v)
    return float_or_none(m.group(0)) if m else None  # (past a double's range: none, not inf)


def infer(rows: list[str]) -> tuple[tuple[str, ...] | None, str]:
    """(field list, "") when the rows' shapes name their fields, else (None, why not)."""
    cols = columns(rows[:50])
    if cols is None:
        return None, "rows with different numbers of fields"
    if len(cols) < 2:
        return None, "a single column"
    cls = [_column_class(c) for c in cols]
    if not any(c & set(DISTINCT) for c in cls):
        return None, "only bare numbers or words, which many field lists print"
    fields: list[str | None] = [None] * len(cols)
    for i, c in enumerate(cls):
        own = [SELF[k] for k in SELF if k in c]
        if len(own) == 1 and not (c & {"pct", "mib", "w", "mhz"}):
            fields[i] = own[0]
    named = [f for f in fields if f]
    if len(named) != len(set(named)):
        return None, "two columns of the same shape (" + ", ".join(sorted({f for f in named if named.count(f) > 1})) + ")"
    rest = [i for i, f in enumerate(fields) if f is None]
    fits: set[tuple[str, ...]] = set()
    for lst in CATALOGUE:
        tail = [f for f in lst if f not in named]
        if len(tail) != len(rest):
            continue
        if all(_fits(f, cols[i], cls[i]) for f, i in zip(tail, rest)) and \
                _consistent({f: cols[i] for f, i in zip(tail, rest)}):
            fits.add(tuple(tail))
    if len(fits) == 1:
        tail = next(iter(fits))
        for f, i in zip(tail, rest):
            fields[i] = f
        return tuple(fields), ""  # type: ignore[arg-type]
    shapes = ", ".join("/".join(sorted(c - {"text", "float"} or c)) for c in (cls[i] for i in rest))
    if fits:
        alts = " or ".join(",".join(t) for t in sorted(fits))
        return None, f"field list ambiguous: columns shaped {shapes} could be {alts}"
    return None, f"no known field list has columns shaped {shapes}" if rest else "field list not recognised"


def looks_like(rows: list[str]) -> bool:
    """True when rows are consistent CSV with at least one column of a shape only nvidia-smi prints."""
    cols = columns(rows[:50])
    if cols is None or len(cols) < 2 or len(rows) < 1:
        return False
    return any(_column_class(c) & set(DISTINCT) for c in cols)
