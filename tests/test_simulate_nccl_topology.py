"""The simulator's NCCL init logs agree with the topology the same bundle prints elsewhere.

Checked from the raw files alone (nothing from the simulator's objects): every rank's log names the
host's rail HCAs as `nvidia-smi topo -m` lists them, its `busId` is its GPU's PCI address in
`--query-gpu` CSV, `Setting affinity` is the GPU's CPU affinity from `topo -m`, rank numbers follow
node order x local rank, every ring of every channel (listed by rank 0) holds every rank once, a rank receives from
the network through its own PIX NIC and sends to the rail of the peer GPU (through the local proxy
GPU on that rail when PXN is used).
"""
from __future__ import annotations

import re
from functools import lru_cache

import pytest

from forensics.simulate import SimConfig, Simulation

NODES, GPUS = 3, 8
CASES = [("healthy", 1), ("seed000_case_study", 0), ("nccl_misconfig", 2)]  # GDR + PXN, GDR off, Socket


@lru_cache(maxsize=None)
def members(scenario: str, seed: int) -> dict[str, bytes]:
    sim = Simulation(SimConfig(scenario, nodes=NODES, gpus_per_node=GPUS, duration_s=60, interval_s=5, seed=seed))
    return dict(sim.members())


def cpu_list_mask(text: str) -> int:
    mask = 0
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        for c in range(int(lo), int(hi or lo) + 1):
            mask |= 1 << c
    return mask


def topo(text: str) -> dict:
    """GPU -> (PIX NIC indices, CPU affinity mask); NIC index -> mlx5 device (legend)."""
    lines = text.splitlines()
    header = lines[0].split("\t")
    gpus = {}
    for line in lines[1:]:
        cols = line.split("\t")
        if not cols[0].startswith("GPU"):
            continue
        row = dict(zip(header, cols))
        pix = [int(k[3:]) for k, v in row.items() if k.startswith("NIC") and v.strip() == "PIX"]
        gpus[int(cols[0][3:])] = (pix, cpu_list_mask(row["CPU Affinity"]))
    legend = {int(m[1]): m[2] for m in re.finditer(r"^\s+NIC(\d+): (\S+)$", text, re.M)}
    return {"gpus": gpus, "legend": legend}


def bus_ids(csv: str) -> dict[int, str]:
    """GPU index -> NCCL's busId spelling of its PCI address (00000000:5D:00.0 -> 5d000)."""
    out = {}
    for row in csv.splitlines()[1:]:
        f = row.split(", ")
        dom, bus, devfn = f[3].split(":")
        dev, fn = devfn.split(".")
        assert int(dom, 16) == 0
        out[int(f[1])] = f"{bus}{dev}{fn}".lower()
    return out


@pytest.mark.parametrize("scenario,seed", CASES)
def test_nccl_init_matches_the_topology(scenario, seed):
    m = members(scenario, seed)
    hosts = sorted({k.split("/")[1] for k in m if k.startswith("hosts/")})
    assert len(hosts) == NODES
    nranks = NODES * GPUS
    seen_ranks = set()
    for h_i, host in enumerate(hosts):
        raw = f"hosts/{host}/raw/"
        t = topo(m[raw + "nvidia_smi/topo-m.txt"].decode())
        buses = bus_ids(m[raw + "nvidia_smi/query-gpu.csv"].decode())
        rails = sorted({n for pix, _ in t["gpus"].values() for n in pix})
        logs = sorted(k for k in m if k.startswith(raw + "nccl/nccl."))  # the ranks' NCCL logs (raw/nccl also
        # holds what --nccl-log copies from /var/log/train: the training log, watchdog logs)
        assert len(logs) == GPUS
        for k in logs:
            log = m[k].decode()
            inits = re.findall(r"ncclCommInitRank comm \S+ rank (\d+) nranks (\d+) cudaDev (\d+) nvmlDev (\d+) "
                               r"busId (\S+) commId \S+ - Init (START|COMPLETE)", log)
            assert [i[-1] for i in inits] == ["START", "COMPLETE"] and inits[0][:-1] == inits[1][:-1], k
            rank, nr, dev, nvml, bus = int(inits[0][0]), int(inits[0][1]), int(inits[0][2]), int(inits[0][3]), inits[0][4]
            assert nr == nranks and dev == nvml and rank == h_i * GPUS + dev, k
            assert bus == buses[dev], (k, bus, buses[dev])
            seen_ranks.add(rank)
            assert f"nNodes {NODES} localRanks {GPUS} localRank {dev} " in log, k
            pix, cpus = t["gpus"][dev]
            aff = re.search(r"Setting affinity for GPU (\d+) to (\S+)", log)
            if aff:  # absent only where the rank was pinned elsewhere (numa_misplacement)
                assert int(aff[1]) == dev and int(aff[2].replace(",", ""), 16) == cpus, k
            else:
                assert scenario == "seed000_case_study", k
            # every channel's ring (printed by rank 0, as NCCL does) holds every rank once
            rings = re.findall(r"NCCL INFO Channel (\d+)/\d+ :((?:\s+\d+)+)$", log, re.M)
            assert bool(rings) == (rank == 0), k
            for _, ring in rings:
                assert sorted(map(int, ring.split())) == list(range(nranks)), k
            ib = re.search(r"NET/IB : Using ((?:\[\d+\]\S+ )+)", log)
            if scenario == "nccl_misconfig":  # seed 2: the Socket transport instead of IB
                assert ib is None and "NET/Socket : Using [0]" in log and "via NET/IB" not in log, k
                continue
            used = re.findall(r"\[(\d+)\](mlx5_\d+):1/RoCE", ib[1])
            assert [(int(i), d) for i, d in used] == [(n, t["legend"][n]) for n in rails], k
            assert re.search(rf"GPU Direct RDMA Enabled for HCA {pix[0]} '{t['legend'][pix[0]]}'", log), k
            for c, peer_gpu, direction, net in re.findall(
                    r"Channel (\d+)/0 : \d+\[\d+\] -> \d+\[(\d+)\] \[(receive|send)\] via (\S+)", log):
                nic = re.fullmatch(r"NET/IB/(\d+)(?:\((\d+)\))?(/GDRDMA)?", net)
                assert nic, (k, net)
                gdr = bool(nic[3])
                assert gdr == (scenario == "healthy"), (k, net)
                if direction == "receive":
                    assert int(nic[1]) in pix, (k, c, net)  # into this GPU through its own NIC
                else:
                    peer_gpu = int(peer_gpu)
                    assert int(nic[1]) == peer_gpu, (k, c, net)  # rail matched to the peer GPU
                    if nic[2] is not None:  # PXN: the local rank on that rail proxies
                        proxy = int(nic[2])
                        assert proxy == h_i * GPUS + peer_gpu and int(nic[1]) in t["gpus"][peer_gpu][0], (k, net)
                    else:
                        assert not gdr or peer_gpu == dev, (k, net)
    assert seen_ranks == set(range(nranks))
