"""Link consequences to their causes and rank findings, most likely root cause first.

A finding of a consequence kind (NCCL transport errors, timeouts, busy-but-slow GPUs, stragglers,
anomalies, follow-on Xids) whose window overlaps, or starts shortly after, a finding of a cause kind
gets `caused_by` = that cause's id ("NCCL errors on nodes 2-8 follow the PFC storm on node 5 port
mlx5_2"). Among several candidates the most root-like kind (catalog root_rank) wins, then the earliest.
A finding without a time (untimed NCCL lines, a pasted counter snapshot) is linked only to causes on
one of its own hosts: nothing but time could tie it to another host's fault.
"""
from __future__ import annotations

import datetime as dt
import json

import polars as pl

from forensics.detect.catalog import KINDS, severity_rank
from forensics.detect.rules import Cause

# consequence kind -> its possible causes (kind, scope), from the detectors' `-- caused_by:` headers.
# pfc_storm@path (a port receiving the pauses another port sends) is linked by _spread_storms.
CAUSES: dict[str, tuple[Cause, ...]] = {k.name: k.caused_by for k in KINDS.values() if k.caused_by}
BEFORE = dt.timedelta(minutes=10)  # a cause may start this long before its consequence


def _overlaps(cause: dict, effect: dict) -> bool:
    cs, ce, es, ee = cause["start"], cause["end"], effect["start"], effect["end"]
    if cs is None or es is None:
        # one side has no time (configuration, untimed log lines, a pasted counter snapshot): time
        # cannot rule it out on the same host, but nothing links it to another host's fault
        return bool(set(cause["hosts"] or []) & set(effect["hosts"] or []))
    ce = ce or cs
    ee = ee or es
    return cs <= ee and ce + BEFORE >= es


def _directions(f: dict) -> set[str]:
    try:
        return set(json.loads(f["evidence"] or "{}").get("directions") or [])
    except (ValueError, AttributeError):
        return set()


def _spread_storms(rows: list[dict]) -> None:
    """A port that only receives pauses while another port sends them is a victim of that storm."""
    storms = [r for r in rows if r["kind"] == "pfc_storm"]
    senders = [r for r in storms if "tx" in _directions(r)]
    for r in storms:
        if r["caused_by"] or "tx" in _directions(r):
            continue
        cands = [c for c in senders if c is not r and not set(c["hosts"]) & set(r["hosts"]) and _overlaps(c, r)]
        if cands:
            r["caused_by"] = min(cands, key=lambda c: c["start"] or dt.datetime.max.replace(tzinfo=dt.timezone.utc))["id"]


def link_and_rank(findings: pl.DataFrame) -> pl.DataFrame:
    if findings.height == 0:
        return findings
    rows = findings.to_dicts()
    _spread_storms(rows)
    for r in rows:
        if r["caused_by"]:
            continue
        scopes = {c.kind: c.scope for c in CAUSES.get(r["kind"], ()) if not (c.kind == r["kind"] == "pfc_storm")}
        if not scopes:
            continue
        best = None
        for c in rows:
            if c is r or c["kind"] not in scopes or c["caused_by"] == r["id"]:
                continue
            if c["kind"] == r["kind"] and not (c["start"] and r["start"] and c["start"] < r["start"]):
                continue  # a follow-on needs an earlier finding of its own kind
            if scopes[c["kind"]] == "host" and not set(c["hosts"]) & set(r["hosts"]):
                continue
            if c["kind"] in ("nccl_misconfig",):
                pass  # configuration holds for the whole window: no time condition
            elif not _overlaps(c, r):
                continue
            key = (KINDS[c["kind"]].root_rank, c["start"] or dt.datetime.max.replace(tzinfo=dt.timezone.utc))
            if best is None or key < best[0]:
                best = (key, c)
        if best is not None:
            r["caused_by"] = best[1]["id"]
    far = dt.datetime.max.replace(tzinfo=dt.timezone.utc)

    def order(r):
        return (
            r["caused_by"] is not None,
            -severity_rank(r["severity"]),
            KINDS[r["kind"]].root_rank,
            -(r["score"] or 0.0),
            r["start"] or far,
            r["id"],
        )

    rows.sort(key=order)
    return pl.DataFrame(rows, schema=findings.schema)
