"""The simulator's InfiniBand-mode rails and its PortXmitWait counter (issue 18), small (2 nodes of 4 GPUs,
2 minutes).

- port_xmit_wait counts 8-byte ticks of the port's rate (what the sysfs counter counts, see
  forensics/simulate/fmt_infiniband.py), not microseconds, and stops at 2^32 - 1 like the 32-bit field sysfs reads.
- ``--fabric infiniband`` (and ``ib_congestion``, which needs it) shows the rails as InfiniBand wherever the
  real tools do: ibstat, sysfs link_layer, mlxlink, NCCL's device list; the rails have no netdev (no ethtool,
  mlnx_qos, host.json or GID ndevs entry).
- ``ib_congestion``: one rail port waits for credits 20-60% of the time. At 400 Gb/s 2^32 ticks are 0.69 s of
  waiting, so the sysfs counter of a port that has carried traffic since boot is saturated and shows nothing;
  ``perfquery -x``'s 64-bit PortXmitWait of the same port moves, and ib_congestion reads it.
"""
from __future__ import annotations

import json
import re
import tarfile

import numpy as np
import pytest

from forensics.analysis import analyze_paths
from forensics.simulate import SimConfig, write_bundle
from forensics.simulate.fmt_infiniband import COUNTER32_MAX, TICK_BYTES, xmit_wait
from forensics.simulate.hardware import Nic

SIZE = dict(nodes=2, gpus_per_node=4, duration_s=120.0, interval_s=5.0, seed=4)


def test_xmit_wait_is_ticks_of_eight_bytes_and_saturates():
    """RoCE: pause microseconds -> ticks at 400 Gb/s (6250 a microsecond), stopped at 2^32 - 1."""
    nic = Nic("enp24s0np0", "mlx5_0", 0x18, 0, 0, "94:6d:ae:00:00:01", "10.100.0.10", 0, 400000, 9000, "ConnectX-7")
    us = np.array([0, 1, 100, 687, 688, 10**9])
    got = xmit_wait(None, 0, nic, us, np.zeros(len(us)))
    per_us = 400e9 / 1e6 / (TICK_BYTES * 8)
    assert per_us == 6250
    assert got.tolist() == [0, 6250, 625000, 687 * 6250, 688 * 6250, COUNTER32_MAX]
    assert 688 * 6250 < COUNTER32_MAX < 688 * 6250 * 1000  # 0.69 s of pause fills the 32-bit counter
    wide = xmit_wait(None, 0, nic, us, np.zeros(len(us)), bits=64)  # perfquery -x's PortCountersExtended field
    assert wide.tolist() == [0, 6250, 625000, 687 * 6250, 688 * 6250, 10**9 * 6250]


def test_fabric_choices_are_checked():
    """ib_congestion needs InfiniBand rails; a fault on the rails' Ethernet counters or QoS cannot have them."""
    from forensics.simulate import Simulation

    with pytest.raises(ValueError, match="needs InfiniBand rails"):
        SimConfig("ib_congestion", fabric="roce")
    with pytest.raises(ValueError, match="--fabric must be roce or infiniband"):
        SimConfig("healthy", fabric="ethernet")
    for scenario in ("ib_congestion+pfc_storm", "packet_drops"):
        with pytest.raises(ValueError, match="not with InfiniBand rails"):
            Simulation(SimConfig(scenario, nodes=2, gpus_per_node=4, duration_s=120.0, interval_s=5.0, fabric=(
                "infiniband" if scenario == "packet_drops" else None)))
    assert SimConfig("ib_congestion+xid_79").infiniband and not SimConfig("xid_79").infiniband


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("ib")
    done = {}

    def go(scenario, **extra):
        key = (scenario, tuple(sorted(extra.items())))
        if key not in done:
            path = root / f"{scenario}-{len(done)}.tar"
            write_bundle(SimConfig(scenario=scenario, **{**SIZE, **extra}), path)
            with tarfile.open(path) as tf:
                files = {m.name: tf.extractfile(m).read().decode() for m in tf.getmembers()
                         if m.isfile() and ("/raw/" in m.name or m.name.endswith(".json"))}
            findings = analyze_paths([path], cache_dir=root / f"cache{len(done)}").findings.to_dicts()
            done[key] = (files, json.loads(files["truth/labels.json"]), findings)
        return done[key]
    return go


