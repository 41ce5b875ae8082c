"""Same results, cheaper? Runs each detector and view of this checkout and of another commit on the
same opened bundles, compares their rows (every column, in a canonical order; exactly, except that
floating-point values may differ in their last bits, ``FLOAT_RTOL``: DuckDB sums a group's values
in whatever order its threads meet them, so two runs of one query already differ there) and times
both sides (CPU seconds of this process, DuckDB's threads included).

    python benchmarks/detect_equiv.py --base main BUNDLE... [--cache-dir DIR] [--only nvlink_errors,ib_port_summary]

The other commit's SQL is read with ``git show``: its detectors replace this checkout's text, and
its view files are run with each view and macro they define renamed ``base_<name>`` (the views
and macros of other files keep this checkout's definitions, so a difference is the file's own). Setup scripts (``_*.sql``) run once,
from this checkout, before both. A setup script named in ``--only`` (``_host_windows``) is run again
from this checkout, then the other commit's text of it with each table it creates renamed
``base_<table>``, and every table either side creates is compared. Exit 1 when any result differs.
"""
from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def git_show(rev: str, path: str) -> str | None:
    res = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True)
    return res.stdout if res.returncode == 0 else None


def changed_files(rev: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(ROOT), "diff", "--name-only", rev, "--", "queries/detectors", "queries/views"],
                         capture_output=True, text=True, check=True).stdout
    return [p for p in out.split() if p.endswith(".sql")]


FLOAT_RTOL = 1e-9  # about 2^-30: far above the rounding of a sum's order, far below any threshold


def canonical(df):
    import polars as pl

    df = df.with_columns([(pl.col(c).list.join("\x1f") if isinstance(t, pl.List) else pl.col(c)).cast(pl.String)
                          for c, t in df.schema.items() if not t.is_numeric()])
    return df.sort(df.columns, nulls_last=True)


def same(new, old) -> bool:
    """Whether two results hold the same rows: same schema; in canonical order (floats rounded to 9
    significant digits for the order), every non-float column equal and every float within
    FLOAT_RTOL of the other side's (NaN and null where the other has them)."""
    import numpy as np
    import polars as pl

    if new.schema != old.schema or new.height != old.height:
        return False
    floats = [c for c, t in new.schema.items() if t.is_float()]

    def ordered(df):  # the floats rounded for the sort, their values kept (last, so they order only ties)
        return canonical(df.with_columns(pl.col(c).alias(f"__raw_{c}") for c in floats)
                         .with_columns(pl.col(c).round_sig_figs(9) for c in floats))

    a, z = ordered(new), ordered(old)
    others = [c for c in new.columns if c not in floats]
    if not a.select(others).equals(z.select(others)):
        return False
    return all(np.allclose(a.get_column(f"__raw_{c}").to_numpy().astype(float), z.get_column(f"__raw_{c}").to_numpy().astype(float),
                           rtol=FLOAT_RTOL, atol=0.0, equal_nan=True) for c in floats)


def _created(sql: str) -> list[str]:
    return list(dict.fromkeys(re.findall(r"CREATE OR REPLACE TEMP (?:TABLE|VIEW) (\w+)", sql)))


