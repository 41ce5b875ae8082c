"""Derived views on known rows: nic_rates, gpu_episodes, disk/iowait episodes, gpus, nccl_log, events."""
from __future__ import annotations

import forensics
from test_db_kit import at, bundle_dir


def _nic(host, iface, raw_name, values, counter=None, queue=None, step=1.0, start=0.0):
    return [{"host": host, "iface": iface, "counter": counter or raw_name, "queue": queue, "raw_name": raw_name,
             "ts": at(start + i * step), "ts_quality": "sampled", "sample_no": i, "value": v}
            for i, v in enumerate(values)]


def test_nic_rates_per_interval_with_resets_and_queues(tmp_path):
    rows = (_nic("n1", "eth2", "rx_prio3_pause", [0, 500, 1500, 1500, 20, 520], step=2.0)
            + _nic("n1", "eth2", "rx0_packets", [10, 20, 40], counter="rx_packets", queue=0)
            + _nic("n1", "eth2", "rx1_packets", [5, 5, 6], counter="rx_packets", queue=1)
            + _nic("n2", "eth2", "rx_prio3_pause", [7, 9]))
    rows.append({"host": "n1", "iface": "eth2", "counter": "rx_prio3_pause", "raw_name": "rx_prio3_pause",
                 "ts": None, "ts_quality": "none", "value": 99})  # no time: cannot make a rate
    b = forensics.open_bundle(bundle_dir(tmp_path, {"nic_counters": rows}))
    pause = b.sql("SELECT dt_s, delta, rate_per_s, reset FROM nic_rates WHERE host = 'n1' AND counter = 'rx_prio3_pause' "
                  "ORDER BY ts").rows()
    assert pause == [(2.0, 500, 250.0, False), (2.0, 1000, 500.0, False), (2.0, 0, 0.0, False),
                     (2.0, 20, 10.0, True), (2.0, 500, 250.0, False)]
    q = b.sql("SELECT queue, list(delta ORDER BY ts) AS d FROM nic_rates WHERE counter = 'rx_packets' "
              "GROUP BY queue ORDER BY queue").rows()
    assert q == [(0, [10, 20]), (1, [0, 1])]
    assert b.sql("SELECT count(*) AS n FROM nic_rates WHERE rate_per_s < 0")["n"][0] == 0
    assert b.sql("SELECT delta FROM nic_rates WHERE host = 'n2'").rows() == [(2,)]


def _gpu(host, gpu, t, **kw):
    return {"host": host, "gpu": gpu, "ts": at(t), "ts_quality": "exact", **kw}


def test_gpu_episodes_from_flags_and_bitmask(tmp_path):
    thermal = [False, True, True, True, False, False, True]
    rows = [_gpu("n1", 0, i, reason_hw_thermal_slowdown=v, reason_gpu_idle=False, sm_clock_mhz=1980 - 900 * v,
                 temp_c=70 + 20 * v) for i, v in enumerate(thermal)]
    # --query-gpu style: only the bitmask (0x4 = SW power cap) is known
    rows += [_gpu("n1", 1, i, clocks_event_reasons=m) for i, m in enumerate([0, 4, 4, 0])]
    b = forensics.open_bundle(bundle_dir(tmp_path, {"gpu_samples": rows}))
    ep = b.sql("SELECT gpu, reason, throttle, start, \"end\", duration_s, ongoing, samples, min_sm_clock_mhz, max_temp_c "
               "FROM gpu_episodes ORDER BY gpu, start").rows(named=True)
    assert [(e["gpu"], e["reason"]) for e in ep] == [(0, "hw_thermal_slowdown"), (0, "hw_thermal_slowdown"),
                                                     (1, "sw_power_cap")]
    first, last, cap = ep
    assert (first["start"], first["end"], first["duration_s"], first["ongoing"], first["samples"]) == \
        (at(1), at(4), 3.0, False, 3)
    assert first["min_sm_clock_mhz"] == 1080 and first["max_temp_c"] == 90 and first["throttle"]
    assert (last["start"], last["end"], last["ongoing"], last["samples"]) == (at(6), at(6), True, 1)
    assert (cap["start"], cap["end"], cap["throttle"]) == (at(1), at(3), True)