def _series(text: str, name: str) -> list[int]:
    return [int(v) for v in re.findall(rf"/counters/{name}:(\d+)\n", text)]


@pytest.mark.slow
def test_roce_port_xmit_wait_is_the_pause_time_in_ticks(run):
    """A RoCE rail's sysfs port_xmit_wait at each sample = its ethtool rx_prio3_pause_duration (microseconds,
    the same sample times) x 6250, saturated: after days of normal pauses it reads 4294967295."""
    files, labels, _ = run("healthy")
    assert "fabric" not in labels
    for host in ("node01", "node02"):
        for nic in json.loads(files[f"hosts/{host}/host.json"])["nics"]:
            sysfs = files[f"hosts/{host}/raw/infiniband/sysfs-{nic['rdma_dev']}-1.txt"]
            assert "/link_layer:Ethernet\n" in sysfs
            us = [int(v) for v in re.findall(r"\n\s+rx_prio3_pause_duration: (\d+)\n",
                                             files[f"hosts/{host}/raw/ethtool/{nic['iface']}.txt"])]
            if nic["rdma_dev"] == "mlx5_4":  # the frontend: global pause only, no PFC priority 3
                assert us == [] and set(_series(sysfs, "port_xmit_wait")) == {0}
                continue
            assert us and _series(sysfs, "port_xmit_wait") == [min(u * 6250, COUNTER32_MAX) for u in us]


@pytest.mark.slow
def test_infiniband_rails_look_like_infiniband_everywhere(run):
    files, labels, findings = run("healthy", fabric="infiniband")
    assert labels["fabric"] == "infiniband" and labels["faults"] == []
    for host in ("node01", "node02"):
        raw = f"hosts/{host}/raw"
        ibstat = files[f"{raw}/infiniband/ibstat.txt"]
        assert ibstat.count("\t\tLink layer: InfiniBand\n") == 4 and ibstat.count("\t\tLink layer: Ethernet\n") == 1
        assert ibstat.count("\t\tSM lid: 1\n") == 4 and "\t\tCapability mask: 0xa651e848\n" in ibstat
        for k in range(4):
            sysfs = files[f"{raw}/infiniband/sysfs-mlx5_{k}-1.txt"]
            assert "/link_layer:InfiniBand\n" in sysfs and "/rate:400 Gb/sec (4X NDR)\n" in sysfs
            assert set(_series(sysfs, "port_xmit_wait")) == {COUNTER32_MAX}
            pq = files[f"{raw}/infiniband/perfquery-x-mlx5_{k}-1.txt"]  # the 64-bit counter: not stuck
            assert f'argv="perfquery -x -C mlx5_{k} -P 1"\n# Port extended counters: Lid ' in pq
            assert len(set(re.findall(r"\nPortXmitWait:\.+(\d+)\n", pq))) > 2
            gids = files[f"{raw}/infiniband/gids-mlx5_{k}-1.txt"]
            assert "/gid_attrs/ndevs/" not in gids and re.search(r"/gids/0:fe80:0000:0000:0000:[0-9a-f:]{19}\n", gids)
            assert len(set(re.findall(r"/gids/(\d+):", gids))) == 8
            assert "Speed                              : IB-NDR\n" in files[f"{raw}/mlxlink/mlxlink-mlx5_{k}-1.txt"]
        nics = json.loads(files[f"hosts/{host}/host.json"])["nics"]
        assert [n["rdma_dev"] for n in nics] == ["mlx5_4"]  # the frontend: the rails have no netdev
        assert [n for n in files if n.startswith(f"{raw}/ethtool/")] == [f"{raw}/ethtool/{nics[0]['iface']}.txt"]
        assert [n for n in files if n.startswith(f"{raw}/mlnx_qos/")] == [f"{raw}/mlnx_qos/{nics[0]['iface']}.txt"]
        nccl = "".join(t for n, t in files.items() if n.startswith(f"{raw}/nccl/nccl."))
        assert "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [RO]; OOB " in nccl
        assert "/RoCE" not in nccl and "NCCL_IB_GID_INDEX" not in nccl
    assert [f["kind"] for f in findings if f["severity"] != "info"] == []


