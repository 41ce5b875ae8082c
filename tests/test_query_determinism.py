"""Findings must not depend on thread scheduling: DuckDB aggregates rows in parallel, so a list()/string_agg()
without an order returns its items in whatever order the threads met them, and a finding's evidence (a list
of tasks, ports, directions, keys) changed from run to run while saying the same thing (seen once as a
different JSON digest of the same 220 findings on a 64-node bundle). Every such aggregate in queries/ orders
its items (ORDER BY inside the call) or is sorted around it (list_sort(...)). This reads the SQL text, so a
new unordered aggregate fails here before it makes a run irreproducible. The same holds for a sum of doubles
(avg, sum, stddev, ...): its last bits depend on the order of its terms (see "float aggregates" below)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

QUERIES = Path(__file__).resolve().parent.parent / "queries"
AGG = re.compile(r"(?<![\w.])(list|string_agg|array_agg|group_concat)\(", re.IGNORECASE)
SORTED = re.compile(r"list_sort\((?:\s*(?:list_distinct|flatten)\()*\s*$", re.IGNORECASE)


def _call(text: str, open_at: int) -> str:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[open_at:i + 1]
    return text[open_at:]


def unordered(sql: str) -> list[str]:
    sql = re.sub(r"--[^\n]*", "", sql)  # comments
    out = []
    for m in AGG.finditer(sql):
        body = _call(sql, m.end() - 1)
        if "order by" in body.lower() or SORTED.search(sql[max(0, m.start() - 80):m.start()]):
            continue
        line = sql.count("\n", 0, m.start()) + 1
        out.append(f"line {line}: {m.group(1)}{body[:80]}")
    return out


def test_the_check_sees_an_unordered_aggregate():
    assert unordered("SELECT list(DISTINCT task) FROM t") and unordered("SELECT string_agg(k, ',') FROM t")
    assert not unordered("SELECT list(task ORDER BY task), list_sort(list_distinct(flatten(list(d)))), list_sort(list(x)) FROM t")


@pytest.mark.parametrize("path", sorted(QUERIES.rglob("*.sql")), ids=lambda p: str(p.relative_to(QUERIES)))
def test_aggregated_lists_have_an_order(path):
    assert unordered(path.read_text()) == []


# --- float aggregates -------------------------------------------------------------------------------
# A float sum's last bits depend on the order its terms are added in, and DuckDB's threads add a group's
# rows in the order they meet them: busy_but_slow's DCGM means (0.5685 -> 0.568 or 0.569 once rounded)
# differed between two runs of one 64-node bundle (27e0318). So every aggregate that adds doubles
# (avg, sum, the variances, correlations and regressions) orders its input: avg(x ORDER BY x) adds the
# same terms in the same order whatever the threads did. Integer sums and averages are exact (DuckDB
# adds integers in a 128-bit integer) and need no order: for those the check asks DuckDB for the
# argument's type (bit_count() accepts integers only), on the catalog of a small simulated bundle, so a
# column that turns DOUBLE later is seen. The variances and the like compute in doubles whatever their
# input: always ordered. median/quantile/mad pick values from the sorted input: no order needed.
ADDS = re.compile(r"(?<![\w.])(avg|mean|favg|sum|fsum|sumkahan|kahan_sum|sum_no_overflow|product|stddev|stddev_samp|"
                  r"stddev_pop|var_samp|var_pop|variance|corr|covar_pop|covar_samp|regr_\w+|kurtosis|kurtosis_pop|"
                  r"skewness|approx_quantile|reservoir_quantile)\(", re.IGNORECASE)
EXACT_ON_INTEGERS = ("avg", "mean", "sum", "fsum")


def float_calls(sql: str) -> list[tuple[str, int, int]]:
    """(name, offset of its "(", offset of its ")") of every call in `sql` that adds values without an
    ORDER BY inside (comments blanked, offsets those of `sql`)."""
    text = re.sub(r"--[^\n]*", lambda m: " " * len(m.group()), sql)
    out = []
    for m in ADDS.finditer(text):
        body = _call(text, m.end() - 1)
        if "order by" not in body.lower():
            out.append((m.group(1).lower(), m.end() - 1, m.end() - 1 + len(body) - 1))
    return out


def integer_probe(sql: str, open_at: int, close_at: int) -> str:
    """`sql` with the call's argument x replaced by (x) + 0 * bit_count(x): binds only where x is an integer."""
    body = sql[open_at + 1:close_at]
    m = re.match(r"\s*(DISTINCT\s+)?", body, re.IGNORECASE)
    arg = body[m.end():]
    return f"{sql[:open_at + 1]}{m.group(1) or ''}({arg}) + 0 * bit_count({arg}){sql[close_at:]}"


