"""Recognition reads the first 64 KiB of every input with each source's sniffer, so a sniffer whose pattern
backtracks over a long run of characters is a time bomb any bundle can set off: NCCL's line pattern tried the
header's host at every position of a run, and one 60,000-character line of letters took 41 CPU s (a line of
5,000-digit numbers 3.5 s) per file. Every sniffer must read such heads in bounded time."""
from __future__ import annotations

import time

import pytest

from forensics import sources

HEADS = {
    "letters": b"x" * 60_000 + b"\n",
    "digits": (b"9" * 5_000 + b" ") * 12 + b"\n",
    "host-like": b"a1:" * 20_000 + b"\n",
    "words": b"a " * 30_000 + b"\n",
    "brackets": b"[" * 60_000 + b"\n",
    "dots": b"Port:" + b"." * 60_000 + b"\n",
}


@pytest.mark.parametrize("name", sorted(sources.registry()))
def test_sniffer_reads_a_head_of_long_runs_in_bounded_time(name):
    mod = sources.registry()[name]
    for kind, head in HEADS.items():
        t = time.process_time()
        mod.sniff(head)
        took = time.process_time() - t
        assert took < 2.0, f"{name} sniffs a 60 KB head of {kind} in {took:.1f} CPU s"


# Lines made only of one paste mark: the elision and fence patterns once had a run of comment marks ("#+") inside
# a repeated group, so a line of 24 "#" took 8 CPU s to recognise and each more "#" doubled it (a report banner of
# 80 "#" never finished); a long run of "-" is quadratic in Python's backtracking re ("-- snip --" and the marks
# both take it: 100 KB, 219 CPU s). Recognition of such heads, and the parse of them, is bounded.
MARK_HEADS = {f"{chr(c)} x{n}": (bytes([c]) * n + b"\n") * 3 + b"node 0 cpus: 0 1\n"
              for c in b"#%;-*/>|+~`" for n in (28, 80)}
MARK_HEADS.update({f"{chr(c)} x60000": bytes([c]) * 60_000 + b"x\n" for c in b"#%;-*/>|+~`"})


@pytest.mark.parametrize("kind", sorted(MARK_HEADS))
def test_recognition_of_lines_of_paste_marks_is_bounded(kind):
    head = MARK_HEADS[kind]
    t = time.process_time()
    sources.recognise_pasted(head)
    for name in ("numactl", "dmesg", "nccl"):
        sources.paste_prefix(name, head)
    took = time.process_time() - t
    assert took < 2.0, f"recognising a head of {kind} took {took:.1f} CPU s"
