"""Link consequences to their causes and rank findings, most likely root cause first.

Each kind declares what can cause it in its detector header (``-- caused_by: gpu_xid@path, ...``,
see :mod:`forensics.detect.rules`). A finding of a consequence kind gets `caused_by` = the id of a
finding of one of its cause kinds when both of these hold:

- **where**: the cause is in the declared scope: `host` = they share a host; `path` = they share a
  host, a host of the cause is an NCCL peer of a host of the consequence (:class:`Peers`: the
  hosts of one communicator in the logs' connection map, ``nccl_comm_hosts``), or the consequence names an RDMA address
  of the cause's host (an NCCL transport error's ``remoteGids``, found in that host's GID table,
  ``ib_gids``); `any` = anywhere in the bundle. A bundle
  without NCCL init lines has no peers, so nothing crosses hosts: "another host in the bundle" is
  never enough. Two unrelated faults (different jobs, different communicators) stay two roots.
- **when**: the cause's window overlaps the consequence's or starts at most BEFORE earlier; a
  configuration (`nccl_misconfig`) holds for the whole capture. When either side has no time (untimed
  NCCL lines, a pasted counter snapshot) time cannot tie them: they must share a host and their
  subjects must name the same interface, GPU or rank, or the untimed consequence names none of those
  (a host's NCCL transport errors) and the cause is timed on that host, or on the host whose RDMA
  address the error names as its failing peer (the completion error of a QP whose other end died).
  The cause must then be warning or worse: an info finding (a corrected PCIe error at boot) is a
  note, not an incident. A finding of history (evidence ``history``: events long before the
  capture, a boot's link bring-up) causes nothing in it.

What a consequence's evidence rules out: a `straggler` whose memory was busy longer than its peers'
(evidence ``mem_util_excess`` at least straggler.sql's min_power_excess) computes longer per step, and
a fault of the network path (a flapping link, drops, a PFC storm, NCCL transport errors) stalls every
rank's collective alike and lengthens no host's computation: it explains a straggler seen in power alone
(the moments around an abort), not one seen in compute time, which stays a root of its own (detection_eval
seed 120: a straggler and a link flap on one host, two faults, one was hidden behind the other).

A follow-on of its own kind needs an earlier finding of that kind (a second Xid after the first); a
PFC storm port that only receives pauses follows a port on a peer host that sends them (the pause
path: a port pauses its switch, the switch pauses the ports feeding it). Among several candidates
the most root-like kind (root_rank) wins, then the earliest, then one on the same host, then the
smallest id: never the order of the rows (which DuckDB's threads do not fix), and the rows are
linked in that same order, so which of two mutually plausible findings follows the other does not
depend on it either.
"""
from __future__ import annotations

import datetime as dt
import functools
import json
import re
from collections.abc import Mapping

import polars as pl

from forensics.detect.catalog import KINDS, severity_rank
from forensics.detect.rules import Cause, rules
from forensics.gid import address

# consequence kind -> its possible causes (kind, scope), from the detectors' `-- caused_by:` headers
CAUSES: dict[str, tuple[Cause, ...]] = {k.name: k.caused_by for k in KINDS.values() if k.caused_by}
BEFORE = dt.timedelta(minutes=10)  # a cause may start this long before its consequence
ALWAYS = frozenset({"nccl_misconfig"})  # configuration: holds for the whole capture, no time condition
_FAR = dt.datetime.max.replace(tzinfo=dt.timezone.utc)
_GPU = re.compile(r"\bGPU\s?(\d+)\b", re.I)
_RANK = re.compile(r"\branks?\s+(\d+(?:\s*,\s*\d+)*)", re.I)
_WORD = re.compile(r"[A-Za-z][\w.:-]*")
_NOT_IFACE = {"gpu", "gpus", "rank", "ranks", "prio", "node", "cpu", "global"}
# consequence kind -> (evidence key, (detector, its parameter holding the least value), cause kinds that
# value rules out): see the module docstring
_RULED_OUT = {"straggler": ("mem_util_excess", ("straggler", "min_power_excess"),
                            frozenset({"pfc_storm", "packet_drops", "link_flap", "nccl_transport_error"}))}


