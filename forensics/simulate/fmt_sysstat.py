"""sysstat 12 outputs as collected with LC_ALL=C: ``iostat -x -t`` and ``sar -u / -P ALL / -n DEV /
-n EDEV / -r / -q / -W / -B / -S``.

Layout copied from real outputs (tests/fixtures and ../shared/fixtures-real): the banner
``Linux <release> (<host>) \\t<date> \\t_x86_64_\\t(<n> CPU)`` with the C locale's ``%x`` date
(``11/30/26``), sar's 24-hour ``%X`` time padded to 11 columns (``%-11s``) and ``" %9.2f"`` fields,
the item column ``" %7s"`` (CPU) or ``" %9s"`` (IFACE, longer names push the line), the header
repeated per interval for multi-row reports and an ``Average:`` block at the end; iostat's
``%x %X`` report stamp, the ``avg-cpu`` block and the sysstat 12 device columns (``r/s rkB/s rrqm/s
%rrqm r_await rareq-sz ... f/s f_await aqu-sz %util``), first report = since boot.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from forensics.simulate import textfmt as tf
from forensics.simulate.config import KERNEL
from forensics.simulate.hardware import MEM_TOTAL_KB, NCPU

DEV_COLS = ("r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz", "w/s", "wkB/s", "wrqm/s", "%wrqm",
            "w_await", "wareq-sz", "d/s", "dkB/s", "drqm/s", "%drqm", "d_await", "dareq-sz", "f/s", "f_await",
            "aqu-sz", "%util")
DEV_W = (8, 10, 9, 7, 8, 9, 8, 10, 9, 7, 8, 9, 8, 10, 9, 7, 8, 9, 8, 8, 8, 7)
IOSTAT_DEVICES = ("loop0", "loop1", "loop2", "nvme0n1", "nvme1n1", "sda")
CPU_NAMES = ("%user", "%nice", "%system", "%iowait", "%steal", "%idle")
DEV_NAMES = ("rxpck/s", "txpck/s", "rxkB/s", "txkB/s", "rxcmp/s", "txcmp/s", "rxmcst/s", "%ifutil")
EDEV_NAMES = ("rxerr/s", "txerr/s", "coll/s", "rxdrop/s", "txdrop/s", "txcarr/s", "rxfram/s", "rxfifo/s", "txfifo/s")
MEM_NAMES = ("kbmemfree", "kbavail", "kbmemused", "%memused", "kbbuffers", "kbcached", "kbcommit", "%commit",
             "kbactive", "kbinact", "kbdirty")
Q_NAMES = ("runq-sz", "plist-sz", "ldavg-1", "ldavg-5", "ldavg-15", "blocked")
W_NAMES = ("pswpin/s", "pswpout/s")
B_NAMES = ("pgpgin/s", "pgpgout/s", "fault/s", "majflt/s", "pgfree/s", "pgscank/s", "pgscand/s", "pgsteal/s", "%vmeff")
S_NAMES = ("kbswpfree", "kbswpused", "%swpused", "kbswpcad", "%swpcad")
SWAP_TOTAL_KB = 8388604  # the 8 GiB /swap.img of an Ubuntu 22.04 install (less its header page)


def banner(host: str, date: str) -> str:
    return f"Linux {KERNEL} ({host}) \t{date} \t_x86_64_\t({NCPU} CPU)"


def _t(host, t_true: np.ndarray) -> list[str]:
    return tf.times(host.wall(np.asarray(t_true)), host.tz, "%H:%M:%S").to_list()


def _date(host, t_true: float) -> str:
    return tf.times(host.wall(np.array([t_true])), host.tz, "%m/%d/%y")[0]


def _rows(labels: list[str], items: list[str] | None, cols: list[np.ndarray], fmts: list[tuple[int, int]],
          item_width: int = 8) -> pl.Series:
    """sar rows: ``%-11s`` label, ``" %{item_width-1}s"`` item, then ``" %{w-1}.{dec}f"`` fields
    (dec < 0: integer): the leading space is always there, so long values never merge."""
    data = {"lab": labels}
    pieces = [tf.S("lab", 11, left=True)]
    if items is not None:
        data["item"] = items
        pieces += [" ", tf.S("item", item_width - 1)]
    for k, (c, (dec, w)) in enumerate(zip(cols, fmts)):
        data[f"v{k}"] = c
        pieces += [" ", tf.I(f"v{k}", w - 1) if dec < 0 else tf.F(f"v{k}", dec, w - 1)]
    return tf.lines(data, pieces)


def _header(label: str, names, item: str | None = None, item_width: int = 8) -> str:
    return f"{label:<11}" + _header_tail(tuple(names), item, item_width)


@lru_cache(maxsize=64)
def _header_tail(names: tuple, item: str | None, item_width: int) -> str:
    s = "" if item is None else " " + item.rjust(item_width - 1)
    return s + "".join(" " + nm.rjust(9) for nm in names)


# ---------------------------------------------------------------------------- iostat
_BOOT = {  # since-boot averages of the first report
    "loop0": dict(r_s=0.02, rkb_s=0.27, rareq=12.41, r_await=0.14),
    "loop1": dict(r_s=0.01, rkb_s=0.07, rareq=7.48, r_await=0.40),
    "loop2": dict(r_s=0.01, rkb_s=0.20, rareq=19.21, r_await=0.32),
    "nvme0n1": dict(r_s=0.35, rkb_s=9.87, rareq=28.20, r_await=0.09, w_s=9.12, wkb_s=201.40, w_await=0.03,
                    util=0.31, f_s=0.61, f_await=0.35),
    "nvme1n1": dict(w_s=0.93, wkb_s=119.04, w_await=0.02, util=0.05),
    "sda": dict(r_s=104.22, rkb_s=11839.17, rareq=113.60, r_await=0.71, rrqm_s=0.55, w_s=0.12, wkb_s=1.91,
                w_await=0.61, aqu=0.07, util=3.12),
}


def iostat(hm, host, starts_true: float, interval: float, n: int) -> bytes:
    """`iostat -x -t <interval> <n+1>` started at true time `starts_true`."""
    times = starts_true + interval * np.arange(1, n + 1)
    cpu = hm.cpu(times, interval)
    user = cpu["user"].mean(axis=0)
    system = cpu["system"].mean(axis=0)
    iow = cpu["iowait"].mean(axis=0)
    idle = np.clip(100 - user - system - iow, 0, 100)
    devs = hm.disks(times)
    stamps = tf.times(host.wall(np.concatenate([[starts_true], times])), host.tz, "%m/%d/%y %H:%M:%S").to_list()
    u0, s0 = user.mean() * 0.7, system.mean() * 0.7
    cdata = {"u": np.concatenate([[u0], user]), "z": np.zeros(n + 1), "s": np.concatenate([[s0], system]),
             "w": np.concatenate([[0.04], iow]), "i": np.concatenate([[100 - u0 - s0 - 0.04], idle])}
    cpu_rows = tf.lines(cdata, ["         ", tf.F("u", 2, 6), "  ", tf.F("z", 2, 6), "  ",
                                tf.F("s", 2, 6), "  ", tf.F("w", 2, 6), "  ",
                                tf.F("z", 2, 6), "  ", tf.F("i", 2, 6)]).to_list()
    per_dev = []
    for d in IOSTAT_DEVICES:
        v = devs.get(d, {})
        b = _BOOT[d]

        def col(key):
            arr = v.get(key)
            return np.concatenate([[b.get(key, 0.0)], np.zeros(n) if arr is None else np.asarray(arr)])

        r_s, rkb, w_s, wkb, rrqm, f_s = col("r_s"), col("rkb_s"), col("w_s"), col("wkb_s"), col("rrqm_s"), col("f_s")
        z = np.zeros(n + 1)
        vals = [r_s, rkb, rrqm, np.where(r_s + rrqm > 0, rrqm / np.maximum(r_s + rrqm, 1e-9) * 100, 0),
                col("r_await"), np.where(r_s > 0, col("rareq"), 0), w_s, wkb, z, z,
                np.where(w_s > 0, col("w_await"), 0), np.where(w_s > 0, wkb / np.maximum(w_s, 1e-9), 0),
                z, z, z, z, z, z, f_s, np.where(f_s > 0, col("f_await"), 0), col("aqu"), np.minimum(col("util"), 100.0)]
        data = {"dev": [d] * (n + 1)}
        pieces = [tf.S("dev", 13, left=True)]
        for k, (x, w) in enumerate(zip(vals, DEV_W)):
            data[f"v{k}"] = x
            pieces += [" ", tf.F(f"v{k}", 2, w - 1)]
        per_dev.append(tf.lines(data, pieces).to_list())
    head = "Device       " + "".join(f"{c:>{w}}" for c, w in zip(DEV_COLS, DEV_W))
    out = [banner(host.name, stamps[0][:8]), ""]
    for i in range(n + 1):
        out += [stamps[i], "avg-cpu:  %user   %nice %system %iowait  %steal   %idle", cpu_rows[i], "", head]
        out += [rows[i] for rows in per_dev]
        out.append("")
    return tf.lines_bytes(out)


# ---------------------------------------------------------------------------- sar
def _single(host, start, times, names, cols, fmts) -> bytes:
    """One row per interval: header once, rows, the Average row."""
    rows = _rows(_t(host, times), None, cols, fmts)
    avg = _rows(["Average:"], None, [np.array([c.mean()]) for c in cols], fmts)
    out = [banner(host.name, _date(host, start)), "", _header(_t(host, [start])[0], names)]
    return tf.lines_bytes(out + rows.to_list() + avg.to_list())


def _multi(host, start, times, names, items, cols_by_item, item_label, item_width) -> bytes:
    """Several rows per interval (one per CPU / interface): a blank line and the header before each
    interval's rows, then the Average block."""
    n = len(times)
    stamps = _t(host, np.concatenate([[start], times]))
    k = len(items)
    ncol = len(names)
    labels = np.repeat(np.array([f"{x:<11}" for x in stamps[1:]], dtype=object), k).tolist()
    cols = [np.stack([cols_by_item[f][j] for f in items], axis=1).reshape(-1) for j in range(ncol)]
    fmts = [(2, 10)] * ncol
    rows = _rows(labels, list(items) * n, cols, fmts, item_width)
    before = [["", _header(stamps[i], names, item_label, item_width)] for i in range(n)]
    means = [np.array([cols_by_item[f][j].mean() for f in items]) for j in range(ncol)]
    avg = _rows(["Average:"] * k, list(items), means, fmts, item_width).to_list()
    after = ["", _header("Average:", names, item_label, item_width)] + avg
    return (banner(host.name, _date(host, start)) + "\n" + tf.blocks(rows, k, before, after)).encode()


