"""The package import graph of `forensics/`, read from the code's own import statements.

Every ``import`` and ``from ... import`` in every module counts, whether at the top of the file or
inside a function (a function-level import is a dependency all the same). A package is
``forensics.<name>`` for a folder, or the module itself for a top-level file (``forensics.analysis``).
Prints one line per package with the packages it imports, then the circles (groups of packages
that import each other, directly or through others), then the module-level circles.

    python benchmarks/import_graph.py              # this checkout
    python benchmarks/import_graph.py --root DIR   # another checkout (e.g. a `git worktree` of an old commit)
"""
from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path


def modules(root: Path) -> dict[str, Path]:
    out = {}
    for p in sorted((root / "forensics").rglob("*.py")):
        if "_assets" in p.parts:
            continue
        name = ".".join(p.relative_to(root).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = p
    return out


def imports_of(path: Path, name: str) -> set[str]:
    """Dotted names a module imports (``from a import b`` gives ``a`` and ``a.b``)."""
    tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out |= {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            base = n.module or ""
            if n.level:
                parts = pkg.split(".")[: len(pkg.split(".")) - (n.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            out.add(base)
            out |= {f"{base}.{a.name}" for a in n.names}
    return out


def package(mod: str) -> str:
    return ".".join(mod.split(".")[:2])


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return sorted(found)


def graphs(root: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(package graph, module graph) of the checkout at `root`."""
    mods = modules(root)
    mod_graph = {}
    for name, path in mods.items():
        deps = {m for m in imports_of(path, name) if m in mods and m != name}
        # a module importing its own package's __init__ (or the reverse) is not a dependency between jobs
        mod_graph[name] = {m for m in deps if not (name.startswith(m + ".") or m.startswith(name + "."))}
    pkg_graph: dict[str, set[str]] = {package(m): set() for m in mods if package(m) != "forensics"}
    for a, bs in mod_graph.items():
        for b in bs:
            pa, pb = package(a), package(b)
            if pa != pb and "forensics" not in (pa, pb):
                pkg_graph[pa].add(pb)
    return pkg_graph, mod_graph


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent, help="checkout to read")
    args = ap.parse_args(argv)
    pkg_graph, mod_graph = graphs(args.root)
    short = lambda m: m.removeprefix("forensics.")  # noqa: E731
    width = max(len(short(p)) for p in pkg_graph)
    print(f"package import graph of {args.root.resolve().name}/forensics ({len(mod_graph)} modules)")
    for p in sorted(pkg_graph):
        print(f"  {short(p):<{width}} -> {', '.join(short(q) for q in sorted(pkg_graph[p])) or '(nothing)'}")
    pc, mc = circles(pkg_graph), circles(mod_graph)
    print(f"package circles: {len(pc)}")
    for c in pc:
        print("  " + " <-> ".join(short(m) for m in c))
    print(f"module circles: {len(mc)}")
    for c in mc:
        print("  " + " <-> ".join(short(m) for m in c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
