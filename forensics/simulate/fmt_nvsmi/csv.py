"""``nvidia-smi --query-gpu=... --format=csv -lms N``: the collector's GPU time series."""
from __future__ import annotations

import numpy as np
import polars as pl

from forensics.simulate import textfmt as tf
from forensics.simulate.series import MEM_CLOCK, MEM_TOTAL, P_LIMIT, SM_MAX


# how each field of the collector's --query-gpu list prints: unit of the header, then the value pieces
# (F/I/S specs of tf.lines over the columns of query_csv, and literals)
CSV_COLUMNS = {
    "timestamp": (None, [tf.S("ts")]), "index": (None, [tf.S("idx")]), "uuid": (None, [tf.S("uuid")]),
    "pci.bus_id": (None, [tf.S("pci")]), "utilization.gpu": ("%", [tf.I("util"), " %"]),
    "utilization.memory": ("%", [tf.I("mu"), " %"]), "temperature.gpu": (None, [tf.I("t")]),
    "temperature.memory": (None, [tf.I("mt")]), "power.draw": ("W", [tf.F("p", 2), " W"]),
    "power.limit": ("W", [f"{P_LIMIT:.2f} W"]), "clocks.sm": ("MHz", [tf.I("sm"), " MHz"]),
    "clocks.gr": ("MHz", [tf.I("sm"), " MHz"]), "clocks.mem": ("MHz", [f"{MEM_CLOCK} MHz"]),
    "clocks.max.sm": ("MHz", [f"{SM_MAX} MHz"]), "pstate": (None, ["P0"]),
    "memory.used": ("MiB", [tf.I("mem"), " MiB"]), "memory.total": ("MiB", [f"{MEM_TOTAL} MiB"]),
    "pcie.link.gen.current": (None, ["5"]), "pcie.link.width.current": (None, ["16"]),
    "clocks_event_reasons.active": (None, [tf.S("rb")]), "clocks_throttle_reasons.active": (None, [tf.S("rb")]),
    "ecc.errors.uncorrected.volatile.total": (None, [tf.I("dbe")]),
}


def csv_argv(interval: float) -> list[str]:
    """The collector's `nvidia-smi --query-gpu=... --format=csv -lms N` for this sampling interval."""
    from forensics.collect.main import fill, stream_values
    from forensics.collect.specs import by_name

    spec = by_name()["nvidia_smi_query_gpu"]
    return fill(spec.argv, **stream_values(spec, interval, 1))


def csv_fields(argv: list[str]) -> list[str]:
    q = [a for a in argv if a.startswith("--query-gpu=")][0]
    return q[len("--query-gpu="):].split(",")


def query_csv(host, hm, times: np.ndarray, interval: float) -> bytes:
    """The -lms loop: one row per GPU per iteration; a GPU that fell off the bus disappears. Columns in
    the order of the collector's field list; a field the model does not know prints ``[N/A]``."""
    st = hm.gpu(times, min(interval, 1.0), "csv")
    n = len(times)
    G = hm.G
    # nvidia-smi takes a few ms per GPU; all GPUs of an iteration share the second
    r = np.random.default_rng([hm.cfg.seed, host.index, 7])
    base = host.wall(times) + r.uniform(0.003, 0.030, n)
    fields = csv_fields(csv_argv(interval))
    cols = [CSV_COLUMNS.get(f, (None, ["[N/A]"])) for f in fields]
    head = ", ".join(f if u is None else f"{f} [{u}]" for f, (u, _) in zip(fields, cols))
    keep = ~st["lost"].T.reshape(-1)                       # iteration-major: (i, g)
    flat = lambda a: np.asarray(a).T.reshape(-1)           # noqa: E731  (G, n) -> n*G rows, iteration-major
    stamps = tf.times((base[:, None] + 0.0011 * np.arange(G)[None, :]).reshape(-1), host.tz,
                      "%Y/%m/%d %H:%M:%S%.3f")
    data = {"ts": stamps, "idx": [str(g) for g in range(G)] * n, "uuid": [gp.uuid for gp in host.gpus] * n,
            "pci": [gp.pci for gp in host.gpus] * n, "util": flat(st["util"]), "mu": flat(st["mem_util"]),
            "t": flat(st["temp"]), "p": flat(st["power"]), "sm": flat(st["sm"]),
            "rb": [f"0x{int(x):016x}" for x in flat(st["reasons"]).tolist()], "mt": flat(st["mem_temp"]),
            "mem": flat(st["mem_used"])}
    if "ecc.errors.uncorrected.volatile.total" in fields:
        data["dbe"] = flat(np.stack([hm.ecc(g, times)["dbe"] for g in range(G)]))
    pieces: list = []
    for k, (_, value) in enumerate(cols):
        pieces += ([", "] if k else []) + list(value)
    rows = tf.lines(data, pieces).filter(pl.Series(keep))
    return tf.lines_bytes(pl.concat([pl.Series([head]), rows]))