@pytest.mark.slow
def test_ib_congestion_is_seen_in_the_64_bit_counter_not_the_saturated_one(run):
    files, labels, findings = run("ib_congestion")
    assert labels["fabric"] == "infiniband"
    (truth,) = labels["faults"]
    host, dev = truth["hosts"][0], truth["subject"].split()[0]
    assert truth["kind"] == "ib_congestion" and truth["subject"] == f"{dev} port 1"
    share = float(re.search(r"waiting (\d+)% of the time", truth["signals"][0]).group(1)) / 100
    assert 0.2 <= share <= 0.6
    raw = f"hosts/{host}/raw/infiniband"
    sysfs = files[f"{raw}/sysfs-{dev}-1.txt"]
    assert "/link_layer:InfiniBand\n" in sysfs and set(_series(sysfs, "port_xmit_wait")) == {COUNTER32_MAX}
    pq = files[f"{raw}/perfquery-x-{dev}-1.txt"]
    assert pq.count("(CapMask: 0x5300 CapMask2: 0x0000002)\n") == pq.count("#### forensics-sample ") > 2
    waits = [int(v) for v in re.findall(r"\nPortXmitWait:\.+(\d+)\n", pq)]
    assert min(waits) > COUNTER32_MAX and waits == sorted(waits) and len(set(waits)) == len(waits)
    got = [f for f in findings if f["kind"] == "ib_congestion"]
    assert [(f["hosts"], f["subject"].split(" (")[0]) for f in got] == [([host], f"{dev} port 1")]
    ev = json.loads(got[0]["evidence"])
    assert ev["counter_bits"] == 64 and abs(ev["max_wait_share"] - share) < 0.05
    roce = json.loads(files[f"hosts/{host}/host.json"])["nics"]
    assert [n for n in files if n.startswith(f"{raw}/perfquery-x-{roce[0]['rdma_dev']}")] == []  # RoCE: not asked


def test_nccl_names_an_infiniband_peer_by_its_link_local_gid():
    """NCCL's completion error prints the QP's GIDs: RoCE the IPv4-mapped one, InfiniBand the port GUID's link-local
    GID, which the port's GID table (gids/0) holds, as inet_ntop writes it."""
    from forensics.simulate.fmt_infiniband import gid_table
    from forensics.simulate.scenarios.base import _nccl_gid

    roce = Nic("enp24s0np0", "mlx5_0", 0x18, 0, 0, "94:6d:ae:00:e0:01", "10.100.0.10", 0, 400000, 9000, "ConnectX-7")
    ib = Nic("enp24s0np0", "mlx5_0", 0x18, 0, 0, "94:6d:ae:00:e0:01", "10.100.0.10", 0, 400000, 9000, "ConnectX-7",
             link_layer="InfiniBand")
    assert _nccl_gid(roce) == "::ffff:10.100.0.10"
    assert gid_table(ib)[0] == ("fe80:0000:0000:0000:946d:ae03:0000:e001", "IB/RoCE v1")
    assert _nccl_gid(ib) == "fe80::946d:ae03:0:e001"


def _dcqcn(scenario: str, **extra):
    """{(host, iface): counters at the capture's first and last second} of every port of a small simulation."""
    from forensics.simulate import Simulation
    from forensics.simulate.fmt_infiniband import ib_values

    sim = Simulation(SimConfig(scenario, nodes=3, gpus_per_node=2, duration_s=150.0, interval_s=5.0, seed=5,
                               confounders=False, **extra))
    plan = sim.plan
    times = plan.grid0 + np.arange(0, plan.T - 1, 5.0)
    out = {}
    for h, host in enumerate(sim.cluster.hosts):
        for nic in host.nics:
            _, hw = ib_values(plan, h, nic, {}, times)
            out[(host.name, nic.iface)] = {k: hw[k] for k in hw if k[:3] in ("np_", "rp_")}
    return sim, times, out