def compare_setup(b, name: str, base: str, path: str) -> int:
    """Run setup script `name` of this checkout, then the base's with its tables renamed base_<table>;
    print each table's rows, whether they are identical, and both sides' CPU seconds; 1 when any differs."""
    new_text = (ROOT / "queries" / "detectors" / f"{name}.sql").read_text()
    old_text = git_show(base, f"queries/detectors/{name}.sql") or ""
    tables = _created(new_text)
    old_tables = _created(old_text)
    for t in old_tables:
        old_text = re.sub(rf"\b{re.escape(t)}\b", f"base_{t}", old_text)
    c0 = cpu()
    b.con.execute(new_text)
    c1 = cpu()
    if old_text.strip():
        b.con.execute(old_text)
    c2 = cpu()
    print(f"{Path(path).name} setup {name}: CPU s this {c1 - c0:.2f} / {base} {c2 - c1:.2f}", flush=True)
    differ = 0
    for t in list(dict.fromkeys(tables + old_tables)):
        if t not in tables or t not in old_tables:
            print(f"  {t}: only {'this checkout' if t in tables else base} creates it")
            continue
        new = b.con.sql(f"SELECT * FROM {t}").pl()
        old = b.con.sql(f"SELECT * FROM base_{t}").pl()
        ok = same(new, old)
        differ |= not ok
        print(f"  {t}: {new.height} rows, {'identical' if ok else f'DIFFERENT (base {old.height} rows)'}", flush=True)
    return differ


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundles", nargs="+")
    ap.add_argument("--base", default="main", help="compare with where this branch left it (default main)")
    ap.add_argument("--cache-dir")
    ap.add_argument("--only", default="", help="comma-separated detector or view names (default: the files that differ)")
    args = ap.parse_args(argv)

    import polars as pl

    from forensics.db import open_bundle
    from forensics.detect import engine
    from forensics.detect.rules import parse_rule, prepare, rules

    # (the fork point: files main gained since this branch left it are not this change's)
    args.base = subprocess.run(["git", "-C", str(ROOT), "merge-base", args.base, "HEAD"], capture_output=True, text=True,
                               check=True).stdout.strip()[:12]
    files = changed_files(args.base)
    names = [n for n in args.only.split(",") if n] or [Path(p).stem for p in files if "/detectors/" in p] + [
        m for p in files if "/views/" in p and (ROOT / p).exists()
        for m in re.findall(r"CREATE OR REPLACE VIEW (?:raw\.)?(\w+)", (ROOT / p).read_text())]
    differ = 0
    for path in args.bundles:
        b = open_bundle(path, cache_dir=args.cache_dir, derive="lazy", confined=False)
        prepare(b.con, b.cached)
        by_name = {r.name: r for r in rules()}
        for name in names:
            if name.startswith("_"):  # a setup script: each table it creates, this checkout's and the base's
                differ += compare_setup(b, name, args.base, path)
                continue
            if name in by_name:  # a detector: this checkout's rule, then the base's text in its place
                rule = by_name[name]
                old_text = git_show(args.base, f"queries/detectors/{name}.sql")
                c0 = cpu()
                new = engine.run_rule(b, rule)
                c1 = cpu()
                tmp = Path("/tmp") / f"detect_equiv_{name}.sql"
                tmp.write_text(old_text)
                old_rule = parse_rule(tmp)
                old_rule.name = name
                c2 = cpu()
                old = engine.run_rule(b, old_rule)
                c3 = cpu()
            else:  # a view: the base's definition under the name base_<view>
                vfile = next((p for p in (ROOT / "queries" / "views").glob("*.sql") if re.search(
                    rf"VIEW\s+(raw\.)?{re.escape(name)}\b", p.read_text())), None)
                if vfile is None:
                    print(f"{name}: neither a detector nor a view of this checkout", file=sys.stderr)
                    return 2
                old_text = git_show(args.base, f"queries/views/{vfile.name}")
                # every view and macro the file defines gets the prefix, and so do the uses of them
                # in it (a view of the file reading the file's macro reads the base's macro)
                for defined in set(re.findall(r"CREATE OR REPLACE (?:VIEW|MACRO) (?:raw\.)?(\w+)", old_text)):
                    old_text = re.sub(rf"\b{re.escape(defined)}\b", f"base_{defined}", old_text)
                b.con.execute(old_text)
                c0 = cpu()
                new = b.con.sql(f"SELECT * FROM {name}").pl()
                c1 = cpu()
                c2 = cpu()
                old = b.con.sql(f"SELECT * FROM base_{name}").pl()
                c3 = cpu()
            ok = same(new, old)
            differ += not ok
            print(f"{Path(path).name} {name}: {new.height} rows, {'identical' if ok else 'DIFFERENT'}; "
                  f"CPU s this {c1 - c0:.2f} / {args.base} {c3 - c2:.2f}", flush=True)
            if not ok:
                print(f"  schema this {dict(new.schema)}\n  schema base {dict(old.schema)}")
                a, z = canonical(new), canonical(old)
                cols = [c for c in a.columns if c in z.columns and (a.height != z.height or not a[c].equals(z[c]))]
                with pl.Config(fmt_str_lengths=400, tbl_width_chars=400):
                    print(pl.concat([a.select(cols).with_columns(pl.lit("this").alias("_side")),
                                     z.select(cols).with_columns(pl.lit("base").alias("_side"))], how="diagonal_relaxed")
                          .head(20))
        b.close()
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
