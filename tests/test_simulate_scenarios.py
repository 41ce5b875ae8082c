"""Every scenario: raw outputs parse with zero unparsed lines through the registered sources, the
truth has the documented shape, and each fault's signal is really in the raw data."""
from __future__ import annotations

import datetime as dt
import json
import re
from functools import lru_cache

import numpy as np
import pytest

from forensics import sources
from forensics.detect.catalog import KINDS
from forensics.ingest.collector_tables import parse_processes
from forensics.ingest.host import routed_source
from forensics.simulate import SCENARIOS, SimConfig, Simulation
from forensics.simulate.hardware import cpu_list_str
from forensics.sources import ParseContext

ALL = sorted(SCENARIOS)


@lru_cache(maxsize=None)
def bundle(name: str, nodes: int = 3, gpus: int = 2, seed: int = 1, confounders: bool = True) -> tuple[Simulation, dict]:
    sim = Simulation(SimConfig(name, nodes=nodes, gpus_per_node=gpus, duration_s=180, interval_s=3, seed=seed,
                               confounders=confounders))
    return sim, dict(sim.members())


def _ts(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(s)


def context(members: dict, rel: str) -> ParseContext:
    """The parse context the bundle layout contract defines for a raw file."""
    host = rel.split("/")[1]
    info = json.loads(members[f"hosts/{host}/host.json"])
    cmds = [json.loads(x) for x in members[f"hosts/{host}/commands.jsonl"].decode().splitlines()]
    start = min((_ts(c["start"]) for c in cmds if c["raw_file"] == rel), default=None)
    hints = {}
    if rel.split("/")[3] == "ethtool":
        hints["iface"] = rel.rsplit("/", 1)[1][: -len(".txt")]
    return ParseContext(host=host, file=rel, tz=info["timezone"], boot_time=_ts(info["boot_time"]),
                        capture_time=start, year=start.year if start else None, hints=hints)


def raw_files(members: dict):
    for rel, data in sorted(members.items()):
        parts = rel.split("/")
        if len(parts) >= 5 and parts[0] == "hosts" and parts[2] == "raw":
            yield rel, parts[3], data


def _text(members: dict, host: str, *path: str) -> str:
    return members[f"hosts/{host}/raw/{'/'.join(path)}"].decode()


def _counter(members: dict, host: str, iface: str, name: str) -> list[tuple[dt.datetime, int]]:
    out, ts = [], None
    for line in _text(members, host, "ethtool", f"{iface}.txt").splitlines():
        if line.startswith("#### forensics-sample ts="):
            ts = _ts(line.split("ts=", 1)[1].split(" ", 1)[0])
        elif line.startswith(f"     {name}: "):
            out.append((ts, int(line.rsplit(" ", 1)[1])))
    return out


def _delta(series, t0: dt.datetime, t1: dt.datetime) -> int:
    inside = [v for t, v in series if t0 <= t <= t1]
    return inside[-1] - inside[0] if len(inside) > 1 else 0


CSV_COLS = ("timestamp", "index", "uuid", "pci.bus_id", "utilization.gpu", "utilization.memory", "temperature.gpu",
            "power.draw", "clocks.sm", "clocks.mem", "clocks_event_reasons.active")


def _csv(members: dict, host: str) -> list[list[str]]:
    """query-gpu.csv rows with the columns of CSV_COLS in that order (the collector's field order may change)."""
    head, *rows = _text(members, host, "nvidia_smi", "query-gpu.csv").splitlines()
    names = [c.split(" [")[0] for c in head.split(", ")]
    at = [names.index(c) for c in CSV_COLS]
    return [[cells[i] for i in at] for cells in (r.split(", ") for r in rows)]


def _fault(labels: dict, kind: str) -> dict:
    return next(f for f in labels["faults"] if f["kind"] == kind)


# ---------------------------------------------------------------------------- formats
def _check_parse(members: dict, only: set[str] | None = None) -> int:
    reg = sources.registry()
    checked = 0
    for rel, src, data in raw_files(members):
        if only and src not in only:
            continue
        if src == "collector":
            if rel.endswith("processes.jsonl"):
                res = parse_processes(data, context(members, rel))
                assert res.unparsed.height == 0, rel
            continue
        src = routed_source(src, data)  # as ingest reads it: raw/nccl also holds training logs and FR dumps
        if src not in reg:
            pytest.skip(f"no parser for source {src!r} yet")
        res = reg[src].parse(data, context(members, rel))
        # a JSON Flight Recorder dump has no final newline: its one line still counts
        assert res.lines == data.count(b"\n") + (bool(data) and not data.endswith(b"\n")), rel
        assert res.unparsed.height == 0, (rel, res.unparsed.select("line_no", "text", "reason").head(5).rows())
        assert sum(res.rows().values()) > 0, rel
        checked += 1
    return checked


def test_healthy_parses_with_zero_unparsed():
    _sim, members = bundle("healthy")
    assert _check_parse(members) > 30


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in ALL if n != "healthy"])  # healthy: the fast test above
def test_every_scenario_parses_with_zero_unparsed(name):
    _sim, members = bundle(name)
    _check_parse(members)


