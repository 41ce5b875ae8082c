"""infiniband source: the collector's series of sysfs reads, perfquery from a sosreport, the port
inventory the collector expands its sysfs read over, and values that are no counter."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from forensics.collect import node
from forensics.collect.main import expand_items
from forensics.collect.specs import by_name
from forensics.importers import sos
from forensics.sources import ParseContext, registry

PARSER = registry()["infiniband"]


def _series() -> bytes:
    out = []
    for k, (downed, sym) in enumerate([(0, 0), (0, 0), (1, 17), (2, 40)]):
        ts = dt.datetime(2026, 11, 30, 10, 0, 5 * k, tzinfo=dt.timezone.utc).isoformat(timespec="microseconds")
        out.append(f'#### forensics-sample ts={ts} argv="grep -H -s -r . /sys/class/infiniband/mlx5_3/ports/1/state"')
        out.append("/sys/class/infiniband/mlx5_3/ports/1/state:4: ACTIVE" if k < 3 else
                   "/sys/class/infiniband/mlx5_3/ports/1/state:1: DOWN")
        out.append("/sys/class/infiniband/mlx5_3/ports/1/rate:400 Gb/sec (4X NDR)")
        out.append(f"/sys/class/infiniband/mlx5_3/ports/1/counters/link_downed:{downed}")
        out.append(f"/sys/class/infiniband/mlx5_3/ports/1/counters/symbol_error:{sym}")
        out.append("/sys/class/infiniband/mlx5_3/ports/1/hw_counters/np_cnp_sent:12")
    return ("\n".join(out) + "\n").encode()


def test_marker_series_gives_state_and_counters_per_sample():
    res = PARSER.parse(_series(), ParseContext(host="n7", file="raw/infiniband/sysfs-mlx5_3-1.txt"))
    ports = res.tables["ib_ports"]
    assert ports.select("sample_no", "state").rows() == [(0, "ACTIVE"), (1, "ACTIVE"), (2, "ACTIVE"), (3, "DOWN")]
    assert set(ports["ts_quality"]) == {"sampled"} and ports["rate_gbps"].to_list() == [400.0] * 4
    c = res.tables["ib_counters"].filter(counter="link_downed")
    assert c["value"].to_list() == [0, 0, 1, 2] and c["ts"].is_sorted()
    assert set(res.tables["ib_counters"]["counter_set"]) == {"counters", "hw_counters"}
    assert res.unparsed.height == 0 and res.lines == 24


def test_perfquery_from_a_sosreport_takes_its_device_from_the_file_name():
    hit = sos.pick("sos_commands/infiniband/perfquery_-C_mlx5_2_-P_1")
    assert hit == ("infiniband", "perfquery_-C_mlx5_2_-P_1.txt", {"device": "mlx5_2", "port": "1"})
    data = (b"# Port counters: Lid 5 port 1 (CapMask: 0x1400)\nPortSelect:......................1\n"
            b"CounterSelect:...................0x0000\nSymbolErrorCounter:..............65535\n"
            b"LinkDownedCounter:...............255\n")
    res = PARSER.parse(data, ParseContext(host="n1", file="hosts/n1/raw/infiniband/" + hit[1]))
    rows = res.tables["ib_counters"].select("device", "port", "counter_set", "counter", "raw_name", "value").rows()
    assert rows == [("mlx5_2", 1, "PortCounters", "symbol_error", "SymbolErrorCounter", 65535),
                    ("mlx5_2", 1, "PortCounters", "link_downed", "LinkDownedCounter", 255)]


def test_values_that_are_no_counter_are_reported():
    data = (b"/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:N/A\n"
            b"/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed:99999999999999999999\n"
            b"/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_errors:3\n"
            b"hello world\n")
    res = PARSER.parse(data, ParseContext(host="n1"))
    assert res.tables["ib_counters"]["counter"].to_list() == ["port_rcv_errors"]
    assert res.unparsed.select("line_no", "reason").rows() == [
        (1, "counter value is not an unsigned 63-bit integer"), (2, "counter value is not an unsigned 63-bit integer"),
        (4, "not ibstat, ibstatus, perfquery or sysfs counter output")]


def test_collector_reads_every_rdma_port(tmp_path, monkeypatch):
    for dev, ports in (("mlx5_0", ("1",)), ("mlx5_bond_0", ("1",)), ("hfi1_0", ("1", "2"))):
        for p in ports:
            (tmp_path / "class" / "infiniband" / dev / "ports" / p / "counters").mkdir(parents=True)
    (tmp_path / "class" / "infiniband" / "bad name").mkdir()
    monkeypatch.setenv("FORENSICS_SYSFS_ROOT", str(tmp_path))
    found = node.ib_ports()
    assert found == [("hfi1_0", "1"), ("hfi1_0", "2"), ("mlx5_0", "1"), ("mlx5_bond_0", "1")]
    spec = by_name()["ib_sysfs"]
    items = expand_items(spec, ["eth0"], found)
    assert items[2] == {"ibdev": "mlx5_0", "port": "1"}
    argv = [a.format(**items[2]) for a in spec.argv]
    assert argv[:5] == ["grep", "-H", "-s", "-r", "."] and "/sys/class/infiniband/mlx5_0/ports/1/counters" in argv
    assert spec.raw.format(**items[2]) == "sysfs-mlx5_0-1.txt"


def test_perfquery_x_runs_on_infiniband_ports_only(tmp_path, monkeypatch):
    """The 64-bit PortXmitWait series: perfquery -x per InfiniBand link-layer port (a RoCE port has no LID to
    address; a port whose link_layer cannot be read is not asked either)."""
    for dev, layer in (("mlx5_0", "InfiniBand\n"), ("mlx5_1", "Ethernet\n"), ("mlx5_2", None)):
        port = tmp_path / "class" / "infiniband" / dev / "ports" / "1"
        port.mkdir(parents=True)
        if layer:
            (port / "link_layer").write_text(layer)
    monkeypatch.setenv("FORENSICS_SYSFS_ROOT", str(tmp_path))
    found = node.ib_ports()
    ib = [(d, p) for d, p in found if node.ib_link_layer(d, p) == "InfiniBand"]
    assert ib == [("mlx5_0", "1")] and node.ib_link_layer("mlx5_2", "1") is None
    spec = by_name()["ib_perfquery_x"]
    items = expand_items(spec, ["eth0"], found, ib)
    assert items == [{"ibdev": "mlx5_0", "port": "1"}]
    assert [a.format(**items[0]) for a in spec.argv] == ["perfquery", "-x", "-C", "mlx5_0", "-P", "1"]
    assert spec.raw.format(**items[0]) == "perfquery-x-mlx5_0-1.txt" and spec.mode == "snapshot"
    assert expand_items(by_name()["ib_sysfs"], ["eth0"], found, ib) == [{"ibdev": d, "port": "1"} for d in
                                                                       ("mlx5_0", "mlx5_1", "mlx5_2")]


def test_no_rdma_port_means_no_sysfs_read(tmp_path, monkeypatch):
    monkeypatch.setenv("FORENSICS_SYSFS_ROOT", str(tmp_path))
    assert node.ib_ports() == [] and expand_items(by_name()["ib_sysfs"], ["eth0"], []) == []


def test_ibv_devinfo_from_a_sosreport_gives_the_gid_table():
    """sos's infiniband plugin runs ``ibv_devinfo -v`` (sos @5c7e63e, plugins/infiniband.py): its GID lines are read."""
    hit = sos.pick("sos_commands/infiniband/ibv_devinfo_-v")
    assert hit == ("infiniband", "ibv_devinfo_-v.txt", {})
    fixture = Path(__file__).parent / "fixtures" / "infiniband" / "infiniband--ibv-devinfo-v-magnate3-rxe-port-gids.txt"
    res = PARSER.parse(fixture.read_bytes(), ParseContext(host="n1", file="hosts/n1/raw/infiniband/" + hit[1]))
    gids = res.tables["ib_gids"]
    assert gids.height == 2 and set(gids["tool"]) == {"ibv_devinfo"} and set(gids["port"]) == {1}
    assert "::ffff:10.11.11.251" in gids["address"].to_list()


