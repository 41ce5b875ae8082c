"""``dcgmi diag -r 1`` of a simulated node, as DCGM 3.3.8 prints it (tests/fixtures/dcgm: the 8x H100
run of an NVIDIA/nccl issue and the p4d run): the Metadata section (DCGM version, the driver, the
GPUs' PCI device ids: 2330 for the H100 80GB HBM3 SXM), then the nine Deployment checks of level 1.
A GPU whose row remapping is pending when the diagnostic runs fails "Page Retirement/Row Remap" with
DCGM's message for it (dcgm_errors.h ``DCGM_FR_PENDING_ROW_REMAP_MSG``), cut every 45 characters
as dcgmi cuts every message; a GPU without persistence mode fails "Persistence Mode" with the message of
tests/fixtures/dcgm/dcgm--diag-r4-memtest-blog-persistence-fail-wrapped-error.txt.

``dcgmi dmon`` of the collector's fields, laid out as dcgmi prints it (``dcgmi/DeviceMonitor.cpp``;
the fixture of DCGM 3.1.8 in tests/fixtures/dcgm_dmon): ``#Entity`` in a 10-wide column, each field
left-aligned in its field's width + 8 (ratios 13, byte counts 28, power and utilisation 18), the
units line under it, ratios with three decimals, the profiling fields ``N/A`` in the first sample
(the watches not yet filled), the header again every 14 samples.

``dcgmi discovery -l`` as DCGM 3.1.8 prints it on an 8x H800 HGX board (the fixture in
tests/fixtures/dcgm_discovery): the GPUs with name, bus id and UUID, and ``0 NvSwitches found.`` (the
NVSwitches of Hopper boards are not DCGM entities there).
"""
from __future__ import annotations

import re

import numpy as np

from forensics.simulate.config import DRIVER
from forensics.simulate.fmt_nvsmi.common import PRODUCT

DCGM_VERSION = "3.3.8"
DEVICE_ID = "2330"
WRAP = 45
DEPLOYMENT = ("Denylist", "NVML Library", "CUDA Main Library", "Permissions and OS Blocks", "Persistence Mode",
              "Environment Variables", "Page Retirement/Row Remap", "Graphics Processes", "Inforom")
#: DCGM's message for a GPU without persistence mode, as the fixture above prints it (its spelling kept)
PERSISTENCE_MSG = ("Persistence mode for GPU {} is currently disabled. The DCGM diagnostic requires peristence mode to be "
                   'enabled. Enable persistence mode by running "nvidia-smi -i <gpuId> -pm 1 " as root.')
BORDER = "+---------------------------+------------------------------------------------+"


def _row(name: str, value: str) -> str:
    return f"| {name:<25} | {value:<46} |"


def _message(kind: str, text: str) -> list[str]:
    pieces = [text[i:i + WRAP] for i in range(0, len(text), WRAP)]
    return [_row(kind if k == 0 else "", p) for k, p in enumerate(pieces)]


def diag_r1(plan, h: int, n_gpus: int, t: float) -> bytes:
    """The level-1 run at true time t on host h."""
    pending = sorted(g for (hh, g), events in plan.ecc.items() if hh == h
                     and any(at <= t and e.get("pending") for at, e in events))
    out = ["Successfully ran diagnostic for group.", BORDER, _row("Diagnostic", "Result"),
           "+===========================+================================================+",
           "|-----  Metadata  ----------+------------------------------------------------|",
           _row("DCGM Version", DCGM_VERSION), _row("Driver Version Detected", DRIVER),
           _row("GPU Device IDs Detected", ",".join([DEVICE_ID] * n_gpus)),
           "|-----  Deployment  --------+------------------------------------------------|"]
    no_pm = sorted(g for hh, g in plan.persistence_off if hh == h)
    for test in DEPLOYMENT:
        if test == "Persistence Mode" and no_pm:
            out.append(_row(test, "Fail"))
            for g in no_pm:
                out += _message("Error", PERSISTENCE_MSG.format(g))
        elif test == "Page Retirement/Row Remap" and pending:
            out.append(_row(test, "Fail"))
            for g in pending:
                out += _message("Error", f"GPU {g} had memory errors and row remappings are pending")
        else:
            out.append(_row(test, "Pass"))
    out.append(BORDER)
    return ("\n".join(out) + "\n").encode()


