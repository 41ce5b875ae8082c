"""Causal links need evidence: a path between the hosts (same host, NCCL peers, the pause path), a
time overlap, or for an untimed finding the same host and a subject that ties them."""
from __future__ import annotations

import datetime as dt
import json

import polars as pl

from forensics import schema
from forensics.detect.causality import CAUSES, Peers, link_and_rank, subject_keys

T0 = dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.timezone.utc)
S30 = dt.timedelta(seconds=30)
JOB = {h: frozenset({"node01", "node02", "node03", "node04"}) - {h} for h in ("node01", "node02", "node03", "node04")}


def _f(fid, kind, host, start=None, severity="critical", subject="s", evidence="{}"):
    end = start + dt.timedelta(seconds=60) if start else None
    return {"id": fid, "kind": kind, "severity": severity, "layer": "x", "start": start, "end": end, "hosts": [host],
            "subject": subject, "score": 0.8, "summary": fid, "evidence": evidence, "confirm": "", "remediation": "",
            "caused_by": None, "detector": kind}


def _links(rows, peers=None):
    df = pl.DataFrame(rows, schema=schema.polars_schema("findings"))
    return {r["id"]: r["caused_by"] for r in link_and_rank(df, peers).to_dicts()}


def test_timed_fault_on_a_peer_host_causes_overlapping_nccl_errors():
    rows = [_f("xid", "gpu_xid", "node01", T0), _f("nccl", "nccl_transport_error", "node02", T0 + S30)]
    assert _links(rows, JOB)["nccl"] == "xid"
    # without a connection map nothing ties node01 to node02: another host in the bundle is not a path
    assert _links(rows)["nccl"] is None


def test_untimed_findings_link_only_where_the_subject_ties_them():
    # NCCL WARN lines without time stamps on node02 say nothing about a fault on node01 ...
    got = _links([_f("xid", "gpu_xid", "node01", T0), _f("nccl", "nccl_transport_error", "node02")], JOB)
    assert got["nccl"] is None
    # ... nor do a pasted counter snapshot's drops about a link flap elsewhere
    got = _links([_f("flap", "link_flap", "node01", T0), _f("drops", "packet_drops", "node03", None, "warning")], JOB)
    assert got["drops"] is None
    # on one host, an untimed timeout does not follow an unrelated Xid (rank vs GPU) ...
    got = _links([_f("xid", "gpu_xid", "node02", T0, subject="GPU5 (0000:ab:00.0)"),
                  _f("to", "collective_timeout", "node02", subject="rank 8")], JOB)
    assert got["to"] is None
    # ... nor drops on one interface a pause snapshot of another
    got = _links([_f("pfc", "pfc_storm", "n1", None, "warning", "eth03"),
                  _f("drops", "packet_drops", "n1", None, "warning", "eth1")])
    assert got["drops"] is None
    # the same interface ties them
    got = _links([_f("pfc", "pfc_storm", "n1", None, "warning", "eth03 prio 3"),
                  _f("drops", "packet_drops", "n1", None, "warning", "eth03")])
    assert got["drops"] == "pfc"


def test_subject_keys():
    assert subject_keys("GPU5 (0000:ab:00.0)") == {"gpu:5"}
    assert subject_keys("enp91s0np0 prio 3") == {"iface:enp91s0np0"}
    assert subject_keys("rank 8") == {"rank:8"}
    assert subject_keys("ranks 3, 11") == {"rank:3", "rank:11"}
    assert subject_keys("8/8 GPUs") == set() and subject_keys("ib_completion_error") == set()


def test_timed_but_far_apart_is_no_cause():
    got = _links([_f("xid", "gpu_xid", "node01", T0), _f("nccl", "nccl_transport_error", "node02", T0 + dt.timedelta(hours=3))], JOB)
    assert got["nccl"] is None


def test_xid_hang_spin_wait_is_linked_to_the_xid():
    # GPU 5 of node01 hangs: the other nodes' GPUs spin in NCCL kernels (busy_but_slow), the ranks time out
    rows = [_f("xid", "gpu_xid", "node01", T0, subject="GPU5"),
            _f("spin2", "busy_but_slow", "node02", T0 + S30, "warning", "8/8 GPUs"),
            _f("spin3", "busy_but_slow", "node03", T0 + S30, "warning", "8/8 GPUs"),
            _f("to", "collective_timeout", "node02", T0 + 4 * S30, subject="rank 8")]
    got = _links(rows, JOB)
    assert got["spin2"] == got["spin3"] == got["to"] == "xid"
    ecc = [_f("ecc", "ecc_error", "node01", T0), _f("spin", "busy_but_slow", "node04", T0 + S30, "warning")]
    assert _links(ecc, JOB)["spin"] == "ecc"
    # a fatal NVSwitch SXid on node01 stops its NVLink traffic: the job's collectives stall and the GPUs
    # of its NCCL peers spin-wait (detection_eval held-out seed 7029: three busy_but_slow with no cause)
    sxid = [_f("sxid", "nvswitch_sxid", "node01", T0, subject="SXid 20034 fatal"),
            _f("spin1", "busy_but_slow", "node01", T0 - S30, "warning", "6/6 GPUs"),
            _f("spin4", "busy_but_slow", "node04", T0 - S30, "warning", "8/8 GPUs")]
    got = _links(sxid, JOB)
    assert got["spin1"] == got["spin4"] == "sxid"
    assert _links(sxid)["spin4"] is None  # no NCCL peers known: no path to another host