# ---------------------------------------------------------------------------- truth
@pytest.mark.parametrize("name", ALL)
def test_labels_shape(name):
    sim, members = bundle(name)
    labels = json.loads(members["truth/labels.json"])
    assert set(labels) == {"scenario", "seed", "faults", "effects", "clock_offsets_s", "confounders", "clock_steps"} | (
        {"fabric"} if sim.cfg.infiniband else set())  # said only where the rails are InfiniBand
    assert labels.get("fabric", "infiniband") == "infiniband"
    assert labels["confounders"] is True  # the fleet's benign variation is on by default
    assert labels["scenario"] == name and labels["seed"] == 1
    hosts = json.loads(members["manifest.json"])["hosts"]
    assert sorted(labels["clock_offsets_s"]) == hosts
    assert all(abs(v) <= 0.05 + 1e-9 for v in labels["clock_offsets_s"].values())
    if name != "healthy":
        assert labels["faults"], name
    for entry in labels["faults"] + labels["effects"]:
        assert {"kind", "hosts", "subject", "start", "end", "signals"} <= set(entry) <= {
            "kind", "hosts", "subject", "start", "end", "signals", "part", "unobservable", "onset_s"}
        assert entry["kind"] in KINDS
        assert entry["hosts"] and set(entry["hosts"]) <= set(hosts)
        assert entry["subject"] is None or isinstance(entry["subject"], str)
        start = _ts(entry["start"])
        assert start.tzinfo is not None
        if entry["end"] is not None:
            assert _ts(entry["end"]) >= start
        assert entry["signals"] and all(isinstance(s, str) and s for s in entry["signals"])


def test_clock_offsets_are_the_hosts_clocks():
    """Each host prints its own clock: host.json start of the collection (host clock) minus the true
    start is its offset; the clock reference (wall, monotonic) is read at the end, as collect does."""
    sim, members = bundle("healthy")
    labels = json.loads(members["truth/labels.json"])
    for h in sim.cluster.hosts:
        info = json.loads(members[f"hosts/{h.name}/host.json"])
        started = _ts(info["collector"]["started"]).timestamp()
        assert abs(started - (sim.cfg.t0 + h.jitter_s) - labels["clock_offsets_s"][h.name]) < 1e-5
        wall = _ts(info["clock"]["wall"]).timestamp()
        assert abs(wall - info["clock"]["monotonic_s"] - _ts(info["boot_time"]).timestamp()) < 1e-5
        assert wall >= _ts(info["collector"]["ended"]).timestamp() - 1e-5 and wall > started + sim.cfg.duration_s
    assert len({h.tz for h in sim.cluster.hosts}) >= 1


