"""Kernel and GPU-health signatures (issue 18): a CPU soft lockup, an uncorrected PCIe error that the
AER driver recovers, a GPU that falls off the bus with no Xid, a node whose GPUs run without
persistence mode (DCGM's diagnostic fails), and Fabric Manager unable to set up an NVLink SHARP
team. Every line is in the wording of a real report (the fixture or public report named in each
scenario); which host, device, CPU, task and time are ours."""
from __future__ import annotations

from forensics.simulate.hardware import NCPU
from forensics.simulate.plan import Plan
from forensics.simulate.scenarios.base import _fault_at, _names, _pick_host, scenario
from forensics.simulate.scenarios.gpu import _rank_dies


@scenario("cpu_stall", "a kernel worker loops on one CPU for 22-26 s: the watchdog's 'BUG: soft lockup - CPU#N stuck "
                       "for Ns!'; the job's threads run on the other CPUs of their NUMA node and train on")
def _cpu_stall(plan: Plan, r) -> None:
    """The line as tests/fixtures/dmesg/dmesg--signatures-lockup-rcu-aer-nvrm-real-lines.txt quotes it from
    sonic-net/sonic-buildimage#17358 (``watchdog: BUG: soft lockup - CPU#2 stuck for 23s! [kworker/2:1:25629]``),
    without its ``Kernel panic`` line (that one needs softlockup_panic=1; the default leaves the node up). The
    watchdog reports a CPU stuck in kernel mode past 2 x watchdog_thresh = 20 s (Linux
    Documentation/admin-guide/lockup-watchdogs.rst). Ours: the CPU, the kworker (kworker/<cpu>:<n> runs on
    that CPU), its pid, the 22-26 s. The ranks are allowed every CPU of their NUMA node, so the scheduler
    moves them off the stuck one: no effect on the job."""
    ts, _, h, _ = _fault_at(plan, r)
    cpu = int(r.integers(0, NCPU))
    stuck = int(r.integers(22, 27))
    task = f"kworker/{cpu}:{int(r.integers(0, 3))}:{int(r.integers(20000, 60000))}"
    t = ts + stuck
    plan.add_dmesg(h, t, f"watchdog: BUG: soft lockup - CPU#{cpu} stuck for {stuck}s! [{task}]")
    plan.truth("cpu_stall", _names(plan, [h]), "CPU stalls", t, None,
               [f"dmesg:watchdog: BUG: soft lockup - CPU#{cpu} stuck for {stuck}s! [{task}]"])


#: the node's boot NVMe (forensics.simulate.fmt_dmesg boot messages: ``nvme nvme0: pci function 0000:c3:00.0``)
NVME = "0000:c3:00.0"


@scenario("pcie_aer", "the boot NVMe's link takes an uncorrected non-fatal PCIe error (a completion timeout); the "
                      "AER driver recovers it, the job runs on")
def _pcie_aer(plan: Plan, r) -> None:
    """The 5.x kernel's report of an uncorrected non-fatal error (the root port's ``AER: Uncorrected (Non-Fatal)
    error received: <dev>``, the device's ``PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction
    Layer, (Requester ID)``, its status/mask and ``[14] CmpltTO`` bit, then ``AER: device recovery successful``
    from the port), in the wording of the 5.15 reports of geerlingguy/raspberry-pi-pcie-devices#116 and #600
    and the recovery line of the xen-devel report quoted in the search index (``pcieport 0000:00:1d.0: AER:
    device recovery successful``); the first line also in
    tests/fixtures/dmesg/dmesg--signatures-lockup-rcu-aer-nvrm-real-lines.txt. nvme's error handler
    answers a non-fatal error with 'can recover' and prints nothing. Ours: the time, the port (bus - 1,
    device 2 as the simulator's corrected NIC errors) and the NVMe's vendor:device id."""
    ts, _, h, _ = _fault_at(plan, r)
    port = f"0000:{int(NVME[5:7], 16) - 1:02x}:02.0"
    dev = f"nvme {NVME}"
    lines = [f"pcieport {port}: AER: Uncorrected (Non-Fatal) error received: {NVME}",
             f"{dev}: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)",
             f"{dev}:   device [144d:a80a] error status/mask=00004000/00400000",
             f"{dev}:    [14] CmpltTO                (First)",
             f"pcieport {port}: AER: device recovery successful"]
    for k, text in enumerate(lines):
        plan.add_dmesg(h, ts + 0.000007 * k + (0.0011 if k == len(lines) - 1 else 0.0), text)
    plan.truth("pcie_aer", _names(plan, [h]), f"PCIe {NVME}", ts, None,
               [f"dmesg:pcieport {port}: AER: Uncorrected (Non-Fatal) error received: {NVME}",
                f"dmesg:{dev}: [14] CmpltTO"])


#: the indent of a record's further lines under ``dmesg --time-format iso`` (the width of its time stamp and
#: space, as the default format indents them by the width of ``[ 1843.308145] ``)
ISO_INDENT = " " * len("2026-11-30T11:15:02,123456+01:00 ")


@scenario("gpu_unreachable", "a GPU falls off the bus and the driver says so without an Xid ('NVRM: ... has fallen off "
                             "the bus and is not responding to commands.'); its rank dies, a peer's NCCL send fails, "
                             "the rest time out")
