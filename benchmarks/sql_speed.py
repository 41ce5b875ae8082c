"""SQL layer speed on a 64-node x 1-hour bundle: opening an already parsed bundle, and cross-node
rate queries over every NIC counter.

The bundle's ``nic_counters`` table is synthesised directly as Parquet, shaped as ingest writes it
for what ``forensics simulate`` and ``forensics collect`` capture: per host 9 mlx5 ports (8 rails +
frontend), the simulator's 398 mlx5 counter names per port (``forensics.simulate.fmt_ethtool``
when importable, else as many synthetic names), one ``ethtool -S`` snapshot every 10 s, one file
per host (``tables/nic_counters/host=<h>/part-0.parquet``, zstd), rows in capture order (port
file, snapshot, counter). Small ``gpu_samples``/``kernel_log``/``nccl_log`` tables make the
other views non-trivial. Data goes to benchmarks/data/ (git-ignored) and is reused when present.

    python benchmarks/sql_speed.py [--nodes 64] [--hours 1] [--interval 10] [--repeat 3] [--record]

``--record`` writes benchmarks/results/sql-<date>.md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from forensics import schema  # noqa: E402

T0 = dt.datetime(2026, 11, 30, 10, 0, 0, tzinfo=dt.timezone.utc)
PORTS = 9


def counter_names() -> list[str]:
    try:
        from forensics.simulate.fmt_ethtool import counter_names as names

        return names(3)
    except Exception:  # the simulator is optional here
        return [f"counter_{i}" for i in range(398)]


def _split(name: str) -> tuple[str, int | None]:
    import re

    m = re.match(r"^(ch|rx|tx)([0-9]+)_(.*)$", name)
    if m:
        return f"{m.group(1)}_{m.group(3)}", int(m.group(2))
    return name, None


def synthesise(root: Path, nodes: int, hours: float, interval: float, seed: int = 1) -> dict:
    """Write tables/ for a bundle of `nodes` hosts; returns what was written."""
    names = counter_names()
    split = [_split(n) for n in names]
    counters = [s[0] for s in split]
    queues = [s[1] for s in split]
    samples = int(hours * 3600 / interval) + 1
    rng = np.random.default_rng(seed)
    out = root / "tables" / "nic_counters"
    rows = 0
    t_us = (np.arange(samples) * interval * 1e6).astype(np.int64) + int(T0.timestamp() * 1e6)
    growing = rng.random(len(names)) < 0.35  # traffic-like counters; the rest stay 0 as on a real port
    for h in range(nodes):
        host = f"node{h + 1:02d}"
        parts = []
        for p in range(PORTS):
            iface = f"enp{0x18 + p * 0x10:x}s0np0"
            incr = rng.integers(0, 10**6, size=(len(names), 1)) * growing[:, None]
            steps = rng.poisson(incr, size=(len(names), samples))
            if h == 5 and p == 2:  # a pause storm on one port, with a counter reset in the middle
                k = names.index("rx_prio3_pause") if "rx_prio3_pause" in names else 0
                steps[k, samples // 3:] += 50000
            vals = np.cumsum(steps, axis=1)
            if h == 7 and p == 0:
                vals[:, samples // 2:] -= vals[:, samples // 2 - 1][:, None]  # driver reload: counters restart
            n = len(names)
            parts.append(pl.DataFrame({
                "host": pl.Series([host] * (n * samples), dtype=pl.String),
                "source": "ethtool",
                "file": f"hosts/{host}/raw/ethtool/{iface}.txt",
                "line_no": (np.tile(np.arange(n), samples) + np.repeat(np.arange(samples), n) * (n + 2) + 3).astype(np.int64),
                "sample_no": np.repeat(np.arange(samples), n).astype(np.int64),
                "ts": pl.Series(np.repeat(t_us, n)).cast(pl.Datetime("us", "UTC")),
                "ts_quality": "sampled",
                "iface": iface,
                "counter": pl.Series(counters * samples, dtype=pl.String),
                "queue": pl.Series(queues * samples, dtype=pl.Int32),
                "raw_name": pl.Series(names * samples, dtype=pl.String),
                "value": vals.T.reshape(-1).astype(np.int64),
            }))
        df = schema.conform(pl.concat(parts), "nic_counters")
        d = out / f"host={host}"
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(df.to_arrow().cast(schema.arrow_schema("nic_counters")), d / "part-0.parquet",
                       compression="zstd", row_group_size=1 << 20)
        rows += df.height
        _small_tables(root, host, h, samples, interval)
    info = {"nodes": nodes, "hours": hours, "interval_s": interval, "ports": PORTS, "counters": len(names),
            "nic_rows": rows}
    (root / "tables" / "_bench.json").write_text(json.dumps(info))
    return info


def _small_tables(root: Path, host: str, h: int, samples: int, interval: float) -> None:
    def write(table: str, df: pl.DataFrame) -> None:
        df = schema.conform(df, table, host=host, source="bench", file=f"hosts/{host}/raw/{table}")
        d = root / "tables" / table / f"host={host}"
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(df.to_arrow().cast(schema.arrow_schema(table)), d / "part-0.parquet", compression="zstd")

    n = int(samples * interval)  # GPU samples every second
    ts = pl.datetime_range(T0, T0 + dt.timedelta(seconds=n - 1), "1s", eager=True, time_zone="UTC")
    gpu = pl.concat([pl.DataFrame({"ts": ts, "gpu": pl.Series([g] * n, dtype=pl.Int32),
                                   "util_pct": 100.0, "power_w": 650.0, "sm_clock_mhz": 1980.0,
                                   "reason_hw_thermal_slowdown": (np.arange(n) % 600) < (30 if (h, g) == (3, 1) else 0),
                                   "reason_gpu_idle": False, "reason_sw_power_cap": False})
                     for g in range(8)]).with_columns(pl.lit("exact").alias("ts_quality"),
                                                      pl.int_range(1, pl.len() + 1).alias("line_no"))
    write("gpu_samples", gpu)
    write("kernel_log", pl.DataFrame({"ts": [T0 + dt.timedelta(seconds=5)], "ts_quality": ["boot"],
                                      "message": ["mlx5_core 0000:18:00.0 enp24s0np0: Link up"], "line_no": [1]}))
    nccl = pl.DataFrame({"ts": [T0 + dt.timedelta(seconds=2, milliseconds=h)] + [None] * 400,
                         "line_no": list(range(1, 402)), "level": "INFO",
                         "kind": ["init_complete"] + ["channel"] * 400,
                         "comm_id": ["0x1234"] + [None] * 400, "message": "Channel 00/32"})
    write("nccl_log", nccl.with_columns(pl.when(pl.col("ts").is_null()).then(pl.lit("none")).otherwise(pl.lit("local"))
                                        .alias("ts_quality")))


QUERIES = {
    "nic_counter_rates: every counter of every port of every host (total, mean, peak rate, resets)":
        ("name", "nic_counter_rates", {}),
    "pause_rates: PFC/pause frames per second per port and priority, all hosts": ("name", "pause_rates", {}),
    "drops: discards/drops/errors per interface, all hosts": ("name", "drops", {}),
    "step_time_proxy: per-host traffic bursts vs the cluster median": ("name", "step_time_proxy", {}),
    "per-minute tx_bytes_phy rate of every port, all hosts (ad hoc SQL on nic_rates)":
        ("sql", "SELECT bucket(ts_aligned, 60) AS t, host, iface, sum(delta) / 60 AS bytes_s FROM nic_rates "
                "WHERE counter = 'tx_bytes_phy' GROUP BY ALL ORDER BY t, host, iface", {}),
    "peak interval rate of every counter across hosts, full scan of nic_rates (ad hoc SQL)":
        ("sql", "SELECT counter, max(rate_per_s) AS peak, arg_max(host, rate_per_s) AS peak_host, "
                "sum(delta) AS total FROM nic_rates GROUP BY counter ORDER BY peak DESC", {}),
    "events: whole timeline, counted by kind": ("sql", "SELECT kind, count(*) FROM events GROUP BY kind", {}),
}


def measure(root: Path, repeat: int) -> dict:
    import forensics

    from forensics.db import derived

    res = {}
    derived.clear(root)
    t, c = time.perf_counter(), time.process_time()
    b = forensics.open_bundle(root)  # first open after parsing: builds the derived cache once
    res["first open after parsing (builds tables/_derived once)"] = [time.perf_counter() - t]
    res["first open after parsing (builds tables/_derived once) cpu"] = [time.process_time() - c]
    res["first open after parsing (builds tables/_derived once) rows"] = ", ".join(b.cached)
    b.close()
    opens = []
    cpu = []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        b = forensics.open_bundle(root)
        opens.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        b.close()
    res["open an already parsed bundle"] = opens
    res["open an already parsed bundle cpu"] = cpu
    b = forensics.open_bundle(root)
    for label, (kind, q, params) in QUERIES.items():
        times, cpu, rows = [], [], 0
        for _ in range(repeat):
            t, c = time.perf_counter(), time.process_time()
            df = b.query(q, **params) if kind == "name" else b.sql(q, **params)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            rows = df.height
        res[label] = times
        res[label + " cpu"] = cpu
        res[label + " rows"] = rows
    b.close()
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=64)
    ap.add_argument("--hours", type=float, default=1.0)
    ap.add_argument("--interval", type=float, default=10.0, help="seconds between ethtool -S snapshots")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--record", action="store_true", help="write benchmarks/results/sql-<date>.md")
    args = ap.parse_args()
    root = args.data / f"sql-{args.nodes}n-{args.hours:g}h-{args.interval:g}s"
    meta = root / "tables" / "_bench.json"
    if meta.is_file():
        info = json.loads(meta.read_text())
        print(f"reusing {root}", file=sys.stderr)
    else:
        t = time.perf_counter()
        info = synthesise(root, args.nodes, args.hours, args.interval)
        print(f"synthesised {info['nic_rows']:,} nic_counters rows in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    size = sum(p.stat().st_size for p in (root / "tables").rglob("*.parquet") if "_derived" not in p.parts)
    load0 = os.getloadavg()
    res = measure(root, args.repeat)
    load1 = os.getloadavg()
    lines = [f"# SQL layer speed ({dt.date.today().isoformat()})", "",
             f"Machine: {os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}, "
             f"DuckDB {__import__('duckdb').__version__}, polars {pl.__version__}.", "",
             f"Bundle: {info['nodes']} hosts x {info['ports']} NIC ports x {info['counters']} counters, one "
             f"`ethtool -S` snapshot every {info['interval_s']:g} s for {info['hours']:g} h = "
             f"**{info['nic_rows']:,} nic_counters rows** ({size / 2**20:.0f} MiB of Parquet), plus 8 GPUs x 1 s "
             "samples per host.", "",
             "Command: `python benchmarks/sql_speed.py " + " ".join(sys.argv[1:]).replace("--record", "").strip() + "`",
             f"Load average (1 min) before / after: {load0[0]:.1f} / {load1[0]:.1f} (other work shares the 2 CPUs; "
             "CPU s = process CPU time of all threads, best of the repeats: the wall time on an idle machine is "
             "about CPU s / 2 or less).",
             "", f"| measurement | best of {args.repeat} (s) | median (s) | CPU s | rows |", "|---|---|---|---|---|"]
    for label, times in res.items():
        if label.endswith(" rows") or label.endswith(" cpu"):
            continue
        rows = res.get(label + " rows", "")
        cpu = min(res.get(label + " cpu", [float("nan")]))
        lines.append(f"| {label} | {min(times):.3f} | {statistics.median(times):.3f} | {cpu:.2f} | "
                     f"{f'{rows:,}' if isinstance(rows, int) else rows} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.record:
        out = HERE / "results" / f"sql-{dt.date.today().isoformat()}.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        print(f"recorded {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
