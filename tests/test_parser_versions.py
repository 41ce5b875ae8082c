"""A parser whose tables change must get a new VERSION (tests/parser_versions.py says why)."""
from __future__ import annotations

import json

from parser_versions import PIN, current, stale


def test_every_source_is_pinned_and_no_table_changed_under_an_old_version():
    pinned = json.loads(PIN.read_text())
    now = current()
    assert sorted(pinned) == sorted(now), "sources added or removed: run `python tests/parser_versions.py`"
    assert stale(pinned, now) == []
    assert pinned == now, "VERSION raised or fixtures re-pinned: run `python tests/parser_versions.py`"


def test_a_changed_table_under_the_same_version_is_refused():
    now = current()
    name = sorted(now)[0]
    before = {**now, name: {**now[name], "expected_sha256": "0" * 64}}
    assert [line.split(":")[0] for line in stale(before, now)] == [name]
    bumped = {**now, name: {**now[name], "version": now[name]["version"] + 1}}
    assert stale(before, bumped) == []  # a raised VERSION lets the new tables in
    assert stale(bumped, now) and "went down" in stale(bumped, now)[0]
