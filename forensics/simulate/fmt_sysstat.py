"""sysstat 12 outputs as collected with LC_ALL=C: ``iostat -x -t`` and ``sar -u / -P ALL / -n DEV /
-n EDEV / -r / -q``.

Layout copied from real outputs (tests/fixtures and ../shared/fixtures-real): the banner
``Linux <release> (<host>) \\t<date> \\t_x86_64_\\t(<n> CPU)`` with the C locale's ``%x`` date
(``11/30/26``), sar's 24-hour ``%X`` time padded to 11 columns and ``%9.2f`` fields, sar's header
repeated per interval for multi-row reports, iostat's ``%x %X`` report stamp and sysstat 12 column
set (``r/s rkB/s rrqm/s %rrqm r_await rareq-sz ... f/s f_await aqu-sz %util``), first report = since
boot.
"""
from __future__ import annotations

import numpy as np
import polars as pl

from forensics.simulate import textfmt as tf
from forensics.simulate.config import KERNEL
from forensics.simulate.hardware import NCPU

DEV_COLS = ("r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz", "w/s", "wkB/s", "wrqm/s", "%wrqm",
            "w_await", "wareq-sz", "d/s", "dkB/s", "drqm/s", "%drqm", "d_await", "dareq-sz", "f/s", "f_await",
            "aqu-sz", "%util")
DEV_W = (8, 10, 9, 7, 8, 9, 8, 10, 9, 7, 8, 9, 8, 10, 9, 7, 8, 9, 8, 8, 8, 7)
IOSTAT_DEVICES = ("loop0", "loop1", "loop2", "nvme0n1", "nvme1n1", "sda")


def banner(host: str, date: str) -> str:
    return f"Linux {KERNEL} ({host}) \t{date} \t_x86_64_\t({NCPU} CPU)"


def _hdr(label: str, names, width: int = 10, first: str | None = None) -> str:
    s = f"{label:<11}"
    if first is not None:
        s += f"{first:>8}"
    return s + "".join(f"{n:>{width}}" for n in names)


