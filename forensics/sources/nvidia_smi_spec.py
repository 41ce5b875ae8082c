"""nvidia-smi: how it is collected and where it is found (standard library only; see :mod:`forensics.descriptor`)."""
from __future__ import annotations

from forensics.descriptor import BugSection, Descriptor, SosPath, Spec, MB

GPU_QUERY_FIELDS = (
    "timestamp,index,uuid,pci.bus_id,utilization.gpu,utilization.memory,temperature.gpu,temperature.memory,"
    "power.draw,power.limit,clocks.sm,clocks.gr,clocks.mem,clocks.max.sm,pstate,memory.used,memory.total,"
    "pcie.link.gen.current,pcie.link.width.current,clocks_event_reasons.active"
)
# drivers before 535 call the throttle reasons "clocks_throttle_reasons"; some fields are absent on old GPUs
GPU_QUERY_FIELDS_OLD = GPU_QUERY_FIELDS.replace("clocks_event_reasons.active", "clocks_throttle_reasons.active")
GPU_QUERY_FIELDS_MIN = (
    "timestamp,index,uuid,pci.bus_id,utilization.gpu,utilization.memory,temperature.gpu,power.draw,"
    "clocks.sm,clocks.mem,clocks_throttle_reasons.active"
)

DESCRIPTOR = Descriptor(
    "nvidia_smi", "nvidia-smi",
    collect=(
        Spec("nvidia_smi_topo", ("nvidia-smi", "topo", "-m"), "nvidia_smi", "topo-m.txt", timeout=60, cap=4 * MB),
        Spec("nvidia_smi_qx", ("nvidia-smi", "-q", "-x"), "nvidia_smi", "q-x.xml", timeout=90, cap=32 * MB),
        Spec("nvidia_smi_q", ("nvidia-smi", "-q"), "nvidia_smi", "q.txt", mode="snapshot", timeout=60, cap=256 * MB,
             min_interval=10.0),
        # NVLink traffic (running KiB totals per link; throughput = difference of samples). A GPU without
        # NVLink or a driver without -gt (older ones only have the deprecated -g) is a failed command, no more.
        Spec("nvidia_smi_nvlink", ("nvidia-smi", "nvlink", "-gt", "d"), "nvidia_smi", "nvlink-gt-d.txt",
             mode="snapshot", timeout=30, cap=128 * MB),
        Spec("nvidia_smi_query_gpu", ("nvidia-smi", "--query-gpu=" + GPU_QUERY_FIELDS, "--format=csv", "-lms", "{interval_ms}"),
             "nvidia_smi", "query-gpu.csv", mode="stream", cap=128 * MB, until_stopped=True,
             fallbacks=(("nvidia-smi", "--query-gpu=" + GPU_QUERY_FIELDS_OLD, "--format=csv", "-lms", "{interval_ms}"),
                        ("nvidia-smi", "--query-gpu=" + GPU_QUERY_FIELDS_MIN, "--format=csv", "-lms", "{interval_ms}")),
             argv_once=("nvidia-smi", "--query-gpu=" + GPU_QUERY_FIELDS, "--format=csv")),
    ),
    sosreport=(
        SosPath(r"^sos_commands/nvidia/nvidia-smi_(?:-q|--query)(?:_-d_[A-Z_,]+)?$", "sos_commands/nvidia/nvidia-smi_-q"),
        SosPath(r"^sos_commands/nvidia/nvidia-smi_-q_-x$", "sos_commands/nvidia/nvidia-smi_-q_-x"),
        SosPath(r"^sos_commands/nvidia/nvidia-smi_--query-gpu.*$",
                "sos_commands/nvidia/nvidia-smi_--query-gpu=index,utilization.gpu_--format_csv", name="query-gpu.csv"),
        SosPath(r"^sos_commands/nvidia/nvidia-smi_topo_-m$", "sos_commands/nvidia/nvidia-smi_topo_-m"),
    ),
    # the nvidia-smi block holds several commands (--query, --query --unit, nvlink ...): only --query is read
    bug_report=(BugSection(r"^(?:\S*/)?nvidia-smi(?:\s+(.*?))?\s*$", "nvidia-bug-report-q.txt", "/usr/bin/nvidia-smi --query",
                           args=("--query", "-q")),),
    events=("gpu_throttle_start", "gpu_throttle_end", "gpu_ecc_dbe", "gpu_ecc_sbe", "gpu_remap_pending",
            "gpu_remap_failure"),
)
