"""Findings must not depend on thread scheduling: DuckDB aggregates rows in parallel, so a list()/string_agg()
without an order returns its items in whatever order the threads met them, and a finding's evidence (a list
of tasks, ports, directions, keys) changed from run to run while saying the same thing (seen once as a
different JSON digest of the same 220 findings on a 64-node bundle). Every such aggregate in queries/ orders
its items (ORDER BY inside the call) or is sorted around it (list_sort(...)). This reads the SQL text, so a
new unordered aggregate fails here before it makes a run irreproducible."""
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
