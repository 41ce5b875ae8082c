"""The data-parallel training job: steps, per-GPU phases, and the series they drive.

Each step every rank waits for its batch (``data_wait``, GPU idle), runs forward/backward
(``compute``; the last 40% overlaps the gradient all-reduce), spins in the NCCL kernel until the
slowest rank arrives (``spin``: the GPU reports 100% utilisation at low power), finishes the
exposed part of the all-reduce (``comm``) and the optimizer step (``opt``). The step ends for all
ranks at once. Utilisation, power, clocks and temperature are integrals of these phases over each
sample window; NIC byte counters integrate the all-reduce traffic of the rail's GPU.
"""
from __future__ import annotations

import numpy as np

from forensics.simulate.config import rng
from forensics.simulate.plan import INIT_S, Plan

C0 = 1.10            # forward+backward seconds per step
COMM0 = 0.62         # all-reduce seconds per step at full speed
OVERLAP = 0.44       # part of it hidden behind the backward pass
OPT = 0.07           # optimizer step
BYTES_PER_STEP = 9.0e9   # bytes each rail NIC sends (and receives) per step
BUCKETS = 640        # DDP all-reduce buckets per step (SeqNum advances by this much)
SEQ0 = 3             # collectives before the first step (barrier, broadcasts)
NUMEL = 13107200     # elements of a 25 MiB bf16 bucket

# phase codes
NONE, IDLE, COMPUTE, SPIN, COMM, OPTIM = range(6)


