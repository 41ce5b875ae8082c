"""The simulator's kernel and GPU-health scenarios (issue 18: each detection becomes a scenario), small (2 nodes
of 4 GPUs, 2 minutes): the lines are the real reports' wording (see forensics/simulate/scenarios/health.py for
each source), and the analysis puts the scenario's kind as the only root above info, on the faulty host.

cpu_stall: a soft lockup report; pcie_aer: an uncorrected non-fatal error on the boot NVMe, recovered;
gpu_unreachable: NVRM's 'fallen off the bus' record without an Xid, the rank dies (the peer's NCCL error is
its effect); dcgm_diag_failure: one node without persistence mode (DCGM's Deployment check fails, nvidia-smi
says Disabled); fabric_manager_failure: FM's failed NVLink SHARP team setup."""
from __future__ import annotations

import json
import re
import tarfile

import pytest

from forensics.analysis import analyze_paths
from forensics.simulate import SimConfig, write_bundle

SIZE = dict(nodes=2, gpus_per_node=4, duration_s=120.0, interval_s=5.0, seed=4)
pytestmark = pytest.mark.slow  # about 15 s a scenario


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("health")
    done = {}

    def go(scenario):
        if scenario not in done:
            path = root / f"{scenario}.tar"
            write_bundle(SimConfig(scenario=scenario, **SIZE), path)
            with tarfile.open(path) as tf:
                labels = json.load(tf.extractfile("truth/labels.json"))
                raw = {m.name: tf.extractfile(m).read().decode() for m in tf.getmembers() if m.isfile()
                       and any(f"/raw/{d}/" in m.name for d in ("dmesg", "fabricmanager", "dcgm", "nvidia_smi"))}
            findings = analyze_paths([path], cache_dir=root / "cache").findings.to_dicts()
            (truth,) = labels["faults"]
            done[scenario] = (findings, labels, truth, raw)
        return done[scenario]
    return go


def _root(findings, kind, host):
    """The one finding above info that nothing caused; it is the scenario's kind on its host, and first."""
    roots = [f for f in findings if f["caused_by"] is None and f["severity"] != "info"]
    assert [(f["kind"], f["hosts"]) for f in roots] == [(kind, [host])]
    assert findings[0] is roots[0]
    return roots[0]


def test_soft_lockup_is_a_cpu_stall(run):
    findings, _, truth, raw = run("cpu_stall")
    host = truth["hosts"][0]
    line = truth["signals"][0].removeprefix("dmesg:")
    cpu, secs, task = re.fullmatch(r"watchdog: BUG: soft lockup - CPU#(\d+) stuck for (\d+)s! \[(kworker/\1:\d+):\d+\]",
                                   line).groups()
    assert line in raw[f"hosts/{host}/raw/dmesg/dmesg.txt"]
    assert not any("soft lockup" in t for n, t in raw.items() if f"hosts/{host}/" not in n)
    f = _root(findings, "cpu_stall", host)
    assert f["severity"] == "warning"
    assert f"1 soft lockup(s) up to {secs} s on {host} (CPU {cpu}); task {task}" == f["summary"]
    assert [g["kind"] for g in findings if g["severity"] != "info"] == ["cpu_stall"]  # the job trains on


def test_uncorrected_pcie_error_on_the_nvme(run):
    findings, _, truth, raw = run("pcie_aer")
    host = truth["hosts"][0]
    dmesg = raw[f"hosts/{host}/raw/dmesg/dmesg.txt"]
    assert re.search(r"\+\d\d:\d\d nvme 0000:c3:00\.0:    \[14\] CmpltTO                \(First\)\n.*"
                     r"pcieport 0000:c2:02\.0: AER: device recovery successful\n", dmesg)
    f = _root(findings, "pcie_aer", host)
    assert (f["severity"], f["subject"]) == ("warning", "PCIe 0000:c3:00.0") and f["subject"] == truth["subject"]
    assert "1 uncorrected non-fatal" in f["summary"]


def test_gpu_off_the_bus_without_xid(run):
    findings, labels, truth, raw = run("gpu_unreachable")
    host, pci = truth["hosts"][0], truth["subject"].split()[1]
    dmesg = raw[f"hosts/{host}/raw/dmesg/dmesg.txt"]
    # one record: its further lines indented under the time stamp, as dmesg prints them
    assert re.search(rf"\+\d\d:\d\d NVRM: The NVIDIA GPU {pci}\n {{33}}NVRM: \(PCI ID: 10de:2330\) installed in this "
                     rf"system has\n {{33}}NVRM: fallen off the bus and is not responding to commands\.\n", dmesg)
    assert "Xid" not in dmesg
    f = _root(findings, "gpu_unreachable", host)
    assert (f["severity"], f["subject"]) == ("critical", f"GPU {pci}")
    # the GPU is gone from nvidia-smi -q after the fault; the rank's peer got the NCCL error (caused by it)
    q = raw[f"hosts/{host}/raw/nvidia_smi/q.txt"]
    assert 0 < q.count(f"\nGPU 0000{pci.upper()}\n") < q.count("Attached GPUs")
    (nccl,) = [g for g in findings if g["kind"] == "nccl_transport_error"]
    assert nccl["caused_by"] == f["id"] and {e["kind"] for e in labels["effects"]} == {"nccl_transport_error"}


def test_persistence_mode_off_fails_dcgm_diag(run):
    findings, _, truth, raw = run("dcgm_diag_failure")
    host = truth["hosts"][0]
    diag = raw[f"hosts/{host}/raw/dcgm/diag-r1.txt"]
    assert "| Persistence Mode          | Fail                                           |" in diag
    assert diag.count("| Error                     | Persistence mode for GPU ") == 4
    assert raw[f"hosts/{host}/raw/nvidia_smi/q.txt"].count("Persistence Mode                      : Disabled") > 0
    assert not [n for n, t in raw.items() if f"hosts/{host}/" not in n and "Persistence Mode                      : Disabled" in t]
    f = _root(findings, "dcgm_diag_failure", host)
    assert (f["severity"], f["subject"]) == ("warning", "Persistence Mode")  # Deployment, no memory fault
    assert [g["kind"] for g in findings if g["severity"] != "info"] == ["dcgm_diag_failure"]


def test_failed_nvls_team_setup_is_a_fabric_manager_failure(run):
    findings, _, truth, raw = run("fabric_manager_failure")
    host = truth["hosts"][0]
    log = raw[f"hosts/{host}/raw/fabricmanager/fabricmanager.log"]
    m = re.search(r"\] \[INFO\] \[tid \d+\] Received an inband message:  Message header details: magic Id:adbc request "
                  r"Id:([0-9a-f]+) status:0 type:2 length:56\nMessage payload details:Team setup request: .* GPU Handles:"
                  r"((?:[0-9a-f]+ ?){4})\n\n\[[^]]+\] \[ERROR\] \[tid \d+\] failed to find the GPU handle (\d+) in the "
                  r"multicast team request setup (\d+)\.\n", log)
    assert m and int(m.group(1), 16) == int(m.group(4)) and int(m.group(3)) in [int(x, 16) for x in m.group(2).split()]
    f = _root(findings, "fabric_manager_failure", host)
    assert (f["severity"], f["subject"]) == ("critical", "NVLink SHARP (multicast) teams")
    assert [g["kind"] for g in findings if g["severity"] != "info"] == ["fabric_manager_failure"]