def subject_keys(subject: str | None) -> set[str]:
    """What a finding's subject names: GPUs (gpu:3), ranks (rank:8) and interfaces or devices
    (iface:enp91s0np0), so that two untimed findings can be tied by their subject."""
    s = subject or ""
    keys = {f"gpu:{int(g)}" for g in _GPU.findall(s)}
    for group in _RANK.findall(s):
        keys |= {f"rank:{int(r)}" for r in re.findall(r"\d+", group)}
    rest = _RANK.sub(" ", _GPU.sub(" ", s))
    keys |= {f"iface:{w}" for w in _WORD.findall(rest.split("(")[0]) if w.lower() not in _NOT_IFACE
             and re.search(r"\d", w)}
    return keys


class Peers:
    """Which hosts exchange NCCL traffic, kept as communicator membership: host -> the communicators
    its ranks joined (``nccl_comm_hosts``); two hosts are peers when they share one. Linear in hosts
    x communicators, where the host pairs (``nccl_peers``) are N² for a data-parallel job whose
    communicator spans every host (a million pairs at 1,024 hosts)."""

    def __init__(self, comms: Mapping[str, frozenset] | None = None):
        self.comms: Mapping[str, frozenset] = comms or {}

    @classmethod
    def of(cls, peers: Peers | Mapping[str, frozenset[str]] | None) -> Peers:
        """`peers` as a :class:`Peers`: itself, or from host -> its peer hosts (``nccl_peers``'s
        pairs, which list both directions; a pair given one way counts both ways)."""
        if isinstance(peers, Peers):
            return peers
        comms: dict[str, set] = {}
        for host, others in (peers or {}).items():
            for p in others:
                pair = (min(host, p), max(host, p))
                comms.setdefault(host, set()).add(pair)
                comms.setdefault(p, set()).add(pair)
        return cls({h: frozenset(c) for h, c in comms.items()})

    def comms_of(self, hosts) -> frozenset:
        """The communicators of any of `hosts`."""
        return frozenset().union(*(self.comms.get(h, frozenset()) for h in hosts))


def _shares_host(c: dict, r: dict) -> bool:
    return bool(set(c["hosts"] or []) & set(r["hosts"] or []))


def _on_path(c: dict, r: dict, peers: Peers, r_comms: frozenset | None = None) -> bool:
    """Whether `c` and `r` share a host or a host of `c` shares a communicator with one of `r`
    (`r_comms`: ``peers.comms_of(r["hosts"])``, when the caller has it)."""
    if _shares_host(c, r):
        return True
    if r_comms is None:
        r_comms = peers.comms_of(r["hosts"] or [])
    return bool(r_comms) and any(peers.comms.get(g, frozenset()) & r_comms for g in c["hosts"] or [])


def _in_scope(c: dict, r: dict, scope: str, peers: Peers, remote: frozenset[str],
              r_comms: frozenset | None = None) -> bool:
    if scope == "host":
        return _shares_host(c, r)
    if scope == "path":
        return _on_path(c, r, peers, r_comms) or bool(remote & set(c["hosts"] or []))
    return True


def _in_time(c: dict, r: dict, remote: frozenset[str] = frozenset()) -> bool:
    cs, ce, es, ee = c["start"], c["end"], r["start"], r["end"]
    if c["kind"] in ALWAYS:
        return True
    if cs is None or es is None:
        if c["severity"] == "info":  # no time ties them: a note (a corrected error at boot) explains no incident
            return False
        # one side has no time: only the subject can tie them (same interface, GPU or rank), on one host;
        # an untimed consequence whose subject names no interface, GPU or rank (NCCL transport errors of
        # a host: 'ib_completion_error') follows a timed cause on its own host: nothing contradicts it
        if not _shares_host(c, r):  # ... or the untimed error names the cause's host as its failing peer
            return es is None and cs is not None and bool(remote & set(c["hosts"] or []))
        ck, rk = subject_keys(c["subject"]), subject_keys(r["subject"])
        return bool(ck & rk) or (es is None and cs is not None and not rk)
    return cs <= (ee or es) and (ce or cs) + BEFORE >= es


