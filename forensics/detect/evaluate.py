"""Score findings against a simulator's ground truth (truth/labels.json). Used by
benchmarks/detection_eval.py and the tests; never by detection itself.

A finding matches a truth entry (a fault or an effect) when the kinds are equal, they share a host,
the subjects agree where both name one (one contains the other's interface/GPU token), and their
windows overlap (with `slack_s` of tolerance for sampling and clock offsets).
"""
from __future__ import annotations

import datetime as dt
import re

_TOKEN = re.compile(r"(GPU\s?\d+|mlx5_\d+|[a-z]+\d+[a-z0-9]*|rank \d+|\d{4}:[0-9a-f]{2}:[0-9a-f]{2}\.\d)", re.I)


def _ts(v):
    if v is None or isinstance(v, dt.datetime):
        return v
    return dt.datetime.fromisoformat(str(v).replace("Z", "+00:00"))


def _tokens(s: str | None) -> set[str]:
    return {t.lower().replace(" ", "") for t in _TOKEN.findall(s or "")}


def matches(finding: dict, truth: dict, slack_s: float = 90.0) -> bool:
    if finding["kind"] != truth["kind"]:
        return False
    if truth.get("hosts") and not set(finding["hosts"] or []) & set(truth["hosts"]):
        return False
    ft, tt = _tokens(finding.get("subject")), _tokens(truth.get("subject"))
    if ft and tt and not ft & tt:
        return False
    fs, fe = _ts(finding.get("start")), _ts(finding.get("end"))
    ts, te = _ts(truth.get("start")), _ts(truth.get("end"))
    if fs is None or ts is None:
        return True  # configuration findings have no window
    slack = dt.timedelta(seconds=slack_s)
    if te is None:  # open-ended: the fault lasts until the end of the capture
        return (fe or fs) + slack >= ts
    return fs <= te + slack and (fe or fs) + slack >= ts


def score_bundle(findings: list[dict], labels: dict, min_severity: str = "warning") -> dict:
    from forensics.detect.catalog import severity_rank

    faults = labels.get("faults", [])
    effects = labels.get("effects", [])
    counted = [f for f in findings if severity_rank(f["severity"]) >= severity_rank(min_severity)]
    per_kind: dict[str, dict] = {}

    def k(kind):
        return per_kind.setdefault(kind, {"tp": 0, "fp": 0, "faults": 0, "found": 0})

    for f in counted:
        ok = any(matches(f, t) for t in faults + effects)
        k(f["kind"])["tp" if ok else "fp"] += 1
    for t in faults:
        k(t["kind"])["faults"] += 1
        if any(matches(f, t) for f in counted):
            k(t["kind"])["found"] += 1
    roots = [f for f in counted if not f.get("caused_by")]
    first_ok = bool(roots) and any(matches(roots[0], t) for t in faults) if faults else None
    false = [f for f in counted if not any(matches(f, t) for t in faults + effects)]
    return {"per_kind": per_kind, "root_first": first_ok, "false_findings": false}


def score_strict(findings: list[dict], labels: dict, slack_s: float = 60.0, min_severity: str = "warning") -> dict:
    """The outside evaluator's scoring (issue 16): a finding is true when it matches a fault or a
    labelled effect (kind, host, subject, window +-`slack_s`); one that matches neither but whose
    `caused_by` chain reaches a true finding is an explained consequence (neither true nor false);
    every other finding is false. Root cause first: the first root finding (no `caused_by`) matches
    a fault; with several parts in the scenario argument (``a+b``), the first as many roots match a
    fault of every part between them (a part labelled as two kinds, like the dataloader's disk and
    CPU, is one root cause: either kind found first is it)."""
    from forensics.detect.catalog import severity_rank

    # a fault the simulator marked unobservable (cut by another fault's crash to under two samples) is
    # no recall target: listed apart, and a finding of it still counts as true
    unobservable = [t for t in labels.get("faults", []) if t.get("unobservable")]
    faults = [t for t in labels.get("faults", []) if not t.get("unobservable")]
    effects = labels.get("effects", []) + unobservable
    counted = [f for f in findings if severity_rank(f["severity"]) >= severity_rank(min_severity)]
    by_id = {f["id"]: f for f in findings}
    true_ids = {f["id"] for f in counted if any(matches(f, t, slack_s) for t in faults + effects)}

    def explained(f) -> bool:
        seen = set()
        cur = f.get("caused_by")
        while cur and cur not in seen:
            seen.add(cur)
            if cur in true_ids:
                return True
            cur = (by_id.get(cur) or {}).get("caused_by")
        return False

    per_kind: dict[str, dict] = {}

    def k(kind):
        return per_kind.setdefault(kind, {"tp": 0, "fp": 0, "faults": 0, "found": 0})

    false, chained = [], []
    for f in counted:
        if f["id"] in true_ids:
            k(f["kind"])["tp"] += 1
        elif explained(f):
            chained.append(f)
        else:
            k(f["kind"])["fp"] += 1
            false.append(f)
    missed = []
    for t in faults:
        k(t["kind"])["faults"] += 1
        if any(matches(f, t, slack_s) for f in counted):
            k(t["kind"])["found"] += 1
        else:
            missed.append(t)
    roots = [f for f in counted if not f.get("caused_by")]
    first = None
    if faults:
        # one root cause per part of the scenario argument (``a+b``: two): a part recorded as several
        # faults (a starving dataloader saturates the disk and the CPU) is found when one of them is
        parts: dict = {}
        for i, t in enumerate(faults):
            parts.setdefault(t.get("part", f"fault {i}"), []).append(t)
        head = roots[:len(parts)]
        first = all(any(matches(f, t, slack_s) for f in head for t in ts) for ts in parts.values())
    critical = [f for f in findings if f["severity"] == "critical"]
    return {"per_kind": per_kind, "root_first": first, "false_findings": false, "explained": chained,
            "missed": missed, "critical": critical, "unobservable": unobservable}
