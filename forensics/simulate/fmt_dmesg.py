"""``dmesg --time-format iso``: boot messages, later noise and the scenario's kernel events.

Each line is ``2026-11-30T11:15:02,123456+01:00 <message>`` (util-linux: local time of the host with
its UTC offset, comma before the microseconds, no facility prefix without ``--decode``); the time
is the host's boot time on its own clock plus the kernel's monotonic stamp. Message texts are the
ones the 5.15 kernel, mlx5_core and the NVIDIA 545 driver print (see the fixtures in
tests/fixtures/dmesg and ../shared/fixtures-real/dmesg).
"""
from __future__ import annotations

import numpy as np

from forensics.simulate import textfmt as tf
from forensics.simulate.config import DRIVER, KERNEL, KERNEL_BUILD, MLX5_FW, rng
from forensics.simulate.hardware import NCPU

NVRM_BUILD = "Mon Nov  6 23:49:37 UTC 2023"
MODESET_BUILD = "Mon Nov  6 23:23:07 UTC 2023"


def _aer(nic, t: float) -> list[tuple[float, str]]:
    """A corrected PCIe error on a NIC's link (drivers/pci/pcie/aer.c of 5.x: the root or switch
    port reports it, the device prints the decoded status)."""
    port = f"0000:{nic.bus - 1:02x}:02.0"
    dev = f"mlx5_core {nic.pci_addr}"
    vid = "15b3:1021" if nic.speed_mbps >= 400000 else "15b3:101d"
    return [(t, f"pcieport {port}: AER: Corrected error received: {nic.pci_addr}"),
            (t + 0.000012, f"{dev}: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)"),
            (t + 0.000015, f"{dev}:   device [{vid}] error status/mask=00000001/00000000"),
            (t + 0.000018, f"{dev}:    [ 0] RxErr")]


def boot_messages(host, seed: int, noisy: bool = False) -> list[tuple[float, str]]:
    """(seconds since boot, message) for a boot of this host. `noisy`: as a real fleet boots, each
    port reports ``Link down`` before its first ``Link up`` and some hosts log corrected PCIe errors
    while the links train."""
    r = rng(seed, "boot", host.index)
    cmdline = f"BOOT_IMAGE=/vmlinuz-{KERNEL} root=UUID={host.root_uuid} ro intel_iommu=on iommu=pt"
    m: list[tuple[float, str]] = [
        (0.0, KERNEL_BUILD),
        (0.0, f"Command line: {cmdline}"),
        (0.0, "BIOS-provided physical RAM map:"),
        (0.0, "BIOS-e820: [mem 0x0000000000000000-0x000000000009ffff] usable"),
        (0.0, "BIOS-e820: [mem 0x00000000000a0000-0x00000000000fffff] reserved"),
        (0.0, "BIOS-e820: [mem 0x0000000000100000-0x000000005d8fefff] usable"),
        (0.0, "BIOS-e820: [mem 0x000000005d8ff000-0x000000006fffefff] reserved"),
        (0.0, "BIOS-e820: [mem 0x0000000100000000-0x000002007fffffff] usable"),
        (0.0, "NX (Execute Disable) protection: active"),
        (0.0, "SMBIOS 3.3.0 present."),
        (0.0, f"DMI: {host.dmi}"),
        (0.0, "tsc: Detected 2000.000 MHz processor"),
        (0.0, "NUMA: Initialized distance table, cnt=2"),
        (0.0, f"smpboot: Allowing {NCPU} CPUs, 0 hotplug CPUs"),
        (0.0, f"Kernel command line: {cmdline}"),
        (0.0, "Memory: 2110958432K/2147011228K available (16393K kernel code, 4384K rwdata, 10860K rodata, "
              "3244K init, 5444K bss, 36052796K reserved, 0K cma-reserved)"),
        (0.118, "smpboot: CPU0: Intel(R) Xeon(R) Platinum 8480+ (family: 0x6, model: 0x8f, stepping: 0x8)"),
        (0.652, f"smp: Brought up 2 nodes, {NCPU} CPUs"),
        (0.652, "smpboot: Max logical packages: 2"),
        (0.652, f"smpboot: Total of {NCPU} processors activated (896000.00 BogoMIPS)"),
        (1.214, "ACPI: PCI Root Bridge [PC00] (domain 0000 [bus 00-15])"),
    ]
    t = 2.31
    for gpu in host.gpus:
        m.append((t, f"pci {gpu.pci_addr}: [10de:2330] type 00 class 0x030200"))
        t += 0.0007
    t = 3.42
    m += [
        (t, "nvme nvme0: pci function 0000:c3:00.0"),
        (t + 0.0012, "nvme nvme1: pci function 0000:c4:00.0"),
        (t + 0.21, "nvme nvme0: 128/0/0 default/read/poll queues"),
        (t + 0.22, "nvme nvme1: 128/0/0 default/read/poll queues"),
        (t + 0.35, "scsi host0: ahci"),
        (t + 0.61, "sd 0:0:0:0: [sda] 15002931888 512-byte logical blocks: (7.68 TB/6.99 TiB)"),
        (t + 0.61, "sd 0:0:0:0: [sda] Write Protect is off"),
        (t + 0.62, "sd 0:0:0:0: [sda] Attached SCSI disk"),
    ]
    t = 4.05
    for nic in host.nics:
        gen5 = nic.speed_mbps >= 400000
        bw = "504.112 Gb/s available PCIe bandwidth (32.0 GT/s PCIe x16 link)" if gen5 else \
            "252.048 Gb/s available PCIe bandwidth (16.0 GT/s PCIe x16 link)"
        fw = MLX5_FW if gen5 else "22.39.1002"
        pid = 1100 + int(r.integers(0, 400))
        m += [
            (t, f"mlx5_core {nic.pci_addr}: enabling device (0000 -> 0002)"),
            (t + 0.0002, f"mlx5_core {nic.pci_addr}: firmware version: {fw}"),
            (t + 0.0003, f"mlx5_core {nic.pci_addr}: {bw}"),
            (t + 0.29, f"mlx5_core {nic.pci_addr}: Port module event: module 0, Cable plugged"),
            (t + 0.2902, f"mlx5_core {nic.pci_addr}: mlx5_pcie_event:304:(pid {pid}): PCIe slot advertised sufficient power (75W)."),
        ]
        if not nic.infiniband:  # the Ethernet netdev (an InfiniBand-mode port has none: no ib_ipoib)
            m += [(t + 0.296, f"mlx5_core {nic.pci_addr}: MLX5E: StrdRq(1) RqSz(8) StrdSz(2048) RxCqeCmprss(0 basic)"),
                  (t + 0.41, f"mlx5_core {nic.pci_addr} {nic.iface}: renamed from eth0")]
        t += 0.47
    t = 9.12 + r.uniform(0, 0.4)
    m += [
        (t, "nvidia: loading out-of-tree module taints kernel."),
        (t, "nvidia: module license 'NVIDIA' taints kernel."),
        (t, "Disabling lock debugging due to kernel taint"),
        (t + 0.06, "nvidia-nvlink: Nvlink Core is being initialized, major device number 509"),
        (t + 0.71, f"NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {DRIVER}  {NVRM_BUILD}"),
        (t + 0.83, f"nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms  {DRIVER}  {MODESET_BUILD}"),
        (t + 0.97, "nvidia_uvm: module uses symbols nvUvmInterfaceDisableAccessCntr from proprietary module nvidia, inheriting taint."),
        (t + 1.02, "nvidia-uvm: Loaded the UVM driver, major device number 507."),
        (t + 1.4, "EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Opts: (null). Quota mode: none."),
        (t + 1.9, "EXT4-fs (sda): mounted filesystem with ordered data mode. Opts: (null). Quota mode: none."),
    ]
    t = 12.6 + r.uniform(0, 1)
    for nic in host.netdevs:
        if noisy:
            m.append((t - 1.05 - r.uniform(0, 0.3), f"mlx5_core {nic.pci_addr} {nic.iface}: Link down"))
        m.append((t, f"mlx5_core {nic.pci_addr} {nic.iface}: Link up"))
        m.append((t + 0.0021, f"IPv6: ADDRCONF(NETDEV_CHANGE): {nic.iface}: link becomes ready"))
        t += r.uniform(0.02, 0.2)
    if noisy and r.random() < 0.5:
        m += _aer(host.rails[int(r.integers(0, len(host.rails)))], 4.8 + r.uniform(0, 3))
    return m


