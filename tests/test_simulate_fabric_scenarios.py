"""The simulator's scenarios of issue 18's detections (each becomes a scenario), small (2 nodes of 4 GPUs,
2 minutes): the analysis must put the scenario's kind first, as the only root, on the faulty host (and
GPU); the healthy job of the same size has none of these findings.

nvswitch_sxid: one NVSwitch's fatal SXid 20034 is written as the kernel and Fabric Manager print it
(wording of tests/fixtures/dmesg/dmesg--gpud-sxid-readme-raw-xid79-sxid20034.txt and
tests/fixtures/fabricmanager/fabricmanager--gpud-matcher-fatal-sxid-multicast.log), the job's
all-reduce stalls and every rank's watchdog fires (the timeouts are its effect).
nic_wedged (4 minutes, so that the hung task is reported): a rail NIC's mlx5 fatal health report and
the health worker's 122 s hung task (wording of
tests/fixtures/dmesg/dmesg--netdev-mlx5-fatal-syndrome-hung-task-recovery-aborted.txt); the NCCL error,
the timeouts, the spin-waiting and the hung task are its effects.
ecc_correctable_outlier: one GPU's aggregate DRAM Correctable count far above its peers' (the real
8x A100 tests/fixtures/nvidia_smi/nvidia_smi--q-d-ecc-8xa100-535-dram-correctable-87.txt case)."""
from __future__ import annotations

import json
import re
import tarfile

import pytest

from forensics.analysis import analyze_paths
from forensics.simulate import SimConfig, write_bundle

SIZE = dict(nodes=2, gpus_per_node=4, duration_s=120.0, interval_s=5.0, seed=4)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("sxid")
    done = {}

    def go(scenario, **size):
        if scenario not in done:
            path = root / f"{scenario}.tar"
            write_bundle(SimConfig(scenario=scenario, **{**SIZE, **size}), path)
            with tarfile.open(path) as tf:
                labels = json.load(tf.extractfile("truth/labels.json"))
                raw = {m.name: tf.extractfile(m).read().decode() for m in tf.getmembers()
                       if m.isfile() and ("/raw/dmesg/" in m.name or "/raw/fabricmanager/" in m.name)}
            findings = analyze_paths([path], cache_dir=root / "cache").findings.to_dicts()
            done[scenario] = (findings, labels, raw)
        return done[scenario]
    return go


def test_fatal_sxid_is_the_root_on_its_host(run):
    findings, labels, raw = run("nvswitch_sxid")
    (truth,) = labels["faults"]
    assert truth["kind"] == "nvswitch_sxid" and len(truth["hosts"]) == 1
    host = truth["hosts"][0]
    # the real wording, on the faulty host only: kernel record with its details, then FM's line per port
    sx = {n: [ln for ln in t.splitlines() if "SXid" in ln] for n, t in raw.items() if "/raw/dmesg/" in n}
    assert all(not v for n, v in sx.items() if f"hosts/{host}/" not in n)
    lines = sx[f"hosts/{host}/raw/dmesg/dmesg.txt"]
    fatal = [ln for ln in lines if re.search(r"nvidia-nvswitch\d: SXid \(PCI:0000:0[5-7]:00\.0\): 20034, Fatal, "
                                             r"Link \d+ LTSSM Fault Up$", ln)]
    assert fatal and len(lines) == 3 * len(fatal)
    fm = [ln for ln in raw[f"hosts/{host}/raw/fabricmanager/fabricmanager.log"].splitlines() if "[ERROR]" in ln]
    assert len(fm) == len(fatal)
    assert all(re.search(r"\] detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id 00000000:0[5-7]:00\.0 "
                         r"physical id \d port \d+$", ln) for ln in fm)
    # the root: nvswitch_sxid on that host, first; the timeouts on every host are its effect
    roots = [f for f in findings if f["caused_by"] is None and f["severity"] != "info"]
    assert [(f["kind"], f["hosts"], f["subject"]) for f in roots] == [("nvswitch_sxid", [host], "SXid 20034 fatal")]
    assert findings[0]["kind"] == "nvswitch_sxid"
    (timeout,) = [f for f in findings if f["kind"] == "collective_timeout"]
    assert timeout["caused_by"] == roots[0]["id"] and sorted(timeout["hosts"]) == sorted(labels["clock_offsets_s"])
    assert {f["kind"] for f in findings if f["severity"] != "info"} == {"nvswitch_sxid", "collective_timeout"}


def test_correctable_ecc_outlier_is_the_root_on_its_gpu(run):
    findings, labels, _ = run("ecc_correctable_outlier")
    (truth,) = labels["faults"]
    gpu = truth["subject"].split()[0]  # GPU<n>
    (f,) = [f for f in findings if f["severity"] != "info"]
    assert (f["kind"], f["hosts"], f["caused_by"]) == ("ecc_correctable_outlier", truth["hosts"], None)
    assert f["subject"].split()[0] == gpu and findings[0] is f
    count = int(re.search(r"nvidia_smi:ECC Errors Aggregate DRAM Correctable (\d+)", truth["signals"][0]).group(1))
    n = int(re.search(r"has (\d+) aggregate correctable DRAM ECC errors, its \d+ peers 0", f["summary"]).group(1))
    assert count + 1 <= n <= count + 3  # the earlier boots' count and this boot's 1-3


def test_wedged_nic_is_the_root_and_the_hung_task_its_effect(run):
    findings, labels, raw = run("nic_wedged", duration_s=240.0)
    (truth,) = labels["faults"]
    host, pci = truth["hosts"][0], truth["subject"].split()[1]
    dmesg = raw[f"hosts/{host}/raw/dmesg/dmesg.txt"]
    assert f"mlx5_core {pci}: poll_health:702:(pid 0): Fatal error 1 detected" in dmesg
    assert f"Workqueue: mlx5_health{pci} mlx5_fw_fatal_reporter_err_work [mlx5_core]" in dmesg
    roots = [f for f in findings if f["caused_by"] is None and f["severity"] != "info"]
    assert [(f["kind"], f["hosts"]) for f in roots] == [("nic_wedged", [host])] and findings[0] is roots[0]
    assert roots[0]["subject"] == f"NIC {pci}"
    (hung,) = [f for f in findings if f["kind"] == "hung_task"]
    assert hung["hosts"] == [host] and hung["caused_by"] == roots[0]["id"]
    assert {e["kind"] for e in labels["effects"]} >= {"hung_task", "collective_timeout", "nccl_transport_error"}


def test_healthy_run_has_no_fabric_finding(run):
    findings, _, raw = run("healthy")
    assert not [f for f in findings if f["kind"] in ("nvswitch_sxid", "fabric_manager_failure", "ecc_correctable_outlier", "nic_wedged", "hung_task")]
    assert [f for f in findings if f["severity"] != "info"] == []
    assert not any("SXid" in t or "[ERROR]" in t for t in raw.values())