def unordered_float_aggregates(con, sql: str, bind) -> list[str]:
    """The calls of `sql` that add doubles without an order; `bind(text)` binds a version of the file on
    `con` (raises duckdb.BinderException when it does not bind)."""
    import duckdb

    out = []
    for name, o, c in float_calls(sql):
        if name in EXACT_ON_INTEGERS:
            try:
                bind(integer_probe(sql, o, c))
                continue  # its argument is an integer: exact in any order
            except duckdb.BinderException:
                pass
        line = sql.count("\n", 0, o) + 1
        out.append(f"line {line}: {name}({' '.join(sql[o + 1:c].split())[:80]})")
    return out


def test_the_float_check_sees_an_unordered_float_aggregate():
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT range AS i, range * 0.5 AS d, range::DOUBLE AS f FROM range(4)")
    assert [n for n, _, _ in float_calls("SELECT avg(d), sum(i ORDER BY i), stddev_samp(i), list_sum(x), median(d) -- sum(q)\n")] \
        == ["avg", "stddev_samp"]

    def bind(text):
        con.sql(text)
    assert unordered_float_aggregates(con, "SELECT sum(i), avg(i) FILTER (WHERE i > 1), sum(sum(i)) OVER () FROM t", bind) == []
    sql = ("SELECT sum(f), avg(d), avg(i / 2), sum(i) FILTER (WHERE i > 0), sum(f ORDER BY f),\n"
           " corr(i, i), sum(sum(f)) OVER (PARTITION BY i) FROM t GROUP BY i")
    bind(sql)
    assert unordered_float_aggregates(con, sql, bind) == [
        "line 1: sum(f)", "line 1: avg(d)", "line 1: avg(i / 2)", "line 2: corr(i, i)", "line 2: sum(sum(f))", "line 2: sum(f)"]


@pytest.fixture(scope="module")
def small_bundle(tmp_path_factory):
    """A small simulated bundle (4 nodes x 2 GPUs, 3 minutes at 2 s: every table the detectors read)."""
    from forensics.simulate import SimConfig, write_bundle

    out = tmp_path_factory.mktemp("determinism") / "straggler.tar"
    write_bundle(SimConfig(scenario="straggler", nodes=4, gpus_per_node=2, duration_s=180, interval_s=2, seed=3,
                           confounders=False), out)
    return out


def _sql_files() -> list[tuple[Path, str, dict | None]]:
    """(file, how it runs, parameters) of every view, detector and named query: "exec" runs as a script
    (CREATE VIEW binds at once), "sql" is one SELECT bound with its default parameters."""
    import datetime as dt

    from forensics.db import named
    from forensics.detect.engine import _params_for
    from forensics.detect.rules import rules, used_params

    out: list[tuple[Path, str, dict | None]] = [(p, "exec", None) for p in sorted((QUERIES / "views").glob("*.sql"))]
    out += [(p, "exec", None) for p in sorted((QUERIES / "detectors").glob("_*.sql"))]
    out += [(QUERIES / "detectors" / f"{r.name}.sql", "sql", _params_for(r, None)) for r in rules()]
    stand_in = {"VARCHAR": "x", "DOUBLE": 1.0, "BIGINT": 1, "BOOLEAN": True,
                "TIMESTAMPTZ": dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)}
    for name, q in named.catalog().items():
        used = used_params(q.sql)
        out.append((QUERIES / f"{name}.sql", "sql", {k: stand_in[p.type] if p.required else p.default
                                                     for k, p in q.params.items() if k in used}))
    return out


