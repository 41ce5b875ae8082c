"""RoCE congestion-control (DCQCN) counters, issue 18: mlx5's np_ecn_marked_roce_packets, np_cnp_sent,
rp_cnp_handled and rp_cnp_ignored are read from the sysfs hw_counters series and from iproute2's
``rdma statistic`` (real output in tests/fixtures/infiniband), summed per port in ib_port_summary and
shown in pfc_storm's evidence as counts. No detector judges them: no vendor document found gives a
CNP rate that is abnormal, so none is invented."""
from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest

from forensics.analysis import analyze_paths
from forensics.sources import ParseContext, infiniband

RDMA_STAT = Path(__file__).parent / "fixtures" / "infiniband" / "infiniband--rdma-statistic-sonic21891-cx-sender-cnp-handled.txt"


def test_rdma_statistic_gives_hw_counter_rows():
    data = RDMA_STAT.read_bytes()
    assert infiniband.sniff(data)
    res = infiniband.parse(data, ParseContext(host="n1"))
    c = res.tables["ib_counters"]
    assert res.meta["variant"] == "rdma_statistic" and c.height == 31
    assert set(c["device"]) == {"mlx5_1"} and set(c["port"]) == {1} and set(c["counter_set"]) == {"hw_counters"}
    got = {r["counter"]: (r["line_no"], r["value"]) for r in c.to_dicts()}
    assert got["rp_cnp_handled"] == (7, 144) and got["np_cnp_sent"] == (7, 0) and got["rp_cnp_ignored"] == (7, 0)
    assert got["np_ecn_marked_roce_packets"] == (7, 0) and got["rnr_nak_retry_err"] == (3, 1543)
    assert got["req_cqe_error"] == (4, 36090) and got["rx_write_requests"] == (2, 0)
    assert res.unparsed.select("line_no", "reason").rows() == [(1, "shell prompt or command line, not tool output")]


@pytest.fixture(scope="module")
def storm(tmp_path_factory):
    """A simulated PFC storm bundle (3 nodes), once as the simulator writes it (its RoCE ports' sysfs hw_counters
    carry the DCQCN counters) and once with those four counters' lines taken out."""
    from forensics.simulate import SimConfig, write_bundle
    t = tmp_path_factory.mktemp("pfc")
    write_bundle(SimConfig("pfc_storm", nodes=3, gpus_per_node=2, duration_s=150, interval_s=5, seed=11), t / "b.tar")
    out = {}
    for name, strip in (("cnp", False), ("plain", True)):
        tarfile.open(t / "b.tar").extractall(t / name)
        for f in (t / name).glob("hosts/*/raw/infiniband/sysfs-*.txt") if strip else []:
            lines = [ln for ln in f.read_text().splitlines()
                     if not re.search(r"/hw_counters/(np_cnp_sent|np_ecn_marked_roce_packets|rp_cnp_handled|rp_cnp_ignored):", ln)]
            f.write_text("\n".join(lines) + "\n")
        a = analyze_paths([t / name], cache_dir=t / f"c-{name}")
        out[name] = [f for f in a.findings.to_dicts() if f["kind"] == "pfc_storm"]
        out[name + "_ports"] = a.bundle.sql(
            "SELECT host, iface, np_ecn_marked_roce_packets, np_cnp_sent, rp_cnp_handled, rp_cnp_ignored "
            "FROM ib_port_summary WHERE iface IS NOT NULL").to_dicts()
    return out


def test_pfc_storm_evidence_carries_the_ports_cnp_counts(storm):
    """The storming port (it sends the pauses) gets ECN-marked packets and answers with CNPs at rates its healthy
    rail neighbours do not reach; its senders (the other hosts' ports of the same rail) handle those CNPs."""
    assert storm["cnp"], "the simulated storm gives a pfc_storm finding"
    sends = [f for f in storm["cnp"] if "this port sends pauses" in f["summary"]]
    assert len(sends) == 1
    host, iface = sends[0]["hosts"][0], json.loads(sends[0]["evidence"])["iface"]
    cnp = json.loads(sends[0]["evidence"])["cnp_over_capture"]
    assert cnp is not None and cnp["rp_cnp_ignored"] == 0
    assert 0 < cnp["np_cnp_sent"] <= cnp["np_ecn_marked_roce_packets"]
    ports = storm["cnp_ports"]
    others = [p for p in ports if (p["host"], p["iface"]) != (host, iface) and p["np_ecn_marked_roce_packets"] is not None]
    assert others and cnp["np_ecn_marked_roce_packets"] > 20 * max(p["np_ecn_marked_roce_packets"] for p in others)
    rail_peers = [p for p in others if p["iface"] == iface]
    assert len(rail_peers) == 2
    healthy_rails = [p for p in others if p["iface"] != iface and p["rp_cnp_handled"] is not None]
    assert min(p["rp_cnp_handled"] for p in rail_peers) > 20 * max(p["rp_cnp_handled"] for p in healthy_rails)


def test_without_cnp_counters_the_evidence_says_null_and_findings_are_the_same(storm):
    assert [json.loads(f["evidence"])["cnp_over_capture"] for f in storm["plain"]] == [None] * len(storm["plain"])
    assert all(p["np_cnp_sent"] is None for p in storm["plain_ports"])
    key = ("hosts", "subject", "severity", "start", "end")
    assert [[f[k] for k in key] for f in storm["plain"]] == [[f[k] for k in key] for f in storm["cnp"]]