def _fast_path_inputs() -> dict[str, bytes]:
    """sysfs series the shortcuts of the reader take (the collector's form), and variants they must hand on."""
    base = _series().decode()
    dup = base.replace("/rate:400 Gb/sec (4X NDR)\n", "/rate:400 Gb/sec (4X NDR)\n/sys/class/infiniband/mlx5_3/ports/1/rate:"
                       "junk\n/sys/class/infiniband/mlx5_3/ports/01/link_layer:InfiniBand  \n"
                       "/sys/class/infiniband/mlx5_4/ports/2/phys_state:5: LinkUp\n", 2)
    return {
        "series": base.encode(), "duplicates and two ports": dup.encode(),
        "no markers": "".join(ln + "\n" for ln in dup.splitlines() if not ln.startswith("####")).encode(),
        "relative, double slash, blanks": dup.replace("/sys/class/infiniband/", "").replace("1/counters/", "1//counters/")
        .replace("\n/sys", "\n  /sys").encode(),
        "a blank line": dup.replace("\n", "\n\n", 3).encode(),
        "ibv_devinfo in a sample": dup.replace("\n", "\nhca_id:\tmlx5_3\n\tport:\t1\n", 1).encode(),
        "a GID line in a path": dup.replace("mlx5_4/ports/2/phys", "a/ports/1/gids/0:b/ports/2/phys").encode(),
        "values that are no counter": dup.replace("symbol_error:17", "symbol_error:+17").replace("np_cnp_sent:12", "np_cnp_sent:", 1)
        .encode(),
    }


