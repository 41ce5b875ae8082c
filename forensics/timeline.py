"""One timeline for all hosts: per-host clock offsets and the placement of unstamped lines.

Every parsed timestamp is already UTC as the host's clock saw it (``ts`` + ``ts_quality``). Hosts'
clocks disagree, so this module estimates, per host, ``clock_offset_s`` = host clock minus the
reference clock (subtract it to align: ``ts_aligned = ts - clock_offset_s``) and a confidence.

Anchors (moments that happen at once on many hosts, each seen through that host's clock):

- ``nccl_init``: the same NCCL communicator (``commId``/``commHash``) reaching ``Init COMPLETE``
  on its ranks (NCCL lines that carry their own timestamp: ts_quality exact/local);
- ``nccl_timeout``: the same collective (OpType + SeqNum) timing out in the PyTorch watchdog; the
  anchor is the collective's start, ``ts - ran_ms`` ("ran for N milliseconds before timing out"),
  which is shared by the ranks that entered it together, whereas the timeout moments are not;
- ``link_down``: a link going down seen by both ends (kernel ``Link down`` messages on two or
  more hosts within a few seconds of each other, one per host).

Per (host, anchor) the ranks' times are reduced to their median (a host whose ranks disagree by
more than a few seconds about one anchor drops that anchor). A reference host is chosen (the one
with most anchors), every host sharing anchors with it gets the robust centre of the pairwise
differences, hosts sharing anchors only with other estimated hosts are chained through them, and
then the estimate is refined against the per-anchor consensus. The robust centre is the mean of
the differences within a tolerance of their median (the median alone is biased when timestamps are
truncated to whole seconds, as NCCL's default ``[%F %T]`` stamp is). Offsets are finally shifted so
that hosts with a chrony/NTP offset (host.json ``clock.ntp_offset_s``, host clock minus NTP time)
agree with it in the median, or else so that the median host is 0 ("most clocks are right").

A host whose NTP offset agrees with its anchor estimate (within :data:`NTP_AGREE_S`) takes the NTP
value (chrony measures its own clock to a millisecond or better; anchors carry the ranks' jitter)
with confidence ``high``; when they disagree the anchors win (the log times are what must line
up) and the method says so. Hosts without any anchor get their NTP offset when known (confidence
``medium``) and otherwise ``clock_offset_s`` NULL with confidence ``unknown`` (aligned time then
equals the host's own).

Unstamped NCCL lines (INFO lines when only WARN lines are stamped) are placed by the ``nccl_log``
view (``queries/views/30_nccl_log.sql``) between their stamped neighbours of the same host and
file, linearly by line number, with ``ts_quality = 'interpolated'``; lines with a stamped neighbour
on one side only stay without time (``none``), since the one neighbour may be hours away.
"""
from __future__ import annotations

import math
import statistics
from collections import defaultdict

import duckdb
import polars as pl

#: how much one host's ranks may disagree about one anchor before it is dropped (s)
SPREAD_MAX_S = 5.0
#: window in which link-down messages on different hosts are taken as the same event (s)
LINK_WINDOW_S = 4.0
#: an NTP offset this close to the anchor estimate confirms it (s)
NTP_AGREE_S = 0.1
#: anchor kinds and their weight in the confidence
KINDS = ("nccl_init", "nccl_timeout", "link_down")

CLOCK_SCHEMA = {
    "host": pl.String,
    "clock_offset_s": pl.Float64,
    "clock_offset_confidence": pl.String,
    "clock_offset_method": pl.String,
    "clock_anchors": pl.Int64,
}

_ANCHOR_SQL = """
SELECT host, 'nccl_init' AS kind, 'init:' || comm_id || coalesce(':' || nranks, '') AS key,
       epoch_us(ts) / 1e6 AS t, ts_quality
FROM raw.nccl_log
WHERE kind = 'init_complete' AND comm_id IS NOT NULL AND ts IS NOT NULL AND ts_quality IN ('exact', 'local')
UNION ALL
SELECT host, 'nccl_timeout', 'timeout:' || coalesce(op_type, '?') || ':' || seq::VARCHAR,
       epoch_us(ts) / 1e6 - coalesce(ran_ms, 0) / 1e3, ts_quality
FROM raw.nccl_log
WHERE kind = 'watchdog_timeout' AND seq IS NOT NULL AND ts IS NOT NULL AND ts_quality IN ('exact', 'local')
"""