def test_disk_and_iowait_episodes(tmp_path):
    disk = [{"host": "n1", "device": "nvme0n1", "source": "iostat", "ts": at(i), "ts_quality": "local",
             "util_pct": u, "r_await_ms": 2.0 + u / 10, "w_await_ms": 1.0, "aqu_sz": u / 10,
             "since_boot": i == 0} for i, u in enumerate([99, 10, 95, 97, 50, 91])]
    cpu = [{"host": "n1", "source": "sar", "cpu": "all", "ts": at(i * 10), "ts_quality": "local", "iowait_pct": w,
            "user_pct": 50.0, "system_pct": 5.0, "idle_pct": 100 - 55 - w} for i, w in enumerate([1, 30, 40, 2])]
    cpu.append({"host": "n1", "source": "sar", "cpu": "3", "ts": at(0), "iowait_pct": 90.0})  # per-CPU: ignored
    b = forensics.open_bundle(bundle_dir(tmp_path, {"disk_io": disk, "cpu_util": cpu}))
    d = b.sql("SELECT start, \"end\", samples, max_util_pct, ongoing FROM disk_episodes ORDER BY start").rows()
    assert d == [(at(2), at(4), 2, 97.0, False), (at(5), at(5), 1, 91.0, True)]  # since-boot report skipped
    assert b.sql("SELECT count(*) FROM disk_saturation(60)").item() == 2
    w = b.sql("SELECT start, \"end\", duration_s, max_iowait_pct FROM iowait_episodes").rows()
    assert w == [(at(10), at(30), 20.0, 40.0)]
    assert b.sql("SELECT count(*) FROM iowait_above(35)").item() == 1


def test_gpus_merges_inventory_rows_by_index_uuid_and_pci(tmp_path):
    gpus = [
        {"host": "n1", "file": "q.txt", "gpu": 0, "uuid": "GPU-aaa", "pci_bus_id": "0000:18:00.0",
         "name": "NVIDIA H100 80GB HBM3", "serial": "1654", "driver_version": "550.54.15"},
        {"host": "n1", "file": "topo-m.txt", "gpu": 0, "numa_node": 0, "cpu_affinity": "0-55"},
        {"host": "n1", "file": "query-gpu.csv", "gpu": None, "uuid": "GPU-bbb", "pci_bus_id": "0000:2A:00.0"},
        {"host": "n1", "file": "q.txt", "gpu": 1, "uuid": "GPU-bbb", "pci_bus_id": "0000:2a:00.0", "name": "NVIDIA H100"},
        {"host": "n1", "file": "topo-m.txt", "gpu": 1, "numa_node": 1},
    ]
    b = forensics.open_bundle(bundle_dir(tmp_path, {"gpus": gpus}))
    rows = b.sql("SELECT gpu, uuid, name, numa_node, cpu_affinity, source_rows, files FROM gpus ORDER BY gpu").rows()
    assert rows == [(0, "GPU-aaa", "NVIDIA H100 80GB HBM3", 0, "0-55", 2, ["q.txt", "topo-m.txt"]),
                    (1, "GPU-bbb", "NVIDIA H100", 1, None, 3, ["q.txt", "query-gpu.csv", "topo-m.txt"])]
    # host facts (gpu_count, versions) are ingest's, not the view's: a bundle of bare tables has none
    assert b.sql("SELECT gpu_count, driver_version FROM hosts").rows() == [(None, None)]


