"""The held-out seeds of benchmarks/detection_eval.py are never used by a test (issue 16 item 6)."""
from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
BENCH = TESTS.parent / "benchmarks" / "detection_eval.py"


def test_no_test_uses_a_held_out_seed():
    text = BENCH.read_text()
    seed0 = int(re.search(r"HELDOUT_SEED0 = (\d+)", re.sub(r"DEV_SEED0, HELDOUT_SEED0 = \d+, ", "HELDOUT_SEED0 = ", text)).group(1))
    ncases = 1 + len(re.findall(r'^\s+"?\(?"[a-z0-9_+@]+"', text, re.M)) + 40  # an upper bound on the cases
    held = set(range(seed0, seed0 + ncases))
    long0 = int(re.search(r"LONG_HEALTHY_SEED0 = (\d+)", text).group(1))  # --long-healthy's captures
    held |= set(range(long0, long0 + 40))
    for p in TESTS.rglob("*.py"):
        if p.name == Path(__file__).name:
            continue
        for m in re.finditer(r"seed[\"']?\s*[=:,]\s*[\"']?(\d+)|--seed[\"']?,?\s*[\"']?(\d+)", p.read_text()):
            n = int(m.group(1) or m.group(2))
            assert n not in held, f"{p.name} uses held-out seed {n}"