def test_roce_ports_write_the_dcqcn_counters_flat_when_healthy():
    """mlx5's four congestion-control counters (counters.c cong_cnts) on every RoCE port: on a healthy fabric a few
    ECN marks a second at most, CNPs no more than marks, none ignored, nothing on the frontend (no RDMA); every CNP
    a rail's ports send is handled by a port of that rail; InfiniBand rails have none of the four."""
    sim, times, ports = _dcqcn("healthy")
    span = times[-1] - times[0]
    for (host, iface), c in ports.items():
        assert sorted(c) == ["np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled", "rp_cnp_ignored"]
        for v in c.values():
            assert (np.diff(v) >= 0).all()
        assert set(c["rp_cnp_ignored"]) == {0}
        marks = c["np_ecn_marked_roce_packets"][-1] - c["np_ecn_marked_roce_packets"][0]
        assert marks <= 2 * span  # rare marks (at most 0.5 a second on average, Poisson)
        assert c["np_cnp_sent"][-1] - c["np_cnp_sent"][0] <= marks
        if iface == sim.cluster.hosts[0].frontend.iface:
            assert all(set(v) == {0} for v in c.values())
    assert sum(c["np_ecn_marked_roce_packets"][-1] - c["np_ecn_marked_roce_packets"][0] for c in ports.values()) > 0
    for rail in range(2):
        rail_ports = [ports[(h.name, h.rails[rail].iface)] for h in sim.cluster.hosts]
        sent = sum(c["np_cnp_sent"][-1] - c["np_cnp_sent"][0] for c in rail_ports)
        handled = sum(c["rp_cnp_handled"][-1] - c["rp_cnp_handled"][0] for c in rail_ports)
        assert abs(sent - handled) <= len(rail_ports)  # (each port's count floored)
    _, _, ib = _dcqcn("healthy", fabric="infiniband")
    rails = {iface for h in sim.cluster.hosts for iface in [n.iface for n in h.rails]}
    assert all(c == {} for (_, iface), c in ib.items() if iface in rails)


def test_pfc_storm_port_is_marked_and_its_senders_handle_the_cnps():
    """The storming port (it sends the pauses): the switch queue toward it stays past its ECN threshold, so it
    counts ECN-marked packets and sends CNPs thousands of times faster than a healthy port; its rail peers (the
    senders) handle them; the other rail stays quiet."""
    sim, times, ports = _dcqcn("pfc_storm")
    (truth,) = [f for f in sim.plan.faults if f["kind"] == "pfc_storm"]
    storm = (truth["hosts"][0], truth["subject"])

    def rise(key, counter):
        return int(ports[key][counter][-1] - ports[key][counter][0])

    rail = next(n.rail for h in sim.cluster.hosts for n in h.rails if (h.name, n.iface) == storm)
    quiet = [(h.name, h.rails[1 - rail].iface) for h in sim.cluster.hosts]
    peers = [(h.name, h.rails[rail].iface) for h in sim.cluster.hosts if h.name != storm[0]]
    top_quiet = max(rise(k, "np_ecn_marked_roce_packets") for k in quiet)
    assert rise(storm, "np_ecn_marked_roce_packets") > 1000 * max(top_quiet, 1)
    assert 0 < rise(storm, "np_cnp_sent") <= rise(storm, "np_ecn_marked_roce_packets")
    for k in peers:
        assert rise(k, "rp_cnp_handled") >= rise(storm, "np_cnp_sent") / len(peers) - 1
        assert rise(k, "rp_cnp_handled") > 1000 * max(max(rise(q, "rp_cnp_handled") for q in quiet), 1)