def test_host_facts_come_from_ingest_and_info_and_the_view_agree(tmp_path, cli_env):
    """GPU and NUMA node counts, driver, CUDA and NCCL versions are computed once, by ingest
    (forensics.ingest.hostfacts) into the hosts table; the hosts view and `forensics info` read them."""
    import json
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    fx = Path(__file__).parent / "fixtures"
    node = tmp_path / "n1"
    node.mkdir()
    for src in ("nvidia_smi/nvidia_smi--q-2xrtx4090-535-multi-gpu-cut.txt",
                "numactl/numactl--princeton-della-2node-spr8468-prompt.txt",
                "nccl/nccl--issue392-nccl2.5.7-host-cut-ring-shared-memory.txt"):
        shutil.copy(fx / src, node / Path(src).name)
    exe = Path(sys.executable).parent / "forensics"
    out = tmp_path / "b.tar"
    subprocess.run([str(exe), "bundle", str(node), "--out", str(out)], env=cli_env, check=True, capture_output=True)
    b = forensics.open_bundle(out, cache_dir=tmp_path / "cache")
    facts = ("driver_version", "cuda_version", "nccl_version", "gpu_count", "numa_nodes")
    view = b.sql(f"SELECT {', '.join(facts)} FROM hosts WHERE host = 'n1'").rows()
    assert view == [("535.154.05", "12.2", "2.5.7+cuda10.0", 2, 2)]
    info = json.loads(subprocess.run([str(exe), "info", str(out), "--format", "json"], env=cli_env, check=True,
                                     capture_output=True, text=True).stdout)
    host = next(h for h in info["hosts"] if h["host"] == "n1")
    assert (host["driver_version"], host["gpu_count"], host["numa_nodes"]) == (view[0][0], view[0][3], view[0][4])


def test_nccl_lines_without_time_are_placed_between_stamped_neighbours(tmp_path):
    def line(n, t, host="n1", file="nccl/rank0.log"):
        return {"host": host, "file": file, "line_no": n, "ts": None if t is None else at(t),
                "ts_quality": "none" if t is None else "local", "level": "INFO", "message": f"line {n}"}
    rows = [line(1, None), line(2, 10), line(3, None), line(4, None), line(5, None), line(6, 14), line(7, None)]
    rows += [line(1, None, file="nccl/rank1.log"), line(2, 20, file="nccl/rank1.log")]
    b = forensics.open_bundle(bundle_dir(tmp_path, {"nccl_log": rows}))
    got = b.sql("SELECT line_no, ts, ts_quality FROM nccl_log WHERE file = 'nccl/rank0.log' ORDER BY line_no").rows()
    assert got == [(1, None, "none"), (2, at(10), "local"), (3, at(11), "interpolated"), (4, at(12), "interpolated"),
                   (5, at(13), "interpolated"), (6, at(14), "local"), (7, None, "none")]
    assert b.sql("SELECT ts_quality FROM nccl_log WHERE file = 'nccl/rank1.log' AND line_no = 1").item() == "none"
    assert b.sql("SELECT count(*) FROM raw.nccl_log WHERE ts_quality = 'interpolated'").item() == 0


KERNEL = [
    ("NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
     dict(xid=79, pci_addr="0000:18:00.0", subsystem="NVRM"), "xid", "critical", "gpu3"),
    ("NVRM: Xid (PCI:0000:18:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0)",
     dict(xid=13, pci_addr="0000:18:00.0", subsystem="NVRM"), "xid", "warning", "gpu3"),
    ("mlx5_core 0000:5e:00.0 ens6f0: Link down", dict(subsystem="mlx5_core", iface="ens6f0",
                                                       pci_addr="0000:5e:00.0"), "link_down", "warning", "ens6f0"),
    ("mlx5_core 0000:5e:00.0 ens6f0: Link up", dict(subsystem="mlx5_core", iface="ens6f0"), "link_up", "info", "ens6f0"),
    ("ice 0000:3b:00.0 ens785f0: NIC Link is Down", dict(subsystem="ice", iface="ens785f0"), "link_down", "warning",
     "ens785f0"),
    ("pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0", dict(subsystem="pcieport"), "pcie_error",
     "warning", "pcieport"),
    ("pcieport 0000:00:03.1: AER: Uncorrected (Fatal) error received: 0000:00:03.1", dict(subsystem="pcieport"),
     "pcie_error", "critical", "pcieport"),
    ("CPU12: Core temperature above threshold, cpu clock throttled (total events = 1)", {}, "thermal", "warning", None),
    ("Out of memory: Killed process 2924364 (pt_main_thread) total-vm:1234kB", {}, "oom", "critical", None),
    ("INFO: task python:4321 blocked for more than 120 seconds.", {}, "hung_task", "warning", None),
    ("mlx5_core 0000:08:00.0: poll_health:801:(pid 0): Fatal error 1 detected", dict(subsystem="mlx5_core"),
     "nic_error", "warning", "mlx5_core"),
    ("EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode", dict(level="info"), "other", "info", None),
]


