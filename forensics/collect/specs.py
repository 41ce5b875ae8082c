"""What the collector runs, declared as data (standard library only, Python 3.8 syntax).

Each :class:`Spec` names one command: its argv (with ``{iface}``, ``{interval}``, ``{count}``,
``{interval_ms}`` placeholders), how it expands (once, or per network interface), how it runs
(``once``; ``snapshot``: run every sampling interval, each output preceded by a marker line;
``stream``: one long-running command sampling by itself for the whole duration), its timeout and
byte cap, the parser source that reads it and the raw file it writes. ``fallbacks`` are tried in
order when the command is missing or fails (older tools without an option).

``when`` places one-shot commands: ``start`` (before sampling) or ``end`` (after it: dmesg then
holds what happened during the collection).
"""
from __future__ import annotations

MB = 1 << 20

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


class Spec(object):
    """One command to collect."""

    __slots__ = ("name", "argv", "source", "raw", "mode", "expand", "timeout", "cap", "fallbacks", "when",
                 "min_interval", "until_stopped", "argv_once")

    def __init__(self, name, argv, source, raw, mode="once", expand=None, timeout=30.0, cap=16 * MB,
                 fallbacks=(), when="start", min_interval=0.0, until_stopped=False, argv_once=None):
        self.name = name
        self.argv = tuple(argv)
        self.source = source
        self.raw = raw
        self.mode = mode
        self.expand = expand
        self.timeout = float(timeout)
        self.cap = int(cap)
        self.fallbacks = tuple(tuple(f) for f in fallbacks)
        self.when = when
        self.min_interval = float(min_interval)
        self.until_stopped = until_stopped
        self.argv_once = tuple(argv_once) if argv_once else None  # streams with --duration 0

    def __repr__(self):
        return "Spec(%r)" % self.name


def _sar(name, flags, raw):
    return Spec(name, ("sar",) + flags + ("{interval}", "{count}"), "sar", raw, mode="stream", cap=32 * MB,
                argv_once=("sar",) + flags + ("1", "1"))


SPECS = (
    Spec("numactl_h", ("numactl", "-H"), "numactl", "numactl-H.txt", timeout=20, cap=4 * MB),
    Spec("nvidia_smi_topo", ("nvidia-smi", "topo", "-m"), "nvidia_smi", "topo-m.txt", timeout=60, cap=4 * MB),
    Spec("nvidia_smi_qx", ("nvidia-smi", "-q", "-x"), "nvidia_smi", "q-x.xml", timeout=90, cap=32 * MB),
    Spec("chronyc_tracking", ("chronyc", "tracking"), "collector", "chronyc-tracking.txt", timeout=10, cap=1 * MB),
    Spec("timedatectl", ("timedatectl",), "collector", "timedatectl.txt", timeout=10, cap=1 * MB),
    Spec("nvidia_smi_apps", ("nvidia-smi", "--query-compute-apps=pid,gpu_uuid,gpu_bus_id,used_memory", "--format=csv,noheader"),
         "collector", "compute-apps.csv", timeout=30, cap=4 * MB),
    Spec("nvidia_smi_gpus", ("nvidia-smi", "--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader"),
         "collector", "gpu-index.csv", timeout=30, cap=1 * MB),
    # sampled series
    Spec("ethtool_s", ("ethtool", "-S", "{iface}"), "ethtool", "{iface}.txt", mode="snapshot", expand="iface",
         timeout=10, cap=256 * MB),
    Spec("nvidia_smi_q", ("nvidia-smi", "-q"), "nvidia_smi", "q.txt", mode="snapshot", timeout=60, cap=256 * MB,
         min_interval=10.0),
    # NVLink traffic (running KiB totals per link; throughput = difference of samples). A GPU without
    # NVLink or a driver without -gt (older ones only have the deprecated -g) is a failed command, no more.
    Spec("nvidia_smi_nvlink", ("nvidia-smi", "nvlink", "-gt", "d"), "nvidia_smi", "nvlink-gt-d.txt", mode="snapshot",
         timeout=30, cap=128 * MB),
    Spec("iostat", ("iostat", "-x", "-t", "{interval}", "{count}"), "iostat", "iostat.txt", mode="stream", cap=64 * MB,
         argv_once=("iostat", "-x", "-t")),
    _sar("sar_u", ("-u",), "sar-u.txt"),
    _sar("sar_p_all", ("-P", "ALL"), "sar-P-ALL.txt"),
    _sar("sar_n_dev", ("-n", "DEV"), "sar-n-DEV.txt"),
    _sar("sar_n_edev", ("-n", "EDEV"), "sar-n-EDEV.txt"),
    _sar("sar_r", ("-r",), "sar-r.txt"),
    _sar("sar_q", ("-q",), "sar-q.txt"),
    _sar("sar_w", ("-W",), "sar-W.txt"),  # swap-in/out pages/s
    _sar("sar_b", ("-B",), "sar-B.txt"),  # paging: major faults, direct reclaim
    _sar("sar_s", ("-S",), "sar-S.txt"),  # swap space used
    Spec("nvidia_smi_query_gpu", ("nvidia-smi", "--query-gpu=" + GPU_QUERY_FIELDS, "--format=csv", "-lms", "{interval_ms}"),
         "nvidia_smi", "query-gpu.csv", mode="stream", cap=128 * MB, until_stopped=True,
         fallbacks=(("nvidia-smi", "--query-gpu=" + GPU_QUERY_FIELDS_OLD, "--format=csv", "-lms", "{interval_ms}"),
                    ("nvidia-smi", "--query-gpu=" + GPU_QUERY_FIELDS_MIN, "--format=csv", "-lms", "{interval_ms}")),
         argv_once=("nvidia-smi", "--query-gpu=" + GPU_QUERY_FIELDS, "--format=csv")),
    # at the end: the kernel log then holds what happened while we sampled
    Spec("dmesg", ("dmesg", "--time-format", "iso"), "dmesg", "dmesg.txt", timeout=30, cap=128 * MB, when="end",
         fallbacks=(("dmesg",), ("journalctl", "-k", "-b", "-o", "short-iso", "--no-pager"))),
)


def by_name():
    return dict((s.name, s) for s in SPECS)