# ---------------------------------------------------------------------------- signals
def test_healthy_is_quiet():
    sim, members = bundle("healthy", confounders=False)  # without the fleet's boot-time link messages
    for h in sim.cluster.hosts:
        dm = _text(members, h.name, "dmesg", "dmesg.txt")
        assert "Xid" not in dm and "Link down" not in dm
        for nic in h.rails:
            rate = _delta(_counter(members, h.name, nic.iface, "tx_prio3_pause"), _ts("2000-01-01T00:00:00+00:00"),
                          _ts("2100-01-01T00:00:00+00:00"))
            assert rate < 2000  # a few pauses per second at most
        assert "WARN" not in "".join(v.decode() for k, v in members.items() if "/raw/nccl/" in k and h.name in k)
        util = [int(r[4].split()[0]) for r in _csv(members, h.name)]
        assert np.mean(util) > 95


def test_pfc_storm_pauses_rise_on_the_named_port():
    sim, members = bundle("pfc_storm")
    f = _fault(json.loads(members["truth/labels.json"]), "pfc_storm")
    host, iface = f["hosts"][0], f["subject"]
    t0, t1 = _ts(f["start"]), _ts(f["end"])
    secs = (t1 - t0).total_seconds()
    assert _delta(_counter(members, host, iface, "tx_prio3_pause"), t0, t1) > 50000 * secs * 0.5
    assert _delta(_counter(members, host, iface, "tx_prio3_pause_duration"), t0, t1) > 500000 * secs * 0.5
    assert _delta(_counter(members, host, iface, "rx_prio3_pause"), t0, t1) > 1000 * secs * 0.5
    assert _delta(_counter(members, host, iface, "tx_pause_storm_warning_events"), t0, t1) >= 1
    other = next(n.iface for n in sim.cluster.hosts[0].rails if n.iface != iface)
    # other ports see normal congestion: pauses in proportion to their traffic, far below the storm
    assert _delta(_counter(members, host, other, "tx_prio3_pause"), t0, t1) * 20 < \
        _delta(_counter(members, host, iface, "tx_prio3_pause"), t0, t1)
    # busy but slow: utilisation stays ~100% while the step (and the traffic rate) slows
    util = [int(r[4].split()[0]) for r in _csv(members, host)]
    assert np.mean(util) > 95


def _has_watchdog(members) -> bool:
    return any("Watchdog caught collective operation timeout" in v.decode()
               for k, v in members.items() if "/raw/nccl/torchrun-" in k)


def test_packet_drops_then_nccl_errors_then_timeouts():
    sim, members = bundle("packet_drops")
    labels = json.loads(members["truth/labels.json"])
    f = _fault(labels, "packet_drops")
    host, iface = f["hosts"][0], f["subject"]
    t0, t1 = _ts(f["start"]), _ts(f["end"])
    assert _delta(_counter(members, host, iface, "rx_discards_phy"), t0, t1) > 10000
    assert _delta(_counter(members, host, iface, "rx_out_of_buffer"), t0, t1) > 100
    logs = "".join(v.decode() for k, v in members.items() if "/raw/nccl/nccl." in k)
    assert re.search(r"NCCL WARN NET/IB : Got completion from peer [0-9.]+<\d+> with status=12 opcode=0 len=0 "
                     r"vendor err 129 \(Send\)", logs)
    assert _has_watchdog(members)
    edev = _text(members, host, "sar", "sar-n-EDEV.txt")
    drops = [float(x.split()[5]) for x in edev.splitlines() if f" {iface} " in x and not x.startswith("Average")]
    assert max(drops) > 50