def _ruled_out(r: dict) -> frozenset[str]:
    """The cause kinds that `r`'s own evidence rules out (``_RULED_OUT``)."""
    rule = _RULED_OUT.get(r["kind"])
    if rule is None:
        return frozenset()
    value = _evidence(r).get(rule[0])
    return rule[2] if isinstance(value, (int, float)) and value >= _param(*rule[1]) else frozenset()


@functools.cache
def _param(detector: str, name: str) -> float:
    return float(next(r for r in rules() if r.name == detector).params[name])


def _evidence(f: dict) -> dict:
    """`f`'s evidence, parsed (read only: the same dict is shared by the findings of one evidence text)."""
    return _parsed(f["evidence"] or "{}")


@functools.lru_cache(maxsize=1 << 16)
def _parsed(text: str) -> dict:
    # cause_of reads each candidate's evidence once per consequence it is compared with: parsed once
    # per text, not findings x candidates times (the part of the reduce that grew faster than the hosts)
    try:
        e = json.loads(text)
    except ValueError:
        return {}
    return e if isinstance(e, dict) else {}


def _directions(f: dict) -> set[str]:
    return set(_evidence(f).get("directions") or [])


def _same_kind_ok(c: dict, r: dict) -> bool:
    if r["kind"] == "pfc_storm":  # the pause path: a receiving port follows a sending port elsewhere
        return "tx" in _directions(c) and "tx" not in _directions(r) and not _shares_host(c, r)
    return bool(c["start"] and r["start"] and c["start"] < r["start"])  # a follow-on of an earlier one


