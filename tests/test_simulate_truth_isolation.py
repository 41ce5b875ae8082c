"""Detection and the SQL layer never read the simulator's ground truth (truth/labels.json).

Checked in the source: no string literal naming the truth folder or labels.json, and no use of
layout.TRUTH_DIR, in forensics/detect, forensics/db (module or package), forensics/analysis.py,
forensics/report and queries/. Docstrings may mention the truth (forensics/detect/evaluate.py
explains that it scores findings against labels handed to it by benchmarks and tests).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AREAS = ["forensics/detect", "forensics/db", "forensics/db.py", "forensics/analysis.py", "forensics/report", "queries"]
BAD = re.compile(r"(^|[/\\'\"\s(])truth([/\\]|$)|labels\.json", re.I)


def _files():
    for area in AREAS:
        p = ROOT / area
        if p.is_file():
            yield p
        elif p.is_dir():
            yield from sorted(x for x in p.rglob("*") if x.suffix in (".py", ".sql"))


def _docstrings(tree) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def test_no_code_opens_truth():
    checked = 0
    offenders = []
    for path in _files():
        text = path.read_text(errors="replace")
        checked += 1
        if path.suffix == ".sql":
            if BAD.search(text):
                offenders.append(str(path))
            continue
        tree = ast.parse(text)
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                if BAD.search(node.value):
                    offenders.append(f"{path}:{node.lineno}")
            elif isinstance(node, (ast.Name, ast.Attribute)):
                name = node.id if isinstance(node, ast.Name) else node.attr
                if name == "TRUTH_DIR":
                    offenders.append(f"{path}:{node.lineno}")
            elif isinstance(node, ast.ImportFrom) and any(a.name == "TRUTH_DIR" for a in node.names):
                offenders.append(f"{path}:{node.lineno}")
    assert checked > 5
    assert offenders == []


def test_the_check_would_catch_a_reader(tmp_path):
    src = 'import json\ndef f(root):\n    return json.load(open(root / "truth" / "labels.json"))\n'
    tree = ast.parse(src)
    hits = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and BAD.search(n.value)]
    assert len(hits) == 2
