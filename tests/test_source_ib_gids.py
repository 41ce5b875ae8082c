"""RDMA GID tables (``ib_gids``) as real tools print them, and what causality does with them: an
untimed NCCL completion error on a peer host follows the fault of the host owning its remoteGids."""
from __future__ import annotations

import doctest
import json
from pathlib import Path

from forensics.analysis import analyze_paths
from forensics.simulate import SimConfig, write_bundle
from forensics.sources import ParseContext
from forensics.sources import infiniband as ib
from forensics import gid
from forensics.gid import address
from forensics.sources._ib_gids import remote_addresses

FIXTURES = Path(__file__).parent / "fixtures" / "infiniband"


def _gids(name_or_bytes, **hints):
    data = name_or_bytes if isinstance(name_or_bytes, bytes) else (FIXTURES / name_or_bytes).read_bytes()
    res = ib.parse(data, ParseContext(host="n1", hints=hints))
    rows = res.tables["ib_gids"].select("device", "port", "gid_index", "address", "gid_type", "ndev", "tool").rows()
    return res, rows


def test_show_gids_of_a_connectx6_with_two_link_local_and_one_ipv4_address():
    res, rows = _gids("infiniband--show-gids-spectrumscale-pr4-cx6-link-local-and-ipv4.txt")
    assert ib.sniff((FIXTURES / "infiniband--show-gids-spectrumscale-pr4-cx6-link-local-and-ipv4.txt").read_bytes())
    assert len(rows) == 6 and {r[6] for r in rows} == {"show_gids"}
    assert rows[4] == ("mlx5_0", 1, 4, "::ffff:172.19.0.60", "v1", "ens1f0", "show_gids")
    assert rows[0][3] == "fe80::e42:a1ff:fe5d:4db8" and rows[2][3] == "fe80::1186:a6b1:3f0b:c441"
    # the prompt line is said to be one; header, rule and n_gids_found are structure
    assert res.unparsed.select("line_no", "reason").rows() == [(1, "shell prompt or command line, not tool output")]


def test_ibv_devinfo_port_section_gids_without_type():
    res, rows = _gids("infiniband--ibv-devinfo-v-magnate3-rxe-port-gids.txt")
    assert rows == [(None, 1, 0, "fe80::b208:75ff:fe5f:b85e", None, None, "ibv_devinfo"),
                    (None, 1, 1, "::ffff:10.11.11.251", None, None, "ibv_devinfo")]
    # its other attribute lines are not read, and say so
    assert res.unparsed.height == 21 and set(res.unparsed["reason"]) == {
        "ibv_devinfo line not read (only its hca_id, port and GID lines are)"}
    assert res.lines == 24


def test_sysfs_grep_of_a_gid_table():
    # what `forensics collect` runs per port (grep -H -s -r . gids gid_attrs/types gid_attrs/ndevs), with
    # the values of the show_gids fixture: unused entries read all zero and give no type or netdev line
    base = "/sys/class/infiniband/mlx5_0/ports/1"
    lines = [f"{base}/gids/0:fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8",
             f"{base}/gids/1:fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8",
             f"{base}/gids/4:0000:0000:0000:0000:0000:ffff:ac13:003c",
             f"{base}/gids/5:0000:0000:0000:0000:0000:ffff:ac13:003c",
             f"{base}/gids/6:0000:0000:0000:0000:0000:0000:0000:0000",
             f"{base}/gid_attrs/types/0:IB/RoCE v1", f"{base}/gid_attrs/types/1:RoCE v2",
             f"{base}/gid_attrs/types/4:IB/RoCE v1", f"{base}/gid_attrs/types/5:RoCE v2",
             f"{base}/gid_attrs/ndevs/5:ens1f0"]
    res, rows = _gids(("\n".join(lines) + "\n").encode())
    assert rows == [("mlx5_0", 1, 0, "fe80::e42:a1ff:fe5d:4db8", "IB/RoCE v1", None, "sysfs"),
                    ("mlx5_0", 1, 1, "fe80::e42:a1ff:fe5d:4db8", "RoCE v2", None, "sysfs"),
                    ("mlx5_0", 1, 4, "::ffff:172.19.0.60", "IB/RoCE v1", None, "sysfs"),
                    ("mlx5_0", 1, 5, "::ffff:172.19.0.60", "RoCE v2", "ens1f0", "sysfs")]
    assert res.unparsed.height == 0 and res.lines == len(lines)


def test_ibstatus_default_gid_is_index_0():
    res, rows = _gids("infiniband--ibstatus-gpud-a100-hdr.txt")
    assert rows and all(r[2] == 0 and r[6] == "ibstatus" for r in rows) and rows[0][0] == "mlx5_0"
    assert res.unparsed.height == 0


def test_addresses_as_nccl_prints_them():
    # NCCL's completion errors, old and new formats (tests/fixtures/README.md: issue1814, gpu-operator OpenShift guide)
    assert remote_addresses("localGid ::ffff:29.87.88.182 remoteGids::ffff:29.87.4.221") == ["::ffff:29.87.4.221"]
    assert remote_addresses("req_type=Send localGid ::ffff:10.0.106.7 remoteGids::ffff:10.0.106.6 hca mlx5_11") == [
        "::ffff:10.0.106.6"]
    assert remote_addresses("localGid fe80::4ebb:47ff:fe2e:5fa6  remoteGids fe80::32c5:99ff:febe:6b46  hca r") == [
        "fe80::32c5:99ff:febe:6b46"]
    assert address("0000:0000:0000:0000:0000:ffff:0a0b:0bfb") == "::ffff:10.11.11.251"
    assert address("fe80:0000:0000:0000:0000:0000:0000:0000") is None and address("not a gid") is None
    failures, tried = doctest.testmod(gid)  # the examples of forensics/gid.py
    assert tried > 0 and failures == 0


def test_simulated_xid79_peer_transport_error_follows_the_xid(tmp_path):
    out = tmp_path / "b.tar"
    write_bundle(SimConfig("xid_79", nodes=4, gpus_per_node=2, duration_s=150, interval_s=5, seed=3,
                           confounders=True), out)
    found = analyze_paths([out], cache_dir=tmp_path / "c").findings.to_dicts()
    xid = [f for f in found if f["kind"] == "gpu_xid"]
    errs = [f for f in found if f["kind"] == "nccl_transport_error"]
    assert len(xid) == 1 and errs
    peers = [f for f in errs if xid[0]["hosts"][0] not in f["hosts"]]
    assert peers, "the Xid's peer logged the completion error"
    for f in peers:
        assert json.loads(f["evidence"])["remote_gids"], f
        assert f["caused_by"] == xid[0]["id"], f
    # and the Xid is the one root among the critical findings
    roots = [f for f in found if f["caused_by"] is None and f["severity"] == "critical"]
    assert [f["id"] for f in roots] == [xid[0]["id"]]