# ---------------------------------------------------------------------------- iostat
def iostat(hm, host, starts_true: float, interval: float, n: int) -> bytes:
    """`iostat -x -t <interval> <n+1>` started at true time `starts_true`."""
    tz, off = host.tz, host.offset_s
    times = starts_true + interval * np.arange(1, n + 1)
    cpu = hm.cpu(times, interval)
    user = cpu["user"].mean(axis=0)
    system = cpu["system"].mean(axis=0)
    iow = cpu["iowait"].mean(axis=0)
    idle = np.clip(100 - user - system - iow, 0, 100)
    devs = hm.disks(times)
    # since-boot first report: long-run averages
    boot = {
        "loop0": dict(r_s=0.02, rkb_s=0.27, rareq=12.41, r_await=0.14, util=0.0),
        "loop1": dict(r_s=0.01, rkb_s=0.07, rareq=7.48, r_await=0.40, util=0.0),
        "loop2": dict(r_s=0.01, rkb_s=0.20, rareq=19.21, r_await=0.32, util=0.0),
        "nvme0n1": dict(r_s=0.35, rkb_s=9.87, rareq=28.20, r_await=0.09, w_s=9.12, wkb_s=201.40, w_await=0.03,
                        util=0.31, f_s=0.61, f_await=0.35),
        "nvme1n1": dict(w_s=0.93, wkb_s=119.04, w_await=0.02, util=0.05),
        "sda": dict(r_s=104.22, rkb_s=11839.17, rareq=113.60, r_await=0.71, rrqm_s=0.55, w_s=0.12, wkb_s=1.91,
                    w_await=0.61, aqu=0.07, util=3.12),
    }
    ts_fmt = "%m/%d/%y %H:%M:%S"
    stamps = tf.times(np.concatenate([[starts_true], times]) + off, tz, ts_fmt).to_list()
    date = tf.times(np.array([starts_true + off]), tz, "%m/%d/%y")[0]
    # "         %6.2f  %6.2f  %6.2f  %6.2f  %6.2f  %6.2f"
    cpu_rows = tf.join_columns([
        "         " + tf.fixed(np.concatenate([[user.mean() * 0.7], user]), 2, 6),
        "  " + tf.fixed(np.zeros(n + 1), 2, 6),
        "  " + tf.fixed(np.concatenate([[system.mean() * 0.7], system]), 2, 6),
        "  " + tf.fixed(np.concatenate([[0.04], iow]), 2, 6),
        "  " + tf.fixed(np.zeros(n + 1), 2, 6),
        "  " + tf.fixed(np.concatenate([[100 - user.mean() * 0.7 - system.mean() * 0.7 - 0.04], idle]), 2, 6),
    ]).to_list()
    dev_lines = {}
    for d in IOSTAT_DEVICES:
        v = devs.get(d, {})
        b = boot[d]

        def col(key, default=0.0):
            first = b.get(key, 0.0)
            arr = v.get(key)
            arr = np.zeros(n) if arr is None else np.asarray(arr)
            return np.concatenate([[first], arr])

        r_s, rkb, w_s, wkb = col("r_s"), col("rkb_s"), col("w_s"), col("wkb_s")
        rrqm = col("rrqm_s")
        f_s = col("f_s")
        vals = [r_s, rkb, rrqm, np.where(r_s + rrqm > 0, rrqm / np.maximum(r_s + rrqm, 1e-9) * 100, 0),
                col("r_await"), np.where(r_s > 0, col("rareq"), 0), w_s, wkb, np.zeros(n + 1), np.zeros(n + 1),
                np.where(w_s > 0, col("w_await"), 0), np.where(w_s > 0, wkb / np.maximum(w_s, 1e-9), 0),
                np.zeros(n + 1), np.zeros(n + 1), np.zeros(n + 1), np.zeros(n + 1), np.zeros(n + 1), np.zeros(n + 1),
                f_s, np.where(f_s > 0, col("f_await"), 0), col("aqu"), np.minimum(col("util"), 100.0)]
        cols = [pl.Series([d] * (n + 1)).str.pad_end(13)]
        cols += [" " + tf.fixed(x, 2, w - 1) for x, w in zip(vals, DEV_W)]
        dev_lines[d] = tf.join_columns(cols).to_list()
    head = "Device       " + "".join(f"{c:>{w}}" for c, w in zip(DEV_COLS, DEV_W))
    out = [banner(host.name, date), ""]
    for i in range(n + 1):
        out.append(stamps[i])
        out.append("avg-cpu:  %user   %nice %system %iowait  %steal   %idle")
        out.append(cpu_rows[i])
        out.append("")
        out.append(head)
        for d in IOSTAT_DEVICES:
            out.append(dev_lines[d][i])
        out.append("")
    return tf.lines_bytes(out)


# ---------------------------------------------------------------------------- sar
def _single(header: str, rows: list[str], average: str, date: str, host: str) -> bytes:
    out = [banner(host, date), "", header]
    out.extend(rows)
    out.append(average)
    return tf.lines_bytes(out)


def _t(host, t_true: np.ndarray) -> list[str]:
    return tf.times(t_true + host.offset_s, host.tz, "%H:%M:%S").to_list()


def _date(host, t_true: float) -> str:
    return tf.times(np.array([t_true + host.offset_s]), host.tz, "%m/%d/%y")[0]


def _value_rows(labels: list[str], first, cols: list[np.ndarray], fmts: list[tuple[int, int]],
                first_width: int = 8) -> list[str]:
    """Rows: label padded to 11, the item column as ' %{first_width-1}s', then the value columns
    (dec >= 0: '%{w}.{dec}f' with its leading space inside w; dec < 0: integer)."""
    parts = [pl.Series(labels, dtype=pl.String).str.pad_end(11)]
    if first is not None:
        parts.append(" " + pl.Series(first, dtype=pl.String).str.pad_start(first_width - 1))
    for c, (dec, w) in zip(cols, fmts):  # printf " %{w-1}.{dec}f": the space is always there
        parts.append(" " + (tf.fixed(c, dec, w - 1) if dec >= 0 else tf.integer(c, w - 1)))
    return tf.join_columns(parts).to_list()