def _gpu_unreachable(plan: Plan, r) -> None:
    """The driver's three-line record as NVIDIA/NVSentinel#155 quotes it from dmesg (a GPU off the bus with
    no Xid; tests/fixtures/dmesg/dmesg--signatures-lockup-rcu-aer-nvrm-real-lines.txt): ``NVRM: The NVIDIA
    GPU 0000:b3:00.0`` / ``NVRM: (PCI ID: 10de:26b5) installed in this system has`` / ``NVRM: fallen off the
    bus and is not responding to commands.``, one record whose further lines dmesg indents. Ours: the GPU
    (10de:2330, the simulated H100 SXM), the time. What follows is xid_79's: the rank dies, the rank before
    it on that rail gets an IB completion error, the others time out, the GPU leaves nvidia-smi."""
    ts, _, h, g = _fault_at(plan, r)
    gpu = plan.cluster.hosts[h].gpus[g]
    plan.add_dmesg(h, ts, f"NVRM: The NVIDIA GPU {gpu.pci_addr}\n{ISO_INDENT}NVRM: (PCI ID: 10de:2330) installed in this "
                          f"system has\n{ISO_INDENT}NVRM: fallen off the bus and is not responding to commands.")
    _rank_dies(plan, r, h, g, ts, ts + 31.0, "gpu_unreachable", gpu_lost=True)
    plan.truth("gpu_unreachable", _names(plan, [h]), f"GPU {gpu.pci_addr}", ts, None,
               [f"dmesg:NVRM: The NVIDIA GPU {gpu.pci_addr} ... fallen off the bus and is not responding to commands.",
                "nvidia_smi:GPU missing from later samples"])


@scenario("dcgm_diag_failure", "one node's GPUs run without persistence mode (nvidia-persistenced not started after "
                               "a reboot): nvidia-smi -q says Disabled, and the collector's dcgmi diag -r 1 fails its "
                               "Persistence Mode check for each GPU; the running job is not affected")
def _dcgm_diag_failure(plan: Plan, r) -> None:
    """DCGM's message as dcgmi prints it (tests/fixtures/dcgm/dcgm--diag-r4-memtest-blog-persistence-fail-wrapped-error.txt:
    ``Persistence mode for GPU 0 is currently disabled. The DCGM diagnostic requires peristence mode to be
    enabled. Enable persistence mode by running "nvidia-smi -i <gpuId> -pm 1 " as root.``, its spelling
    kept), one per GPU. A Deployment check: DCGM's verdict on the node's configuration, nothing wrong with
    the hardware; a process holding the GPUs keeps the driver loaded, so the job runs on."""
    h = _pick_host(plan, r)
    plan.persistence_off |= {(h, g) for g in range(plan.cluster.cfg.gpus_per_node)}
    plan.truth("dcgm_diag_failure", _names(plan, [h]), "Persistence Mode", plan.cluster.cfg.t0, None,
               ["dcgm:Persistence Mode Fail: Persistence mode for GPU N is currently disabled.",
                "nvidia_smi:Persistence Mode : Disabled"])


@scenario("fabric_manager_failure", "Fabric Manager cannot set up an NVLink SHARP (multicast) team on one node ('failed "
                                    "to find the GPU handle ... in the multicast team request setup ...'): an earlier "
                                    "launch using NVLS failed there at init; this job (no NVLS channels) runs, the next "
                                    "NVLS job on that node fails")
def _fabric_manager_failure(plan: Plan, r) -> None:
    """Fabric Manager's lines as in tests/fixtures/fabricmanager: the inband team setup request with its
    ``Message payload details:`` line and blank separator (fabricmanager--gpud-nvls-teams-nonfatal-sxid.log,
    where the request Id in hex is the decimal request id of the ``successfully setup multicast team`` line),
    then ``failed to find the GPU handle <decimal> in the multicast team request setup <decimal>.``
    (fabricmanager--gpud-matcher-fatal-sxid-multicast.log). NVIDIA/nccl#976: NVLS fails at init when FM
    was restarted while processes held the GPUs. Ours: the handles, ids, thread ids, and when (5-25 min
    before this job's launch)."""
    h = _pick_host(plan, r)
    t = plan.grid0 - float(r.uniform(300.0, 1500.0))
    handles = [int(x) for x in r.integers(1 << 60, 1 << 63, size=plan.cluster.cfg.gpus_per_node, dtype="int64")]
    req = int(r.integers(1 << 60, 1 << 63, dtype="int64"))
    lost = handles[int(r.integers(0, len(handles)))]
    recv, worker = int(r.integers(1700, 1900)), int(r.integers(1900, 2100))
    request = (f"Received an inband message:  Message header details: magic Id:adbc request Id:{req:x} status:0 type:2 "
               f"length:56\nMessage payload details:Team setup request: Allocation Size:60000000 "
               f"Flags:0 Number of GPUs:{len(handles)} GPU Handles:{' '.join(f'{x:x}' for x in handles)}\n")
    plan.fm_log.setdefault(h, []).extend([
        (t, "INFO", request, recv),
        (t + 0.004, "ERROR", f"failed to find the GPU handle {lost} in the multicast team request setup {req}.", worker)])
    plan.truth("fabric_manager_failure", _names(plan, [h]), "NVLink SHARP (multicast) teams", t, None,
               [f"fabricmanager:failed to find the GPU handle {lost} in the multicast team request setup {req}."])

