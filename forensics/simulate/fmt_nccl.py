"""NCCL 2.21.5 debug files (``NCCL_DEBUG=INFO``, ``NCCL_DEBUG_FILE=/var/log/nccl/nccl.%h.%p.log``)
and the PyTorch 2.5 c10d watchdog lines of the job's stderr.

Line shapes come from real logs (tests/fixtures/nccl, ../shared/fixtures-real/nccl_log and NCCL
issues): ``host:pid:tid [dev] NCCL INFO ...``, WARN lines with ``file.cc:line`` before ``NCCL WARN``,
the bare ``NCCL version ...`` of rank 0, ``Channel 00/0 : 7[7] -> 8[0] [receive] via NET/IB/0/GDRDMA``,
PXN sends ``via NET/IB/0(8)/GDRDMA``, ``P2P/CUMEM/read`` inside a node, ``Trees [0] 1/8/-1->0->-1``,
``ncclCommInitRank ... commId 0x... - Init COMPLETE``; PyTorch's ``[rank3]:[E1130 10:21:14.123456789
ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(...)``.
NCCL 2.21 stamps no time of its own on these lines.
"""
from __future__ import annotations

import numpy as np

from forensics.simulate import textfmt as tf
from forensics.simulate.config import CUDA_DRIVER_INT, NCCL, NCCL_SHORT
from forensics.simulate.hardware import cpu_mask_str, node_cpus
from forensics.simulate.job import BUCKETS, NUMEL


def tids(pid: int) -> dict:
    return {"main": pid, "init": pid + 29, "conn": pid + 35, "proxy": pid + 33, "async": pid + 27}


def _btree(n: int, rank: int) -> tuple[int, int, int]:
    """NCCL's binary tree over `n` nodes: (parent, child0, child1), -1 for none."""
    bit = 1
    while bit < n:
        if bit & rank:
            break
        bit <<= 1
    if rank == 0:
        return -1, -1, (bit >> 1 if n > 1 else -1)
    up = (rank ^ bit) | (bit << 1)
    if up >= n:
        up = rank ^ bit
    low = bit >> 1
    d0 = -1 if low == 0 else rank - low
    d1 = -1 if low == 0 else rank + low
    while d1 >= n:
        low >>= 1
        d1 = -1 if low == 0 else rank + low
    return up, d0, d1


def _dtree(n: int, node: int, which: int) -> tuple[int, int, int]:
    if which == 0 or n == 1:
        return _btree(n, node)
    if n % 2 == 1:
        shifted = (node - 1 + n) % n
        u, a, b = _btree(n, shifted)
        f = (lambda x: -1 if x == -1 else (x + 1) % n)
        return f(u), f(a), f(b)
    m = n - 1 - node
    u, a, b = _btree(n, m)
    f = (lambda x: -1 if x == -1 else n - 1 - x)
    return f(u), f(a), f(b)


