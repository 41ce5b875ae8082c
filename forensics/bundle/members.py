"""The members of an untrusted tar, streamed: what a bundle may hold (:class:`Limits`), member names
and links checked before anything is written, archives opened whatever their compression, member
data read without extracting. :mod:`forensics.bundle.read` extracts with these; ingest reads raw
files straight from the archive with them.
"""
from __future__ import annotations

import os
import posixpath
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from forensics.bundle.errors import BundleError

COPY_CHUNK = 1 << 20


@dataclass(frozen=True)
class Limits:
    """What a bundle may hold before it is refused."""

    max_members: int = 200_000
    max_member_bytes: int = 16 << 30
    max_total_bytes: int = 64 << 30
    max_name_bytes: int = 4096
    max_ratio: int = 1000             # unpacked bytes per byte of archive (logs compress 5-50 times) ...
    ratio_floor_bytes: int = 1 << 30  # ... but any archive may unpack to 1 GiB
    disk_share: float = 0.5           # and to at most this share of the free space where it is unpacked

    def for_archive(self, path: Path, dest: Path | None = None) -> "Limits":
        """These limits with the total capped in proportion to the archive's size and to the free
        space at `dest` (a tiny archive that would unpack to gigabytes is refused before it fills a disk)."""
        import dataclasses

        from forensics.limits import free_bytes

        try:
            size = path.stat().st_size
        except OSError:
            return self
        cap = max(self.ratio_floor_bytes, size * self.max_ratio)
        why = f"{self.max_ratio} times the archive's {size} bytes"
        if dest is not None:
            room = int(free_bytes(dest) * self.disk_share)
            if room < cap:
                cap, why = room, f"half the {room * 2} bytes free at {dest}"
        if cap >= self.max_total_bytes:
            return self
        return dataclasses.replace(self, max_total_bytes=cap, max_member_bytes=min(self.max_member_bytes, cap),
                                   why=why)

    why: str = ""  # what set max_total_bytes, when not the fixed limit


DEFAULT_LIMITS = Limits()


@dataclass
class Scan:
    """What a walk over a bundle's members has met so far (counted against the Limits)."""

    members: int = 0
    total: int = 0
    kinds: dict[str, str] = field(default_factory=dict)  # rel -> "file" | "dir" | "link" | "deferred" | "vdir"
    links: list[tuple[str, str, str]] = field(default_factory=list)  # (rel, target rel, kind)
    deferred: list[tuple[str, int]] = field(default_factory=list)  # (rel, size) of files checked, not written


# --------------------------------------------------------------------------- names and checks


def safe_member_name(name: str, limits: Limits = DEFAULT_LIMITS) -> str:
    """Normalised relative name of a member ('' for the archive root), or BundleError."""
    if "\x00" in name:
        raise BundleError(f"refusing bundle: member name with a NUL byte: {name!r}")
    if len(name.encode("utf-8", "surrogateescape")) > limits.max_name_bytes:
        raise BundleError(f"refusing bundle: member name over {limits.max_name_bytes} bytes")
    if name.startswith("/") or name.startswith("\\") or re.match(r"^[A-Za-z]:[\\/]", name):
        raise BundleError(f"refusing bundle: absolute member path {name!r}")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise BundleError(f"refusing bundle: member path with '..': {name!r}")
    return "/".join(parts)


def link_target(rel: str, target: str, hard: bool) -> str:
    """Bundle-relative path a link points to, or BundleError when it leaves the bundle."""
    kind = "hard link" if hard else "symbolic link"
    if not target or target.startswith("/") or "\x00" in target:
        raise BundleError(f"refusing bundle: {kind} {rel!r} -> {target!r} leaves the bundle")
    joined = target if hard else posixpath.join(posixpath.dirname(rel), target)
    norm = posixpath.normpath(joined)
    if norm == ".." or norm.startswith("../") or norm.startswith("/"):
        raise BundleError(f"refusing bundle: {kind} {rel!r} -> {target!r} leaves the bundle")
    return "" if norm == "." else norm


def count_member(scan: Scan, size: int, rel: str, limits: Limits) -> None:
    scan.members += 1
    if scan.members > limits.max_members:
        raise BundleError(f"refusing bundle: more than {limits.max_members} members")
    if size > limits.max_member_bytes:
        raise BundleError(f"refusing bundle: member {rel!r} is {size} bytes (limit {limits.max_member_bytes}"
                          + (f": {limits.why}; possible decompression bomb)" if limits.why else ")"))
    scan.total += size
    if scan.total > limits.max_total_bytes:
        raise BundleError(
            f"refusing bundle: uncompressed size over {limits.max_total_bytes} bytes"
            + (f" ({limits.why})" if limits.why else "") + " (possible decompression bomb)"
        )


