"""Simulation parameters, software versions and the collector's sampling plan.

The sampling plan says which command is sampled how often, as ``forensics collect`` does it: the
cheap time series (``nvidia-smi --query-gpu``, ``iostat``, ``sar``) at the chosen interval, the
large snapshots less often (``ethtool -S`` and ``nvidia-smi nvlink -gt d`` every
:data:`COUNTER_EVERY_S`, ``nvidia-smi -q`` every :data:`NVSMI_Q_EVERY_S`, ``sar -P ALL`` every
:data:`PER_CPU_EVERY_S`), or the interval when it is longer. A 64-node hour at 1 s would otherwise hold 2 GB of mostly unchanged counter names.
"""
from __future__ import annotations

import datetime as dt
import zlib
from dataclasses import dataclass

import numpy as np

#: versions the simulated nodes run (Ubuntu 22.04 HGX H100 node, PyTorch 2.5 wheel)
KERNEL = "5.15.0-112-generic"
KERNEL_BUILD = ("Linux version 5.15.0-112-generic (buildd@lcy02-amd64-051) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) "
                "11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #122-Ubuntu SMP Thu May 23 07:48:21 UTC 2024 "
                "(Ubuntu 5.15.0-112.122-generic 5.15.152)")
DRIVER = "545.23.08"
CUDA = "12.3"
CUDA_DRIVER_INT = 12030
NCCL = "2.21.5+cuda12.4"
NCCL_SHORT = "2.21.5"
MLX5_FW = "28.39.1002"
COLLECTOR_PYTHON = "3.8.10"

#: scenarios whose fault needs InfiniBand link-layer rails (an InfiniBand fabric instead of RoCE)
INFINIBAND_SCENARIOS = frozenset({"ib_congestion"})

COUNTER_EVERY_S = 10.0
NVSMI_Q_EVERY_S = 30.0
PER_CPU_EVERY_S = 10.0

#: the simulated job's collection starts at this moment plus (seed % 28) days
BASE_START = dt.datetime(2026, 11, 30, 10, 0, 0, tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class SimConfig:
    scenario: str
    nodes: int = 8
    gpus_per_node: int = 8
    duration_s: float = 600.0
    interval_s: float = 1.0
    seed: int = 0
    clock_skew_ms: float = 50.0
    #: the benign variation of a real fleet (forensics.simulate.confounders); off: a silent cluster
    confounders: bool = True
    #: with two faults (`a+b`): both on one host instead of two different hosts
    same_host: bool = False
    #: the rails' link layer: "roce" (Ethernet, the default) or "infiniband"; None: the scenario's
    #: (InfiniBand for those in INFINIBAND_SCENARIOS, RoCE for every other)
    fabric: str | None = None

    def __post_init__(self):
        if self.nodes < 1 or self.nodes > 4096:  # (fleet-scale benchmarks simulate 1,024)
            raise ValueError("--nodes must be between 1 and 4096")
        if self.gpus_per_node < 1 or self.gpus_per_node > 8:
            raise ValueError("--gpus-per-node must be between 1 and 8")
        if self.interval_s < 0.5 or self.interval_s > 600:
            raise ValueError("--interval must be between 0.5s and 10m")
        if self.duration_s < 30 or self.duration_s > 24 * 3600:
            raise ValueError("--duration must be between 30s and 24h")
        if self.duration_s < 4 * self.interval_s:
            raise ValueError("--duration must cover at least 4 intervals")
        if self.clock_skew_ms < 0 or self.clock_skew_ms > 60_000:
            raise ValueError("--clock-skew-ms must be between 0 and 60000")
        if self.seed < 0:
            raise ValueError("--seed must be >= 0")
        if self.fabric not in (None, "roce", "infiniband"):
            raise ValueError("--fabric must be roce or infiniband")
        if self.fabric == "roce" and any(p.split("@")[0] in INFINIBAND_SCENARIOS for p in self.scenario.split("+")):
            raise ValueError(f"scenario {self.scenario!r} needs InfiniBand rails: not with --fabric roce")

    @property
    def infiniband(self) -> bool:
        """Whether the rails are InfiniBand link-layer ports (else RoCE)."""
        if self.fabric is not None:
            return self.fabric == "infiniband"
        return any(part.split("@")[0] in INFINIBAND_SCENARIOS for part in self.scenario.split("+"))

    @property
    def start(self) -> dt.datetime:
        """True UTC time at which the collection starts on every host (before per-host jitter)."""
        return BASE_START + dt.timedelta(days=self.seed % 28)

    @property
    def t0(self) -> float:
        return self.start.timestamp()

    @property
    def samples(self) -> int:
        return int(round(self.duration_s / self.interval_s))

    def every(self, floor_s: float) -> float:
        """Interval of a command sampled at most every `floor_s` seconds (a multiple of the interval)."""
        k = max(1, int(np.ceil(floor_s / self.interval_s - 1e-9)))
        return k * self.interval_s


def rng(seed: int, *keys) -> np.random.Generator:
    """Deterministic generator for (seed, keys...); keys are ints or strings."""
    parts = [int(seed)]
    for k in keys:
        parts.append(k if isinstance(k, int) else zlib.crc32(str(k).encode()))
    return np.random.default_rng(np.random.SeedSequence(parts))


def fmt_interval(seconds: float) -> str:
    """Command-line form of an interval: '1', '2', '0.5'."""
    return str(int(seconds)) if float(seconds).is_integer() else repr(float(seconds))
