"""`forensics analyze` gives the findings pinned in tests/golden/findings.json (see golden_findings.py):
a refactoring keeps them; a deliberate change of detection regenerates the file with its reason."""
from __future__ import annotations

import pytest

import golden_findings as golden


def test_golden_covers_every_case():
    assert sorted(golden.load()) == sorted(golden.cases())


@pytest.mark.parametrize("case", golden.cases())
def test_findings_match_golden(case, tmp_path_factory, parse_cache):
    work = tmp_path_factory.getbasetemp() / "golden"
    work.mkdir(exist_ok=True)
    expected = golden.load()[case]
    got = golden.findings_of(case, work, parse_cache)  # the samples' tables shared with the CLI tests
    assert got == expected, \
        f"{case}: findings differ from tests/golden/findings.json (python tests/golden_findings.py --diff)"
