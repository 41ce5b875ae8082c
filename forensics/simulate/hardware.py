"""The simulated cluster: hosts (HGX H100 class, two sockets), their GPUs, mlx5 NICs, disks, clocks.

Layout of one node (PCIe buses as on common 8-GPU HGX servers): GPU g and its rail NIC share a PCIe
switch (``PIX`` in ``nvidia-smi topo -m``); GPUs 0-3 and NICs 0-3 hang off socket 0 (NUMA 0), 4-7 off
socket 1; a dual-port ConnectX-6 Dx frontend port carries SSH, the NCCL bootstrap and the storage
traffic. CPUs are numbered like Linux numbers a 2 x 56-core Sapphire Rapids with HT: node 0 =
0-55,112-167, node 1 = 56-111,168-223.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from forensics.simulate.config import SimConfig, rng

GPU_BUSES = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)
SPREAD = (0, 4, 2, 6, 1, 5, 3, 7)  # which slots a node with fewer than 8 GPUs populates first
FRONTEND_BUS = 0xE1
ZONES = ("Europe/Berlin", "America/Chicago", "UTC", "Asia/Tokyo")
CORES_PER_SOCKET = 56
SOCKETS = 2
NCPU = CORES_PER_SOCKET * SOCKETS * 2
MEM_TOTAL_KB = 2113283072
NUMA_SIZE_MB = (1031578, 1032175)


def node_cpus(node: int) -> list[int]:
    base = node * CORES_PER_SOCKET
    ht = SOCKETS * CORES_PER_SOCKET
    return list(range(base, base + CORES_PER_SOCKET)) + list(range(ht + base, ht + base + CORES_PER_SOCKET))


def cpu_list_str(node: int) -> str:
    """Kernel list form of a node's CPUs: '0-55,112-167'."""
    c = node_cpus(node)
    return f"{c[0]}-{c[CORES_PER_SOCKET - 1]},{c[CORES_PER_SOCKET]}-{c[-1]}"