def test_shortcuts_give_the_tables_of_the_general_reader(monkeypatch):
    """The canonical counter pattern and the attribute-only series (no state machine) are shortcuts:
    with both switched off the general pattern and the state machine give the same tables."""
    from polars.testing import assert_frame_equal

    from forensics.sources import infiniband as ib

    ctxs = [ParseContext(host="n7", file="sysfs-mlx5_3-1.txt"),
            ParseContext(host="n7", file="x", capture_time=dt.datetime(2026, 11, 30, 9, 0))]
    real, took = ib._only_sysfs_attrs, {}
    fast = {}
    for k, v in _fast_path_inputs().items():
        monkeypatch.setattr(ib, "_only_sysfs_attrs", lambda walk, k=k: took.setdefault(k, real(walk)))
        fast.update({(k, i): ib.parse(v, c) for i, c in enumerate(ctxs)})
    assert {k for k, v in took.items() if v is not None} == {"series", "duplicates and two ports", "no markers",
                                                            "relative, double slash, blanks", "values that are no counter"}
    monkeypatch.setattr(ib, "_SYSFS_CANONICAL_RE", r"^(a)(b)(c)(d)(e)\b\B$")  # matches nothing
    monkeypatch.setattr(ib, "_only_sysfs_attrs", lambda walk: None)
    for (k, i), got in fast.items():
        want = ib.parse(_fast_path_inputs()[k], ctxs[i])
        for t in ("ib_ports", "ib_counters", "ib_gids"):
            assert_frame_equal(got.tables[t], want.tables[t])
        assert_frame_equal(got.unparsed, want.unparsed)
        assert (got.lines, got.meta) == (want.lines, want.meta), k
    assert fast[("duplicates and two ports", 0)].tables["ib_ports"].height == 6  # 4 samples, mlx5_4 in 2