class JobModel:
    """Steps of the whole job and the phase timeline of every GPU."""

    def __init__(self, plan: Plan):
        self.plan = plan
        cl = plan.cluster
        self.N, self.G = cl.cfg.nodes, cl.cfg.gpus_per_node
        self.t_launch = plan.grid0
        self.t_train = plan.grid0 + INIT_S
        self.proc_end = np.full((self.N, self.G), np.inf)
        self.crash_step: int | None = None
        self.crash_seq: int | None = None
        self.arrive_crash = None
        r = rng(cl.cfg.seed, "steps")
        starts, syncs, exposed, waits, comps = [], [], [], [], []
        s = self.t_train
        crash = plan.crash
        while s < plan.t_end:
            i = plan.idx(s)
            d = plan.data_wait[:, i] * r.uniform(0.85, 1.15, self.N) + r.exponential(0.004, self.N)
            c = (C0 * plan.compute_factor[:, :, i] / plan.clock_ratio[:, :, i]
                 * (1 + 0.012 * r.standard_normal((self.N, self.G))))
            arrive = d[:, None] + c
            sync = float(arrive.max())
            e = max(COMM0 * plan.comm_factor[i] - OVERLAP, 0.05) * r.uniform(0.95, 1.05)
            end = s + sync + e + OPT
            if crash is not None and crash.t_fail < end:
                self._crash(crash, s, d, c, len(starts), r)
                starts.append(s)
                syncs.append(np.inf)
                exposed.append(e)
                waits.append(d)
                comps.append(c)
                break
            starts.append(s)
            syncs.append(sync)
            exposed.append(e)
            waits.append(d)
            comps.append(c)
            s = end
        self.s = np.array(starts)
        self.sync = np.array(syncs)
        self.e = np.array(exposed)
        self.d = np.array(waits).reshape(len(starts), self.N)
        self.c = np.array(comps).reshape(len(starts), self.N, self.G)
        if not np.isfinite(self.proc_end).all():
            self.proc_end[~np.isfinite(self.proc_end)] = plan.t_end + 3600.0
        self._pulse_cache: dict = {}

    # ------------------------------------------------------------------ crash
    def _crash(self, crash, s, d, c, k, r) -> None:
        """Set every rank's process end: dead ranks at t_fail, their node's other ranks a few
        seconds later (torchrun kills its workers), NCCL-error ranks after their error, the rest at
        their watchdog timeout."""
        self.crash_step = k
        self.crash_seq = SEQ0 + k * BUCKETS + 1
        arrive = s + d[:, None] + c
        self.arrive_crash = arrive
        dead_hosts = {h for h, _ in crash.dead}
        err_hosts = {self.plan.cluster.hosts[rk // self.G].index for rk in crash.errors}
        for h in range(self.N):
            for g in range(self.G):
                rk = h * self.G + g
                if (h, g) == crash.stuck:
                    continue  # set below, from its node's other workers
                if (h, g) in crash.dead:
                    self.proc_end[h, g] = crash.t_fail
                elif h in dead_hosts:
                    self.proc_end[h, g] = crash.t_fail + 4.0 + r.uniform(0.2, 1.5)
                elif rk in crash.errors:
                    self.proc_end[h, g] = crash.errors[rk] + r.uniform(1.0, 2.5)
                elif h in err_hosts:
                    first = min(t for q, t in crash.errors.items() if q // self.G == h)
                    self.proc_end[h, g] = first + 4.0 + r.uniform(0.2, 1.5)
                else:
                    start = max(arrive[h, g], crash.t_fail - 0.2)
                    self.proc_end[h, g] = start + crash.timeout_s + r.uniform(0.05, 1.2) + 0.4
        if crash.stuck is not None:  # torchrun ends it when its node's other workers exit
            h, g = crash.stuck
            others = [self.proc_end[h, o] for o in range(self.G) if o != g]
            self.proc_end[h, g] = (max(others) if others else crash.t_fail + crash.timeout_s) + r.uniform(0.3, 1.5)
        self.watchdog = {}
        for h in range(self.N):
            for g in range(self.G):
                rk = h * self.G + g
                if ((h, g) in crash.dead or (h, g) == crash.stuck or h in dead_hosts or rk in crash.errors
                        or h in err_hosts):
                    continue
                start = max(arrive[h, g], crash.t_fail - 0.2)
                ran = crash.timeout_s + (self.proc_end[h, g] - 0.4 - start - crash.timeout_s)
                self.watchdog[rk] = (start, ran)

    # ------------------------------------------------------------------ phases
    def phases(self, h: int, g: int) -> tuple[np.ndarray, np.ndarray]:
        """(bounds, codes): codes[j] is the phase between bounds[j] and bounds[j+1]."""
        if self.plan.pulsing:
            return self._pulse_phases(h, g)
        k = len(self.s)
        end = self.proc_end[h, g]
        if k == 0:
            b = np.array([self.t_launch, min(end, self.plan.t_end + 10)])
            return np.concatenate([[self.t_launch - 1e6], b, [self.plan.t_end + 1e6]]), np.array([NONE, IDLE, NONE], dtype=np.int8)
        s = self.s
        d = self.d[:, h]
        c = self.c[:, h, g]
        sync = np.where(np.isfinite(self.sync), self.sync, 0.0)
        t1 = s + d
        t2 = t1 + c
        t3 = s + sync
        t4 = t3 + self.e
        t5 = t4 + OPT
        rows = np.stack([s, t1, t2, t3, t4], axis=1)
        codes = np.tile(np.array([IDLE, COMPUTE, SPIN, COMM, OPTIM], dtype=np.int8), (k, 1))
        if self.crash_step is not None:
            # the last (crash) step: compute then spin until the process ends
            rows[-1, 3:] = np.nan
            codes[-1, 3:] = -1
        b = rows.reshape(-1)
        cd = codes.reshape(-1)
        keep = cd >= 0
        b, cd = b[keep], cd[keep]
        tail = min(t5[-1] if self.crash_step is None else np.inf, end)
        far = max(end, self.plan.t_end) + 1e6
        bounds = np.concatenate([[self.t_launch - 1e6, self.t_launch], b, [tail, far]])
        codes = np.concatenate([[NONE, IDLE], cd, [NONE]]).astype(np.int8)
        # everything after the process end collapses: the last interval (NONE) starts at `end`
        bounds[1:-1] = np.minimum(bounds[1:-1], end)
        bounds = np.maximum.accumulate(bounds)
        return bounds, codes

    def _pulse_phases(self, h: int, g: int):
        """Serialised pipeline: each GPU alternates busy (compute) and idle periods of a few
        seconds, out of step with the others (GPUs take turns)."""
        r = rng(self.plan.cluster.cfg.seed, "pulse", h, g)
        t = self.t_train + r.uniform(0, 3)
        bounds = [self.t_launch - 1e6, self.t_launch, t]
        codes = [NONE, IDLE]
        busy = r.random() < 0.5
        while t < self.plan.t_end + 5:
            dur = r.uniform(1.2, 3.8) if busy else r.uniform(0.8, 4.5)
            codes.append(COMPUTE if busy else IDLE)
            t += dur
            bounds.append(t)
            busy = not busy
        codes.append(NONE)
        bounds.append(self.plan.t_end + 1e6)
        return np.array(bounds), np.array(codes, dtype=np.int8)

    # ------------------------------------------------------------------ integrals
    @staticmethod
    def integrals(bounds: np.ndarray, codes: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Seconds spent in each phase code within windows [a, b]: shape (6, len(a))."""
        dur = np.diff(bounds)
        out = np.empty((6, len(a)))
        for code in range(6):
            cum = np.concatenate([[0.0], np.cumsum(np.where(codes == code, dur, 0.0))])
            out[code] = np.interp(b, bounds, cum) - np.interp(a, bounds, cum)
        return out

    def traffic(self, h: int, g: int, times: np.ndarray, factor: np.ndarray | None = None) -> np.ndarray:
        """Cumulative bytes the rail NIC of GPU g has sent by each true time (all-reduce traffic)."""
        plan = self.plan
        if plan.pulsing:
            bounds, codes = self.phases(h, g)
            busy = self.integrals(bounds, codes, np.full(len(times), bounds[1]), times)[COMPUTE]
            return busy * BYTES_PER_STEP * 0.08
        k = len(self.s)
        if k == 0:
            return np.zeros(len(times))
        s, d, c = self.s, self.d[:, h], self.c[:, h, g]
        sync = np.where(np.isfinite(self.sync), self.sync, 0.0)
        a = s + d + 0.6 * c
        b = s + sync + self.e
        per = np.full(k, BYTES_PER_STEP)
        if self.crash_step is not None:
            b[-1] = min(self.proc_end[h, g], a[-1] + 0.05)
            per[-1] = BYTES_PER_STEP * 0.02
        if factor is not None:
            per = per * factor[np.clip((a - plan.grid0).astype(int), 0, plan.T - 1)]
        b = np.maximum(b, a + 1e-6)
        xs = np.stack([a, b], axis=1).reshape(-1)
        cum = np.concatenate([[0.0], np.cumsum(per)])
        ys = np.stack([cum[:-1], cum[1:]], axis=1).reshape(-1)
        xs = np.maximum.accumulate(xs)
        return np.interp(times, xs, ys, left=0.0, right=ys[-1])

    def step_count(self, t: np.ndarray) -> np.ndarray:
        """Completed steps by each time (for CPU load and data reads)."""
        ends = self.s + np.where(np.isfinite(self.sync), self.sync, np.inf) + self.e + OPT
        return np.searchsorted(ends, t, side="right")

    def alive(self, h: int, t: np.ndarray) -> np.ndarray:
        """Number of live training processes on host h at each time."""
        ends = self.proc_end[h]
        return ((t[:, None] >= self.t_launch) & (t[:, None] < ends[None, :])).sum(axis=1)

    def seq_at(self, t: float) -> int:
        return SEQ0 + int(self.step_count(np.array([t]))[0]) * BUCKETS
