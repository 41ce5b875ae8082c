"""Map and reduce of one analysis on an executor (see :mod:`forensics.engine`)."""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from forensics import limits


def groups_of(n: int, slots: int, per_slot: int = 1) -> list[list[int]]:
    """Host indices 0..n-1 in at most `slots` x `per_slot` groups, round robin (hosts of a bundle
    are alike in size, and neighbours in the manifest alike in name: spread them)."""
    k = max(1, min(n, slots * per_slot))
    return [list(range(g, n, k)) for g in range(k) if g < n]


def detect_groups(n: int, slots: int, min_hosts: int) -> list[list[int]]:
    """The detect map's groups of n hosts: one per slot, but none of fewer than `min_hosts` hosts
    (a single group when there are fewer)."""
    return groups_of(n, min(slots, max(1, n // max(1, min_hosts))))


#: hosts per group of the detect map, at least (fewer groups than the executor's slots when there are
#: fewer hosts): each group pays a fixed ~1.3 CPU s (its DuckDB catalog of views, the detectors'
#: setup scripts, planning every host-local detector) on top of 0.02-0.07 s per host (64 x 10 min
#: at 1 GPU; 64 x 60 s at 2 GPUs: benchmarks/map_group_cost.py), against a parse of ~0.3 CPU s per
#: host. The detect step alone (open, detect map, reduce) on the 64-node x 10 min simulated bundle,
#: tables parsed, in one process, A B B A, load 6-11 (benchmarks/split_cost.py): one group of 64
#: hosts 3.98-4.59 CPU s, two of 32 5.15-5.72, the local engine 3.59-3.93
#: (benchmarks/results/fleet_scale-2026-12-07-b.md). So 64 hosts: at 64 nodes the split's detection
#: costs within 0.2-0.7 s of the local engine's (a second group was +1.2-1.4 CPU s, ~5% of the whole
#: analysis), and past that the fixed part stays near 6% of a group's map work
MIN_GROUP_HOSTS = 64


def input_is_small(root, hosts: list[str], plan=None, least: int | None = None) -> bool:
    """Whether the raw data of `hosts` under `root` (or in the archive's member `plan`) is below
    `least` bytes, by default the local ingest's PARALLEL_MIN_BYTES, below which the local engine
    parses in its own process: then each map runs as a single task, so that both engines do the
    same work on small inputs (on 64 nodes x 30 s, two groups cost a second worker's imports, a
    second DuckDB catalog and, from an archive, a second stream of it: benchmarks/results/fleet_scale-2026-12-07.md)."""
    from forensics.ingest.archive import read_plan
    from forensics.ingest.pool import PARALLEL_MIN_BYTES, input_bytes

    least = PARALLEL_MIN_BYTES if least is None else least
    if least <= 0:
        return False
    if plan is None:
        plan = read_plan(Path(root), hosts)
    return input_bytes(Path(root), hosts, plan) < least


class MapReduce:
    """An engine on `executor` (:mod:`forensics.engine.executors`). ``timings`` holds the wall seconds
    of each step of the last analysis (parse, detect_map, reduce), the reduce's CPU seconds
    (reduce_cpu) and the map tasks' CPU seconds by step, summed over groups (detect_map_cpu_<step>).
    `min_group_hosts`: hosts per group of the detect map, at least (:data:`MIN_GROUP_HOSTS`).
    `parallel_min_bytes`: below this much raw data both maps run as one task (:func:`input_is_small`;
    None: the local ingest's threshold; 0: never)."""

    def __init__(self, executor, derive: str = "lazy", min_group_hosts: int = MIN_GROUP_HOSTS,
                 parallel_min_bytes: int | None = None):
        self.executor = executor
        self.derive = derive  # the map catalogs' derived relations (forensics.db.derived)
        self.min_group_hosts = max(1, min_group_hosts)
        self.parallel_min_bytes = parallel_min_bytes
        self.timings: dict[str, float] = {}
        self._small: tuple[str, bool] | None = None  # (root, small) of the last input parsed here

    # step 1: parse (the bundle's tables/, as the local ingest writes them)
    def _parse_hosts(self, root: str, hosts: list[str], source, work: str) -> dict:
        from forensics.engine.mapstep import parse_group

        small = input_is_small(root, hosts, None if source is None else source[1], self.parallel_min_bytes)
        self._small = (str(root), small)
        per_slot = 1 if source is not None else 4  # each group of an archive streams the whole archive
        groups = [list(range(len(hosts)))] if small and hosts else groups_of(len(hosts), self.executor.slots, per_slot)
        items = [(root, hosts, g, source, work) for g in groups]
        out: dict = {}
        for part in self.executor.map(parse_group, items):
            out.update(part)
        return out

    def parse(self, target, cache_dir=None, progress=None) -> Path:
        """The tree of the bundle at `target` with its tables parsed on the executor (once: the cache
        keeps them, as for the local engine); returns the tree's root."""
        from forensics.bundle.cache import bundle_root
        from forensics.bundle.errors import BundleError
        from forensics.ingest.run import ingest_bundle, tables_current

        t0 = time.perf_counter()
        root, archive = bundle_root(target, cache_dir)
        if not tables_current(root):
            try:
                ingest_bundle(root, progress=progress, archive=archive, map_hosts=self._parse_hosts)
            except PermissionError as exc:
                raise BundleError(f"{root}: cannot write parsed tables ({exc.strerror})") from None
        self.timings = {"parse": time.perf_counter() - t0}
        return Path(root)

    # steps 2 and 3: host-local detection in the map, the rest in the reduce
    def detect(self, bundle, only=None, since=None, until=None, progress=None, params=None):
        """(findings, errors) of the open `bundle` (all hosts; its clock offsets are the map's);
        `params`: detector parameters by name, the same in the map and the reduce."""
        from forensics.db._build import footers
        from forensics.engine.mapstep import detect_group
        from forensics.engine.reduce import reduce_findings

        hosts = list(bundle.hosts)
        if self._small is not None and self._small[0] == str(bundle.root):
            small = self._small[1]  # (known from this run's parse)
        else:
            small = input_is_small(bundle.root, hosts, least=self.parallel_min_bytes)
        groups = [list(range(len(hosts)))] if small and hosts else \
            detect_groups(len(hosts), self.executor.slots, self.min_group_hosts)
        memory = max(64 << 20, limits.duckdb_memory() // max(1, min(self.executor.slots, len(groups))))
        work = Path(tempfile.mkdtemp(prefix=".map-", dir=bundle.root))  # (where every node reads the bundle)
        try:
            t0 = time.perf_counter()
            members = [[hosts[i] for i in g] for g in groups]
            infos = getattr(bundle, "file_infos", {})  # what the driver read opening the bundle: not read again per group
            items = [(str(bundle.root), m, bundle.clock, str(work / f"g{n}"), only, since, until, memory,
                      1, self.derive, params, footers(infos, frozenset(m))) for n, m in enumerate(members)]
            outputs = self.executor.map(detect_group, items)
            t1, c1 = time.perf_counter(), time.process_time()
            result = reduce_findings(bundle, outputs, only=only, params=params)
            self.timings.update(detect_map=t1 - t0, reduce=time.perf_counter() - t1, reduce_cpu=time.process_time() - c1)
            for o in outputs:  # the map tasks' CPU seconds by step, summed over the groups
                for step, s in o.get("cpu_s", {}).items():
                    self.timings[f"detect_map_cpu_{step}"] = self.timings.get(f"detect_map_cpu_{step}", 0.0) + s
            return result
        finally:
            shutil.rmtree(work, ignore_errors=True)
