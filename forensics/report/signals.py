"""The data behind the HTML report's charts and timeline, read from the bundle's views only.

Per host, one chart per signal family that the bundle has: GPU utilisation, SM clock,
temperature and power (one series per GPU, the `gpu_signals` view); NIC pause frames per second
(rx/tx per interface), drops and errors per second and throughput (`nic_signals`, classified as
the detectors classify NIC counters); disk utilisation and read/write latency (`disk_signals`,
busiest devices); CPU iowait and busy share (`cpu_signals`). The views (queries/views/4x_*.sql)
put sampled times on the aligned (reference) clock with each host's `clock_offset_s`, as the
`events` view does.

Downsampling keeps the report small whatever the bundle's length: the total number of values is
held under a budget (VALUE_BUDGET), which sets at most `max_points` time buckets per chart. Each
bucket keeps the value that shows trouble (the maximum of rates, temperatures, latencies and
utilisation of disks, the minimum of SM clocks, the mean of GPU utilisation and power), so a
short pause storm or clock dip survives the thinning.

>>> df = pl.DataFrame({"t": [0.0, 1.0, 2.0, 3.0], "e": ["a", "a", "a", "a"], "v": [1.0, 5.0, 2.0, 2.0]})
>>> thin(df, "e", "v", "max", max_points=2)
{'x': [0.0, 1.5], 'series': [{'label': 'a', 'data': [5.0, 2.0]}]}
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

VALUE_BUDGET = 450_000  # values in all charts together (about 6 bytes each in the page)
MIN_POINTS, MAX_POINTS = 60, 1200
MAX_DISKS = 6


@dataclass(frozen=True)
class Signal:
    key: str
    title: str
    unit: str
    agg: str  # how a bucket keeps its samples: max, min, mean
    family: str  # gpu, nic, disk, cpu (which finding layers it explains)


SIGNALS = [
    Signal("gpu_util", "GPU utilisation", "%", "mean", "gpu"),
    Signal("gpu_sm_clock", "GPU SM clock", "MHz", "min", "gpu"),
    Signal("gpu_temp", "GPU temperature", "°C", "max", "gpu"),
    Signal("gpu_power", "GPU power", "W", "mean", "gpu"),
    Signal("nic_pause", "NIC PFC/pause frames", "frames/s", "max", "nic"),
    Signal("nic_drops", "NIC drops and discards", "per s", "max", "nic"),
    Signal("nic_errors", "NIC errors (CRC, symbol, FCS, alignment, length)", "per s", "max", "nic"),
    Signal("nic_gbps", "NIC throughput (rx+tx)", "Gb/s", "max", "nic"),
    Signal("disk_util", "Disk utilisation", "%", "max", "disk"),
    Signal("disk_await", "Disk latency", "ms", "max", "disk"),
    Signal("cpu", "CPU iowait and busy", "%", "max", "cpu"),
]
BY_KEY = {s.key: s for s in SIGNALS}

_T = "epoch_us({ts}) / 1e6"

# GPU samples: one scan for the four GPU signals (split in fetch())
_GPU_COLS = {"gpu_util": "util_pct", "gpu_sm_clock": "sm_clock_mhz", "gpu_temp": "temp_c", "gpu_power": "power_w"}
_GPU_SQL = (  # the gpu_signals view (queries/views/48_gpu_signals.sql)
    f"SELECT host, 'GPU' || gpu AS entity, {_T.format(ts='ts_aligned')} AS t, "
    + ", ".join(f"{c} AS {k}" for k, c in _GPU_COLS.items())
    + " FROM gpu_signals"
)
# NIC rates: the nic_signals view (queries/views/47_nic_signals.sql: the counters detection reads)
_NIC_SQL = (
    f"SELECT host, iface, {_T.format(ts='ts_aligned')} AS t, max(rx_pause_per_s) AS rx_pause, "
    "max(tx_pause_per_s) AS tx_pause, sum(drops_per_s ORDER BY drops_per_s) AS drops, sum(errors_per_s ORDER BY errors_per_s) AS errors, "
    "max(rx_bytes_per_s) AS rx_bytes, max(tx_bytes_per_s) AS tx_bytes "
    "FROM nic_signals WHERE ts_aligned IS NOT NULL GROUP BY ALL"
)
# disk and CPU: the disk_signals and cpu_signals views (queries/views/49_host_signals.sql)
_DISK_SQL = (
    f"SELECT host, device, {_T.format(ts='ts_aligned')} AS t, util_pct AS util, r_await_ms AS r_await, "
    "w_await_ms AS w_await FROM disk_signals"
)
_QUERIES: dict[str, str] = {}
_QUERIES["cpu"] = (
    f"SELECT host, k.name AS entity, {_T.format(ts='ts_aligned')} AS t, "
    "CASE k.name WHEN 'iowait' THEN iowait_pct ELSE busy_pct END AS v "
    "FROM cpu_signals CROSS JOIN (VALUES ('iowait'), ('busy')) k(name) WHERE v IS NOT NULL"
)


def _natural_key(s: str) -> tuple:
    import re

    return tuple(int(p) if p.isdigit() else p for p in re.split(r"([0-9]+)", s or ""))


def fetch(bundle, errors: list[str] | None = None) -> dict[str, pl.DataFrame]:
    """Raw (host, entity, t, v) frames per signal key; a signal whose view fails is left out."""
    out = {}
    try:
        gpu = bundle.sql(_GPU_SQL)
    except Exception as exc:
        gpu = None
        if errors is not None:
            errors.append(f"gpu_samples: {str(exc).splitlines()[0]}")
    if gpu is not None and gpu.height:
        for key in _GPU_COLS:
            df = gpu.select("host", "entity", "t", pl.col(key).cast(pl.Float64).fill_nan(None).alias("v")).drop_nulls()
            if df.height:
                out[key] = df
    nic = _query(bundle, _NIC_SQL, "nic_rates", errors)
    if nic is not None:
        v = pl.col("v")
        parts = {
            "nic_pause": pl.concat([nic.select("host", (pl.col("iface") + f" {d}").alias("entity"), "t", pl.col(f"{d}_pause").alias("v"))
                                    for d in ("rx", "tx")]),
            "nic_drops": nic.select("host", pl.col("iface").alias("entity"), "t", pl.col("drops").alias("v")),
            "nic_errors": nic.select("host", pl.col("iface").alias("entity"), "t", pl.col("errors").alias("v")),
            "nic_gbps": nic.select("host", pl.col("iface").alias("entity"), "t",
                                   (pl.when(pl.col("rx_bytes").is_null() & pl.col("tx_bytes").is_null()).then(None)
                                      .otherwise(pl.col("rx_bytes").fill_null(0) + pl.col("tx_bytes").fill_null(0)) * 8 / 1e9).alias("v")),
        }
        for key, df in parts.items():
            df = df.with_columns(v.cast(pl.Float64).fill_nan(None)).drop_nulls()
            if df.height:
                out[key] = df
    disk = _query(bundle, _DISK_SQL, "disk_io", errors)
    if disk is not None:
        parts = {
            "disk_util": disk.select("host", pl.col("device").alias("entity"), "t", pl.col("util").alias("v")),
            "disk_await": pl.concat([disk.select("host", (pl.col("device") + f" {d}").alias("entity"), "t", pl.col(c).alias("v"))
                                     for d, c in (("read", "r_await"), ("write", "w_await"))]),
        }
        for key, df in parts.items():
            df = df.with_columns(pl.col("v").cast(pl.Float64).fill_nan(None)).drop_nulls()
            df = _busiest_disks(df, disk)
            if df.height:
                out[key] = df
    for key, sql in _QUERIES.items():
        df = _query(bundle, sql, key, errors)
        if df is None:
            continue
        df = df.with_columns(pl.col("v").cast(pl.Float64).fill_nan(None)).drop_nulls(["t", "host", "entity"])
        if df.height:
            out[key] = df
    return out


def _query(bundle, sql: str, what: str, errors: list[str] | None) -> pl.DataFrame | None:
    try:
        df = bundle.sql(sql)
    except Exception as exc:  # a bundle without that table: no such chart, said in the report
        if errors is not None:
            errors.append(f"{what}: {str(exc).splitlines()[0]}")
        return None
    return df if df.height else None


def _busiest_disks(df: pl.DataFrame, disk: pl.DataFrame) -> pl.DataFrame:
    """Rows of the MAX_DISKS busiest block devices of each host (by peak utilisation; loop, ram and
    optical devices left out)."""
    top = (disk.filter(~pl.col("device").str.contains("^(loop|ram|zram|sr)[0-9]"))
               .group_by("host", "device").agg(pl.col("util").max().fill_null(0).alias("peak"))
               .sort(["host", "peak", "device"], descending=[False, True, False])
               .group_by("host", maintain_order=True).head(MAX_DISKS))
    dev = pl.col("entity").str.split(" ").list.first()
    return df.with_columns(dev.alias("device")).join(top.select("host", "device"), on=["host", "device"]).drop("device")


def thin(df: pl.DataFrame, entity: str, value: str, agg: str, max_points: int, base: float = 0.0) -> dict:
    """One chart's data: a shared x (seconds relative to `base`) and one series per entity.

    Times are bucketed into at most `max_points` buckets when there are more distinct times;
    each bucket keeps `agg` (max, min, mean) of its samples."""
    t = df["t"]
    tmin, tmax = float(t.min()), float(t.max())
    n_times = t.n_unique()
    per_entity = df.group_by(entity).agg(pl.col("t").n_unique().alias("n"), pl.col("t").sort().diff().median().alias("dt"))
    # entities sampled a few ms apart (one ethtool run per interface) share one grid of their interval
    unaligned = n_times > 1.2 * per_entity["n"].max()
    if (n_times > max_points or unaligned) and tmax > tmin:
        step = (tmax - tmin) / max_points
        interval = per_entity["dt"].drop_nulls().min()
        if unaligned and interval:
            step = max(step, float(interval))
        n_buckets = max(1, math.ceil((tmax - tmin) / step))
        df = df.with_columns((tmin + ((pl.col("t") - tmin) / step).floor().clip(0, n_buckets - 1) * step).alias("t"))
    how = {"max": pl.col(value).max(), "min": pl.col(value).min(), "mean": pl.col(value).mean()}[agg]
    grouped = df.group_by("t", entity).agg(how.alias(value))
    wide = grouped.pivot(on=entity, index="t", values=value).sort("t")
    labels = sorted((c for c in wide.columns if c != "t"), key=_natural_key)
    x = ((wide["t"] - base).round(3)).to_list()
    series = []
    for lab in labels:
        col = wide[lab].cast(pl.Float64)
        series.append({"label": lab, "data": col.round_sig_figs(4).to_list()})
    return {"x": x, "series": series}


def charts(frames: dict[str, pl.DataFrame], base: float, budget: int = VALUE_BUDGET) -> tuple[dict[str, list[dict]], int]:
    """{host: [chart dict]} in SIGNALS order, and the max points per chart that the budget allowed.

    A chart whose every value is zero (no pause frames, no drops) is kept as a one-line note
    (`flat`) instead of a plot."""
    n_series = sum(df.select(pl.struct("host", "entity").n_unique()).item() for df in frames.values())
    max_points = MAX_POINTS if not n_series else int(max(MIN_POINTS, min(MAX_POINTS, budget // n_series)))
    out: dict[str, list[dict]] = {}
    for sig in SIGNALS:
        df = frames.get(sig.key)
        if df is None:
            continue
        for (host,), part in df.group_by(["host"], maintain_order=False):
            entry = {"key": sig.key, "title": sig.title, "unit": sig.unit, "family": sig.family}
            peak = part["v"].abs().max()
            n_ent = part["entity"].n_unique()
            if peak is None or peak == 0:
                entry.update({"flat": True, "entities": n_ent})
            else:
                data = thin(part, "entity", "v", sig.agg, max_points, base)
                # series that stay at zero (idle ports, quiet disks) are named, not drawn
                live = [any(v for v in sr["data"]) for sr in data["series"]]
                data["zero"] = [sr["label"] for sr, ok in zip(data["series"], live) if not ok]
                data["series"] = [sr for sr, ok in zip(data["series"], live) if ok]
                entry.update(data)
            out.setdefault(host, []).append(entry)
    order = {s.key: i for i, s in enumerate(SIGNALS)}
    for host in out:
        out[host].sort(key=lambda c: order[c["key"]])
    return out, max_points


def time_span(frames: dict[str, pl.DataFrame]) -> tuple[float, float] | None:
    lo, hi = math.inf, -math.inf
    for df in frames.values():
        lo = min(lo, float(df["t"].min()))
        hi = max(hi, float(df["t"].max()))
    return (lo, hi) if lo <= hi else None
