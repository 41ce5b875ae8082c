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
