"""NCCL settings compared across hosts: which differ, and between which groups of hosts (what the
HTML report's NCCL section shows). Addresses and PXN proxy ranks are masked: each host has its own."""
from __future__ import annotations

import re

import polars as pl

from forensics.report import signals

# NCCL settings that legitimately differ per communicator or per rank: not "differences"
_NCCL_IDENTITY = {"comm_id"}
_IP = re.compile(r"\b(?:[0-9]{1,3}\.){3}[0-9]{1,3}\b|\b[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}\b")
# PXN channels name the proxy rank: "NET/IB/0(16)/GDRDMA" on one node is "NET/IB/0(24)/GDRDMA" on the next
_PXN_RANK = re.compile(r"\([0-9]+\)")
# settings whose values carry per-rank numbers that are not configuration
_RANKED_KEYS = {"channel_transport"}


def _norm(v: str, key: str = "") -> str:
    v = _IP.sub("<addr>", v or "")
    return _PXN_RANK.sub("(<rank>)", v) if key in _RANKED_KEYS else v


def nccl_differences(cfg: pl.DataFrame) -> tuple[list[dict], list[tuple[str, str]]]:
    """(differing, common): for each NCCL setting, hosts grouped by the set of values they logged
    (IP addresses and PXN proxy ranks masked: each host has its own). `differing` rows: {key, groups: [(values,
    hosts)]}, the largest group first; `common`: (key, value) the same on every host that logs it."""
    if cfg.height == 0:
        return [], []
    per = (cfg.filter(~pl.col("key").is_in(list(_NCCL_IDENTITY)))
              .group_by("key", "host").agg(pl.col("value").unique().sort()))
    all_hosts = set(cfg["host"].unique().to_list())
    differing, common = [], []
    for key, part in sorted(per.group_by("key"), key=lambda kv: kv[0][0]):
        key = key[0]
        groups: dict[tuple, list[str]] = {}
        shown: dict[tuple, list[str]] = {}
        for r in part.iter_rows(named=True):
            sig = tuple(sorted({_norm(v, key) for v in r["value"]}))
            groups.setdefault(sig, []).append(r["host"])
            shown.setdefault(sig, r["value"])
        missing = sorted(all_hosts - set(part["host"].to_list()))
        if len(groups) == 1 and not missing:
            sig = next(iter(groups))
            common.append((key, ", ".join(sig[:6]) + (f" (+{len(sig) - 6} more)" if len(sig) > 6 else "")))
            continue
        if len(groups) == 1 and len(part) == 1 and not key.startswith("env."):
            # logged by one host only (the NCCL version line of rank 0): not a difference; an
            # environment variable set on one host only is one
            common.append((key, ", ".join(next(iter(shown.values()))) + " (logged on one host)"))
            continue
        rows = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        differing.append({"key": key, "groups": [(list(shown[sig]), sorted(hs, key=signals._natural_key)) for sig, hs in rows],
                          "missing": missing})
    return differing, common