def cpu_mask_str(cpus: list[int]) -> str:
    """NCCL's affinity mask form: 32-bit hex words, most significant first, leading zero bytes cut."""
    nbytes = (NCPU + 7) // 8
    bits = bytearray(nbytes)
    for c in cpus:
        bits[c // 8] |= 1 << (c % 8)
    hexs = "".join(f"{b:02x}" for b in reversed(bits))  # most significant byte first
    pad = (-len(hexs)) % 8
    hexs = "00" * (pad // 2) + hexs
    words = [hexs[i:i + 8] for i in range(0, len(hexs), 8)]
    while words and words[0] == "00000000":
        words.pop(0)
    if words:
        w = words[0]
        while w.startswith("00") and len(w) > 2:
            w = w[2:]
        words[0] = w
    return ",".join(words)


@dataclass
class Gpu:
    index: int
    bus: int
    numa: int
    uuid: str
    serial: str
    module_id: int

    @property
    def pci(self) -> str:
        """nvidia-smi form: 00000000:18:00.0"""
        return f"00000000:{self.bus:02X}:00.0"

    @property
    def pci_short(self) -> str:
        """NVRM form: 0000:18:00"""
        return f"0000:{self.bus:02x}:00"

    @property
    def pci_addr(self) -> str:
        return f"0000:{self.bus:02x}:00.0"

    @property
    def nccl_bus_id(self) -> str:
        return f"{self.bus << 12:x}"


@dataclass
class Nic:
    iface: str
    rdma: str
    bus: int
    func: int
    numa: int
    mac: str
    ip: str
    rail: int | None
    speed_mbps: int
    mtu: int
    model: str
    #: "Ethernet" (RoCE: the port has a netdev, `iface`) or "InfiniBand" (the port has no netdev:
    #: ib_ipoib is not loaded, NCCL's IB transport needs none; `iface` is then only the model's key)
    link_layer: str = "Ethernet"

    @property
    def pci_addr(self) -> str:
        return f"0000:{self.bus:02x}:00.{self.func}"

    @property
    def infiniband(self) -> bool:
        return self.link_layer == "InfiniBand"


@dataclass
class Host:
    index: int
    name: str
    tz: str
    offset_s: float          # host clock minus true time
    boot_true: float         # true epoch seconds of boot
    jitter_s: float          # collection start after the common start (true seconds)
    gpus: list[Gpu]
    nics: list[Nic]
    ntp: str                 # "chronyc" or "timedatectl"
    pid_base: int
    root_uuid: str
    dmi: str = "Dell Inc. PowerEdge XE9680/0KK0RG, BIOS 2.3.5 09/10/2024"
    extra: dict = field(default_factory=dict)
    #: (true time, seconds): NTP steps the clock forward by that much then (it was behind before)
    clock_step: tuple | None = None

    def wall(self, t):
        """The host's clock at true time(s) `t`."""
        if self.clock_step is None:
            return t + self.offset_s
        at, step = self.clock_step
        if np.ndim(t) == 0:
            return t + self.offset_s - (step if t < at else 0.0)
        return t + self.offset_s - step * (np.asarray(t) < at)

    def true_of(self, wall: float) -> float:
        """True time at which the host's clock read `wall` (a forward step leaves no ambiguity)."""
        if self.clock_step is None:
            return wall - self.offset_s
        at, step = self.clock_step
        return wall - self.offset_s + (step if wall < at + self.offset_s - step else 0.0)

    @property
    def rails(self) -> list[Nic]:
        return [n for n in self.nics if n.rail is not None]

    @property
    def netdevs(self) -> list[Nic]:
        """The NICs with a network interface (/sys/class/net): all but InfiniBand-mode rails."""
        return [n for n in self.nics if not n.infiniband]

    @property
    def frontend(self) -> Nic:
        return [n for n in self.nics if n.rail is None][0]

    def pid(self, g: int) -> int:
        return self.pid_base + 7 * g


@dataclass
class Cluster:
    cfg: SimConfig
    hosts: list[Host]
    comm_id: str
    comm_ptrs: dict[int, str]

    @property
    def nranks(self) -> int:
        return self.cfg.nodes * self.cfg.gpus_per_node

    def rank(self, h: int, g: int) -> int:
        return h * self.cfg.gpus_per_node + g


def _uuid(r) -> str:
    b = r.integers(0, 256, size=16, dtype="uint8").tobytes().hex()
    return f"{b[:8]}-{b[8:12]}-{b[12:16]}-{b[16:20]}-{b[20:32]}"


def build_cluster(cfg: SimConfig) -> Cluster:
    n, g_per = cfg.nodes, cfg.gpus_per_node
    width = max(2, len(str(n)))
    r0 = rng(cfg.seed, "cluster")
    zone = ZONES[cfg.seed % len(ZONES)]
    slots = sorted(SPREAD[:g_per])
    skew = cfg.clock_skew_ms / 1000.0
    far = cfg.seed % n
    hosts = []
    for i in range(n):
        r = rng(cfg.seed, "host", i)
        name = f"node{i + 1:0{width}d}"
        tz = zone
        if n >= 4 and i % 5 == 3:
            tz = "UTC" if zone != "UTC" else "Europe/Berlin"
        off = float(r.uniform(-skew, skew))
        if i == far and skew > 0:
            off = 0.9 * skew * (1 if r.random() < 0.5 else -1)
        uptime = float(r.uniform(3 * 86400, 40 * 86400))
        gpus = []
        for gi, slot in enumerate(slots):
            bus = GPU_BUSES[slot]
            gpus.append(Gpu(index=gi, bus=bus, numa=0 if bus < 0x80 else 1, uuid="GPU-" + _uuid(r),
                            serial=f"1654{int(r.integers(0, 10**9)):09d}", module_id=slot + 1))
        nics = []
        buses = sorted([(gp.bus - 2, gp.index) for gp in gpus] + [(FRONTEND_BUS, None)])
        for k, (bus, rail) in enumerate(buses):
            mac_tail = ":".join(f"{x:02x}" for x in r.integers(0, 256, size=3))
            if rail is None:
                nics.append(Nic(iface=f"enp{bus}s0f0np0", rdma=f"mlx5_{k}", bus=bus, func=0, numa=1,
                                mac=f"08:c0:eb:{mac_tail}", ip=f"10.0.{i // 250}.{10 + i % 250}", rail=None,
                                speed_mbps=100000, mtu=9000, model="ConnectX-6 Dx"))
            else:
                nics.append(Nic(iface=f"enp{bus}s0np0", rdma=f"mlx5_{k}", bus=bus, func=0,
                                numa=0 if bus < 0x80 else 1, mac=f"94:6d:ae:{mac_tail}",
                                ip=f"10.{100 + rail}.{i // 250}.{10 + i % 250}", rail=rail,
                                speed_mbps=400000, mtu=9000, model="ConnectX-7",
                                link_layer="InfiniBand" if cfg.infiniband else "Ethernet"))
        hosts.append(Host(index=i, name=name, tz=tz, offset_s=off, boot_true=cfg.t0 - uptime,
                          jitter_s=float(r.uniform(0.05, 0.65)), gpus=gpus, nics=nics,
                          ntp="timedatectl" if i % 4 == 2 else "chronyc",
                          pid_base=int(r.integers(180000, 3900000)), root_uuid=_uuid(r)))
    comm_id = "0x" + r0.integers(0, 256, size=8, dtype="uint8").tobytes().hex()
    ptrs = {}
    for rk in range(n * g_per):
        ptrs[rk] = "0x55" + r0.integers(0, 256, size=5, dtype="uint8").tobytes().hex()[:10]
    return Cluster(cfg=cfg, hosts=hosts, comm_id=comm_id, comm_ptrs=ptrs)
