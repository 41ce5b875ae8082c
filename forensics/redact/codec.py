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
