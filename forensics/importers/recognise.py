"""What a loose input of `forensics bundle` is and whose host it is: tar archives told by name or by
their first header, the decompressed head of a file, host names from directory names or from the
single host a file's content names. :mod:`forensics.importers.build` decides with these.
"""
from __future__ import annotations

import gzip
import re
from pathlib import Path

from forensics.bundle.errors import BundleError
from forensics.bundle.manifest import check_host_name
from forensics.bundle.members import Limits

HOST_SNIFF_BYTES = 8 << 20
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(name: str) -> str:
    s = _SAFE.sub("_", name).strip("._") or "file"
    return s[:200]


def host_from_dirname(name: str) -> str | None:
    s = _SAFE.sub("-", name).strip(".-_")
    try:
        return check_host_name(s) if s else None
    except BundleError:
        return None


TAR_SUFFIXES = (".tar.gz", ".tar.zst", ".tar.xz", ".tar.bz2", ".tgz", ".tzst", ".tar")


def tar_named(path: Path) -> bool:
    """Whether the file's name says it is a tar archive (compressed or not)."""
    return Path(path).name.lower().endswith(TAR_SUFFIXES)


def tar_stem(path: Path) -> str:
    name = path.name
    for suf in TAR_SUFFIXES:
        if name.endswith(suf):
            return name[: -len(suf)]
    return path.stem


def head_bytes(path: Path, limits: Limits, n: int = 65536) -> bytes:
    """First bytes of a file, decompressed when it is gzip (a gzip head keeps its magic bytes)."""
    with open(path, "rb") as fh:
        head = fh.read(n)
    if head.startswith(b"\x1f\x8b"):
        try:
            with gzip.open(path, "rb") as gz:
                return b"\x1f\x8b" + gz.read(n)
        except (OSError, EOFError):
            return head
    return head


def looks_like_tar(path: Path) -> bool:
    """A tar, possibly compressed: the first 512 decompressed bytes form a valid tar header."""
    import tarfile

    from forensics.bundle.members import open_stream

    try:
        with open(path, "rb") as fh:
            stream = open_stream(fh)
            block = stream.read(512)
    except Exception:  # noqa: BLE001 - anything unreadable is simply not a tar here
        return False
    if len(block) < 512:
        return False
    try:
        tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
        return True
    except tarfile.HeaderError:
        return False


def content_host(source: str, src: Path | bytes, path: Path, name: str) -> str | None:
    """The single host the content names (parser meta["hosts"]), from the file's first megabytes."""
    from forensics.sources import ParseContext, get

    try:
        if isinstance(src, bytes):
            data = src[:HOST_SNIFF_BYTES]
        else:
            with open(src, "rb") as fh:
                data = fh.read(HOST_SNIFF_BYTES)
        if len(data) == HOST_SNIFF_BYTES and b"\n" in data:
            data = data[: data.rfind(b"\n") + 1]
        res = get(source).parse(data, ParseContext(host=None, file=name))
    except Exception:  # noqa: BLE001 - host discovery is best effort
        return None
    hosts = [h for h in (res.meta.get("hosts") or []) if isinstance(h, str) and h]
    if len(set(hosts)) == 1:
        h = hosts[0].split(".")[0]
        try:
            return check_host_name(h)
        except BundleError:
            return host_from_dirname(h)
    return None
