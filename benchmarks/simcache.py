"""Simulated bundles cached under benchmarks/data/, reused only when today's simulator with the same arguments
made them.

A bundle is kept next to a sidecar `<name>.made-by.json` holding the digest of the simulator's source (every
module of the `forensics` package that `forensics simulate` can import, found by reading the imports of
forensics/cli/simulate.py and following them, those inside functions included) and the `forensics simulate`
arguments. A bundle whose sidecar is missing or differs is removed and made again: a stale bundle (an older
simulator's, or other arguments under the same file name) silently skews an A/B.

    from simcache import cached_bundle
    path, note = cached_bundle(DATA / "x.tar.zst", ["--scenario", "pfc_storm", ...], make)
    # make(path) writes the bundle; note says which bundle was used, for the report
"""
from __future__ import annotations

import ast
import hashlib
import json
import shutil
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "forensics"
ENTRY = "forensics.cli.simulate"


def _module_file(name: str) -> Path | None:
    """The source file of module `name` of the forensics package (None when it is not one)."""
    parts = name.split(".")
    if parts[0] != "forensics":
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _imports(path: Path, name: str) -> set[str]:
    """forensics modules `path` (module `name`) imports anywhere in it, with their parent packages."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)  # `from pkg import submodule`
    full = set()
    for mod in out:
        parts = mod.split(".")
        full.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return {m for m in full if m.startswith("forensics")}


def simulator_sources(entry: str = ENTRY) -> list[Path]:
    """Every source file of the package that `forensics simulate` can import (the closure of its imports)."""
    seen: dict[str, Path] = {}
    todo = [entry, "forensics"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = _module_file(name)
        if path is None:
            continue
        seen[name] = path
        todo.extend(_imports(path, name) - seen.keys())
    return sorted(set(seen.values()))


def simulator_digest(entry: str = ENTRY) -> str:
    """sha256 of the simulator's sources (relative path and bytes of each)."""
    h = hashlib.sha256()
    for path in simulator_sources(entry):
        h.update(str(path.relative_to(ROOT)).encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".made-by.json")


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def cached_bundle(path: Path, sim_args: list[str], make: Callable[[Path], None],
                  digest: str | None = None) -> tuple[Path, str]:
    """`path` made by today's simulator with `sim_args` (the `forensics simulate` arguments but --out): reused when
    its sidecar says so, else removed and made again by `make(path)`. Returns (path, a sentence for the report)."""
    want = {"simulator_sha256": digest or simulator_digest(), "args": [str(a) for a in sim_args]}
    side = sidecar(path)
    try:
        have = json.loads(side.read_text())
    except (OSError, ValueError):
        have = None
    if have == want and path.exists():
        how = "reused (its sidecar matches this simulator and these arguments)"
    else:
        if path.exists():
            how = ("made again: the cached one " + ("had no sidecar" if have is None else
                   "was made by another simulator" if have.get("simulator_sha256") != want["simulator_sha256"]
                   else "was made with other arguments"))
        else:
            how = "made by this run"
        _remove(path)
        side.unlink(missing_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        make(path)
        if not path.exists():
            raise SystemExit(f"simulate made no {path}")
        side.write_text(json.dumps(want, indent=1) + "\n")
    note = (f"`{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}`, simulator sources "
            f"sha256 {want['simulator_sha256'][:12]}, `forensics simulate {' '.join(want['args'])}`: {how}")
    return path, note
