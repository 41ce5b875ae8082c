"""Build a single-file zipapp of the collector: ``python3 forensics-collect.pyz --duration 60``.

It holds only the standard-library parts (``forensics/__init__.py``, ``forensics/layout.py``,
``forensics/descriptor.py``, ``forensics/atomic.py``, ``forensics/collect/``, and of
``forensics/sources/`` its ``__init__.py`` and the sources' descriptors ``*_spec.py``, which say
what to collect), so it runs with any
Python >= 3.8 on a node where the package is not installed. Standard library only, Python 3.8 syntax.
"""
from __future__ import annotations

import os
import pathlib
import time
import zipfile

from forensics.atomic import atomic_path

MAIN = ("# forensics collect, packaged as a zipapp\n"
        "import sys\n"
        "if sys.version_info < (3, 8):\n"
        "    sys.exit('forensics collect needs Python 3.8 or newer')\n"
        "from forensics.collect.main import main\n"
        "sys.exit(main())\n")
SHEBANG = b"#!/usr/bin/env python3\n"


def _sources():
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    yield os.path.join(pkg, "__init__.py"), "forensics/__init__.py"
    yield os.path.join(pkg, "layout.py"), "forensics/layout.py"
    yield os.path.join(pkg, "descriptor.py"), "forensics/descriptor.py"
    yield os.path.join(pkg, "atomic.py"), "forensics/atomic.py"
    src = os.path.join(pkg, "sources")
    yield os.path.join(src, "__init__.py"), "forensics/sources/__init__.py"
    for name in sorted(os.listdir(src)):
        if name.endswith("_spec.py"):
            yield os.path.join(src, name), "forensics/sources/" + name
    coll = os.path.join(pkg, "collect")
    for name in sorted(os.listdir(coll)):
        if name.endswith(".py"):
            yield os.path.join(coll, name), "forensics/collect/" + name


def build(out):
    """Write the zipapp to `out` atomically and make it executable; returns its path."""
    out = os.path.abspath(str(out))
    with atomic_path(out, prefix=".forensics-", suffix=".pyz.partial", mode=0o755) as tmp, open(tmp, "wb") as fh:
        fh.write(SHEBANG)
        with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            stamp = time.localtime()[:6]
            zf.writestr(zipfile.ZipInfo("__main__.py", stamp), MAIN)
            for src, arc in _sources():
                with open(src, "rb") as f:
                    zf.writestr(zipfile.ZipInfo(arc, stamp), f.read())
    return pathlib.Path(out)