def test_link_flap_in_dmesg_and_counters():
    sim, members = bundle("link_flap", confounders=False)  # boot-time Link down lines aside
    f = _fault(json.loads(members["truth/labels.json"]), "link_flap")
    host, iface = f["hosts"][0], f["subject"]
    dm = _text(members, host, "dmesg", "dmesg.txt")
    downs = re.findall(rf"mlx5_core 0000:[0-9a-f]{{2}}:00\.0 {iface}: Link down", dm)
    ups = re.findall(rf"mlx5_core 0000:[0-9a-f]{{2}}:00\.0 {iface}: Link up", dm)
    assert len(downs) == 3 and len(ups) >= 4  # boot + the flaps
    ctr = _counter(members, host, iface, "link_down_events_phy")
    assert ctr[-1][1] - ctr[0][1] == 3
    logs = "".join(v.decode() for k, v in members.items() if f"/{host}/raw/nccl/" in k)
    assert "Got async event : port error" in logs and "status=12" in logs


def test_thermal_throttle_flags_and_clock():
    sim, members = bundle("thermal_throttle")
    f = _fault(json.loads(members["truth/labels.json"]), "gpu_throttle")
    host = f["hosts"][0]
    g = int(f["subject"].split()[0][3:])
    rows = [r for r in _csv(members, host) if r[1] == str(g)]
    late = rows[-10:]
    assert all(int(r[10], 16) & 0x20 for r in late)          # SW Thermal Slowdown
    assert any(int(r[10], 16) & 0x40 for r in late)          # HW Thermal Slowdown
    assert max(int(r[8].split()[0]) for r in late) < 1800    # SM clock down from 1980
    assert min(int(r[6]) for r in late) >= 87
    q = _text(members, host, "nvidia_smi", "q.txt")
    assert "HW Thermal Slowdown           : Active" in q
    others = [r for r in _csv(members, host) if r[1] != str(g)][-10:]
    assert not any(int(r[10], 16) & 0x60 for r in others)


def test_xid79_gpu_falls_off_and_rank_dies():
    sim, members = bundle("xid_79")
    f = _fault(json.loads(members["truth/labels.json"]), "gpu_xid")
    host = f["hosts"][0]
    pci = f["subject"].split()[1]
    dm = _text(members, host, "dmesg", "dmesg.txt")
    assert f"NVRM: Xid (PCI:{pci[:-2]}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus." in dm
    assert re.search(r"NVRM: Xid \(PCI:0000:[0-9a-f]{2}:00\): 45, pid=\d+, name=pt_main_thread", dm)
    g = int(f["subject"].split()[0][3:])
    t_fail = _ts(f["start"])
    rows = _csv(members, host)
    gone = [r for r in rows if r[1] == str(g)]
    assert len(gone) < len([r for r in rows if r[1] == "0" or r[1] == "1"]) // 2 + 5
    assert _has_watchdog(members)
    assert t_fail


def test_ecc_remap_xids_and_pending_rows():
    sim, members = bundle("ecc_remap")
    f = _fault(json.loads(members["truth/labels.json"]), "ecc_error")
    host = f["hosts"][0]
    dm = _text(members, host, "dmesg", "dmesg.txt")
    for xid in (48, 63, 94):
        assert re.search(rf"NVRM: Xid \(PCI:0000:[0-9a-f]{{2}}:00\): {xid}, ", dm), xid
    q = _text(members, host, "nvidia_smi", "q.txt")
    assert "Pending                           : Yes" in q
    assert "DRAM Uncorrectable            : 1" in q


