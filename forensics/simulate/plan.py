"""What a scenario changes in the model: factors over time, injected events, configuration, truth.

Every array is indexed by whole seconds of *true* time from :attr:`Plan.grid0` (the job launch).
Scenarios (:mod:`forensics.simulate.scenarios`) fill a Plan; the job model and the writers read it.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import numpy as np

from forensics.simulate.hardware import Cluster

#: seconds the job has been running when the collection starts (NCCL init is in the logs)
WARMUP_S = 150.0
#: seconds from the job launch to the first training step (NCCL init, model load)
INIT_S = 40.0


@dataclass
class Crash:
    """The job dies: `dead` ranks stop at t_fail; `errors` ranks get NCCL errors and abort; the rest
    hang in their all-reduce until the PyTorch watchdog timeout."""

    t_fail: float
    dead: list[tuple[int, int]]
    timeout_s: float
    cause: str
    errors: dict[int, float] = field(default_factory=dict)     # rank -> time of its NCCL error
    gpu_lost: bool = False
    #: (host, gpu) of a rank that stops at t_fail before enqueuing its next collective (its process
    #: lives on until torchrun ends its node's workers); every other rank waits in that collective
    stuck: tuple[int, int] | None = None


@dataclass
class Plan:
    cluster: Cluster
    grid0: float
    t_end: float
    comm_factor: np.ndarray = None
    compute_factor: np.ndarray = None
    data_wait: np.ndarray = None
    clock_ratio: np.ndarray = None
    reason_bits: np.ndarray = None
    cpu_extra: np.ndarray = None
    disk_load: np.ndarray = None
    temp_override: dict = field(default_factory=dict)
    pulsing: bool = False
    #: the framework of the job's training log (forensics.simulate.fmt_train); None: chosen by the seed
    train_framework: str | None = None
    crash: Crash | None = None
    #: (host, iface) -> {counter: per-second increments (T,)}
    nic_extra: dict = field(default_factory=dict)
    #: (host, iface) -> [(t_down, t_up)]
    link_down: dict = field(default_factory=dict)
    #: (host, iface) -> [(true time, active width in lanes)]: the RDMA port retrained (4 before the first)
    ib_width: dict = field(default_factory=dict)
    #: (host, iface) -> (T,) extra share of each second an InfiniBand port waits for credits (congestion)
    ib_xmit_wait: dict = field(default_factory=dict)
    #: (host, gpu, link) -> {"replay"|"recovery"|"crc": per-second increments (T,)} of NVLink error counters
    nvlink_extra: dict = field(default_factory=dict)
    #: (host, gpu) -> links that nvidia-smi nvlink -s shows <inactive>
    nvlink_inactive: dict = field(default_factory=dict)
    #: host -> {"trust": ..., "pfc": [priorities]} of its rail ports' mlnx_qos (else dscp, PFC on 3)
    qos_override: dict = field(default_factory=dict)
    #: (host, iface) -> traffic factor (T,) on that port (1 = normal)
    nic_traffic: dict = field(default_factory=dict)
    #: host -> [(true time, message)]
    dmesg: dict = field(default_factory=dict)
    #: host -> [(true time, level, message)] Fabric Manager adds to /var/log/fabricmanager.log
    fm_log: dict = field(default_factory=dict)
    #: rank -> [(true time, [lines without the host:pid:tid prefix], tid offset)]
    nccl_warn: dict = field(default_factory=dict)
    env: dict = field(default_factory=dict)
    transport: str = "ib"
    gdr: bool = True
    #: (host, gpu) -> NUMA node its process is pinned to
    affinity: dict = field(default_factory=dict)
    #: (host, gpu) -> [(true time, {"dbe": n, "sbe": n, "remap_unc": n, "pending": bool, "failure": bool})];
    #: "sbe_agg": correctable errors of earlier boots (in the aggregate counter only, not the volatile one)
    ecc: dict = field(default_factory=dict)
    #: (host, gpu) whose persistence mode is off (nvidia-smi -q says Disabled, dcgmi diag fails its check)
    persistence_off: set = field(default_factory=set)
    faults: list = field(default_factory=list)
    effects: list = field(default_factory=list)
    #: where the fault being built sits in time: None (mid-capture), "early", "late", "short"
    timing: str | None = None
    #: hosts earlier faults of this plan were placed on
    taken: list = field(default_factory=list)
    #: crashes the faults would cause: [(Crash, dead host indices)]; the job dies of the first
    crashes: list = field(default_factory=list)
    #: benign variation (forensics.simulate.confounders): per GPU power and temperature offsets,
    #: per host extra CPU points, checkpoint writes (kB/s), the power of compute at each second
    gpu_power_bias: np.ndarray = None
    gpu_temp_bias: np.ndarray = None
    cpu_points: np.ndarray = None
    ckpt_write: np.ndarray = None
    compute_power: np.ndarray = None
    gpu_clock_bias: np.ndarray = None
    #: (host, iface) -> (pauses per GB carried, microseconds per pause) under normal congestion
    pause_level: dict = field(default_factory=dict)
    #: host -> (rx_out_of_buffer/s, rx_discards_phy/s) on its frontend port since boot
    frontend_trickle: dict = field(default_factory=dict)
    #: boot messages of a real fleet in dmesg (link down before up, corrected PCIe AER)
    noisy_boot: bool = False
    #: (host, iface) -> the RoCE port's ECN marks a second, CNP share, marks since boot (fmt_infiniband's cache)
    dcqcn_np: dict = field(default_factory=dict)

    def __post_init__(self):
        n, g = self.cluster.cfg.nodes, self.cluster.cfg.gpus_per_node
        t = self.T
        self.comm_factor = np.ones(t)
        self.compute_factor = np.ones((n, g, t))
        self.data_wait = np.zeros((n, t))
        self.clock_ratio = np.ones((n, g, t))
        self.reason_bits = np.zeros((n, g, t), dtype=np.int64)
        self.cpu_extra = np.zeros((n, t))
        self.disk_load = np.zeros((n, t))
        self.gpu_power_bias = np.zeros((n, g))
        self.gpu_temp_bias = np.zeros((n, g))
        self.gpu_clock_bias = np.zeros((n, g))
        self.cpu_points = np.zeros((n, t))
        self.ckpt_write = np.zeros((n, t))
        self.compute_power = np.ones(t)

    def add_crash(self, crash: Crash, dead_hosts: list[int]) -> None:
        self.crashes.append((crash, dead_hosts))

    @property
    def T(self) -> int:
        return int(np.ceil(self.t_end - self.grid0)) + 2

    def idx(self, t: float) -> int:
        return int(min(max(t - self.grid0, 0), self.T - 1))

    def span(self, t0: float, t1: float) -> slice:
        return slice(self.idx(t0), self.idx(t1) + 1)

    def ramp(self, t0: float, t1: float, t_ramp: float, value: float, base: float = 1.0) -> np.ndarray:
        """(T,) array: base outside [t0, t1], ramping linearly to `value` over t_ramp seconds."""
        x = np.full(self.T, base, dtype=float)
        secs = self.grid0 + np.arange(self.T)
        inside = (secs >= t0) & (secs <= t1)
        frac = np.clip((secs - t0) / max(t_ramp, 1e-9), 0, 1)
        x[inside] = base + (value - base) * frac[inside]
        return x

    def add_dmesg(self, host: int, t: float, text: str) -> None:
        self.dmesg.setdefault(host, []).append((t, text))

    def add_nccl(self, rank: int, t: float, lines: list[str], thread: int = 1) -> None:
        self.nccl_warn.setdefault(rank, []).append((t, lines, thread))

    def truth(self, kind: str, hosts: list[str], subject: str | None, start: float, end: float | None,
              signals: list[str], effect: bool = False, onset_s: float = 0.0) -> None:
        """Record a fault (or an effect). One that starts after the capture has ended left no trace
        in it and is not recorded. `onset_s`: how long the fault takes to reach its full size (a ramp)."""
        cfg = self.cluster.cfg
        if start > cfg.t0 + cfg.duration_s + 1.2 + max(h.jitter_s for h in self.cluster.hosts):
            return  # after every host's logs were copied
        entry = {"kind": kind, "hosts": sorted(hosts), "subject": subject, "start": iso(start),
                 "end": iso(end) if end is not None else None, "signals": signals}
        if onset_s:
            entry["onset_s"] = onset_s
        (self.effects if effect else self.faults).append(entry)


def iso(t: float) -> str:
    return dt.datetime.fromtimestamp(round(t, 6), dt.timezone.utc).isoformat(timespec="microseconds")