def init_lines(cluster, plan, h: int, g: int) -> list[tuple[int, str]]:
    """(thread id, text after the '[dev] ' prefix) of one rank's communicator init."""
    cfg = cluster.cfg
    host = cluster.hosts[h]
    N, G = cfg.nodes, cfg.gpus_per_node
    R = cluster.rank(h, g)
    nr = cluster.nranks
    pid = host.pid(g)
    t = tids(pid)
    gpu = host.gpus[g]
    front = host.frontend
    ptr = cluster.comm_ptrs[R]
    nch = max(2, 2 * G)
    out: list[tuple[int, str]] = []
    I = "NCCL INFO "
    out.append((t["main"], f"{I}Bootstrap : Using {front.iface}:{front.ip}<0>"))
    out.append((t["main"], f"{I}cudaDriverVersion {CUDA_DRIVER_INT}"))
    if R == 0:
        out.append((-1, f"NCCL version {NCCL}"))
    out.append((t["main"], f"{I}Comm config Blocking set to 1"))
    out.append((t["init"], f"{I}NCCL_SOCKET_IFNAME set by environment to {front.iface}"))
    if plan.transport == "socket":
        out.append((t["init"], f"{I}NCCL_IB_DISABLE set by environment to 1."))
        out.append((t["init"], f"{I}NET/Socket : Using [0]{front.iface}:{front.ip}<0>"))
        out.append((t["init"], f"{I}Using non-device net plugin version 0"))
        out.append((t["init"], f"{I}Using network Socket"))
    else:
        hcas = ",".join(n.rdma for n in host.rails)
        out.append((t["init"], f"{I}NCCL_IB_HCA set to {hcas}"))
        if not any(n.infiniband for n in host.rails):  # (fmt_host.base_env sets it for RoCE only)
            out.append((t["init"], f"{I}NCCL_IB_GID_INDEX set by environment to 3."))
        # the port's link layer as NCCL prints it (tests/fixtures/nccl: "[0]mlx5_0:1/IB", "[3]mlx5_2:1/RoCE")
        using = " ".join(f"[{k}]{n.rdma}:1/{'IB' if n.infiniband else 'RoCE'}" for k, n in enumerate(host.rails))
        out.append((t["init"], f"{I}NET/IB : Using {using} [RO]; OOB {front.iface}:{front.ip}<0>"))
        out.append((t["init"], f"{I}Using non-device net plugin version 0"))
        out.append((t["init"], f"{I}Using network IB"))
    out.append((t["init"], f"{I}DMA-BUF is available on GPU device {g}"))
    comm_init = (f"{I}ncclCommInitRank comm {ptr} rank {R} nranks {nr} cudaDev {g} nvmlDev {g} "
                 f"busId {gpu.nccl_bus_id} commId {cluster.comm_id} - Init ")
    out.append((t["init"], comm_init + "START"))
    pinned = plan.affinity.get((h, g), gpu.numa)
    if pinned == gpu.numa:
        out.append((t["init"], f"{I}Setting affinity for GPU {g} to {cpu_mask_str(node_cpus(gpu.numa))}"))
    for key in sorted(plan.env):
        val = plan.env[key]
        if key == "NCCL_NET_GDR_LEVEL":
            out.append((t["init"], f"{I}{key} set by environment to {val}"))
        else:
            out.append((t["init"], f"{I}{key} set by environment to {val}."))
    out.append((t["init"], f"{I}comm {ptr} rank {R} nRanks {nr} nNodes {N} localRanks {G} localRank {g} MNNVL 0"))
    rings = _rings(N, G, nch)
    if R == 0:
        for c in range(nch):
            out.append((t["init"], f"{I}Channel {c:02d}/{nch:02d} : " + "".join(f"{x:4d}" for x in rings[c])))
    trees = []
    for c in range(nch):
        up, d0, d1 = _dtree(N, h, c % 2)
        if g == 0:
            down = [R + 1 if G > 1 else -1, -1 if d0 < 0 else d0 * G, -1 if d1 < 0 else d1 * G]
            down = [x for x in down if x >= 0] + [-1] * 3
            par = -1 if up < 0 else up * G
        else:
            down = [R + 1 if g < G - 1 else -1, -1, -1]
            par = R - 1
        trees.append(f"[{c}] {down[0]}/{down[1]}/{down[2]}->{R}->{par}")
    out.append((t["init"], f"{I}Trees " + " ".join(trees)))
    out.append((t["init"], f"{I}P2P Chunksize set to 131072"))
    rail = host.rails[g] if g < len(host.rails) else host.rails[0]
    if plan.transport == "socket":
        out.append((t["init"], f"{I}NET/Socket : GPU Direct RDMA Disabled for HCA 0 '{front.iface}'"))
    else:
        out.append((t["init"], f"{I}NET/IB : GPU Direct RDMA Enabled for HCA {g} '{rail.rdma}'"))
        if plan.gdr:
            out.append((t["init"], f"{I}GPU Direct RDMA Enabled for GPU {g} / HCA {g} (distance 4 <= 5), read 1"))
        else:
            out.append((t["init"], f"{I}GPU Direct RDMA Disabled for GPU {g} / HCA {g} (distance 4 > 0)"))
    for c in range(nch):
        ring = rings[c]
        pos = ring.index(R)
        prev, nxt = ring[pos - 1], ring[(pos + 1) % len(ring)]
        ph, pg = divmod(prev, G)
        nh, ng = divmod(nxt, G)
        if N > 1 and ph != h:
            out.append((t["conn"], f"{I}Channel {c:02d}/0 : {prev}[{pg}] -> {R}[{g}] [receive] via {_net(plan, g)}"))
        if nh == h:
            if nxt != R:
                out.append((t["conn"], f"{I}Channel {c:02d}/0 : {R}[{g}] -> {nxt}[{ng}] via P2P/CUMEM/read"))
        elif N > 1:
            proxy = cluster.rank(h, ng) if (plan.gdr and plan.transport == "ib" and ng != g) else None
            out.append((t["conn"], f"{I}Channel {c:02d}/0 : {R}[{g}] -> {nxt}[{ng}] [send] via {_net(plan, ng, proxy)}"))
    if plan.transport == "socket" and N > 1:
        out.append((t["conn"], f"{I}NET/Socket: Using 2 threads and 8 sockets per thread"))
    out.append((t["conn"], f"{I}Connected all rings"))
    out.append((t["conn"], f"{I}Connected all trees"))
    out.append((t["init"], f"{I}threadThresholds 8/8/64 | {64 * nr}/8/64 | 512 | 512"))
    out.append((t["init"], f"{I}{nch} coll channels, {nch} collnet channels, 0 nvls channels, {nch} p2p channels, 2 p2p channels per peer"))
    out.append((t["init"], comm_init + "COMPLETE"))
    return out


def _net(plan, dev: int, proxy: int | None = None) -> str:
    if plan.transport == "socket":
        return "NET/Socket/0"
    s = f"NET/IB/{dev}" + (f"({proxy})" if proxy is not None else "")
    return s + ("/GDRDMA" if plan.gdr else "")


def _rings(N: int, G: int, nch: int) -> list[list[int]]:
    """Channel c enters every node at GPU c % G and walks the node's GPUs in order."""
    rings = []
    for c in range(nch):
        e = c % G
        ring = []
        for n in range(N):
            ring += [n * G + (e + k) % G for k in range(G)]
        rings.append(ring)
    return rings


