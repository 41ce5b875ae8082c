"""Compressed members of a bundle (a gzip-compressed log, a zstd one): how to open and re-close them,
for the discovery pass and the rewrite alike."""
from __future__ import annotations

import bz2
import gzip
import lzma


def codec(data: bytes):
    """(decompress, compress) for a compressed member, else None."""
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress, lambda b: gzip.compress(b, mtime=0)
    if data[:4] == b"\x28\xb5\x2f\xfd":
        import zstandard

        return (lambda b: zstandard.ZstdDecompressor().decompressobj().decompress(b),
                lambda b: zstandard.ZstdCompressor(level=10).compress(b))
    if data[:6] == b"\xfd7zXZ\x00":
        return lzma.decompress, lzma.compress
    if data[:3] == b"BZh":
        return bz2.decompress, bz2.compress
    return None


BLOCK_BYTES = 16 << 20  # plain members are read, scanned and rewritten this much at a time


def line_blocks(path, block: int = BLOCK_BYTES):
    """Consecutive pieces of the file at `path`, each ending at a newline (or the end of the file):
    every line lies whole in one piece, so per-line work on the pieces equals it on the file, with
    memory bounded by the piece instead of the member (a 10^7-line log took 6.5 GB whole)."""
    rest = b""
    with open(path, "rb") as fh:
        while True:
            data = fh.read(block)
            if not data:
                break
            buf = rest + data
            cut = buf.rfind(b"\n")
            if cut < 0:
                rest = buf
                continue
            rest = buf[cut + 1:]
            yield buf[:cut + 1]
    if rest:
        yield rest
