"""Same results, cheaper? Runs each detector and view of this checkout and of another commit on the
same opened bundles, compares their rows exactly (every column, in a canonical order) and times
both sides (CPU seconds of this process, DuckDB's threads included).

    python benchmarks/detect_equiv.py --base main BUNDLE... [--cache-dir DIR] [--only nvlink_errors,ib_port_summary]

The other commit's SQL is read with ``git show``: its detectors replace this checkout's text, and
its view files are run with each view and macro they define renamed ``base_<name>`` (the views
and macros of other files keep this checkout's definitions, so a difference is the file's own). Setup scripts (``_*.sql``) run once,
from this checkout, before both. Exit 1 when any result differs.
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


def canonical(df):
    import polars as pl

    df = df.with_columns([(pl.col(c).list.join("\x1f") if isinstance(t, pl.List) else pl.col(c)).cast(pl.String)
                          for c, t in df.schema.items() if not t.is_numeric()])
    return df.sort(df.columns, nulls_last=True)


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
    names = [n for n in args.only.split(",") if n] or [Path(p).stem for p in files if "/detectors/" in p and not Path(p).name.startswith("_")] + [
        m for p in files if "/views/" in p and (ROOT / p).exists()
        for m in re.findall(r"CREATE OR REPLACE VIEW (?:raw\.)?(\w+)", (ROOT / p).read_text())]
    differ = 0
    for path in args.bundles:
        b = open_bundle(path, cache_dir=args.cache_dir, derive="lazy", confined=False)
        prepare(b.con, b.cached)
        by_name = {r.name: r for r in rules()}
        for name in names:
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
            same = new.schema == old.schema and canonical(new).equals(canonical(old))
            differ += not same
            print(f"{Path(path).name} {name}: {new.height} rows, {'identical' if same else 'DIFFERENT'}; "
                  f"CPU s this {c1 - c0:.2f} / {args.base} {c3 - c2:.2f}", flush=True)
            if not same:
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