def sar_u(hm, host, start: float, interval: float, n: int) -> bytes:
    times = start + interval * np.arange(1, n + 1)
    cpu = hm.cpu(times, interval)
    u, s, io = (cpu[k].mean(axis=0) for k in ("user", "system", "iowait"))
    idle = np.clip(100 - u - s - io, 0, 100)
    cols = [u, np.zeros(n), s, io, np.zeros(n), idle]
    rows = _rows(_t(host, times), ["all"] * n, cols, [(2, 10)] * 6)
    avg = _rows(["Average:"], ["all"], [np.array([c.mean()]) for c in cols], [(2, 10)] * 6)
    out = [banner(host.name, _date(host, start)), "", _header(_t(host, [start])[0], CPU_NAMES, "CPU")]
    return tf.lines_bytes(out + rows.to_list() + avg.to_list())


def sar_p_all(hm, host, start: float, interval: float, n: int) -> bytes:
    times = start + interval * np.arange(1, n + 1)
    per = hm.per_cpu(times, interval)                      # (NCPU, n, 4)
    stack = np.concatenate([per.mean(axis=0)[None], per], axis=0)
    u, nice, s, io = (stack[:, :, j] for j in range(4))
    idle = np.clip(100 - u - s - io, 0, 100)
    ids = ["all"] + [str(i) for i in range(NCPU)]
    z = np.zeros_like(u)
    cols = {cid: [u[c], nice[c], s[c], io[c], z[c], idle[c]] for c, cid in enumerate(ids)}
    return _multi(host, start, times, CPU_NAMES, ids, cols, "CPU", 8)


