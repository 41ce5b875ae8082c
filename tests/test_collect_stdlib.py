"""The collector runs on any node: standard library only, Python 3.8 syntax, importable without the
parsing dependencies, and packaged as a single-file zipapp."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COLLECT_FILES = sorted((ROOT / "forensics" / "collect").glob("*.py")) + [ROOT / "forensics" / "layout.py",
                                                                         ROOT / "forensics" / "__init__.py",
                                                                         ROOT / "forensics" / "descriptor.py",
                                                                         ROOT / "forensics" / "atomic.py",
                                                                         ROOT / "forensics" / "sources" / "__init__.py"] \
    + sorted((ROOT / "forensics" / "sources").glob("*_spec.py"))  # the sources' descriptors: what to collect
BLOCK = "polars duckdb pyarrow sklearn zstandard typer rich numpy pandas".split()


@pytest.mark.parametrize("path", COLLECT_FILES, ids=lambda p: p.name)
def test_python38_syntax(path):
    ast.parse(path.read_text(), filename=str(path), feature_version=(3, 8))


@pytest.mark.parametrize("path", COLLECT_FILES, ids=lambda p: p.name)
def test_imports_standard_library_only(path):
    allowed_own = {"forensics", "forensics.layout", "forensics.collect", "forensics.descriptor", "forensics.atomic",
                   "forensics.sources"}
    tree = ast.parse(path.read_text())
    # in the collector every import counts; in the package's own modules only those run at import time
    nodes = ast.walk(tree) if path.parent.name == "collect" else iter(tree.body)
    for node in nodes:
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if top == "forensics":
                assert name in allowed_own or name.startswith("forensics.collect") or (
                    name.startswith("forensics.sources.") and name.endswith("_spec")), f"{path.name} imports {name}"
            else:
                assert top in sys.stdlib_module_names or top == "__future__" or top == "zstandard", f"{path.name} imports {name}"


BLOCKER = ("import sys\n"
           f"for m in {BLOCK!r}: sys.modules[m] = None\n")


def test_import_and_collect_without_parsing_dependencies(tmp_path):
    code = BLOCKER + (
        "import forensics.collect.main, forensics.collect.specs, forensics.collect.node, forensics.collect.proc\n"
        "import forensics.collect.tarball, forensics.collect.zipapp\n"
        "sys.exit(forensics.collect.main.main(['--duration', '0', '--out', sys.argv[1], '--quiet']))\n")
    out = tmp_path / "b.tar"
    r = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True, timeout=120,
                       env={"PATH": str(tmp_path), "PYTHONPATH": str(ROOT)}, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with tarfile.open(out) as tar:
        names = tar.getnames()
        assert names[0] == "manifest.json" and not [n for n in names if n.startswith("tables/")]
        man = json.loads(tar.extractfile("manifest.json").read())
    assert man["format_version"] == 1 and man["kind"] == "node"


def test_zipapp_runs_without_the_package(tmp_path):
    from forensics.collect.zipapp import build

    pyz = build(tmp_path / "forensics-collect.pyz")
    assert pyz.stat().st_size < 200_000
    out = tmp_path / "n.tar.gz"
    # -S: no site-packages, so neither the installed package nor its dependencies can be imported
    r = subprocess.run([sys.executable, "-S", str(pyz), "--duration", "0", "--out", str(out), "--host", "zip-node"],
                       capture_output=True, text=True, timeout=120, env={"PATH": str(tmp_path)}, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "tables will be built" in r.stderr
    with tarfile.open(out) as tar:
        assert "hosts/zip-node/host.json" in tar.getnames()
    r = subprocess.run([sys.executable, "-S", str(pyz), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--nccl-log" in r.stdout
