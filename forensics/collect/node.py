"""Facts about the node: host name, kernel, clocks, time zone, NICs, GPU processes.

Standard library only, Python 3.8 syntax. The sysfs root can be moved with ``FORENSICS_SYSFS_ROOT``
and the proc root with ``FORENSICS_PROC_ROOT`` (tests only).
"""
from __future__ import annotations

import datetime as _dt
import os
import re
import socket
import time

ENV_PREFIXES = ("NCCL_", "CUDA_", "TORCH_NCCL_")
# and, to place the process: its Slurm job, its task rank, and the ranks torchrun gave it
ENV_NAMES = ("OMP_NUM_THREADS", "SLURM_JOB_ID", "SLURM_PROCID", "SLURM_LOCALID", "RANK", "LOCAL_RANK")
# names that hold secrets whatever their prefix (NCCL_IB_SECRET, TORCH_NCCL_API_KEY, CUDA_TOKEN): never kept
ENV_SECRET_WORDS = ("PASSWORD", "PASSWD", "SECRET", "TOKEN", "KEY", "CREDENTIAL")
# NCCL settings with such a word that are no secret (the InfiniBand partition key index NCCL uses)
ENV_NOT_SECRET = ("NCCL_IB_PKEY",)
_PCI = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_HOST_OK = re.compile(r"[^A-Za-z0-9._-]+")


def sysfs():
    return os.environ.get("FORENSICS_SYSFS_ROOT", "/sys")


def procfs():
    return os.environ.get("FORENSICS_PROC_ROOT", "/proc")


def _read(path, limit=1 << 20):
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace").strip()
    except (OSError, ValueError):
        return None


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def host_name():
    """(short host name usable as a bundle host, full hostname)."""
    full = socket.gethostname() or os.uname().nodename or "localhost"
    short = _HOST_OK.sub("-", full.split(".")[0]).strip(".-_") or "localhost"
    return short[:253], full


def clock_reference():
    """Wall clock and CLOCK_MONOTONIC read together (the pair with the tightest bracket of 5 tries)."""
    best = None
    for _ in range(5):
        w1 = time.time()
        mono = time.monotonic()
        w2 = time.time()
        if best is None or (w2 - w1) < best[0]:
            best = (w2 - w1, (w1 + w2) / 2.0, mono)
    _, wall, mono = best
    return wall, mono


def boot_time(wall, mono):
    """Boot time (UTC) as wall - monotonic (what dmesg seconds count from), and /proc/stat btime."""
    btime = None
    text = _read(os.path.join(procfs(), "stat"))
    if text:
        m = re.search(r"^btime\s+([0-9]+)", text, re.M)
        if m:
            btime = int(m.group(1))
    return wall - mono, btime


