"""forensics.ingest.files.iter_chunks: where chunks are cut, and how much memory cutting them takes.

The cut is defined by the joined bytes (the held-back tail + the block just read): the last newline whose next
line's first byte is known and not one of the source's continuation bytes. The implementation finds it without
joining; `_reference` below is that definition written the plain way, the oracle the chunks are compared with.
"""
from __future__ import annotations

import random
import tracemalloc

import pytest

import forensics.limits as limits
from forensics.ingest.files import iter_chunks
from forensics.sources._base import Truncation, read_capped

DMESG_NO_START = (b" ", b"\t", b"\r", b"\n")


def _reference(data: bytes, chunk_bytes: int, no_start: tuple[bytes, ...], stats: Truncation):
    import io

    out, rest, offset = [], b"", 0
    for block in read_capped(io.BytesIO(data), stats=stats, block=chunk_bytes):
        buf = rest + block
        cut = buf.rfind(b"\n")
        while no_start and cut >= 0 and buf[cut + 1:cut + 2] in no_start + (b"",):
            cut = buf.rfind(b"\n", 0, cut)
        if cut < 0:
            rest = buf
            continue
        out.append((offset, buf[:cut + 1]))
        offset += buf[:cut + 1].count(b"\n")
        rest = buf[cut + 1:]
    if rest:
        out.append((offset, rest))
    return out


@pytest.mark.parametrize("cap", [None, 15, 4])
def test_chunks_are_cut_where_the_joined_bytes_say(monkeypatch, cap):
    if cap is not None:  # long lines cut by read_capped too (a truncation mark inside a block)
        monkeypatch.setattr(limits, "MAX_LINE_BYTES", cap)
    rng = random.Random(cap or 0)
    alphabet = [b"a", b"b", b" ", b"\t", b"\r", b"\n", b"\n"]
    for _ in range(3000):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120)))
        size = rng.randint(1, 30)
        no_start = rng.choice([(), DMESG_NO_START, (b"a",)])
        want_stats, got_stats = Truncation(), Truncation()
        want = _reference(data, size, no_start, want_stats)
        got = list(iter_chunks(data, size, no_start, got_stats))
        assert got == want, (data, size, no_start)
        assert all(type(chunk) is bytes for _, chunk in got)
        assert (got_stats.lines, got_stats.bytes) == (want_stats.lines, want_stats.bytes)
        assert b"".join(chunk for _, chunk in got) == b"".join(chunk for _, chunk in want)


@pytest.mark.parametrize("no_start", [(), DMESG_NO_START])
def test_cutting_holds_at_most_a_block_and_a_chunk(no_start):
    # 8 blocks of 1 MiB, a line break every 100 bytes: what iter_chunks allocates while the caller drops each
    # chunk at once. Joining the held-back tail to each block and slicing the chunk out of that held three
    # blocks' worth and a fourth while the next was read (4 MiB); cut in place: a block and a chunk (2 MiB)
    line = b"x" * 99 + b"\n"
    data = line * (8 * (1 << 20) // len(line) + 37)
    tracemalloc.start()
    try:
        n = 0
        for _, chunk in iter_chunks(data, 1 << 20, no_start):
            n += len(chunk)
            del chunk
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n == len(data)
    assert peak < 2.5 * (1 << 20), peak