def test_fabric_faults_cause_stragglers_and_aborts():
    rows = [_f("drops", "packet_drops", "node03", T0, subject="enp22s0np0"),
            _f("slow", "straggler", "node03", T0 + S30, "warning", "node"),
            _f("to", "collective_timeout", "node01", T0 + 2 * S30, subject="rank 4")]
    got = _links(rows, JOB)
    assert got["slow"] == "drops" and got["to"] == "drops"
    # a straggler does not follow drops on another host
    assert _links([rows[0], _f("slow", "straggler", "node02", T0 + S30, "warning", "node")], JOB)["slow"] is None


def test_a_straggler_seen_in_compute_time_is_no_consequence_of_its_hosts_link_flap():
    # detection_eval seed 120: node02 computes 21% longer per step and its link flaps, at the same time.
    # A flap stalls every rank's collective alike; it lengthens no host's computation, so a straggler
    # whose memory is busy 21% longer than its peer's is a second root, not the flap's consequence
    flap = _f("flap", "link_flap", "node02", T0, subject="enp56s0np0")
    compute = json.dumps({"power_excess": 0.095, "mem_util_excess": 0.21})
    slow = _f("slow", "straggler", "node02", T0 + S30, "warning", "node", evidence=compute)
    assert _links([flap, slow], JOB)["slow"] is None
    # seen in power alone (no memory time, or none longer), it may still follow the flap ...
    for ev in ("{}", json.dumps({"power_excess": 0.095, "mem_util_excess": 0.02})):
        assert _links([flap, _f("slow", "straggler", "node02", T0 + S30, "warning", "node", evidence=ev)], JOB)["slow"] == "flap"
    # ... and a host fault that does lengthen its computation explains it either way
    hot = _f("hot", "gpu_throttle", "node02", T0, "warning", "GPU3")
    assert _links([hot, slow], JOB)["slow"] == "hot"


def test_unrelated_drops_are_not_linked_to_a_remote_storm():
    storm = _f("storm", "pfc_storm", "node01", T0, subject="enp91s0np0 prio 3", evidence=json.dumps({"directions": ["tx"]}))
    drops = _f("drops", "packet_drops", "node05", T0 + S30, subject="eno1")
    # node05 is in no communicator with node01: two unrelated faults, two roots
    assert _links([storm, drops], JOB)["drops"] is None
    # on the storm's path (an NCCL peer) the drops follow it
    peers = {"node01": frozenset({"node05"}), "node05": frozenset({"node01"})}
    assert _links([storm, drops], peers)["drops"] == "storm"


def test_receiving_port_follows_the_sending_port_on_the_pause_path():
    tx = json.dumps({"directions": ["tx", "rx"]})
    rx = json.dumps({"directions": ["rx"]})
    rows = [_f("send", "pfc_storm", "node03", T0, subject="enp91s0np0 prio 3", evidence=tx),
            _f("recv", "pfc_storm", "node01", T0 + S30, subject="enp91s0np0 prio 3", evidence=rx)]
    assert _links(rows, JOB) == {"send": None, "recv": "send"}
    assert _links(rows) == {"send": None, "recv": None}  # no path: no NCCL peers known


def test_two_jobs_two_roots():
    # job A (node01-02) drops packets; job B (gpu-a, gpu-b) throttles and its peer spins
    peers = {"node01": frozenset({"node02"}), "node02": frozenset({"node01"}),
             "gpu-a": frozenset({"gpu-b"}), "gpu-b": frozenset({"gpu-a"})}
    rows = [_f("drops", "packet_drops", "node01", T0, subject="enp22s0np0"),
            _f("hot", "gpu_throttle", "gpu-a", T0 + S30, "warning", "GPU3"),
            _f("spin", "busy_but_slow", "gpu-b", T0 + 4 * S30, "warning", "4/4 GPUs")]
    assert _links(rows, peers)["spin"] == "hot"  # not the more root-like drops of the other job
    # the same as communicator membership (what `nccl_peers(bundle)` gives: linear in hosts)
    comms = Peers({"node01": frozenset({"cA"}), "node02": frozenset({"cA"}), "gpu-a": frozenset({"cB", "cC"}),
                   "gpu-b": frozenset({"cB"})})
    assert _links(rows, comms) == _links(rows, peers)
    assert _links(rows, Peers({**comms.comms, "gpu-b": frozenset({"cD"})}))["spin"] is None  # no shared communicator