def net_rates(hm, host, times, interval):
    """Kernel-visible traffic per interface (RDMA bypasses the netdev counters)."""
    plan = hm.plan
    r = np.random.default_rng([plan.cluster.cfg.seed, host.index, len(times), 17])
    n = len(times)
    rates = {}
    ifaces = ["lo"] + [nic.iface for nic in host.netdevs]
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
        mc = np.zeros(n) if f == "lo" else x["rxpck"] * 0.004
        cols[f] = [x["rxpck"], x["txpck"], x["rxkb"], x["txkb"], np.zeros(n), np.zeros(n), mc, util]
    return _multi(host, start, times, DEV_NAMES, ifaces, cols, "IFACE", 10)


def sar_n_edev(hm, host, start, interval, n) -> bytes:
    times = start + interval * np.arange(1, n + 1)
    ifaces = ["lo"] + [nic.iface for nic in host.netdevs]
    cols = {}
    grid = np.concatenate([[start], times])
    for f in ifaces:
        z = [np.zeros(n) for _ in EDEV_NAMES]
        if f != "lo":
            nic = next(x for x in host.nics if x.iface == f)
            cnt = hm.nic_counters(nic, grid)
            z[3] = np.diff(cnt["rx_out_of_buffer"]) / interval
            z[0] = np.diff(cnt["rx_crc_errors_phy"]) / interval
        cols[f] = z
    return _multi(host, start, times, EDEV_NAMES, ifaces, cols, "IFACE", 10)


