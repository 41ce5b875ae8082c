"""What each finding kind means: its layer, how likely it is to be a root cause, how to confirm
it on the live cluster, and what to do (the seed documents' diagnostic matrix and beyond)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str
    layer: str  # storage, host_cpu, numa, gpu, nic_fabric, nccl
    root_rank: int  # lower = more likely to be the root cause when findings overlap in time
    confirm: str
    remediation: str


KINDS: dict[str, Kind] = {k.name: k for k in [
    Kind("gpu_xid", "gpu", 10,
         "dmesg -T | grep -i xid; nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT; nvidia-bug-report.sh",
         "Look up the first (root-cause) Xid in NVIDIA's Xid catalogue. Xid 79/74/119/120: drain the node, "
         "reseat or replace the GPU/board, check PCIe/NVLink and GSP firmware; Xid 13/31/43/45 follow an "
         "application fault (check the job's CUDA errors first)."),
    Kind("ecc_error", "gpu", 11,
         "nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT",
         "Uncorrectable ECC / pending row remap: drain the node and reset the GPU (nvidia-smi -r) so the "
         "remap takes effect; a remapping failure or repeated DBEs means an RMA."),
    Kind("link_flap", "nic_fabric", 12,
         "dmesg -T | grep -iE 'link (down|up)'; ethtool -S <iface> | grep -E 'link_down|symbol|crc'; mlxlink -d <dev> -m -c",
         "Check the cable/transceiver and switch port (mlxlink eye/BER, swap optics); move the job off the "
         "node until the port is stable."),
    Kind("pfc_storm", "nic_fabric", 13,
         "ethtool -S <iface> | grep -iE 'pause|pfc|storm'; mlnx_qos -i <iface>; dmesg -T | grep -i pfc",
         "A port is flooding PFC pauses (usually a stuck receiver or a switch buffer mis-tuned): calibrate "
         "switch ECN thresholds lower, verify PFC headroom buffers, enable the PFC storm watchdog, and "
         "check the host on that port for a stalled NIC or PCIe backpressure."),
    Kind("packet_drops", "nic_fabric", 14,
         "ethtool -S <iface> | grep -iE 'drop|discard|out_of_buffer|err'",
         "Discards on the port: check PFC/ECN configuration for the RoCE priority, rx ring sizes "
         "(ethtool -G), and congestion on the switch; drops on a lossless class trigger RoCE Go-Back-N "
         "retransmission collapse."),
    Kind("nccl_misconfig", "nccl", 20,
         "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET <job>; env | grep NCCL_",
         "Use the IB/RoCE transport with GPUDirect RDMA (load nvidia-peermem, NCCL_NET_GDR_LEVEL=5 or "
         "unset), NCCL_BUFFSIZE of at least 4 MiB (4194304) on 400G links, and the same NCCL version and "
         "settings on every node."),
    Kind("numa_misplacement", "numa", 21,
         "numactl -H; nvidia-smi topo -m; taskset -cp <pid>; grep -E 'Cpus_allowed_list|Mems_allowed_list' /proc/<pid>/status",
         "Pin each worker to the NUMA node of its GPU and NIC (numactl --cpunodebind=N --membind=N, or the "
         "launcher's --cpu-bind); avoid cross-socket DMA."),
    Kind("io_starvation", "storage", 22,
         "iostat -xz 1; sar -u 1; py-spy dump --pid <dataloader pid>",
         "The dataloader is starving the GPUs: increase DataLoader num_workers, pin memory, prefetch, and "
         "cache the dataset on local NVMe instead of shared storage."),
    Kind("cpu_saturation", "host_cpu", 23,
         "sar -u 1; sar -q 1; top -H -p <pid>; perf top",
         "Host CPU is saturated: move preprocessing to the GPU (DALI), add dataloader workers only if cores "
         "are free, check for competing processes and CPU governor/frequency."),
    Kind("memory_pressure", "host_cpu", 22,
         "sar -W 1; sar -B 1; sar -r 1; free -m; dmesg -T | grep -iE 'oom|killed process'; ps -eo pid,rss,comm --sort=-rss | head",
         "Host memory is exhausted (swapping, paging from disk, OOM kills): lower DataLoader num_workers and "
         "prefetch_factor (each worker holds a copy of the dataset objects; prefer shared memory / mmap'd "
         "arrays), bound pin_memory buffers, avoid caching whole datasets in every rank, check for a growing "
         "RSS (leak) across steps, leave page cache room or add RAM; set vm.swappiness low so training pages "
         "are not swapped out, and give containers a memory limit that fits."),
    Kind("gpu_throttle", "gpu", 24,
         "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER; nvidia-smi --query-gpu=clocks_event_reasons.active,temperature.gpu,clocks.sm --format=csv -l 1",
         "Thermal/power throttling: check airflow, fans and inlet temperature (clean thermal filters), "
         "power capping and PSU health; the throttling GPU makes its node a straggler."),
    Kind("straggler", "gpu", 30,
         "compare per-node step times; nvidia-smi dmon -s pucm on the slow node; nsys profile -t cuda,nvtx,osrt",
         "One node is slower than its peers for no logged reason: profile it (nsys), compare clocks, PCIe "
         "link width/generation, NUMA binding and background load with a healthy peer."),
    Kind("pulsing_utilization", "host_cpu", 31,
         "nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader -l 1; nsys profile",
         "GPUs take turns between 100% and idle: the pipeline is serialised (GIL contention, synchronous "
         ".item() calls, CPU-side preprocessing per step); profile and overlap the CPU work."),
    Kind("nccl_transport_error", "nccl", 40,
         "grep -E 'NCCL WARN' <logs>; ibv_devinfo; ethtool -S <iface> | grep -iE 'err|drop|pause'",
         "Transport errors are usually a consequence: look at the fabric findings around the same moment "
         "(drops, PFC storms, link flaps) on both ends of the failing peer."),
    Kind("collective_timeout", "nccl", 41,
         "grep -E 'Watchdog caught|last completed' <logs>; py-spy dump on the lowest-SeqNum rank",
         "A collective timed out: the rank with the lowest last-completed sequence number is the one the "
         "others waited for; investigate that rank's node first."),
    Kind("busy_but_slow", "gpu", 42,
         "nsys profile -t cuda,nvtx,osrt python train.py; nvidia-smi dmon -s pucm",
         "GPUs report ~100% utilisation while power/clocks/traffic show they are spin-waiting in NCCL "
         "kernels: the bottleneck is communication; inspect compute/communication overlap and the fabric "
         "findings (check NCCL_NET_GDR_LEVEL=5)."),
    Kind("anomaly", "gpu", 50,
         "compare the host's counters with a healthy peer at the same moment",
         "A host behaves unlike its peers in the features named; check those subsystems on that host."),
]}

SEVERITIES = ("info", "warning", "critical")


def severity_rank(s: str) -> int:
    return SEVERITIES.index(s) if s in SEVERITIES else 0
