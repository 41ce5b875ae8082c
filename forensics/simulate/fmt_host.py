"""What the collector writes about the host itself: host.json, commands.jsonl, processes.jsonl,
the clock-source outputs (``chronyc tracking`` / ``timedatectl``) and ``numactl -H``."""
from __future__ import annotations

import datetime as dt
import json

from forensics import __version__
from forensics.collect import main as cmain
from forensics.collect import node as cnode
from forensics.simulate import textfmt as tf
from forensics.simulate.config import COLLECTOR_PYTHON, KERNEL, rng
from forensics.simulate.hardware import NUMA_SIZE_MB, cpu_list_str, node_cpus


def iso_host(t_host: float) -> str:
    return dt.datetime.fromtimestamp(round(t_host, 6), dt.timezone.utc).isoformat(timespec="microseconds")


def host_json(host, cfg, start_true: float, end_true: float, argv: list[str], chronyc_text: bytes | None,
              timedatectl_text: bytes | None) -> bytes:
    """host.json as the collector writes it: the clock read at the end, the NTP offset parsed from the
    clock outputs it stored."""
    wall = end_true + host.offset_s
    mono = end_true - host.boot_true
    loc = tf.local(start_true, host.tz)
    ntp, ntp_source = cnode.ntp_offset(chronyc_text.decode() if chronyc_text else None,
                                       timedatectl_text.decode() if timedatectl_text else None)
    nics = [{"iface": n.iface, "pci_addr": n.pci_addr, "numa_node": n.numa, "driver": "mlx5_core",
             "rdma_dev": n.rdma, "mac": n.mac, "mtu": n.mtu, "speed_mbps": n.speed_mbps, "operstate": "up"}
            for n in host.netdevs]
    info = cmain.host_record(
        host.name, host.name, KERNEL, iso_host(wall - mono), iso_host(float(int(host.boot_true + host.offset_s))),
        host.tz, int(loc.utcoffset().total_seconds()), iso_host(wall), mono, ntp, ntp_source,
        __version__, COLLECTOR_PYTHON, argv, None, cfg.duration_s, cfg.interval_s,
        iso_host(start_true + host.offset_s), iso_host(end_true + host.offset_s), nics)
    return cmain.host_json_text(info).encode()


def command_entry(host, name: str, argv: list[str], source: str, start_true: float, end_true: float,
                  raw_file: str | None, nbytes: int, exit_code: int | None = 0, stderr: str = "",
                  error: str | None = None, **extra) -> dict:
    """One commands.jsonl entry, as the collector records it (times on the host's clock)."""
    return cmain.command_record(name, argv, source, iso_host(host.wall(start_true)),
                                iso_host(host.wall(end_true)), exit_code, nbytes, False, False, error, stderr,
                                raw_file, **extra)


def commands_jsonl(entries: list[dict]) -> bytes:
    return cmain.commands_text(entries).encode()


def base_env(host, plan) -> dict:
    env = {
        "CUDA_DEVICE_MAX_CONNECTIONS": "1",
        "NCCL_DEBUG": "INFO",
        "NCCL_DEBUG_FILE": "/var/log/nccl/nccl.%h.%p.log",
        "NCCL_SOCKET_IFNAME": host.frontend.iface,
        "OMP_NUM_THREADS": "8",
        "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
    }
    if plan.transport == "ib":
        env["NCCL_IB_HCA"] = ",".join(n.rdma for n in host.rails)
        if not any(n.infiniband for n in host.rails):  # a GID index is RoCE's (the RoCE v2 IPv4 GID)
            env["NCCL_IB_GID_INDEX"] = "3"
    else:
        env["NCCL_IB_DISABLE"] = "1"
    env.update({k: str(v) for k, v in plan.env.items()})
    return dict(sorted(env.items()))


def processes_jsonl(host, plan, model, at_true: float) -> bytes:
    lines = []
    cfg = plan.cluster.cfg
    for g, gpu in enumerate(host.gpus):
        if not (model.t_launch <= at_true < model.proc_end[host.index, g]):
            continue
        node = plan.affinity.get((host.index, g), gpu.numa)
        argv = ["/usr/bin/python3", "-u", "train.py", "--config", "configs/llama3_8b_sft.yaml",
                f"--local-rank={g}"]
        lines.append(json.dumps({
            "pid": host.pid(g), "cmdline": argv, "gpus": [g], "gpu_uuids": [gpu.uuid],
            "cpus_allowed_list": cpu_list_str(node), "mems_allowed_list": str(node), "env": base_env(host, plan),
        }, sort_keys=True))
    del cfg
    return ("\n".join(lines) + "\n").encode() if lines else b""


