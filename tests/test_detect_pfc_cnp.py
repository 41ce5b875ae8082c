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
    """A simulated PFC storm bundle, once as written and once with np_cnp_sent / rp_cnp_handled added to
    every sysfs hw_counters sample (growing by 10 and 3 a sample)."""
    from forensics.simulate import SimConfig, write_bundle
    t = tmp_path_factory.mktemp("pfc")
    write_bundle(SimConfig("pfc_storm", nodes=2, gpus_per_node=2, duration_s=150, interval_s=5, seed=11), t / "b.tar")
    out = {}
    for name, add in (("plain", False), ("cnp", True)):
        tarfile.open(t / "b.tar").extractall(t / name)
        for f in (t / name).glob("hosts/*/raw/infiniband/sysfs-*.txt") if add else []:
            lines, k = [], -1
            for ln in f.read_text().splitlines():
                lines.append(ln)
                k += ln.startswith("#### forensics-sample")
                m = re.match(r"^(.*/hw_counters/)roce_slow_restart_cnps:", ln)
                if m:
                    lines += [f"{m.group(1)}np_cnp_sent:{10 * k}", f"{m.group(1)}rp_cnp_handled:{3 * k}"]
            f.write_text("\n".join(lines) + "\n")
        a = analyze_paths([t / name], cache_dir=t / f"c-{name}")
        out[name] = [f for f in a.findings.to_dicts() if f["kind"] == "pfc_storm"]
    return out


def test_pfc_storm_evidence_carries_the_ports_cnp_counts(storm):
    assert storm["cnp"], "the simulated storm gives a pfc_storm finding"
    for f in storm["cnp"]:
        cnp = json.loads(f["evidence"])["cnp_over_capture"]
        assert cnp["np_cnp_sent"] > 0 and cnp["rp_cnp_handled"] > 0
        assert cnp["np_cnp_sent"] * 3 == cnp["rp_cnp_handled"] * 10  # increases over the same samples
        assert cnp["np_ecn_marked_roce_packets"] is None and cnp["rp_cnp_ignored"] is None  # not in the capture


def test_without_cnp_counters_the_evidence_says_null_and_findings_are_the_same(storm):
    assert [json.loads(f["evidence"])["cnp_over_capture"] for f in storm["plain"]] == [None] * len(storm["plain"])
    key = ("hosts", "subject", "severity", "start", "end")
    assert [[f[k] for k in key] for f in storm["plain"]] == [[f[k] for k in key] for f in storm["cnp"]]