def test_kernel_events_by_content(tmp_path):
    rows = [{"host": "n1", "ts": at(i), "ts_quality": "boot", "message": m, **f} for i, (m, f, *_) in enumerate(KERNEL)]
    b = forensics.open_bundle(bundle_dir(tmp_path, {
        "kernel_log": rows, "gpus": [{"host": "n1", "gpu": 3, "pci_bus_id": "0000:18:00.0"}]}))
    ev = b.sql("SELECT message, kind, severity, subject FROM events WHERE origin = 'kernel_log' ORDER BY ts").rows()
    assert ev == [(m, kind, sev, subj) for m, _, kind, sev, subj in KERNEL]


def test_events_from_every_origin_on_one_aligned_timeline(tmp_path):
    tables = {
        "nccl_log": [
            {"host": "n1", "ts": at(1), "ts_quality": "local", "level": "INFO", "kind": "init_complete",
             "rank": 0, "comm_id": "0xabc", "message": "ncclCommInitRank comm 0x55 rank 0 nranks 2 - Init COMPLETE"},
            {"host": "n1", "ts": None, "ts_quality": "none", "level": "INFO", "kind": "channel", "message": "Channel 00/02"},
            {"host": "n2", "ts": at(50), "ts_quality": "local", "level": "WARN", "kind": "ib_completion_error",
             "pid": 77, "message": "NET/IB : Got completion from peer 10.0.0.1<4242> with status=12"},
            {"host": "n2", "ts": at(60), "ts_quality": "local", "level": "ERROR", "kind": "watchdog_timeout", "rank": 9,
             "message": "[Rank 9] Watchdog caught collective operation timeout"},
        ],
        "gpu_samples": [_gpu("n1", 2, t, reason_hw_thermal_slowdown=v) for t, v in [(10, False), (11, True), (12, False)]]
        + [_gpu("n1", 2, 20, ecc_dbe_volatile=0, remap_pending=False),
           _gpu("n1", 2, 30, ecc_dbe_volatile=2, remap_pending=True)],
        "nic_counters": _nic("n2", "eth3", "tx_pause_storm_warning_events", [0, 0, 1], start=40)
        + _nic("n2", "eth3", "link_down_events_phy", [3, 4], start=40),
        "commands": [{"host": "n1", "name": "ethtool_s", "argv": ["ethtool", "-S", "eth9"], "start": at(0),
                      "exit_code": 94, "stderr_tail": "no stats available"},
                     {"host": "n1", "name": "nvidia_smi_q", "argv": ["nvidia-smi", "-q"], "start": at(0),
                      "exit_code": None, "error": "not found"},
                     {"host": "n1", "name": "ok", "argv": ["true"], "start": at(0), "exit_code": 0}],
    }
    b = forensics.open_bundle(bundle_dir(tmp_path, tables))
    ev = b.sql("SELECT host, kind, severity, subject, origin FROM events ORDER BY ts_aligned, host, kind, subject").rows()
    assert ev == [
        ("n1", "command_failed", "info", "ethtool_s", "commands"),
        ("n1", "command_failed", "warning", "nvidia_smi_q", "commands"),
        ("n1", "nccl_init_complete", "info", "rank0", "nccl_log"),
        ("n1", "gpu_throttle_start", "critical", "gpu2", "gpu_episodes"),
        ("n1", "gpu_throttle_end", "critical", "gpu2", "gpu_episodes"),
        ("n1", "gpu_ecc_dbe", "critical", "gpu2", "gpu_samples"),
        ("n1", "gpu_remap_pending", "critical", "gpu2", "gpu_samples"),
        ("n2", "nic_link_down_counter", "warning", "eth3", "nic_counters"),
        ("n2", "nic_pause_storm", "warning", "eth3", "nic_counters"),
        ("n2", "nccl_ib_completion_error", "warning", "pid77", "nccl_log"),
        ("n2", "watchdog_timeout", "critical", "rank9", "nccl_log"),
    ]
    msg = b.sql("SELECT message FROM events WHERE kind = 'gpu_ecc_dbe'").item()
    assert msg == "volatile uncorrectable ECC errors 0 -> 2"
    assert "exit code 94 -- no stats available" in b.sql(
        "SELECT message FROM events WHERE subject = 'ethtool_s'").item()