CPU_NAMES = ("%user", "%nice", "%system", "%iowait", "%steal", "%idle")


def sar_u(hm, host, start: float, interval: float, n: int) -> bytes:
    times = start + interval * np.arange(1, n + 1)
    cpu = hm.cpu(times, interval)
    u, s, io = (cpu[k].mean(axis=0) for k in ("user", "system", "iowait"))
    idle = np.clip(100 - u - s - io, 0, 100)
    cols = [u, np.zeros(n), s, io, np.zeros(n), idle]
    rows = _value_rows(_t(host, times), ["all"] * n, cols, [(2, 10)] * 6)
    avg = _value_rows(["Average:"], ["all"], [np.array([c.mean()]) for c in cols], [(2, 10)] * 6)[0]
    header = _hdr(_t(host, np.array([start]))[0], CPU_NAMES, first="CPU")
    return _single(header, rows, avg, _date(host, start), host.name)


def sar_p_all(hm, host, start: float, interval: float, n: int) -> bytes:
    times = start + interval * np.arange(1, n + 1)
    per = hm.per_cpu(times, interval)                       # (NCPU, n, 4)
    allc = per.mean(axis=0)                                # (n, 4)
    labels_t = _t(host, np.concatenate([[start], times]))
    ids = ["all"] + [str(i) for i in range(NCPU)]
    stack = np.concatenate([allc[None], per], axis=0)      # (NCPU+1, n, 4)
    u, nice, s, io = (stack[:, :, j] for j in range(4))
    idle = np.clip(100 - u - s - io, 0, 100)
    # rows grouped per interval: order (sample, cpu)
    lab = [labels_t[i + 1] for i in range(n) for _ in ids]
    first = ids * n
    cols = [x.T.reshape(-1) for x in (u, nice, s, io, np.zeros_like(u), idle)]
    rows = _value_rows(lab, first, cols, [(2, 10)] * 6)
    k = len(ids)
    out = [banner(host.name, _date(host, start))]
    for i in range(n):
        out.append("")
        out.append(_hdr(labels_t[i], CPU_NAMES, first="CPU"))
        out.extend(rows[i * k:(i + 1) * k])
    out.append("")
    out.append(_hdr("Average:", CPU_NAMES, first="CPU"))
    means = [x.mean(axis=1) for x in (u, nice, s, io, np.zeros_like(u), idle)]
    out.extend(_value_rows(["Average:"] * k, ids, means, [(2, 10)] * 6))
    return tf.lines_bytes(out)


DEV_NAMES = ("rxpck/s", "txpck/s", "rxkB/s", "txkB/s", "rxcmp/s", "txcmp/s", "rxmcst/s", "%ifutil")
EDEV_NAMES = ("rxerr/s", "txerr/s", "coll/s", "rxdrop/s", "txdrop/s", "txcarr/s", "rxfram/s", "rxfifo/s", "txfifo/s")


def _multi(host, start, times, names, ifaces, cols_by_iface) -> bytes:
    """Per-interval blocks (header repeated), then the Average block. cols_by_iface[iface] =
    list of (n,) arrays."""
    n = len(times)
    labels_t = _t(host, np.concatenate([[start], times]))
    k = len(ifaces)
    lab = [labels_t[i + 1] for i in range(n) for _ in ifaces]
    first = list(ifaces) * n
    ncol = len(names)
    cols = [np.stack([cols_by_iface[f][j] for f in ifaces], axis=1).reshape(-1) for j in range(ncol)]
    rows = _value_rows(lab, first, cols, [(2, 10)] * ncol, first_width=10)
    out = [banner(host.name, _date(host, start))]
    for i in range(n):
        out.append("")
        out.append(f"{labels_t[i]:<11}{'IFACE':>10}" + "".join(f"{nm:>10}" for nm in names))
        out.extend(rows[i * k:(i + 1) * k])
    out.append("")
    out.append(f"{'Average:':<11}{'IFACE':>10}" + "".join(f"{nm:>10}" for nm in names))
    means = [np.array([cols_by_iface[f][j].mean() for f in ifaces]) for j in range(ncol)]
    out.extend(_value_rows(["Average:"] * k, list(ifaces), means, [(2, 10)] * ncol, first_width=10))
    return tf.lines_bytes(out)


