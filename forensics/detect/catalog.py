"""What each finding kind means: its layer, how likely it is to be a root cause, what can cause it,
how to confirm it on the live cluster and what to do. Built from the detectors' own headers
(queries/detectors/*.sql and *.model, see :mod:`forensics.detect.rules`), never kept by hand; the
severities and layers are the enums of schemas/findings.json."""
from __future__ import annotations

from dataclasses import dataclass

from forensics import schema
from forensics.detect.rules import Cause, declarations


@dataclass(frozen=True)
class Kind:
    name: str
    layer: str
    root_rank: int  # lower = more likely to be the root cause when findings overlap in time
    confirm: str
    remediation: str
    caused_by: tuple[Cause, ...]  # the kinds that can cause it, and where the cause must be
    detectors: tuple[str, ...]  # the detector files (and the model) that report it


def _enum(column: str) -> tuple[str, ...]:
    col = next(c for c in schema.load("findings")["columns"] if c["name"] == column)
    return tuple(col["enum"])


SEVERITIES = _enum("severity")  # in increasing order
LAYERS = _enum("layer")
# how reports name each layer (a test checks there is one per layer of the enum)
LAYER_LABELS = {"storage": "storage", "host_cpu": "host CPU", "numa": "NUMA", "gpu": "GPU",
                "nic_fabric": "NIC/fabric", "nccl": "NCCL", "job": "job"}


def _build() -> dict[str, Kind]:
    decls = declarations()
    mains = {}
    for d in decls:
        if d.variant_of is None:
            if d.kind in mains:
                raise ValueError(f"kind {d.kind} is declared by both {mains[d.kind].path.name} and {d.path.name} "
                                 f"(the second should say '-- variant_of: {d.kind}')")
            mains[d.kind] = d
    kinds = {}
    for name, d in sorted(mains.items()):
        kinds[name] = Kind(name, d.layer, d.root_rank, d.confirm, d.remediation, d.caused_by,
                           tuple(x.name for x in decls if x.kind == name))
    for d in decls:
        if d.kind not in kinds:
            raise ValueError(f"{d.path.name}: variant of {d.kind}, which no detector declares")
    return kinds


KINDS: dict[str, Kind] = _build()


def severity_rank(s: str) -> int:
    return SEVERITIES.index(s) if s in SEVERITIES else 0