_LINK_SQL = """
SELECT host, epoch_us(ts) / 1e6 AS t, coalesce(iface, pci_addr, '') AS subject
FROM raw.kernel_log
WHERE ts IS NOT NULL AND ts_quality <> 'none'
  AND (regexp_matches(message, '(?i)\\blink (is )?down\\b') OR contains(message, 'NIC Link is Down'))
ORDER BY t
"""


def _coarse(values: list[float]) -> bool:
    return all(abs(v - round(v)) < 1e-6 for v in values)


def robust_center(diffs: list[float], coarse: bool = False) -> tuple[float, float]:
    """(centre, MAD) of pairwise differences: mean within a tolerance of the median."""
    m = statistics.median(diffs)
    mad = statistics.median(abs(d - m) for d in diffs)
    tol = max(0.05, 4 * 1.4826 * mad, 1.5 if coarse else 0.0)
    kept = [d for d in diffs if abs(d - m) <= tol] or [m]
    # fsum: the exact sum, whatever the order of `diffs` (the chain below meets anchors in set order, which
    # Python's string hashing changes from process to process; a plain float sum's last bits follow it)
    c = math.fsum(kept) / len(kept)
    return c, statistics.median(abs(d - c) for d in kept)


def anchors_from_link_rows(rows: list[tuple[str, float, str]]) -> list[tuple[str, str, str, float, bool]]:
    """Group link-down messages of different hosts within LINK_WINDOW_S (one per host per group)."""
    out = []
    group: list[tuple[str, float, str]] = []
    n = 0

    def flush() -> None:
        nonlocal n
        hosts = [g[0] for g in group]
        if len(set(hosts)) >= 2 and len(set(hosts)) == len(hosts):
            n += 1
            for h, t, _ in group:
                out.append((h, "link_down", f"link:{n}", t, False))

    for row in rows:
        if group and row[1] - group[0][1] > LINK_WINDOW_S:
            flush()
            group = []
        group.append(row)
    if group:
        flush()
    return out