def sar_r(hm, host, start, interval, n) -> bytes:
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
    return _single(host, start, times, MEM_NAMES, cols, fm)


def sar_q(hm, host, start, interval, n) -> bytes:
    plan = hm.plan
    secs = plan.grid0 + np.arange(plan.T)
    cpu = hm.cpu(secs, 1.0)
    busy = (cpu["user"] + cpu["system"]).sum(axis=0) / 100 * (NCPU // 2)
    ld = {}
    from scipy.signal import lfilter

    for name, tau in (("1", 60.0), ("5", 300.0), ("15", 900.0)):
        a = 1 - np.exp(-1 / tau)
        y, _ = lfilter([a], [1, a - 1], busy, zi=[busy[0] * 0.9 * (1 - a)])
        ld[name] = y
    times = start + interval * np.arange(1, n + 1)
    idx = np.clip((times - plan.grid0).astype(int), 0, plan.T - 1)
    r = np.random.default_rng([hm.cfg.seed, host.index, 41])
    runq = np.maximum(np.round(busy[idx] * r.uniform(0.85, 1.1, n)), 0)
    alive = hm.m.alive(host.index, times)
    plist = 2710 + alive * 214 + r.integers(0, 9, n)
    blocked = np.round(plan.disk_load[host.index, idx] * (alive > 0) * r.uniform(8, 40, n) + r.integers(0, 2, n))
    cols = [runq, plist, ld["1"][idx], ld["5"][idx], ld["15"][idx], blocked]
    fm = [(-1, 10), (-1, 10), (2, 10), (2, 10), (2, 10), (-1, 10)]
    return _single(host, start, times, Q_NAMES, cols, fm)


# A healthy training node does not swap: no page moves to or from swap, no page scanning or
# reclaim (free memory and page cache are plentiful, see sar_r), almost no major faults; the swap
# space holds the few pages swapped out long before the job and stays as it is.
def sar_w(hm, host, start, interval, n) -> bytes:
    times = start + interval * np.arange(1, n + 1)
    z = np.zeros(n)
    return _single(host, start, times, W_NAMES, [z, z.copy()], [(2, 10), (2, 10)])


def sar_b(hm, host, start, interval, n) -> bytes:
    """Paging rates: pgpgin/s and pgpgout/s are the kB/s read from and written to the disks (iostat's
    devices), fault/s follows the live ranks and their dataloader workers, no scanning or stealing
    (%vmeff 0.00 when nothing was scanned)."""
    times = start + interval * np.arange(1, n + 1)
    r = np.random.default_rng([hm.cfg.seed, host.index, 53])
    devs = hm.disks(times)
    pgin = sum(d["rkb_s"] for d in devs.values())
    pgout = sum(d["wkb_s"] for d in devs.values()) + r.uniform(0, 40, n)
    alive = hm.m.alive(host.index, times).astype(float)
    fault = 420 + alive * r.uniform(180, 420, n) + r.uniform(0, 150, n)
    majflt = r.poisson(0.01 * interval, n) / interval
    pgfree = fault * r.uniform(0.9, 1.15, n) + pgin / 4 * r.uniform(0.01, 0.03, n)
    z = np.zeros(n)
    cols = [pgin, pgout, fault, majflt, pgfree, z, z, z, z]
    return _single(host, start, times, B_NAMES, cols, [(2, 10)] * len(B_NAMES))


def sar_s(hm, host, start, interval, n) -> bytes:
    times = start + interval * np.arange(1, n + 1)
    r = np.random.default_rng([hm.cfg.seed, host.index, 59])
    used = float(4 * int(r.integers(1500, 6000)))           # kB swapped out long ago, never read back
    cad = float(4 * int(r.integers(20, 400)))
    ones = np.ones(n)
    cols = [ones * (SWAP_TOTAL_KB - used), ones * used, ones * (used / SWAP_TOTAL_KB * 100), ones * cad,
            ones * (cad / used * 100)]
    fm = [(-1, 10), (-1, 10), (2, 10), (-1, 10), (2, 10)]
    return _single(host, start, times, S_NAMES, cols, fm)