# --------------------------------------------------------------------------- archives


def _sniff_compression(head: bytes) -> str:
    if head.startswith(b"\x1f\x8b"):
        return "gz"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zst"
    if head.startswith(b"BZh"):
        return "bz2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    return "tar"


def open_stream(fh):
    """The decompressed stream of an archive file object (gzip, zstd, bzip2, xz or plain)."""
    head = fh.read(6)
    fh.seek(0)
    kind = _sniff_compression(head)
    if kind == "gz":
        import gzip

        return gzip.GzipFile(fileobj=fh, mode="rb")
    if kind == "zst":
        import zstandard

        return zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True, closefd=False)
    if kind == "bz2":
        import bz2

        return bz2.BZ2File(fh, mode="rb")
    if kind == "xz":
        import lzma

        return lzma.LZMAFile(fh, mode="rb")
    return fh


def read_errors() -> tuple[type[BaseException], ...]:
    """The exceptions reading a damaged archive may raise (tar, decompressors, EOF)."""
    errs: list[type[BaseException]] = [tarfile.TarError, EOFError, OSError, ValueError]
    try:
        import lzma

        errs.append(lzma.LZMAError)
    except ImportError:  # pragma: no cover
        pass
    try:
        import zstandard

        errs.append(zstandard.ZstdError)
    except ImportError:  # pragma: no cover
        pass
    return tuple(errs)


def describe_read_error(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    low = text.lower()
    if isinstance(exc, EOFError) or "unexpected end" in low or "ended before" in low or "truncated" in low:
        return f"truncated archive ({text})"
    return text


def iter_members(path: Path, limits: Limits = DEFAULT_LIMITS) -> Iterator[tuple[tarfile.TarInfo, str, tarfile.TarFile]]:
    """Stream (member, normalised name, tar) of an archive, refusing bad names and counts on the way."""
    errors = read_errors()
    with open(path, "rb") as raw:
        if os.fstat(raw.fileno()).st_size == 0:
            raise BundleError(f"{path}: empty file, not a tar bundle")
        try:
            stream = open_stream(raw)
            # "r:" on a forward-only stream: tarfile seeks only forward here (to the next header),
            # and member data is read straight from the stream (see _write_member), not through
            # the 10 KB records of stream mode "r|" (5x faster on a multi-GB bundle)
            tar = tarfile.open(fileobj=stream, mode="r:")
        except BundleError:
            raise
        except errors as exc:
            raise BundleError(f"{path}: not a tar bundle ({describe_read_error(exc)})") from None
        try:
            while True:
                try:
                    member = tar.next()
                except errors as exc:
                    raise BundleError(f"{path}: unreadable archive: {describe_read_error(exc)}") from None
                if member is None:
                    break
                yield member, safe_member_name(member.name, limits), tar
        finally:
            try:
                tar.close()
            except errors:
                pass


def read_member_into(tar: tarfile.TarFile, member: tarfile.TarInfo, rel: str, write, buf: bytearray | None = None) -> None:
    """Pass the data of the regular `member` of an archive open by :func:`iter_members` to
    `write(memoryview)` block by block (one reused buffer: no allocation per block)."""
    src = tar.fileobj
    src.seek(member.offset_data)
    view = memoryview(buf if buf is not None else bytearray(COPY_CHUNK))
    left = member.size
    while left > 0:
        n = src.readinto(view[:min(len(view), left)])
        if not n:
            raise BundleError(f"truncated archive: member {rel!r} ends early")
        write(view[:n])
        left -= n


def read_member(tar: tarfile.TarFile, member: tarfile.TarInfo, rel: str) -> bytes:
    """The data of the regular `member` of an archive open by :func:`iter_members`, in memory."""
    src = tar.fileobj
    src.seek(member.offset_data)
    parts, left = [], member.size
    while left > 0:
        block = src.read(left)
        if not block:
            raise BundleError(f"truncated archive: member {rel!r} ends early")
        parts.append(block)
        left -= len(block)
    return parts[0] if len(parts) == 1 else b"".join(parts)