def timezone_name():
    """IANA name of the local zone, or None: $TZ, /etc/timezone, the /etc/localtime link."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and "/" in tz and not tz.startswith("/"):
        return tz
    text = _read("/etc/timezone")
    if text and re.match(r"^[A-Za-z0-9_+\-/]+$", text.splitlines()[0]):
        return text.splitlines()[0]
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        target = ""
    m = re.search(r"zoneinfo/(?:posix/|right/)?([A-Za-z0-9_+\-]+(?:/[A-Za-z0-9_+\-]+)*)$", target)
    if m:
        return m.group(1)
    if tz in ("UTC", "Etc/UTC"):
        return "UTC"
    return None


def utc_offset_s():
    return int(time.localtime().tm_gmtoff)


def ntp_offset(chronyc_text, timedatectl_text):
    """(offset in seconds, source) from `chronyc tracking` ("System time : 0.0000123 seconds fast of NTP time")."""
    if chronyc_text:
        m = re.search(r"^System time\s*:\s*([0-9.]+)\s+seconds\s+(fast|slow)", chronyc_text, re.M)
        if m:
            v = float(m.group(1))
            return (v if m.group(2) == "fast" else -v), "chronyc"
    if timedatectl_text and re.search(r"synchronized:\s*yes", timedatectl_text):
        return None, "timedatectl"
    return None, None


def _link_name(path):
    try:
        return os.path.basename(os.path.realpath(path))
    except OSError:
        return None


def rdma_map():
    """iface -> RDMA device, from /sys/class/infiniband/<dev>/device/net/<iface>."""
    out = {}
    base = os.path.join(sysfs(), "class", "infiniband")
    try:
        devs = sorted(os.listdir(base))
    except OSError:
        return out
    for dev in devs:
        try:
            for iface in os.listdir(os.path.join(base, dev, "device", "net")):
                out.setdefault(iface, dev)
        except OSError:
            continue
    return out


_IB_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


def ib_ports():
    """(device, port) of every RDMA port under /sys/class/infiniband/<dev>/ports/<port> (names checked:
    they become arguments of the commands that read the port's counters)."""
    base = os.path.join(sysfs(), "class", "infiniband")
    out = []
    try:
        devs = sorted(os.listdir(base))
    except OSError:
        return out
    for dev in devs:
        if not _IB_NAME.match(dev):
            continue
        try:
            ports = sorted(os.listdir(os.path.join(base, dev, "ports")), key=lambda p: (len(p), p))
        except OSError:
            continue
        out.extend((dev, p) for p in ports if p.isdigit() and len(p) <= 3)
    return out


def ib_link_layer(dev, port):
    """The link layer of an RDMA port (``InfiniBand`` or ``Ethernet``: its sysfs ``link_layer`` file), or
    None when it cannot be read."""
    try:
        with open(os.path.join(sysfs(), "class", "infiniband", dev, "ports", port, "link_layer")) as f:
            return f.read(64).strip() or None
    except (OSError, ValueError):
        return None


def nics():
    """Inventory of /sys/class/net: iface, PCI address, NUMA node, driver, RDMA device, MAC, MTU, speed, state."""
    base = os.path.join(sysfs(), "class", "net")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    rdma = rdma_map()
    out = []
    for iface in names:
        d = os.path.join(base, iface)
        dev = os.path.join(d, "device")
        pci = None
        numa = None
        driver = None
        if os.path.exists(dev):
            name = _link_name(dev)
            pci = name if name and _PCI.match(name) else None
            numa = _int(_read(os.path.join(dev, "numa_node")))
            if numa is not None and numa < 0:
                numa = None
            if os.path.exists(os.path.join(dev, "driver")):
                driver = _link_name(os.path.join(dev, "driver"))
        speed = _int(_read(os.path.join(d, "speed")))
        out.append({
            "iface": iface, "pci_addr": pci, "numa_node": numa, "driver": driver, "rdma_dev": rdma.get(iface),
            "mac": _read(os.path.join(d, "address")), "mtu": _int(_read(os.path.join(d, "mtu"))),
            "speed_mbps": speed if speed is not None and speed >= 0 else None,
            "operstate": _read(os.path.join(d, "operstate")),
            "physical": os.path.exists(dev), "bond": os.path.isdir(os.path.join(d, "bonding")),
        })
    return out


def ethtool_ifaces(inventory):
    """Interfaces to sample with `ethtool -S`: RDMA-backed first, then other physical NICs, then bonds.

    Purely virtual interfaces (veth, bridges, tunnels; hundreds on a Kubernetes node) are listed in
    host.json but not sampled.
    """
    rdma = [n["iface"] for n in inventory if n.get("rdma_dev")]
    phys = [n["iface"] for n in inventory if n.get("physical") and not n.get("rdma_dev")]
    bonds = [n["iface"] for n in inventory if n.get("bond") and not n.get("physical")]
    return rdma + phys + bonds


ARG_SECRET_WORDS = frozenset(("PASSWORD", "PASSWD", "SECRET", "TOKEN", "KEY", "APIKEY", "CREDENTIAL", "CREDENTIALS"))
REMOVED = "<removed>"


def _secret_name(name):
    """A command-line option or NAME=value name one of whose words (split at -, _, .) is a secret word."""
    return any(w in ARG_SECRET_WORDS for w in re.split(r"[-_.]+", name.upper()) if w)


def scrub_argv(args):
    """A process's arguments with the values of secret-named options removed: ``--api-key=x``,
    ``--hf_token x``, ``NCCL_IB_SECRET=x`` (as ``env`` passes it) keep their name, lose their value.
    Words are matched whole (``--tokenizer gpt2`` is kept)."""
    out = []
    drop_next = False
    for a in args:
        if drop_next and not a.startswith("-"):
            out.append(REMOVED)
            drop_next = False
            continue
        drop_next = False
        m = re.match(r"^(-{0,2}[A-Za-z_][A-Za-z0-9_.-]*)=", a)
        if m and _secret_name(m.group(1).lstrip("-")):
            out.append(m.group(1) + "=" + REMOVED)
            continue
        if a.startswith("-") and _secret_name(a.lstrip("-")):
            drop_next = True
        out.append(a)
    return out


def env_allowed(key):
    """A variable kept from a GPU process's environment: NCCL_*, CUDA_*, TORCH_NCCL_*, OMP_NUM_THREADS,
    SLURM_JOB_ID, SLURM_PROCID, SLURM_LOCALID, RANK, LOCAL_RANK,
    and none whose name (any case) holds a secret word (*PASSWORD*, *SECRET*, *TOKEN*, *KEY*, *CREDENTIAL*, ...)."""
    if not (key.startswith(ENV_PREFIXES) or key in ENV_NAMES):
        return False
    up = key.upper()
    return key in ENV_NOT_SECRET or not any(w in up for w in ENV_SECRET_WORDS)


def process_info(pid):
    """cmdline (secret-named option values removed: scrub_argv), uid, CPU/memory affinity and only the
    NCCL_/CUDA_/TORCH_NCCL_/OMP_NUM_THREADS variables of `pid` whose names hold no secret word (see
    env_allowed): /proc/<pid>/environ is read only through that filter."""
    base = os.path.join(procfs(), str(pid))
    info = {"pid": int(pid)}
    try:
        with open(os.path.join(base, "cmdline"), "rb") as fh:
            raw = fh.read(1 << 20)
        info["cmdline"] = scrub_argv([a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]) if raw else []
    except OSError as exc:
        info["error"] = "cannot read /proc/%s: %s" % (pid, exc.strerror or exc)
        return info
    status = _read(os.path.join(base, "status")) or ""
    for key, field in (("Cpus_allowed_list", "cpus_allowed_list"), ("Mems_allowed_list", "mems_allowed_list")):
        m = re.search(r"^%s:\s*(\S*)" % key, status, re.M)
        if m:
            info[field] = m.group(1)
    m = re.search(r"^Uid:\s*([0-9]+)", status, re.M)
    if m:
        info["uid"] = int(m.group(1))  # the job's user: its NCCL logs may be copied (collect.files)
    env = {}
    try:
        with open(os.path.join(base, "environ"), "rb") as fh:
            raw = fh.read(4 << 20)
        for item in raw.split(b"\0"):
            key, sep, value = item.partition(b"=")
            k = key.decode("utf-8", "replace")
            if sep and env_allowed(k):  # nothing else leaves the node: the environment may hold secrets
                env[k] = value.decode("utf-8", "replace")
    except OSError as exc:
        info["env_error"] = "cannot read environ: %s" % (exc.strerror or exc)
    info["env"] = env
    return info


def parse_compute_apps(text, gpu_index_text):
    """pid -> {"gpus": [...], "gpu_uuids": [...]} from `--query-compute-apps=pid,gpu_uuid,...` CSV."""
    index = {}
    for line in (gpu_index_text or "").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 2 and parts[0].isdigit():
            index[parts[1]] = int(parts[0])
    out = {}
    for line in (text or "").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 2 or not parts[0].isdigit():
            continue
        d = out.setdefault(int(parts[0]), {"gpus": [], "gpu_uuids": []})
        if parts[1] not in d["gpu_uuids"]:
            d["gpu_uuids"].append(parts[1])
            if parts[1] in index:
                d["gpus"].append(index[parts[1]])
    return out


def nccl_globs(given, environ=None, hostname=None):
    """Glob patterns of NCCL logs: --nccl-log values, else NCCL_DEBUG_FILE of our environment (%h, %p expanded)."""
    if given:
        return list(given)
    env = os.environ if environ is None else environ
    pattern = env.get("NCCL_DEBUG_FILE")
    if not pattern:
        return []
    host = hostname or socket.gethostname()
    out = pattern.replace("%%", "\0").replace("%h", host).replace("%p", "*").replace("\0", "%")
    return [out]


def utc_iso(ts):
    return _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).isoformat(timespec="microseconds")
