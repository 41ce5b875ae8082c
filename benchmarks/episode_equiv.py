"""The episode grouping, old against new, every row: the episode views at several thresholds (this
checkout's queries/views/5[056]_*.sql against BASE's, each BASE view and macro renamed base_<name>),
and the detectors that call flag_run() with this checkout's flag_run and with BASE's (CPU seconds of
each side, two runs each).

    python benchmarks/episode_equiv.py BASE BUNDLE... [--cache-dir DIR]

Exit 1 when any result differs (floats compared exactly; a line says when only the last bits of
averages differ, which summation order decides).
"""
from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

VIEW_FILES = ("50_gpu_episodes.sql", "55_disk_episodes.sql", "56_iowait_episodes.sql")
QUERIES = ("gpu_episodes", "disk_saturation(0)", "disk_saturation(20)", "disk_saturation(50)", "disk_episodes",
           "iowait_above(0)", "iowait_above(0.5)", "iowait_above(3)", "iowait_episodes")
FLAG_RUN_RULES = ("pfc_storm", "busy_but_slow", "straggler", "throughput_drop")


def cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def git_show(rev: str, path: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True,
                          check=True).stdout


def renamed(text: str) -> str:
    """`text` with every view and macro it defines (and each use of them) prefixed base_."""
    for name in set(re.findall(r"CREATE OR REPLACE (?:VIEW|MACRO) (?:raw\.)?(\w+)", text)):
        text = re.sub(rf"\b{re.escape(name)}\b", f"base_{name}", text)
    return text


def compare(new, old) -> str:
    import polars as pl
    from detect_equiv import canonical

    if new.schema == old.schema and canonical(new).equals(canonical(old)):
        return "identical"
    if new.schema != old.schema or new.height != old.height:
        return f"DIFFERENT ({new.height} rows / base {old.height})"
    floats = [c for c, t in new.schema.items() if t == pl.Float64]
    key = [c for c in new.columns if c not in floats]
    a, z = new.sort(key, nulls_last=True), old.sort(key, nulls_last=True)
    if not a.select(key).equals(z.select(key)):
        return "DIFFERENT (non-float columns)"
    rel = max((((a[c] - z[c]).abs() / z[c].abs().clip(1e-300)).max() or 0.0) for c in floats)
    return f"DIFFERENT (non-float columns identical; floats: largest relative difference {rel:.1e})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("bundles", nargs="+")
    ap.add_argument("--cache-dir")
    args = ap.parse_args(argv)

    from forensics.db import open_bundle
    from forensics.detect import engine
    from forensics.detect.rules import prepare, rules

    old_macros = git_show(args.base, "queries/views/00_macros.sql")
    old_flag_run = re.search(r"CREATE OR REPLACE MACRO flag_run\(.*?;", old_macros, re.S).group(0)
    differ = 0
    for path in args.bundles:
        b = open_bundle(path, cache_dir=args.cache_dir, derive="lazy", confined=False)
        name = Path(path).name
        for f in VIEW_FILES:
            b.con.execute(renamed(git_show(args.base, f"queries/views/{f}")))
        for q in QUERIES:
            verdict = compare(b.con.sql(f"SELECT * FROM {q}").pl(), b.con.sql(f"SELECT * FROM base_{q}").pl())
            differ += verdict != "identical"
            print(f"{name} {q}: {verdict}", flush=True)
        prepare(b.con, b.cached)
        by_name = {r.name: r for r in rules()}
        new_flag_run = b.con.sql("SELECT macro_definition FROM duckdb_functions() "
                                 "WHERE function_name = 'flag_run'").fetchall()[0][0]
        out = {}
        for side in ("this", "base", "this", "base"):
            b.con.execute(old_flag_run if side == "base" else f"CREATE OR REPLACE MACRO flag_run(flag, part, ord) AS {new_flag_run}")
            for rule in FLAG_RUN_RULES:
                c0 = cpu()
                df = engine.run_rule(b, by_name[rule])
                out.setdefault((side, rule), []).append((df, cpu() - c0))
        for rule in FLAG_RUN_RULES:
            (new, *_), (old, *_) = out[("this", rule)][0], out[("base", rule)][0]
            verdict = compare(new, old)
            differ += verdict != "identical"
            t = " ".join(f"{s:.2f}" for _, s in out[("this", rule)])
            u = " ".join(f"{s:.2f}" for _, s in out[("base", rule)])
            print(f"{name} {rule} (flag_run): {new.height} findings, {verdict}; CPU s this {t} / base {u}", flush=True)
        b.close()
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