def remote_hosts(r: dict, addr_hosts: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The other hosts `r` names as its failing peers: those owning the RDMA addresses (GIDs) in its
    evidence's ``remote_gids``, where one host alone owns the address."""
    own = set(r["hosts"] or [])
    out: set[str] = set()
    for g in _evidence(r).get("remote_gids") or []:
        owners = addr_hosts.get(address(str(g)) or "", frozenset())
        if len(owners) == 1:
            out |= owners - own
    return frozenset(out)


def _rank_key(r: dict) -> tuple:
    """The order :func:`link_and_rank` sorts findings in before linking them (kind's root rank, start, id)."""
    return KINDS[r["kind"]].root_rank, r["start"] or _FAR, r["id"]


def cause_of(r: dict, rows: list[dict], peers: Peers | Mapping[str, frozenset[str]] | None,
             remote: frozenset[str] = frozenset(), by_kind: Mapping[str, list[int]] | None = None,
             ordered: bool = False, by_kind_host: Mapping[tuple[str, str], list[int]] | None = None) -> dict | None:
    """The finding among `rows` that most likely caused `r` (see the module docstring), or None.
    `remote`: the hosts `r` names as failing peers (:func:`remote_hosts`). `by_kind`: kind -> the
    positions of its findings in `rows` (only the cause kinds of `r` are looked at; without it,
    every row; the choice does not depend on the order either way). `ordered`: `rows` are sorted by
    :func:`_rank_key`, so the scan stops at the first candidate that no later one can beat.
    `by_kind_host`: (kind, host) -> the positions of that kind's findings on that host, with
    `by_kind`: a cause kind that must share a host with `r` is looked at on `r`'s hosts only (else
    every finding of a kind is compared with every finding it may cause: findings squared)."""
    scopes = {c.kind: c.scope for c in CAUSES.get(r["kind"], ())}
    if not scopes:
        return None
    out_kinds = _ruled_out(r)
    peers = Peers.of(peers)
    r_comms = peers.comms_of(r["hosts"] or []) if "path" in scopes.values() else None
    if by_kind is None:
        candidates = rows
    else:
        if by_kind_host is not None:
            at = {i for k, scope in scopes.items() if scope == "host"
                  for h in set(r["hosts"] or []) for i in by_kind_host.get((k, h), ())}
            at = list(at) + [i for k, scope in scopes.items() if scope != "host" for i in by_kind.get(k, ())]
        else:
            at = [i for k in scopes for i in by_kind.get(k, ())]
        candidates = [rows[i] for i in (sorted(at) if ordered else at)]
    best = None
    for c in candidates:
        if ordered and best is not None:
            # a later candidate has a key of (root rank, start) at least the best's; with the same
            # (root rank, start) it wins only by sharing r's host where the best does not
            head, top = _rank_key(c)[:2], best[0][:2]
            if head > top or (head == top and not best[0][2]):
                break
        if c is r or c["kind"] not in scopes or c["caused_by"] == r["id"]:
            continue
        if c["kind"] == r["kind"] and not _same_kind_ok(c, r):
            continue
        if _evidence(c).get("history") is True:
            continue
        if c["kind"] in out_kinds:
            continue
        if not (_in_scope(c, r, scopes[c["kind"]], peers, remote, r_comms) and _in_time(c, r, remote)):
            continue
        # ties (untimed causes: start unknown) go to one on the same host, then by id: never by row
        # order, which DuckDB's threads do not fix
        key = (KINDS[c["kind"]].root_rank, c["start"] or _FAR, not _shares_host(c, r), c["id"])
        if best is None or key < best[0]:
            best = (key, c)
    return best[1] if best else None


def link_and_rank(findings: pl.DataFrame, peers: Peers | Mapping[str, frozenset[str]] | None = None,
                  addr_hosts: Mapping[str, frozenset[str]] | None = None) -> pl.DataFrame:
    """`findings` with `caused_by` filled and sorted root causes first. `peers`: who exchanges NCCL
    traffic (:func:`nccl_peers`, or host -> its peer hosts); none given, causes cross no host.
    `addr_hosts`: RDMA address -> the hosts whose GID table holds it (:func:`gid_hosts`). The
    result does not depend on the order of `findings`' rows. Each finding is compared with the
    findings of its cause kinds only, those that must share a host with it on its hosts only, from
    the most root-like and earliest on, stopping at the first that no later one can beat."""
    if findings.height == 0:
        return findings
    peers = Peers.of(peers)
    addr_hosts = addr_hosts or {}
    rows = sorted(findings.to_dicts(), key=_rank_key)
    by_kind: dict[str, list[int]] = {}
    by_kind_host: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(rows):
        by_kind.setdefault(r["kind"], []).append(i)
        for h in set(r["hosts"] or []):
            by_kind_host.setdefault((r["kind"], h), []).append(i)
    for r in rows:
        if not r["caused_by"]:
            c = cause_of(r, rows, peers, remote_hosts(r, addr_hosts), by_kind, ordered=True, by_kind_host=by_kind_host)
            if c is not None:
                r["caused_by"] = c["id"]

    def order(r):
        return (
            r["caused_by"] is not None,
            -severity_rank(r["severity"]),
            KINDS[r["kind"]].root_rank,
            -(r["score"] or 0.0),
            r["start"] or _FAR,
            r["id"],
        )

    rows.sort(key=order)
    return pl.DataFrame(rows, schema=findings.schema)


def gid_hosts(bundle) -> dict[str, frozenset[str]]:
    """RDMA address (as NCCL prints it) -> the hosts whose GID table (``ib_gids``) holds it."""
    out: dict[str, set[str]] = {}
    for addr, host in bundle.con.sql("SELECT DISTINCT address, host FROM ib_gids "
                                     "WHERE address IS NOT NULL AND host IS NOT NULL").fetchall():
        out.setdefault(addr, set()).add(host)
    return {a: frozenset(h) for a, h in out.items()}


def nccl_peers(bundle) -> Peers:
    """Who exchanges NCCL traffic in the open `bundle`: its hosts' communicators, from the
    ``nccl_comm_hosts`` view (one row per host and communicator; ``nccl_peers`` lists the pairs)."""
    out: dict[str, set] = {}
    for host, comm in bundle.con.sql("SELECT host, comm_id FROM nccl_comm_hosts").fetchall():
        out.setdefault(host, set()).add(comm)
    return Peers({h: frozenset(c) for h, c in out.items()})
