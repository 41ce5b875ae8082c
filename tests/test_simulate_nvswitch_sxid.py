"""The simulator's nvswitch_sxid scenario (issue 18: each fabric detection becomes a scenario), small
(2 nodes of 4 GPUs, 2 minutes): one NVSwitch's fatal SXid 20034 is written as the kernel and Fabric
Manager print it (wording of tests/fixtures/dmesg/dmesg--gpud-sxid-readme-raw-xid79-sxid20034.txt and
tests/fixtures/fabricmanager/fabricmanager--gpud-matcher-fatal-sxid-multicast.log), the job's
all-reduce stalls and every rank's watchdog fires. The analysis must put nvswitch_sxid first, as the
root, on the faulty host, with the timeouts caused by it; the healthy job of the same size has no
NVSwitch or Fabric Manager finding."""
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

    def go(scenario):
        if scenario not in done:
            path = root / f"{scenario}.tar"
            write_bundle(SimConfig(scenario=scenario, **SIZE), path)
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


def test_healthy_run_has_no_fabric_finding(run):
    findings, _, raw = run("healthy")
    assert not [f for f in findings if f["kind"] in ("nvswitch_sxid", "fabric_manager_failure")]
    assert [f for f in findings if f["severity"] != "info"] == []
    assert not any("SXid" in t or "[ERROR]" in t for t in raw.values())
