"""What the parsers' equivalence tests share: two parses of the same bytes compared in full."""
from __future__ import annotations

import random


def assert_same_result(a, b) -> None:
    """`a` and `b` (ParseResults) hold the same line count, meta, unparsed lines and tables, column types
    included (nulls equal): the check a fast reader must pass against the line loop it stands in for."""
    assert a.lines == b.lines
    assert a.meta == b.meta
    assert a.unparsed.equals(b.unparsed, null_equal=True)
    assert a.tables.keys() == b.tables.keys()
    for t in b.tables:
        assert a.tables[t].schema == b.tables[t].schema, t
        assert a.tables[t].equals(b.tables[t], null_equal=True), t


def damage(b: bytes, seed: int, junk: list[bytes], rounds: int, fourth: str) -> bytes:
    """`b` with `rounds` random lines damaged (seeded): a line deleted, a junk line inserted, a word replaced by
    junk, or the `fourth` kind: "tab" (a column gap made a tab) or "twice" (a line repeated: a device more, a
    header again)."""
    rng = random.Random(seed)
    lines = b.split(b"\n")
    for _ in range(rounds):
        i = rng.randrange(len(lines))
        op = rng.randrange(4)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, rng.choice(junk))
        elif op == 2:
            words = lines[i].split(b" ")
            words[rng.randrange(len(words))] = rng.choice(junk)
            lines[i] = b" ".join(words)
        elif fourth == "tab":
            lines[i] = lines[i].replace(b"  ", b" \t", 1)
        else:
            lines.insert(i, lines[i])
    return b"\n".join(lines)


def assert_fast_reads_as_slow(mod, data: bytes, ctxs, monkeypatch) -> None:
    """`mod.parse` of `data` in each context gives the same result through its fast reader (FAST_MIN_LINES 0)
    as through its line loop (the fast reader never taken)."""
    for ctx in ctxs:
        monkeypatch.setattr(mod, "FAST_MIN_LINES", 10**9)
        slow = mod.parse(data, ctx)
        monkeypatch.setattr(mod, "FAST_MIN_LINES", 0)
        fast = mod.parse(data, ctx)
        assert_same_result(fast, slow)
