"""Causal links need evidence: a time overlap, or for an untimed finding the same host."""
from __future__ import annotations

import datetime as dt

import polars as pl

from forensics import schema
from forensics.detect.causality import link_and_rank

T0 = dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.timezone.utc)


def _f(fid, kind, host, start=None, severity="critical"):
    end = start + dt.timedelta(seconds=60) if start else None
    return {"id": fid, "kind": kind, "severity": severity, "layer": "x", "start": start, "end": end, "hosts": [host],
            "subject": "s", "score": 0.8, "summary": fid, "evidence": "{}", "confirm": "", "remediation": "",
            "caused_by": None, "detector": kind}


def _links(rows):
    df = pl.DataFrame(rows, schema=schema.polars_schema("findings"))
    return {r["id"]: r["caused_by"] for r in link_and_rank(df).to_dicts()}


def test_timed_fault_on_another_host_causes_overlapping_nccl_errors():
    got = _links([_f("xid", "gpu_xid", "node01", T0), _f("nccl", "nccl_transport_error", "node02", T0 + dt.timedelta(seconds=30))])
    assert got["nccl"] == "xid"


def test_untimed_findings_link_only_on_their_own_host():
    # NCCL WARN lines without time stamps on node02 say nothing about a fault on node01 ...
    got = _links([_f("xid", "gpu_xid", "node01", T0), _f("nccl", "nccl_transport_error", "node02")])
    assert got["nccl"] is None
    # ... nor do a pasted counter snapshot's drops about a link flap elsewhere
    got = _links([_f("flap", "link_flap", "node01", T0), _f("drops", "packet_drops", "node03", None, "warning")])
    assert got["drops"] is None
    # on the same host time cannot rule the link out
    got = _links([_f("xid", "gpu_xid", "node02", T0), _f("nccl", "nccl_transport_error", "node02")])
    assert got["nccl"] == "xid"


def test_timed_but_far_apart_is_no_cause():
    got = _links([_f("xid", "gpu_xid", "node01", T0), _f("nccl", "nccl_transport_error", "node02", T0 + dt.timedelta(hours=3))])
    assert got["nccl"] is None