def test_every_float_aggregate_has_an_order(small_bundle, tmp_path):
    from forensics.db import open_bundle
    from forensics.detect.rules import prepare

    files = _sql_files()
    fleet = sorted((QUERIES / "fleet").glob("*.sql"))  # (another catalog: read as text, no sum/avg without an order)
    assert {p for p, _, _ in files} | set(fleet) == set(QUERIES.rglob("*.sql"))
    bundle = open_bundle(small_bundle, cache_dir=tmp_path, confined=False)
    try:
        con = bundle.con
        prepare(con, bundle.cached)
        bad = {}
        for path, how, params in files:
            def bind(text, how=how, params=params):
                if how == "sql":
                    con.sql(text, params=params or None)
                    return
                con.execute("BEGIN")
                try:
                    con.execute(text)
                finally:
                    con.execute("ROLLBACK")
            sql = path.read_text()
            bind(sql)  # the file as it is binds (else the probe proves nothing)
            found = unordered_float_aggregates(con, sql, bind)
            if found:
                bad[str(path.relative_to(QUERIES))] = found
        for path in fleet:
            found = [f"{n} at {o}" for n, o, _ in float_calls(path.read_text())]
            if found:
                bad[str(path.relative_to(QUERIES))] = found
    finally:
        bundle.close()
    assert bad == {}


def _shuffled_copy(tables: Path, out: Path, seed: int) -> Path:
    """A parsed bundle of the tables in `tables`, each Parquet file's rows in a random order (`seed`)."""
    import json
    import shutil

    import numpy as np
    import pyarrow.parquet as pq

    shutil.copytree(tables, out / "tables")
    rng = np.random.default_rng(seed)
    meta = json.loads((out / "tables" / "_meta.json").read_text())
    for rel in meta["files"]:
        f = out / "tables" / rel
        t = pq.read_table(f)
        pq.write_table(t.take(rng.permutation(t.num_rows)), f)
        meta["files"][rel] = f.stat().st_size  # (the cache's record of its files: else it parses again)
    (out / "tables" / "_meta.json").write_text(json.dumps(meta))
    return out


def test_findings_do_not_depend_on_row_order_or_threads(small_bundle, tmp_path):
    """`forensics analyze` of one bundle with 1, 4 and 8 DuckDB threads, its tables' rows in three orders:
    one digest of the JSON analysis, and one of every relation of the catalog (views, the detectors'
    window tables). Shuffled rows stand for the order threads meet them in, which a small bundle does
    not vary (one thread reads a host's file): an unordered float mean of the last commit that left one
    (det_host_windows, det_gpu_windows, cpu_signals, ...) gives other last bits here. Each run derives its
    relations afresh (derive="never": no cached Parquet of an earlier run hides a difference)."""
    import hashlib
    import json

    from forensics.analysis import analyze_bundle
    from forensics.db import open_bundle

    parsed = open_bundle(small_bundle, cache_dir=tmp_path / "cache")
    tables = parsed.root / "tables"
    parsed.close()
    findings, relations = {}, {}
    for seed, threads in ((0, 1), (1, 4), (2, 8), (1, 8)):
        root = _shuffled_copy(tables, tmp_path / f"shuffled-{seed}-{threads}", seed)
        bundle = open_bundle(root, derive="never", confined=False)
        try:
            bundle.con.execute(f"SET threads = {threads}")
            j = analyze_bundle(bundle).to_json()
            names = [n for (n,) in bundle.con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema IN ('main', 'temp') ORDER BY 1").fetchall()]
            rows = {n: sorted(map(repr, bundle.con.execute(f'SELECT * FROM "{n}"').fetchall())) for n in names}
        finally:
            bundle.close()
        assert j["findings"] and rows["det_host_windows"]  # (a run that read nothing proves nothing)
        j.pop("bundles")
        findings[(seed, threads)] = hashlib.sha256(json.dumps(j, default=str, sort_keys=True).encode()).hexdigest()[:16]
        for n, r in rows.items():
            relations.setdefault(n, {})[(seed, threads)] = hashlib.sha256(repr(r).encode()).hexdigest()[:16]
    assert len(set(findings.values())) == 1, findings
    assert {n: d for n, d in relations.items() if len(set(d.values())) > 1} == {}


def test_sql_in_the_library_orders_its_float_aggregates():
    """SQL written in Python (forensics/**/*.py string constants, docstrings aside) is held to the same rule as
    queries/, read as text: no avg/sum/stddev/... without an ORDER BY inside (none needs an exemption: an
    integer sum there would carry its ORDER BY too)."""
    import ast

    found = []
    for path in sorted((QUERIES.parent / "forensics").rglob("*.py")):
        tree = ast.parse(path.read_text())
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and ast.get_docstring(n)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                found += [f"{path.relative_to(QUERIES.parent)}:{node.lineno}: {name}" for name, _, _ in float_calls(node.value)]
    assert found == []