def copied_at(cluster, host) -> float:
    """True time at which the collector copies the host's logs (bundle.py: the end of its capture + 1.2 s)."""
    return cluster.cfg.t0 + host.jitter_s + cluster.cfg.duration_s + 1.2


def nccl_file(cluster, plan, model, h: int, g: int) -> bytes:
    host = cluster.hosts[h]
    pid = host.pid(g)
    t = tids(pid)
    head = f"{host.name}:{pid}:"
    lines = []
    for tid, text in init_lines(cluster, plan, h, g):
        lines.append(text if tid < 0 else f"{head}{tid} [{g}] {text}")
    R = cluster.rank(h, g)
    for _t, msgs, thread in sorted(plan.nccl_warn.get(R, []), key=lambda x: x[0]):
        if _t > copied_at(cluster, host):  # the log is copied at the end of the capture: later lines are not in it
            continue
        tid = {1: t["proxy"], 2: t["async"], 0: t["main"]}.get(thread, t["proxy"])
        for m in msgs:
            lines.append(f"{head}{tid} [{g}] {m}")
    end = model.proc_end[h, g]
    crash = plan.crash
    if crash is not None and (h, g) not in crash.dead and end < plan.t_end:
        gpu = host.gpus[g]
        lines.append(f"{head}{t['main'] + 41} [{g}] NCCL INFO comm {cluster.comm_ptrs[R]} rank {R} nranks "
                     f"{cluster.nranks} cudaDev {g} busId {gpu.nccl_bus_id} - Abort COMPLETE")
    return tf.lines_bytes(lines)


def watchdog_log(cluster, plan, model, h: int) -> bytes | None:
    """The job's stderr on host h: PyTorch c10d watchdog lines of its local ranks, in time order."""
    crash = plan.crash
    if crash is None or model.crash_step is None:  # no crash, or it comes after the capture
        return None
    host = cluster.hosts[h]
    G = cluster.cfg.gpus_per_node
    S = model.crash_seq
    last_enq = S + BUCKETS - 1
    T = int(round(crash.timeout_s * 1000))
    ev: list[tuple[float, str]] = []
    for g in range(G):
        R = cluster.rank(h, g)
        pg = f"[PG 0 (default_pg) Rank {R}]"
        work = f"WorkNCCL(SeqNum={S}, OpType=ALLREDUCE, NumelIn={NUMEL}, NumelOut={NUMEL}, Timeout(ms)={T})"
        if R in getattr(model, "watchdog", {}):
            start, ran = model.watchdog[R]
            ran_ms = int(round(ran * 1000))
            t0 = start + ran
            msg = f"[Rank {R}] Watchdog caught collective operation timeout: {work} ran for {ran_ms} milliseconds before timing out."
            ev += [(t0, R, 607, msg),
                   (t0 + 0.0014, R, 1664, f"{pg} Exception (either an error or timeout) detected by watchdog at work: {S}, "
                                          f"last enqueued NCCL work: {last_enq}, last completed NCCL work: {S - 1}."),
                   (t0 + 0.0015, R, 1709, f"{pg} Timeout at NCCL work: {S}, last enqueued NCCL work: {last_enq}, "
                                          f"last completed NCCL work: {S - 1}."),
                   (t0 + 0.0016, R, 621, f"[Rank {R}] Some NCCL operations have failed or timed out. Due to the asynchronous "
                                         "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data."),
                   (t0 + 0.0016, R, 627, f"[Rank {R}] To avoid data inconsistency, we are taking the entire process down."),
                   (t0 + 0.0058, R, 1515, f"{pg} Process group watchdog thread terminated with exception: {msg}")]
        elif R in crash.errors:
            t0 = crash.errors[R] + 0.35
            ev += [(t0, R, 1664, f"{pg} Exception (either an error or timeout) detected by watchdog at work: {S}, "
                                 f"last enqueued NCCL work: {last_enq}, last completed NCCL work: {S - 1}."),
                   (t0 + 0.0002, R, 621, f"[Rank {R}] Some NCCL operations have failed or timed out. Due to the asynchronous "
                                         "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data."),
                   (t0 + 0.0002, R, 627, f"[Rank {R}] To avoid data inconsistency, we are taking the entire process down."),
                   (t0 + 0.0041, R, 1515, f"{pg} Process group watchdog thread terminated with exception: NCCL error: "
                                          f"remote process exited or there was a network error, NCCL version {NCCL_SHORT}")]
    ev = [e for e in ev if e[0] <= copied_at(cluster, host)]
    if not ev:
        return None
    ev.sort(key=lambda e: (e[0], e[1]))
    ts = host.wall(np.array([e[0] for e in ev]))
    stamp = tf.times(ts, host.tz, "%m%d %H:%M:%S%.9f", unit="ns").to_list()
    lines = [f"[rank{R}]:[E{s} ProcessGroupNCCL.cpp:{ln}] {m}" for s, (_, R, ln, m) in zip(stamp, ev)]
    return tf.lines_bytes(lines)
