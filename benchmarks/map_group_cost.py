"""What one group of the Ray engine's detect map costs, against its number of hosts.

    nice -n 15 python benchmarks/map_group_cost.py PARSED_BUNDLE_DIR [--sizes 1,8,32]

On a bundle already parsed (a cache entry's folder, with tables/), runs
:func:`forensics.engine.mapstep.detect_group` in this process over the first N hosts for each size,
with the footer facts its driver read (as the engine passes them) and without (each footer read
again), and prints the CPU seconds of each step. The fixed part (a group of one host) and the part
per host set the engine's MIN_GROUP_HOSTS (forensics/engine/run.py).
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--sizes", default="1,8,32")
    args = ap.parse_args(argv)
    from forensics.db import open_bundle
    from forensics.db._build import footers
    from forensics.engine.mapstep import detect_group

    with open_bundle(args.root, derive="lazy") as b:
        for known in (False, True):
            for n in (int(x) for x in args.sizes.split(",")):
                hosts = b.hosts[:n]
                facts = footers(b.file_infos, frozenset(hosts)) if known else None
                c0 = time.process_time()
                with tempfile.TemporaryDirectory(dir=b.root) as out:
                    o = detect_group(str(b.root), hosts, b.clock, out, derive="lazy", known=facts)
                print(f"{'footers given' if known else 'footers read'}: {n} hosts, {time.process_time() - c0:.3f} CPU s, "
                      f"by step {o['cpu_s']}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
