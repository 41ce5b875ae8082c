"""Helpers for SQL-layer tests: write small parsed bundles (tables/<table>/host=<h>/part-0.parquet)
that conform exactly to schemas/*.json, so views can be checked on known rows."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from forensics import schema

T0 = dt.datetime(2026, 11, 30, 10, 0, 0, tzinfo=dt.timezone.utc)


def at(seconds: float) -> dt.datetime:
    """T0 + seconds (aware UTC)."""
    return T0 + dt.timedelta(seconds=seconds)


def write_table(root: Path, table: str, rows: list[dict] | pl.DataFrame) -> None:
    """Write rows (dicts with a 'host' key) as the bundle's Parquet partitions of `table`."""
    df = rows if isinstance(rows, pl.DataFrame) else pl.DataFrame(rows, infer_schema_length=None)
    cols = schema.polars_schema(table)
    fill = {k: v for k, v in {"source": "test", "file": f"raw/{table}.txt"}.items() if k in cols}
    if "line_no" in cols and "line_no" not in df.columns:
        df = df.with_row_index("line_no", offset=1).with_columns(pl.col("line_no").cast(pl.Int64))
    df = schema.conform(df, table, **fill)
    for (host,), part in df.group_by(["host"], maintain_order=True):
        d = root / "tables" / table / f"host={host}"
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(part.to_arrow().cast(schema.arrow_schema(table)), d / "part-0.parquet")


def bundle_dir(tmp_path: Path, tables: dict[str, list[dict] | pl.DataFrame]) -> Path:
    root = tmp_path / "bundle"
    (root / "tables").mkdir(parents=True, exist_ok=True)
    for t, rows in tables.items():
        write_table(root, t, rows)
    return root


def test_kit_writes_conforming_partitions(tmp_path):
    root = bundle_dir(tmp_path, {"kernel_log": [{"host": "n1", "message": "x"}, {"host": "n2", "message": "y"}]})
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.parquet"))
    assert files == ["tables/kernel_log/host=n1/part-0.parquet", "tables/kernel_log/host=n2/part-0.parquet"]
    assert pq.read_schema(root / files[0]).equals(schema.arrow_schema("kernel_log"))


