"""Causality's linking (`link_and_rank`) alone, an older version against this tree's, on the reduce's
real input.

    git show main:forensics/detect/causality.py > /tmp/old_causality.py
    nice -n 15 python benchmarks/causality_ab.py benchmarks/tmp/red64/x16 /tmp/old_causality.py

DIR is a copy made by ``benchmarks/fleet_reduce.py --work`` (its ``x<k>`` folder: parsed tables and
the map step's outputs); the reduce runs once (this tree's code) and the findings, NCCL peers and
address owners it hands to ``link_and_rank`` are kept; then each version links them, alternating
(old, new, old, new), in this process. Prints the CPU seconds of each call and whether both
versions' results are identical (same rows, same order, same links).
"""
from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    dest, oldfile = Path(argv[0]), argv[1]
    from forensics.db import open_bundle
    from forensics.detect import causality as new
    from forensics.engine.reduce import reduce_findings

    spec = importlib.util.spec_from_file_location("old_causality", oldfile)
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    kept: dict = {}
    inner = new.link_and_rank

    def keep(findings, peers=None, addr_hosts=None):
        kept.update(f=findings, p=peers, a=addr_hosts)
        return inner(findings, peers, addr_hosts)

    new.link_and_rank = keep
    outs = json.loads((dest / "outputs.json").read_text())
    b = open_bundle(dest, derive="never")
    reduce_findings(b, outs)
    f, p, a = kept["f"], kept["p"], kept["a"]
    old_peers = old.Peers(p.comms) if hasattr(old, "Peers") else p
    results = {}
    for _ in range(2):
        for name, fn, peers in (("old", old.link_and_rank, old_peers), ("new", inner, p)):
            c = time.process_time()
            results[name] = fn(f, peers, a)
            print(f"{name}: {time.process_time() - c:.3f} CPU s, {f.height} findings, "
                  f"{int(results[name]['caused_by'].is_not_null().sum())} linked", flush=True)
    print("identical:", results["old"].equals(results["new"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