def net_rates(hm, host, times, interval):
    """Kernel-visible traffic per interface (RDMA bypasses the netdev counters)."""
    plan = hm.plan
    r = np.random.default_rng([plan.cluster.cfg.seed, host.index, len(times), 17])
    n = len(times)
    rates = {}
    ifaces = ["lo"] + [nic.iface for nic in host.nics]
    live = hm.m.alive(host.index, times) > 0
    for f in ifaces:
        if f == "lo":
            rx = r.uniform(40, 120, n) * (1 + live)
            rates[f] = dict(rxpck=rx, txpck=rx, rxkb=rx * 0.31, txkb=rx * 0.31, speed=None)
            continue
        nic = next(x for x in host.nics if x.iface == f)
        if nic.rail is None:
            rx = r.uniform(180, 420, n) * (1 + live)
            tx = rx * r.uniform(0.7, 0.9, n)
            rxkb, txkb = rx * r.uniform(0.4, 1.6, n), tx * r.uniform(0.2, 0.6, n)
            if plan.transport == "socket":
                b = sum(hm.m.traffic(host.index, g, np.concatenate([[times[0] - interval], times]))
                        for g in range(hm.G)) * 0.5
                bps = np.diff(b) / interval
                rxkb = rxkb + bps / 1024
                txkb = txkb + bps / 1024 * r.uniform(0.98, 1.02, n)
                rx = rx + bps / 8960
                tx = tx + bps / 8960
        else:
            rx = r.uniform(6, 14, n)
            tx = rx * r.uniform(0.6, 0.8, n)
            rxkb, txkb = rx * 0.094, tx * 0.08
        rates[f] = dict(rxpck=rx, txpck=tx, rxkb=rxkb, txkb=txkb, speed=nic.speed_mbps)
    return ifaces, rates


def sar_n_dev(hm, host, start, interval, n) -> bytes:
    times = start + interval * np.arange(1, n + 1)
    ifaces, rates = net_rates(hm, host, times, interval)
    cols = {}
    for f in ifaces:
        x = rates[f]
        util = np.zeros(n) if x["speed"] is None else np.maximum(x["rxkb"], x["txkb"]) * 8192 / (x["speed"] * 1e6) * 100
        mc = np.zeros(n) if f == "lo" else np.full(n, 0.0) + (x["rxpck"] * 0.004)
        cols[f] = [x["rxpck"], x["txpck"], x["rxkb"], x["txkb"], np.zeros(n), np.zeros(n), mc, util]
    return _multi(host, start, times, DEV_NAMES, ifaces, cols)


def sar_n_edev(hm, host, start, interval, n) -> bytes:
    times = start + interval * np.arange(1, n + 1)
    ifaces = ["lo"] + [nic.iface for nic in host.nics]
    cols = {}
    grid = np.concatenate([[start], times])
    for f in ifaces:
        z = [np.zeros(n) for _ in EDEV_NAMES]
        if f != "lo":
            nic = next(x for x in host.nics if x.iface == f)
            cnt = hm.nic_counters(nic, grid)
            drop = np.diff(cnt["rx_out_of_buffer"]) / interval
            err = np.diff(cnt["rx_crc_errors_phy"]) / interval
            z[3] = drop
            z[0] = err
        cols[f] = z
    return _multi(host, start, times, EDEV_NAMES, ifaces, cols)


MEM_NAMES = ("kbmemfree", "kbavail", "kbmemused", "%memused", "kbbuffers", "kbcached", "kbcommit", "%commit",
             "kbactive", "kbinact", "kbdirty")