def test_loo_median_is_the_median_of_the_other_rows():
    """loo_median (queries/views/00_macros.sql) over a group's middle values equals median() over a
    self-join with the group's other rows, bit for bit: ties, NULLs, groups of 1 to 64 rows. The
    straggler detector compares each host with the median of the others this way, linear in hosts
    (each row reads at most 3 values of its group, never the whole group's list)."""
    import random

    import duckdb

    from forensics.resources import data_dir

    con = duckdb.connect()
    con.execute((data_dir("queries") / "views" / "00_macros.sql").read_text())
    rnd = random.Random(1)
    rows = []
    for w in range(200):
        for h in range(rnd.choice([1, 2, 3, 4, 5, 8, 17, 64])):
            ties = w % 3 == 0
            rows.append((f"h{h}", w, rnd.choice([100.5, 200.25, 300.125]) if ties else rnd.uniform(0, 700),
                         None if rnd.random() < 0.4 else rnd.uniform(0, 100)))
    con.execute("CREATE TABLE t (host VARCHAR, w INT, x DOUBLE, y DOUBLE)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    joined = con.sql("SELECT a.host, a.w, median(b.x), median(b.y), count(*) + 1 FROM t a JOIN t b "
                     "ON a.w = b.w AND a.host <> b.host GROUP BY ALL ORDER BY 1, 2").fetchall()
    linear = con.sql("""
        WITH r AS (SELECT *, CASE WHEN x IS NOT NULL THEN rank() OVER (PARTITION BY w ORDER BY x) END AS kx,
                             CASE WHEN y IS NOT NULL THEN rank() OVER (PARTITION BY w ORDER BY y) END AS ky FROM t),
        g AS (SELECT w, count(*) AS n, count(x) AS nx, count(y) AS ny,
                     loo_middle(list_sort(list(x) FILTER (WHERE x IS NOT NULL))) AS lx,
                     loo_middle(list_sort(list(y) FILTER (WHERE y IS NOT NULL))) AS ly FROM t GROUP BY w)
        SELECT r.host, r.w, loo_median(lx, nx, kx), loo_median(ly, ny, ky), n FROM r JOIN g USING (w) WHERE n >= 2
        ORDER BY 1, 2""").fetchall()
    assert len(joined) > 1000 and any(r[3] is None for r in joined)  # (groups whose other rows are all NULL)
    assert linear == joined
    assert con.sql("SELECT loo_median(loo_middle([1.0, 2.0, 4.0]), 3, 3), loo_median(loo_middle([1.0, 2.0, 4.0]), 3, NULL), "
                   "loo_median(loo_middle([3.0]), 1, 1), loo_middle(range(1, 101))").fetchall() == [(1.5, 2.0, None, [50, 51, 52])]


HUGE = 9_000_000_000_000_000_000  # a counter value below 2^63; two increases of it sum past BIGINT


