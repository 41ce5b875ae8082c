"""Every docstring example in the package runs and prints what it says (the examples are the
package's own small documentation, and nothing else runs them: a stale one is a wrong answer to a reader)."""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import forensics


def _modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(forensics.__path__, "forensics."):
        spec = importlib.util.find_spec(info.name)
        origin = getattr(spec, "origin", None) or ""
        if origin.endswith(".py"):
            with open(origin, encoding="utf-8") as fh:
                if ">>> " not in fh.read():
                    continue
            tests = doctest.DocTestFinder().find(importlib.import_module(info.name))
            if any(not e.options.get(doctest.SKIP) for t in tests for e in t.examples):
                names.append(info.name)  # (">>> " inside a string, or only skipped examples: nothing to run)
    return sorted(names)


MODULES = _modules_with_examples()


def test_some_modules_have_examples():
    assert "forensics.simulate" in MODULES and len(MODULES) >= 10


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    mod = importlib.import_module(name)
    failures, tried = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS,
                                      report=True, verbose=False)
    assert tried > 0, name
    assert failures == 0, f"{name}: {failures} of {tried} examples failed (run with -s to see them)"