def anchors(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Anchor observations (host, kind, key, t [epoch s], coarse) reduced per host and key."""
    raw = con.execute(_ANCHOR_SQL).fetchall()
    by: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for host, kind, key, t, _q in raw:
        by[(host, kind, key)].append(t)
    rows = []
    for (host, kind, key), ts in by.items():
        if max(ts) - min(ts) > SPREAD_MAX_S:
            continue  # the host's ranks disagree: not one moment (or a reused id)
        rows.append((host, kind, key, statistics.median(ts), _coarse(ts)))
    rows.extend(anchors_from_link_rows(con.execute(_LINK_SQL).fetchall()))
    # an anchor seen by one host only says nothing
    count: dict[str, int] = defaultdict(int)
    for r in rows:
        count[r[2]] += 1
    rows = [r for r in rows if count[r[2]] >= 2]
    return pl.DataFrame(rows, schema={"host": pl.String, "kind": pl.String, "key": pl.String,
                                      "t": pl.Float64, "coarse": pl.Boolean}, orient="row")


def estimate(obs: pl.DataFrame, ntp: dict[str, float] | None = None) -> dict[str, dict]:
    """Per-host offsets from anchor observations: {host: {offset, mad, n, kinds, ref}}."""
    t: dict[str, dict[str, float]] = defaultdict(dict)
    coarse: dict[str, bool] = {}
    kind_of: dict[str, str] = {}
    for host, kind, key, tt, c in obs.iter_rows():
        t[host][key] = tt
        coarse[key] = coarse.get(key, False) or c
        kind_of[key] = kind
    if not t:
        return {}
    ref = sorted(t, key=lambda h: (-len(t[h]), h))[0]
    est: dict[str, float] = {ref: 0.0}
    # chain outwards from the reference: each round estimates hosts sharing anchors with known ones
    while True:
        new = {}
        for h in t:
            if h in est:
                continue
            diffs, crs = [], False
            for g, off in est.items():
                for k in t[h].keys() & t[g].keys():
                    diffs.append(t[h][k] - t[g][k] + off)
                    crs = crs or coarse[k]
            if diffs:
                new[h] = robust_center(diffs, crs)[0]
        if not new:
            break
        est.update(new)
    # refine against the per-anchor consensus of all estimated hosts
    for _ in range(3):
        consensus = {}
        keys = {k for h in est for k in t[h]}
        for k in keys:
            vals = [t[h][k] - est[h] for h in est if k in t[h]]
            if len(vals) >= 2:
                consensus[k] = statistics.median(vals)
        new_est = {}
        for h in est:
            diffs = [t[h][k] - consensus[k] for k in t[h] if k in consensus]
            crs = any(coarse[k] for k in t[h] if k in consensus)
            new_est[h] = robust_center(diffs, crs)[0] if diffs else est[h]
        base = new_est[ref]
        est = {h: v - base for h, v in new_est.items()}
    out = {}
    for h in est:
        diffs = [t[h][k] - consensus[k] - est[h] for k in t[h] if k in consensus]
        crs = any(coarse[k] for k in t[h] if k in consensus)
        _, mad = robust_center(diffs, crs) if diffs else (0.0, float("inf"))
        kinds: dict[str, int] = defaultdict(int)
        for k in t[h]:
            if k in consensus:
                kinds[kind_of[k]] += 1
        out[h] = {"offset": est[h], "mad": mad, "n": len(diffs), "kinds": dict(kinds), "coarse": crs}
    # fix the constant: NTP where known, else the median host is the reference
    ntp = {h: v for h, v in (ntp or {}).items() if v is not None and h in out}
    if ntp:
        shift = statistics.median(ntp[h] - out[h]["offset"] for h in ntp)
        ref_desc = "NTP"
    else:
        order = sorted(out, key=lambda h: (out[h]["offset"], h))
        ref = order[(len(order) - 1) // 2]
        shift = -out[ref]["offset"]
        ref_desc = ref
    for h in out:
        out[h]["offset"] += shift
        out[h]["ref"] = ref_desc
    return out


def _confidence(e: dict) -> str:
    n, mad = e["n"], e["mad"]
    strong = e["kinds"].get("nccl_init", 0) + e["kinds"].get("nccl_timeout", 0)
    if e["coarse"]:
        return "medium" if n >= 8 else "low"
    if n >= 3 and mad <= 0.02 and strong >= 2:
        return "high"
    if n >= 2 and mad <= 0.25 or (n == 1 and strong == 1):
        return "medium"
    return "low"


def clock_offsets(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per-host clock offsets for every host of the bundle (schema :data:`CLOCK_SCHEMA`)."""
    hosts = [r[0] for r in con.execute(
        "SELECT host FROM raw.bundle_hosts UNION SELECT host FROM raw.hosts WHERE host IS NOT NULL ORDER BY 1"
    ).fetchall()]
    ntp = dict(con.execute(
        "SELECT host, any_value(ntp_offset_s) FROM raw.hosts WHERE ntp_offset_s IS NOT NULL GROUP BY host"
    ).fetchall())
    est = estimate(anchors(con), ntp)
    rows = []
    for h in hosts:
        e = est.get(h)
        n = ntp.get(h)
        if e is not None:
            kinds = ", ".join(f"{k} x{v}" for k, v in sorted(e["kinds"].items()))
            ref = "NTP" if e["ref"] == "NTP" else "reference host " + e["ref"]
            if n is not None and abs(n - e["offset"]) <= NTP_AGREE_S:
                rows.append((h, float(n), "high", f"NTP offset reported by the host, confirmed by anchors ({kinds}) "
                             f"within {abs(n - e['offset']) * 1000:.0f} ms", e["n"]))
                continue
            method = f"anchors ({kinds}) vs {ref}"
            if n is not None:
                method += f"; the host's NTP offset {n:+.3f} s disagrees by {abs(n - e['offset']):.3f} s"
            rows.append((h, round(e["offset"], 6), _confidence(e), method, e["n"]))
        elif n is not None:
            rows.append((h, float(n), "medium", "NTP offset reported by the host (no anchors shared with other hosts)", 0))
        else:
            rows.append((h, None, "unknown", "no anchors shared with other hosts and no NTP offset", 0))
    return pl.DataFrame(rows, schema=CLOCK_SCHEMA, orient="row")


def store_offsets(con: duckdb.DuckDBPyConnection, clock: pl.DataFrame) -> None:
    """raw.clock_offsets from the frame of :func:`clock_offsets` (read by the ``hosts`` view)."""
    arrow = clock.to_arrow()  # noqa: F841 (referenced by name below)
    con.execute("CREATE OR REPLACE TABLE raw.clock_offsets AS SELECT * FROM arrow")
