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


def test_version_history_comments_list_each_version_once_newest_first():
    # `VERSION = N  # N: what changed; N-1: ...`: the history a reader scans from the top (ethtool's listed
    # 5, 4, 2, 3 and dmesg's said "11: 11:")
    import re
    from pathlib import Path

    seen = 0
    for path in sorted((Path(__file__).parent.parent / "forensics").rglob("*.py")):
        for line in path.read_text().splitlines():
            m = re.match(r"^VERSION = (\d+)\s*#\s*(.*)$", line)
            if not m:
                continue
            seen += 1
            listed = [int(x) for x in re.findall(r"(?:^|; )(\d+): ", m.group(2))]
            assert listed and listed[0] == int(m.group(1)), path
            assert listed == sorted(set(listed), reverse=True), f"{path}: {listed}"
            assert not re.search(r"\b(\d+): \1: ", m.group(2)), path
    assert seen >= 10