def compute_apps(host, model, at_true: float) -> bytes:
    """`nvidia-smi --query-compute-apps=pid,gpu_uuid,gpu_bus_id,used_memory --format=csv,noheader`."""
    lines = [f"{host.pid(g)}, {gpu.uuid}, {gpu.pci}, {61000 + 217 * g} MiB" for g, gpu in enumerate(host.gpus)
             if model.t_launch <= at_true < model.proc_end[host.index, g]]
    return tf.lines_bytes(lines) if lines else b""


def gpu_index(host) -> bytes:
    """`nvidia-smi --query-gpu=index,uuid,pci.bus_id --format=csv,noheader`."""
    return tf.lines_bytes([f"{g}, {gpu.uuid}, {gpu.pci}" for g, gpu in enumerate(host.gpus)])


def ntp_estimate(host) -> float:
    """chrony's estimate of the host clock's offset from NTP time (the true offset within a fraction of a ms)."""
    return round(host.offset_s + rng(0, "ntp", host.index).normal(0, 0.0004), 6)


def chronyc(host, at_true: float) -> bytes:
    r = rng(0, "chrony", host.index)
    off = host.offset_s
    ref = tf.times([at_true + off - r.uniform(20, 60)], "UTC", "%a %b %d %H:%M:%S %Y")[0]
    est = ntp_estimate(host)
    word = "fast" if est >= 0 else "slow"
    lines = [
        "Reference ID    : 0A000001 (10.0.0.1)",
        "Stratum         : 3",
        f"Ref time (UTC)  : {ref}",
        f"System time     : {abs(est):.9f} seconds {word} of NTP time",
        f"Last offset     : {r.normal(0, 2e-5):+.9f} seconds",
        f"RMS offset      : {abs(off) * 0.6 + 1e-5:.9f} seconds",
        f"Frequency       : {r.uniform(5, 25):.3f} ppm slow",
        f"Residual freq   : {r.normal(0, 0.01):+.3f} ppm",
        f"Skew            : {r.uniform(0.003, 0.05):.3f} ppm",
        f"Root delay      : {r.uniform(0.0002, 0.0009):.9f} seconds",
        f"Root dispersion : {r.uniform(0.0001, 0.0006):.9f} seconds",
        "Update interval : 64.2 seconds",
        "Leap status     : Normal",
    ]
    return tf.lines_bytes(lines)


def timedatectl(host, at_true: float, synchronized: bool = False) -> bytes:
    t = at_true + host.offset_s
    loc = tf.local(t, host.tz)
    utc = dt.datetime.fromtimestamp(t, dt.timezone.utc)
    off = loc.utcoffset().total_seconds()
    sign = "+" if off >= 0 else "-"
    hh, mm = divmod(int(abs(off)) // 60, 60)
    lines = [
        f"               Local time: {loc.strftime('%a %Y-%m-%d %H:%M:%S')} {loc.tzname()}",
        f"           Universal time: {utc.strftime('%a %Y-%m-%d %H:%M:%S')} UTC",
        f"                 RTC time: {utc.strftime('%a %Y-%m-%d %H:%M:%S')}",
        f"                Time zone: {host.tz} ({loc.tzname()}, {sign}{hh:02d}{mm:02d})",
        f"System clock synchronized: {'yes' if synchronized else 'no'}",
        f"              NTP service: {'active' if synchronized else 'inactive'}",
        "          RTC in local TZ: no",
    ]
    return tf.lines_bytes(lines)


def numactl(host, model, at_true: float) -> bytes:
    alive = int(model.alive(host.index, __import__("numpy").array([at_true]))[0])
    lines = ["available: 2 nodes (0-1)"]
    for node in (0, 1):
        used = 18500 + alive * 31400 // 2 + node * 1100
        lines.append(f"node {node} cpus: " + " ".join(str(c) for c in node_cpus(node)))
        lines.append(f"node {node} size: {NUMA_SIZE_MB[node]} MB")
        lines.append(f"node {node} free: {NUMA_SIZE_MB[node] - used - 462000} MB")
    lines += ["node distances:", "node   0   1 ", "  0:  10  21 ", "  1:  21  10 "]
    return tf.lines_bytes(lines)