def uptime_noise(host, seed: int, until_mono: float) -> list[tuple[float, str]]:
    """A few messages of normal uptime (perf sampling-rate adjustments)."""
    r = rng(seed, "noise", host.index)
    out = []
    rate = 100000
    prev = 2500
    t = r.uniform(3000, 40000)
    while t < until_mono and len(out) < 6:
        took = int(prev * r.uniform(1.0, 1.3)) + 1
        rate = int(rate * 0.79)
        out.append((t, f"perf: interrupt took too long ({took} > {prev}), lowering kernel.perf_event_max_sample_rate to {rate}"))
        prev = int(took * 1.25)
        t += r.uniform(20000, 300000)
    return out


def dmesg(host, plan, seed: int, capture_true: float) -> bytes:
    """The whole ring buffer as `dmesg --time-format iso` shows it at `capture_true`."""
    until = capture_true - host.boot_true
    msgs = boot_messages(host, seed, plan.noisy_boot) + uptime_noise(host, seed, until - 600)
    if plan.noisy_boot and host.index % 3 == 1:  # a corrected error some days into the uptime
        r = rng(seed, "aer", host.index)
        msgs += _aer(host.rails[int(r.integers(0, len(host.rails)))], float(r.uniform(0.2, 0.8)) * (until - 3600))
    for t, text in plan.dmesg.get(host.index, []):
        if t <= capture_true:
            msgs.append((t - host.boot_true, text))
    msgs.sort(key=lambda x: x[0])
    mono = np.array([x[0] for x in msgs])
    mono = np.round(mono, 6)
    stamps = tf.times(host.boot_true + host.offset_s + mono, host.tz, "%Y-%m-%dT%H:%M:%S,%6f%:z")
    return tf.lines_bytes([f"{s} {text}" for s, (_, text) in zip(stamps.to_list(), msgs)])