def sample_tables() -> dict[str, list[dict]]:
    """A small 3-host incident with one of each signal the named queries look for.

    n1: disk saturated + iowait; n2: PFC storm on eth1 prio 3, GPU 1 thermal throttling, NCCL WARN;
    n3: Xid 79 on GPU 1, ECC DBE, rx_discards_phy, link down, NCCL_BUFFSIZE differs, a failed command.
    Every host: 2 GPUs, 2 NICs, NCCL init of one communicator, tx byte bursts every 4 s.
    """
    hosts = ["n1", "n2", "n3"]
    t: dict[str, list[dict]] = {k: [] for k in (
        "nic_counters", "gpu_samples", "gpus", "kernel_log", "disk_io", "cpu_util", "nccl_log", "nccl_config",
        "numa_nodes", "nics", "processes", "process_env", "commands", "coverage", "sar_net_edev", "hosts")}
    for h in hosts:
        t["hosts"].append({"host": h, "hostname": h + ".cluster", "timezone": "UTC", "utc_offset_s": 0})
        for node in (0, 1):
            t["numa_nodes"].append({"host": h, "node": node, "cpus": list(range(node * 4, node * 4 + 4)),
                                    "cpu_count": 4, "mem_total_mb": 64000, "mem_free_mb": 1000})
        for g in (0, 1):
            t["gpus"].append({"host": h, "gpu": g, "uuid": f"GPU-{h}-{g}", "pci_bus_id": f"0000:{0x18 + g * 0x40:02x}:00.0",
                              "numa_node": g, "name": "NVIDIA H100 80GB HBM3", "driver_version": "550.54.15"})
        for i, iface in enumerate(("eth0", "eth1")):
            t["nics"].append({"host": h, "iface": iface, "pci_addr": f"0000:{0x1a + i * 0x40:02x}:00.0", "numa_node": i,
                              "rdma_dev": f"mlx5_{i}", "driver": "mlx5_core"})
        t["processes"].append({"host": h, "pid": 100, "command": "python train.py", "gpus": [0],
                               "cpus_allowed": [0, 1, 2, 3], "mems_allowed": [0], "cpus_allowed_list": "0-3",
                               "mems_allowed_list": "0"})
        t["process_env"].append({"host": h, "pid": 100, "key": "NCCL_BUFFSIZE", "value": "2097152" if h == "n3" else "4194304"})
        t["nccl_config"] += [{"host": h, "pid": 100, "key": "version", "value": "2.21.5+cuda12.4"},
                             {"host": h, "pid": 100, "key": "net", "value": "IB"},
                             {"host": h, "pid": 100, "key": "env.NCCL_BUFFSIZE",
                              "value": "2097152" if h == "n3" else "4194304"}]
        t["nccl_log"].append({"host": h, "ts": at(2), "ts_quality": "local", "level": "INFO", "kind": "init_complete",
                              "rank": hosts.index(h), "comm_id": "0x1", "nranks": 3, "file": f"nccl/{h}.log",
                              "line_no": 1, "message": "comm 0x1 rank 0 nranks 3 - Init COMPLETE"})
        t["coverage"].append({"host": h, "source": "ethtool", "file": f"hosts/{h}/raw/ethtool/eth0.txt",
                              "parser_version": 1, "lines": 100, "unparsed": 2 if h == "n2" else 0, "rows": "{}"})
        for s in range(21):
            for iface in ("eth0", "eth1"):
                base = {"host": h, "iface": iface, "ts": at(s), "ts_quality": "sampled", "sample_no": s}
                t["nic_counters"].append({**base, "counter": "tx_bytes_phy", "raw_name": "tx_bytes_phy",
                                          "value": sum(10**9 if k % 4 == 0 else 10**6 for k in range(s + 1))})
                storm = h == "n2" and iface == "eth1" and 5 <= s
                t["nic_counters"].append({**base, "counter": "rx_prio3_pause", "raw_name": "rx_prio3_pause",
                                          "value": max(0, s - 5) * 20000 if storm else 0})
                t["nic_counters"].append({**base, "counter": "rx_prio3_pause_duration", "raw_name": "rx_prio3_pause_duration",
                                          "value": max(0, s - 5) * 500000 if storm else 0})
                t["nic_counters"].append({**base, "counter": "rx_discards_phy", "raw_name": "rx_discards_phy",
                                          "value": s * 100 if (h == "n3" and iface == "eth0") else 0})
                t["nic_counters"].append({**base, "counter": "link_down_events_phy", "raw_name": "link_down_events_phy",
                                          "value": 1 if (h == "n3" and iface == "eth0" and s >= 10) else 0})
                for q in (0, 1):
                    t["nic_counters"].append({**base, "counter": "rx_packets", "queue": q, "raw_name": f"rx{q}_packets",
                                              "value": s * 1000 * (q + 1)})
            for g in (0, 1):
                hot = h == "n2" and g == 1 and 8 <= s <= 12
                t["gpu_samples"].append({"host": h, "gpu": g, "ts": at(s), "ts_quality": "exact",
                                         "util_pct": 100.0, "power_w": 650.0 - 200 * hot, "temp_c": 70.0 + 20 * hot,
                                         "sm_clock_mhz": 1980.0 - 700 * hot, "reason_hw_thermal_slowdown": hot,
                                         "reason_sw_power_cap": False, "reason_gpu_idle": False,
                                         "ecc_dbe_volatile": (2 if s >= 15 else 0) if (h == "n3" and g == 1) else 0,
                                         "remap_pending": h == "n3" and g == 1 and s >= 15})
            t["disk_io"].append({"host": h, "device": "nvme0n1", "source": "iostat", "ts": at(s), "ts_quality": "local",
                                 "util_pct": 99.0 if (h == "n1" and s >= 10) else 20.0,
                                 "r_await_ms": 40.0 if (h == "n1" and s >= 10) else 0.5, "w_await_ms": 1.0,
                                 "aqu_sz": 30.0 if h == "n1" else 1.0, "rkb_s": 500000.0, "wkb_s": 100.0})
            t["cpu_util"].append({"host": h, "source": "sar", "cpu": "all", "ts": at(s), "ts_quality": "local",
                                  "user_pct": 60.0, "system_pct": 10.0,
                                  "iowait_pct": 25.0 if (h == "n1" and s >= 10) else 1.0, "idle_pct": 5.0})
            t["sar_net_edev"].append({"host": h, "iface": "eth0", "ts": at(s), "ts_quality": "local",
                                      "rxdrop_s": 3.0 if h == "n3" else 0.0, "rxerr_s": 0.0})
    t["kernel_log"] += [
        {"host": "n3", "ts": at(16), "ts_quality": "boot", "subsystem": "NVRM", "xid": 79, "pci_addr": "0000:58:00.0",
         "xid_text": "GPU has fallen off the bus.", "message": "NVRM: Xid (PCI:0000:58:00): 79, GPU has fallen off the bus."},
        {"host": "n3", "ts": at(9.5), "ts_quality": "boot", "subsystem": "mlx5_core", "iface": "eth0",
         "message": "mlx5_core 0000:1a:00.0 eth0: Link down"},
        {"host": "n3", "ts": at(10.5), "ts_quality": "boot", "subsystem": "mlx5_core", "iface": "eth0",
         "message": "mlx5_core 0000:1a:00.0 eth0: Link up"},
    ]
    t["nccl_log"].append({"host": "n2", "ts": at(12), "ts_quality": "local", "level": "WARN", "kind": "ib_completion_error",
                          "rank": 1, "ib_status": 12, "vendor_err": 129, "peer_addr": "10.0.0.3<4242>",
                          "file": "nccl/n2.log", "line_no": 2,
                          "message": "NET/IB : Got completion from peer 10.0.0.3<4242> with status=12 vendor err 129"})
    t["commands"].append({"host": "n3", "name": "dmesg", "argv": ["dmesg", "--time-format", "iso"], "start": at(0),
                          "end": at(1), "exit_code": 1, "stderr_tail": "dmesg: read kernel buffer failed"})
    return t
