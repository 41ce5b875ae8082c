"""Compressed members of a bundle (a gzip-compressed log, a zstd one): how to open and re-close them,
a block of whole lines at a time, for the discovery pass, the rewrite and the leak check alike.

Nothing here holds a member whole: a member is read, decompressed, scanned and rewritten
``BLOCK_BYTES`` at a time, so memory stays bounded however large the member, or what it inflates
to, is (a 10^7-line log took 6.5 GB whole; a small gzip of zeros inflates to gigabytes).
"""
from __future__ import annotations

import bz2
import gzip
import lzma
from contextlib import contextmanager

BLOCK_BYTES = 16 << 20  # members are read, scanned and rewritten this much at a time
MAX_LINE_BYTES = 4 * BLOCK_BYTES  # a "line" longer than this is handed on in pieces


def kind_of(head: bytes) -> str | None:
    """The compression of a member whose first bytes are `head` ("gz", "zst", "xz", "bz2"), else None."""
    if head[:2] == b"\x1f\x8b":
        return "gz"
    if head[:4] == b"\x28\xb5\x2f\xfd":
        return "zst"
    if head[:6] == b"\xfd7zXZ\x00":
        return "xz"
    if head[:3] == b"BZh":
        return "bz2"
    return None


def member_kind(path) -> str | None:
    with open(path, "rb") as fh:
        return kind_of(fh.read(8))


@contextmanager
def reader(path, kind: str | None):
    """The bytes of the member at `path`, decompressed as `kind` (every frame or stream of it)."""
    if kind == "gz":
        fh = gzip.open(path, "rb")
    elif kind == "zst":
        import zstandard

        fh = zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), read_across_frames=True, closefd=True)
    elif kind == "xz":
        fh = lzma.open(path, "rb")
    elif kind == "bz2":
        fh = bz2.open(path, "rb")
    else:
        fh = open(path, "rb")
    try:
        yield fh
    finally:
        fh.close()


@contextmanager
def writer(path, kind: str | None):
    """A file at `path` that compresses what is written to it as `kind` (plain when None)."""
    if kind == "gz":
        raw = open(path, "wb")
        fh = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)
    elif kind == "zst":
        import zstandard

        raw = None
        fh = zstandard.ZstdCompressor(level=10).stream_writer(open(path, "wb"), closefd=True)
    elif kind == "xz":
        raw, fh = None, lzma.open(path, "wb")
    elif kind == "bz2":
        raw, fh = None, bz2.open(path, "wb")
    else:
        raw, fh = None, open(path, "wb")
    try:
        yield fh
    finally:
        fh.close()
        if raw is not None:
            raw.close()


def line_blocks(src, block: int = BLOCK_BYTES, max_line: int = MAX_LINE_BYTES):
    """Consecutive pieces of `src` (a path, or a binary file object), each ending at a newline (or
    the end of the data): every line lies whole in one piece, so per-line work on the pieces equals
    it on the file, with memory bounded by the piece instead of the member. A line longer than
    `max_line` (no newline in that many bytes) is handed on in pieces of about that size."""
    if isinstance(src, (str, bytes)) or hasattr(src, "__fspath__"):
        with open(src, "rb") as fh:
            yield from line_blocks(fh, block, max_line)
        return
    rest = b""
    while True:
        data = src.read(block)
        if not data:
            break
        buf = rest + data
        cut = buf.rfind(b"\n")
        if cut < 0:
            if len(buf) >= max_line:
                yield buf
                buf = b""
            rest = buf
            continue
        rest = buf[cut + 1:]
        yield buf[:cut + 1]
    if rest:
        yield rest