#: (short name, column width, unit) of the collector's dmon fields in its order (PROFILING_FIELDS, DEVICE_FIELDS)
DMON_COLUMNS = (("GRACT", 13, ""), ("SMACT", 13, ""), ("SMOCC", 13, ""), ("TENSO", 13, ""), ("DRAMA", 13, ""),
                ("PCITX", 28, ""), ("PCIRX", 28, ""), ("NVLTX", 28, ""), ("NVLRX", 28, ""), ("POWER", 18, "W"),
                ("SMCLK", 13, ""), ("GPUTL", 18, ""), ("XIDER", 13, ""))
DMON_HEADER_EVERY = 14


def _dmon_line(first: str, cells) -> str:
    return (f"{first:<10}" + "".join(f"{c:<{w}}" for c, (_, w, _) in zip(cells, DMON_COLUMNS))).rstrip() + "\n"


def dmon(s: dict, nvlink_bps, xids: dict) -> bytes:
    """The dmon stream of one host: `s` the HostModel.gpu() arrays at its sample times, `nvlink_bps`
    (G, n) NVLink bytes per second each way, `xids` {gpu: [(sample, xid)]} the last Xid from a sample on."""
    G, n = s["util"].shape
    head = _dmon_line("#Entity", [c for c, _, _ in DMON_COLUMNS]) + _dmon_line("ID", [u for _, _, u in DMON_COLUMNS])
    out = [head]
    for k in range(n):
        if k and k % DMON_HEADER_EVERY == 0:
            out.append(head)
        for g in range(G):
            if s["lost"][g, k]:
                continue  # a GPU that fell off the bus is no longer in DCGM's group
            last = [x for at, x in sorted(xids.get(g, ())) if at <= k]
            xid = str(last[-1]) if last else "0"
            if k == 0:
                prof = ["N/A"] * 9
            else:
                prof = [f"{s[name][g, k]:.3f}" for name in ("gr_active", "sm_active", "sm_occupancy", "tensor_active",
                                                           "dram_active")]
                prof += [str(int(s["pcie_tx"][g, k]) * 1024), str(int(s["pcie_rx"][g, k]) * 1024),
                         str(int(nvlink_bps[g, k])), str(int(nvlink_bps[g, k] * 0.998))]
            dev = [f"{s['power'][g, k]:.3f}", str(int(s["sm"][g, k])), str(int(s["util"][g, k])), xid]
            out.append(_dmon_line(f"GPU {g}", prof + dev))
    return "".join(out).encode()


_XID = re.compile(r"NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): ([0-9]+),")


def dmon_stream(host, hm, plan, h: int, times) -> bytes:
    """`dcgmi dmon` of host h sampled at true `times` (every interval): the GPUs' state from the series
    model, NVLink bytes per second from the job's traffic, XIDER from the node's Xid kernel lines."""
    s = hm.gpu(times, float(times[1] - times[0]) if len(times) > 1 else 1.0, "dcgm")
    iv = float(times[1] - times[0]) if len(times) > 1 else 1.0
    G = len(host.gpus)
    nvl = np.zeros((G, len(times)))
    for g in range(G):
        sent = hm.m.traffic(h, g, times) * max(G - 1, 0)
        before = hm.m.traffic(h, g, times - iv) * max(G - 1, 0)
        nvl[g] = np.maximum(0.0, sent - before) / iv
    by_pci = {gpu.pci_short.lower(): g for g, gpu in enumerate(host.gpus)}
    xids: dict = {}
    for t, text in plan.dmesg.get(h, ()):
        m = _XID.search(text)
        if m and m.group(1).lower() in by_pci:
            k = int(np.searchsorted(times, t))  # the first sample at or after the line
            xids.setdefault(by_pci[m.group(1).lower()], []).append((k, int(m.group(2))))
    return dmon(s, nvl, xids)


DISCOVERY_SEP = "+--------+----------------------------------------------------------------------+"


def discovery(host) -> bytes:
    """`dcgmi discovery -l` of a simulated host."""
    n = len(host.gpus)
    out = [f"{n} GPU{'' if n == 1 else 's'} found.", DISCOVERY_SEP,
           "| GPU ID | Device Information                                                   |", DISCOVERY_SEP]
    for g, gpu in enumerate(host.gpus):
        out += [f"| {g:<6} | {'Name: ' + PRODUCT:<68} |", f"|        | {'PCI Bus ID: ' + gpu.pci:<68} |",
                f"|        | {'Device UUID: ' + gpu.uuid:<68} |", DISCOVERY_SEP]
    out += ["0 NvSwitches found.", "+-----------+", "| Switch ID |", "+-----------+", "+-----------+"]
    return ("\n".join(out) + "\n").encode()
