"""The findings `forensics analyze` gives on a fixed set of inputs, pinned in tests/golden/findings.json.

Cases: every bundle in sample_bundles/, small simulated bundles with fixed seeds (4 nodes x 2 GPUs,
3 minutes at 2 s) of the scenarios the samples do not show, and single pasted `ethtool -S` files
from tests/fixtures/ (untimed evidence). Each finding is pinned by what a reader compares: id, kind,
hosts, subject, window, severity and the id it is caused by, in the order analyze ranks them.

A deliberate change of detection (a threshold, a causality rule, the simulator) changes this file:
regenerate it and say in the commit message which findings changed and why:

    .venv/bin/python tests/golden_findings.py            # rewrite tests/golden/findings.json
    .venv/bin/python tests/golden_findings.py --diff     # show what would change
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden" / "findings.json"
FIELDS = ("id", "kind", "hosts", "subject", "start", "end", "severity", "caused_by")

SAMPLES = sorted(p.name.removesuffix(".tar.zst") for p in (REPO / "sample_bundles").glob("*.tar.zst"))
SIMULATED = ("packet_drops", "link_flap", "ecc_remap", "straggler", "numa_misplacement",
             "nccl_misconfig", "pulsing_utilization", "rank_hang")
PASTED = ("ethtool--mlx5-xdp-kernel5.15-nonzero.txt", "ethtool--mlx5-cx4lx-grep-pause-pci.txt",
          "ethtool--bnxt_en-12q-queue-prefixed.txt")


def cases() -> list[str]:
    return ([f"sample/{s}" for s in SAMPLES] + [f"simulated/{s}" for s in SIMULATED]
            + [f"pasted/{p}" for p in PASTED])


def _input(case: str, work: Path) -> tuple[list[Path], dict]:
    group, name = case.split("/", 1)
    if group == "sample":
        return [REPO / "sample_bundles" / f"{name}.tar.zst"], {}
    if group == "simulated":
        from forensics.simulate import SimConfig, write_bundle

        out = work / f"sim-{name}.tar"
        if not out.exists():
            write_bundle(SimConfig(scenario=name, nodes=4, gpus_per_node=2, duration_s=180, interval_s=2, seed=3,
                                   confounders=False), out)  # the quiet world: a refactor check, not a quality one
        return [out], {}
    if group == "pasted":
        return [REPO / "tests" / "fixtures" / "ethtool" / name], {"host": "n1"}
    raise ValueError(case)


def findings_of(case: str, work: Path, cache: Path | None = None) -> list[dict]:
    """The pinned fields of every finding `analyze` gives on `case`, in rank order (tables parsed into
    `cache`, by default work/cache)."""
    from forensics.analysis import analyze_paths

    paths, opts = _input(case, work)
    analysis = analyze_paths(paths, cache_dir=cache or work / "cache", **opts)
    rows = []
    for f in analysis.findings.select(FIELDS).to_dicts():
        f["start"] = f["start"].isoformat() if f["start"] else None
        f["end"] = f["end"].isoformat() if f["end"] else None
        rows.append(f)
    return rows


def load() -> dict[str, list[dict]]:
    return json.loads(GOLDEN.read_text())


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="forensics-golden-") as tmp:
        now = {c: findings_of(c, Path(tmp)) for c in cases()}
    if "--diff" in argv:
        old = load() if GOLDEN.exists() else {}
        for c in sorted(set(old) | set(now)):
            before = {json.dumps(f, sort_keys=True) for f in old.get(c, [])}
            after = {json.dumps(f, sort_keys=True) for f in now.get(c, [])}
            for f in sorted(before - after):
                print(f"{c}: - {f}")
            for f in sorted(after - before):
                print(f"{c}: + {f}")
        return 0
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN.relative_to(REPO)}: {sum(map(len, now.values()))} findings in {len(now)} cases")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "tests"))
    sys.exit(main(sys.argv[1:]))