def test_dataloader_starvation_cpu_disk_gpu():
    sim, members = bundle("dataloader_starvation")
    f = _fault(json.loads(members["truth/labels.json"]), "io_starvation")
    host = f["hosts"][0]
    io = _text(members, host, "iostat", "iostat.txt").splitlines()
    util = [float(x.split()[-1]) for x in io if x.startswith("sda ")]
    assert max(util) > 98
    awaits = [float(x.split()[5]) for x in io if x.startswith("sda ")]
    assert max(awaits) > 15
    sar = _text(members, host, "sar", "sar-u.txt").splitlines()
    idle = [float(x.split()[-1]) for x in sar if " all " in x and not x.startswith("Average")]
    assert min(idle) < 10
    gpu = [int(r[4].split()[0]) for r in _csv(members, host)]
    n = len(gpu)
    assert np.mean(gpu[n // 2: n // 2 + n // 6]) < 40


def test_numa_misplacement_in_processes_and_nccl():
    sim, members = bundle("numa_misplacement")
    f = _fault(json.loads(members["truth/labels.json"]), "numa_misplacement")
    host = next(h for h in sim.cluster.hosts if h.name == f["hosts"][0])
    procs = [json.loads(x) for x in _text(members, host.name, "collector", "processes.jsonl").splitlines()]
    wrong = [p for p in procs if p["cpus_allowed_list"] != cpu_list_str(host.gpus[p["gpus"][0]].numa)]
    assert len(wrong) == 2
    for p in wrong:
        log = _text(members, host.name, "nccl", f"nccl.{host.name}.{p['pid']}.log")
        assert "Setting affinity for GPU" not in log


@pytest.mark.parametrize("seed,needle", [(0, "NCCL_BUFFSIZE set by environment to 2097152."),
                                        (1, "GPU Direct RDMA Disabled for GPU"),
                                        (2, "Using network Socket")])
def test_nccl_misconfig_variants(seed, needle):
    sim, members = bundle("nccl_misconfig", seed=seed)
    logs = "".join(v.decode() for k, v in members.items() if "/raw/nccl/" in k)
    assert needle in logs
    if seed == 1:
        assert "/GDRDMA" not in logs and re.search(r"via NET/IB/\d+\n", logs)
    if seed == 2:
        assert "via NET/Socket/0" in logs and "via NET/IB" not in logs


def test_pulsing_gpus_take_turns():
    sim, members = bundle("pulsing_utilization")
    rows = _csv(members, sim.cluster.hosts[0].name)
    n = len(rows) // 2
    for g in range(2):
        u = np.array([int(r[4].split()[0]) for r in rows if r[1] == str(g)][n // 4:])
        assert (u > 90).mean() > 0.2 and (u < 15).mean() > 0.15


def test_straggler_shows_only_in_peer_comparison():
    sim, members = bundle("straggler", confounders=False)
    f = _fault(json.loads(members["truth/labels.json"]), "straggler")
    slow = f["hosts"][0]
    power = {}
    for h in sim.cluster.hosts:
        rows = _csv(members, h.name)
        power[h.name] = np.mean([float(r[7].split()[0]) for r in rows[len(rows) * 2 // 3:]])
        dm = _text(members, h.name, "dmesg", "dmesg.txt")
        assert "Xid" not in dm and "Link down" not in dm
        assert not any(int(r[10], 16) & 0x68 for r in rows)
    assert power[slow] > max(p for h, p in power.items() if h != slow) + 40


def test_seed000_case_study_has_all_three():
    sim, members = bundle("seed000_case_study")
    labels = json.loads(members["truth/labels.json"])
    assert {f["kind"] for f in labels["faults"]} == {"numa_misplacement", "nccl_misconfig"}
    logs = "".join(v.decode() for k, v in members.items() if "/raw/nccl/" in k)
    assert "NCCL_BUFFSIZE set by environment to 2097152." in logs
    assert "NCCL_NET_GDR_LEVEL set by environment to LOC" in logs
    assert "/GDRDMA" not in logs


# ---------------------------------------------------------------------------- paging, swap, NVLink
def _sar_rows(members: dict, host: str, name: str) -> tuple[list[str], list[list[float]]]:
    """(column names, value rows without the Average row) of a single-row-per-interval sar report."""
    lines = _text(members, host, "sar", name).splitlines()
    head = lines[2].split()[1:]
    rows = [[float(x) for x in ln.split()[1:]] for ln in lines[3:] if ln and not ln.startswith("Average:")]
    return head, rows


def _nvlink(members: dict, host: str) -> list[tuple[dt.datetime, dict[int, dict[tuple[int, str], int]]]]:
    """[(marker time, {gpu: {(link, "Tx"|"Rx"): KiB}})] of nvlink-gt-d.txt."""
    out = []
    gpu = None
    for line in _text(members, host, "nvidia_smi", "nvlink-gt-d.txt").splitlines():
        if line.startswith("#### forensics-sample ts="):
            out.append((_ts(line.split("ts=", 1)[1].split(" ", 1)[0]), {}))
        elif line.startswith("GPU "):
            gpu = int(line.split(":")[0][4:])
            out[-1][1][gpu] = {}
        else:
            m = re.fullmatch(r"\t Link (\d+): Data (Tx|Rx): (\d+) KiB", line)
            assert m, line
            out[-1][1][gpu][(int(m.group(1)), m.group(2))] = int(m.group(3))
    return out


@pytest.mark.parametrize("name", ["healthy", "dataloader_starvation", "pfc_storm", "xid_79"])
def test_no_swapping_no_reclaim(name):
    """A training node does not swap: sar -W all zero, -B no scanning/stealing and ~no major faults,
    -S the same few swapped-out kB all along; pgpgin/s follows the dataset reads."""
    sim, members = bundle(name)
    for h in sim.cluster.hosts:
        head, rows = _sar_rows(members, h.name, "sar-W.txt")
        assert head == ["pswpin/s", "pswpout/s"] and rows and all(v == 0 for r in rows for v in r)
        head, rows = _sar_rows(members, h.name, "sar-B.txt")
        assert head == ["pgpgin/s", "pgpgout/s", "fault/s", "majflt/s", "pgfree/s", "pgscank/s", "pgscand/s",
                        "pgsteal/s", "%vmeff"]
        col = {c: np.array([r[i] for r in rows]) for i, c in enumerate(head)}
        assert (col["pgscank/s"] == 0).all() and (col["pgscand/s"] == 0).all() and (col["pgsteal/s"] == 0).all()
        assert col["majflt/s"].mean() < 0.1 and col["pgpgin/s"].mean() > 1000
        head, rows = _sar_rows(members, h.name, "sar-S.txt")
        assert head == ["kbswpfree", "kbswpused", "%swpused", "kbswpcad", "%swpcad"]
        assert len({tuple(r) for r in rows}) == 1 and rows[0][2] < 1.0


def test_nvlink_totals_grow_with_the_allreduce():
    sim, members = bundle("healthy")
    G = sim.cfg.gpus_per_node
    for h in sim.cluster.hosts:
        snaps = _nvlink(members, h.name)
        assert len(snaps) > 5
        for _ts_, gpus in snaps:
            assert sorted(gpus) == list(range(G))
            assert all(len(links) == 2 * 18 for links in gpus.values())
        (t0, first), (t1, last) = snaps[0], snaps[-1]
        nic = h.rails[0]
        net = _delta(_counter(members, h.name, nic.iface, "tx_vport_rdma_unicast_bytes"), t0, t1)
        nvl = sum(last[0][k] - first[0][k] for k in last[0] if k[1] == "Tx") * 1024
        assert 0.8 * (G - 1) * net < nvl < 1.25 * (G - 1) * net
        for a, b in zip(snaps, snaps[1:]):  # running totals
            assert all(b[1][g][k] >= a[1][g][k] for g in b[1] for k in b[1][g])


def test_nvlink_lost_gpu_vanishes():
    sim, members = bundle("xid_79")
    f = _fault(json.loads(members["truth/labels.json"]), "gpu_xid")
    g = int(f["subject"].split()[0][3:])
    t_fail = _ts(f["start"])
    snaps = _nvlink(members, f["hosts"][0])
    assert all(g in gpus for t, gpus in snaps if t < t_fail - dt.timedelta(seconds=1))
    after = [gpus for t, gpus in snaps if t > t_fail + dt.timedelta(seconds=1)]
    assert after and all(g not in gpus and gpus for gpus in after)
