"""``nvidia-smi topo -m``: the GPU/NIC matrix with NUMA and CPU affinity and the NIC legend."""
from __future__ import annotations

from forensics.simulate import textfmt as tf
from forensics.simulate.hardware import cpu_list_str


def topo(host) -> bytes:
    G = len(host.gpus)
    nics = host.nics
    head = ["", *[f"GPU{i}" for i in range(G)], *[f"NIC{i}" for i in range(len(nics))],
            "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"]
    lines = ["\t".join(head)]

    def gpu_nic(gpu, nic):
        if nic.rail == gpu.index:
            return "PIX"
        return "NODE" if nic.numa == gpu.numa else "SYS"

    for gpu in host.gpus:
        cells = [" X " if o.index == gpu.index else "NV18" for o in host.gpus]
        cells += [gpu_nic(gpu, nic) for nic in nics]
        lines.append("\t".join([f"GPU{gpu.index}", *cells, cpu_list_str(gpu.numa), str(gpu.numa), "", "N/A"]))
    for k, nic in enumerate(nics):
        cells = []
        for gpu in host.gpus:
            cells.append(gpu_nic(gpu, nic))
        for j, other in enumerate(nics):
            if j == k:
                cells.append(" X ")
            else:
                cells.append("NODE" if other.numa == nic.numa else "SYS")
        lines.append("\t".join([f"NIC{k}", *cells, "", "", "", ""]))
    lines += ["", "Legend:", "",
              "  X    = Self",
              "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)",
              "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node",
              "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
              "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)",
              "  PIX  = Connection traversing at most a single PCIe bridge",
              "  NV#  = Connection traversing a bonded set of # NVLinks",
              "", "NIC Legend:", ""]
    lines += [f"  NIC{k}: {nic.rdma}" for k, nic in enumerate(nics)]
    return tf.lines_bytes(lines)