def test_counter_totals_past_bigint_are_exact_not_an_error(tmp_path):
    # an untrusted bundle whose counters reset and climb to ~9e18 twice: the summaries' sums pass 9.2e18, and
    # CAST(sum(...) AS BIGINT) raised (the view, and every query or detector on it, failed); HUGEINT holds them
    nic = _nic("n1", "eth2", "rx_prio3_pause", [0, HUGE, 0, HUGE])
    ib = [{"host": "n1", "device": "mlx5_0", "port": 1, "counter_set": "counters", "counter": "symbol_error",
           "raw_name": "symbol_error", "ts": at(i), "ts_quality": "sampled", "sample_no": i, "line_no": i + 1,
           "file": "ib.txt", "value": v} for i, v in enumerate([0, HUGE, 0, HUGE])]
    b = forensics.open_bundle(bundle_dir(tmp_path, {"nic_counters": nic, "ib_counters": ib}))
    assert [int(x) for x in b.sql("SELECT total FROM nic_counter_summary")["total"]] == [2 * HUGE]
    assert [int(x) for x in b.sql("SELECT symbol_error FROM ib_port_summary")["symbol_error"]] == [2 * HUGE]
    small = forensics.open_bundle(bundle_dir(tmp_path / "s", {"nic_counters": _nic("n1", "eth2", "x", [0, 5, 7])}))
    assert small.sql("SELECT total FROM nic_counter_summary").rows() == [(7,)]  # (in range: the same integer)


def test_ref_bucket_is_time_bucket_of_align_ts():
    """ref_bucket(ts, off, s) (queries/views/00_macros.sql) gives the instant time_bucket(INTERVAL s SECOND,
    align_ts(ts, off)) gives, on a connection in UTC as every bundle's is: stamps before 1970, around the
    bucket origin 2000-01-03 and around the epoch, offsets NULL, negative, fractional to the half
    microsecond (round() of the offset decides), widths 1 s to a week, NULL and infinite stamps."""
    import random

    import duckdb

    from forensics.resources import data_dir

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute((data_dir("queries") / "views" / "00_macros.sql").read_text())
    rnd = random.Random(2)
    rows = []
    for _ in range(20000):
        k = rnd.random()
        if k < 0.5:
            us = rnd.randint(1_600_000_000_000_000, 1_900_000_000_000_000)
        elif k < 0.75:
            us = rnd.randint(-2_000_000_000_000_000, 4_000_000_000_000_000)
        else:
            us = rnd.choice([0, 946_857_600_000_000, -946_857_600_000_000]) + rnd.randint(-5_000_000, 5_000_000)
        off = rnd.choice([None, 0.0, -0.0, rnd.uniform(-10, 10), rnd.uniform(-1e5, 1e5), round(rnd.uniform(-3, 3), 3),
                          0.5e-6, -0.5e-6, 1.5e-6, 2.5e-6])
        rows.append((us, off))
    con.execute("CREATE TABLE t (us BIGINT, off DOUBLE)")
    con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    con.execute("CREATE TABLE u AS SELECT make_timestamptz(us) AS ts, off FROM t UNION ALL "
                "SELECT * FROM (VALUES (NULL::TIMESTAMPTZ, 1.0), ('infinity'::TIMESTAMPTZ, 1.0), "
                "('-infinity'::TIMESTAMPTZ, NULL)) v(ts, off)")
    for s in (1, 7, 10, 30, 60, 3600, 86400, 604800):
        differ = con.sql(f"SELECT count(*) FILTER (WHERE ref_bucket(ts, off, {s}) IS DISTINCT FROM "
                         f"time_bucket(INTERVAL {s} SECOND, align_ts(ts, off))), count(*) FROM u").fetchall()[0]
        assert differ == (0, len(rows) + 3), s
    assert con.sql("SELECT typeof(ref_bucket(ts, off, 30)) FROM u LIMIT 1").fetchall() == [("TIMESTAMP WITH TIME ZONE",)]
    # a mutation the comparison catches: truncation toward zero instead of the floor (stamps before the origin)
    assert con.sql("SELECT count(*) FROM u WHERE isfinite(ts) AND make_timestamptz(946857600000000 + "
                   "(epoch_us(align_ts(ts, off)) - 946857600000000) // 30000000 * 30000000) "
                   "IS DISTINCT FROM time_bucket(INTERVAL 30 SECOND, align_ts(ts, off))").fetchall()[0][0] > 0