def test_every_consequence_lists_the_plausible_causes():
    def kinds(k):
        return {c.kind for c in CAUSES[k]}

    gpu_hw, fabric = {"gpu_xid", "ecc_error"}, {"pfc_storm", "packet_drops", "link_flap"}
    for consequence in ("busy_but_slow", "collective_timeout", "nccl_transport_error"):
        assert gpu_hw | fabric <= kinds(consequence), consequence
    assert fabric | gpu_hw | {"nccl_transport_error"} <= kinds("straggler")
    # across hosts only along a path: no consequence accepts a cause from anywhere in the bundle
    assert all(c.scope != "any" for causes in CAUSES.values() for c in causes)


def test_untimed_transport_errors_follow_a_timed_fabric_fault_on_their_host():
    # NCCL 2.21 stamps no time on its WARN lines: the IB errors of the host whose link flapped follow the flap
    flap = _f("flap", "link_flap", "node01", T0, subject="enp217s0np0")
    here = _f("here", "nccl_transport_error", "node01", subject="ib_completion_error")
    there = _f("there", "nccl_transport_error", "node03", subject="ib_completion_error")
    got = _links([flap, here, there])
    assert got["here"] == "flap" and got["there"] is None  # no connection map: node03 is on no known path
    # an untimed consequence that names a rank still needs a subject that ties it
    assert _links([flap, _f("to", "collective_timeout", "node01", subject="rank 3")])["to"] is None


def _links_gids(rows, peers=None, addr_hosts=None):
    df = pl.DataFrame(rows, schema=schema.polars_schema("findings"))
    return {r["id"]: r["caused_by"] for r in link_and_rank(df, peers, addr_hosts).to_dicts()}


def test_untimed_transport_error_follows_the_fault_of_the_host_owning_its_remote_gid():
    # xid_79: node04's QP to node01 fails when node01's GPU falls off the bus; NCCL names the peer by
    # its RoCE GID ("remoteGids::ffff:10.105.0.10"), which only node01's GID table holds
    xid = _f("xid", "gpu_xid", "node01", T0, subject="GPU5 (0000:ab:00.0)")
    ev = json.dumps({"remote_gids": ["::ffff:10.105.0.10"], "peers": ["10.0.0.10<57492>"]})
    err = _f("err", "nccl_transport_error", "node04", None, subject="ib_completion_error", evidence=ev)
    owners = {"::ffff:10.105.0.10": frozenset({"node01"}), "::ffff:10.105.0.13": frozenset({"node04"})}
    assert _links_gids([xid, err], JOB, owners)["err"] == "xid"
    # the address in the full form a GID table prints is the same address
    ev_full = json.dumps({"remote_gids": ["0000:0000:0000:0000:0000:ffff:0a69:000a"]})
    assert _links_gids([xid, _f("err", "nccl_transport_error", "node04", None, subject="ib_completion_error",
                                evidence=ev_full)], JOB, owners)["err"] == "xid"
    # without GID tables, or when the address is another host's, or owned by two hosts: no link
    assert _links_gids([xid, err], JOB)["err"] is None
    assert _links_gids([xid, err], JOB, {"::ffff:10.105.0.10": frozenset({"node02"})})["err"] is None
    assert _links_gids([xid, err], JOB, {"::ffff:10.105.0.10": frozenset({"node01", "node02"})})["err"] is None
    # a boot-time link history on the error's own host is no cause of it
    hist = _f("hist", "link_flap", "node04", T0 - dt.timedelta(days=9), "info", "history",
              json.dumps({"history": True}))
    assert _links_gids([hist, err], JOB)["err"] is None
    # nor a corrected PCIe error noted at boot (info) on the peer: a note explains no incident, while the
    # peer's concurrent drops do
    aer = _f("aer", "pcie_aer", "node01", T0 - dt.timedelta(days=9), "info", "PCIe 0000:d9:00.0")
    assert _links_gids([aer, err], JOB, owners)["err"] is None
    drops = _f("drops", "packet_drops", "node01", T0, "critical", "enp22s0np0")
    assert _links_gids([aer, drops, err], JOB, owners)["err"] == "drops"


def test_cause_choice_does_not_depend_on_row_order():
    import random

    # several untimed configuration findings could each explain a spin-wait (seed000's busy_but_slow):
    # the one on its own host wins, then the earliest, then the lowest id, whatever the input order
    bbs = _f("bbs", "busy_but_slow", "node02", T0, "warning", "GPU3")
    mis = [_f(f"mis{i}", "nccl_misconfig", h, None, "warning", f"NCCL_IB_HCA {i}")
           for i, h in enumerate(["node03", "node01", "node02", "node04", "node02"])]
    rows = [bbs, *mis, _f("bbs1", "busy_but_slow", "node01", T0 + S30, "warning", "GPU1")]
    want = _links(rows, JOB)
    assert want["bbs"] == "mis2" and want["bbs1"] == "mis1"
    for seed in range(20):
        shuffled = rows[:]
        random.Random(seed).shuffle(shuffled)
        df = pl.DataFrame(shuffled, schema=schema.polars_schema("findings"))
        out = link_and_rank(df, JOB)
        assert {r["id"]: r["caused_by"] for r in out.to_dicts()} == want
        assert out["id"].to_list() == link_and_rank(pl.DataFrame(rows, schema=schema.polars_schema("findings")),
                                                    JOB)["id"].to_list()