def sar_r(hm, host, start, interval, n) -> bytes:
    from forensics.simulate.hardware import MEM_TOTAL_KB

    times = start + interval * np.arange(1, n + 1)
    r = np.random.default_rng([hm.cfg.seed, host.index, 31])
    alive = hm.m.alive(host.index, times).astype(float)
    used = 38e6 + alive * 61.5e6 + r.uniform(-2e5, 2e5, n)          # kB of anonymous memory
    cached = 905e6 + np.cumsum(hm.disks(times)["sda"]["rkb_s"] * interval * 0.05)
    cached = np.minimum(cached, MEM_TOTAL_KB * 0.6)
    buffers = np.full(n, 2.61e6) + r.uniform(0, 2e3, n)
    free = MEM_TOTAL_KB - used - cached - buffers - 9.8e6
    avail = free + cached * 0.93 + buffers
    commit = used * 1.8 + 24e6
    cols = [free, avail, used, used / MEM_TOTAL_KB * 100, buffers, cached, commit, commit / MEM_TOTAL_KB * 100,
            used + cached * 0.35, cached * 0.63, r.uniform(40, 900, n)]
    fm = [(-1, 10), (-1, 10), (-1, 10), (2, 10), (-1, 10), (-1, 10), (-1, 10), (2, 10), (-1, 10), (-1, 10), (-1, 10)]
    cols = [np.floor(c) if f[0] < 0 else c for c, f in zip(cols, fm)]
    rows = _value_rows(_t(host, times), None, cols, fm)
    avg = _value_rows(["Average:"], None, [np.array([np.floor(c.mean()) if f[0] < 0 else c.mean()]) for c, f in zip(cols, fm)], fm)[0]
    header = f"{_t(host, np.array([start]))[0]:<11}" + "".join(f"{x:>10}" for x in MEM_NAMES)
    return _single(header, rows, avg, _date(host, start), host.name)


Q_NAMES = ("runq-sz", "plist-sz", "ldavg-1", "ldavg-5", "ldavg-15", "blocked")


def sar_q(hm, host, start, interval, n) -> bytes:
    plan = hm.plan
    secs = plan.grid0 + np.arange(plan.T)
    cpu = hm.cpu(secs, 1.0)
    busy = (cpu["user"] + cpu["system"]).sum(axis=0) / 100 * (NCPU // 2)
    ld = {}
    for name, tau in (("1", 60.0), ("5", 300.0), ("15", 900.0)):
        a = 1 - np.exp(-1 / tau)
        y = np.empty_like(busy)
        acc = busy[0] * 0.9
        for i, b in enumerate(busy):
            acc += a * (b - acc)
            y[i] = acc
        ld[name] = y
    times = start + interval * np.arange(1, n + 1)
    idx = np.clip((times - plan.grid0).astype(int), 0, plan.T - 1)
    r = np.random.default_rng([hm.cfg.seed, host.index, 41])
    runq = np.maximum(np.round(busy[idx] * r.uniform(0.85, 1.1, n)), 0)
    alive = hm.m.alive(host.index, times)
    plist = 2710 + alive * 214 + r.integers(0, 9, n)
    blocked = np.round(plan.disk_load[host.index, idx] * r.uniform(8, 40, n) + r.integers(0, 2, n))
    cols = [runq, plist, ld["1"][idx], ld["5"][idx], ld["15"][idx], blocked]
    fm = [(-1, 10), (-1, 10), (2, 10), (2, 10), (2, 10), (-1, 10)]
    rows = _value_rows(_t(host, times), None, cols, fm)
    avg = _value_rows(["Average:"], None, [np.array([np.round(c.mean()) if f[0] < 0 else c.mean()]) for c, f in zip(cols, fm)], fm)[0]
    header = f"{_t(host, np.array([start]))[0]:<11}" + "".join(f"{x:>10}" for x in Q_NAMES)
    return _single(header, rows, avg, _date(host, start), host.name)
