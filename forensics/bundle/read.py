"""Reading bundles without trusting them.

A bundle is a tar (plain, gzip, zstd; bzip2 and xz are accepted too) or an already extracted
directory. Extraction streams the archive once and refuses, each with one :class:`BundleError`
line and before anything lands outside the working directory:

- absolute member names and names with a ``..`` component;
- symbolic or hard links whose target leaves the bundle (links inside it are materialised as
  copies of their target after extraction: no link is ever created on disk);
- device files, FIFOs, sparse and other special members;
- more members than ``Limits.max_members``; a member over ``Limits.max_member_bytes``; a total
  uncompressed size over ``Limits.max_total_bytes`` (decompression bombs);
- duplicate members, a truncated archive, a file that is not a tar;
- a ``manifest.json`` of the wrong shape or an unknown ``format_version``.

Files are created with ``O_EXCL | O_NOFOLLOW`` under directories this module created itself, so a
crafted archive cannot write through a pre-existing path either.
"""
from __future__ import annotations

import os
import posixpath
import re
import shutil
import stat
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from forensics.bundle.errors import BundleError
from forensics.errors import write_error
from forensics.bundle.manifest import read_manifest
from forensics.layout import MANIFEST

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
class Bundle:
    """A readable bundle tree: `root` holds manifest.json, hosts/, maybe tables/."""

    root: Path
    manifest: dict
    source: Path
    workdir: Path | None = None  # temporary directory this module created (caller may remove it)

    @property
    def hosts(self) -> list[str]:
        return list(self.manifest["hosts"])

    @property
    def format_version(self) -> int:
        return int(self.manifest["format_version"])


@dataclass
class _Scan:
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


def _link_target(rel: str, target: str, hard: bool) -> str:
    """Bundle-relative path a link points to, or BundleError when it leaves the bundle."""
    kind = "hard link" if hard else "symbolic link"
    if not target or target.startswith("/") or "\x00" in target:
        raise BundleError(f"refusing bundle: {kind} {rel!r} -> {target!r} leaves the bundle")
    joined = target if hard else posixpath.join(posixpath.dirname(rel), target)
    norm = posixpath.normpath(joined)
    if norm == ".." or norm.startswith("../") or norm.startswith("/"):
        raise BundleError(f"refusing bundle: {kind} {rel!r} -> {target!r} leaves the bundle")
    return "" if norm == "." else norm


def _count(scan: _Scan, size: int, rel: str, limits: Limits) -> None:
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


def _describe(exc: BaseException) -> str:
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
            raise BundleError(f"{path}: not a tar bundle ({_describe(exc)})") from None
        try:
            while True:
                try:
                    member = tar.next()
                except errors as exc:
                    raise BundleError(f"{path}: unreadable archive: {_describe(exc)}") from None
                if member is None:
                    break
                yield member, safe_member_name(member.name, limits), tar
        finally:
            try:
                tar.close()
            except errors:
                pass


def _mkdirs(dest: Path, rel: str, scan: _Scan, create: bool = True) -> Path:
    """Create the directories of `rel` under dest (never following a link), return the parent.
    With `create` False they are only recorded (kind "vdir": made later if a written member needs them)."""
    cur = dest
    acc = ""
    for part in rel.split("/")[:-1]:
        acc = f"{acc}/{part}" if acc else part
        kind = scan.kinds.get(acc)
        if kind not in (None, "dir", "vdir"):
            raise BundleError(f"refusing bundle: {acc!r} is both a file and a directory")
        cur = cur / part
        if kind is None and not create:
            scan.kinds[acc] = "vdir"
        elif kind != "dir" and create:
            try:
                os.mkdir(cur, 0o755)
            except FileExistsError:
                if cur.is_symlink() or not cur.is_dir():
                    raise BundleError(f"refusing bundle: cannot create directory {acc!r}") from None
            scan.kinds[acc] = "dir"
    return cur


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


def _write_member(tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path, rel: str, buf: bytearray) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(target, flags, 0o644)
    except FileExistsError:
        raise BundleError(f"refusing bundle: duplicate member {rel!r}") from None
    except OSError as exc:
        raise write_error(exc, target) or BundleError(f"{target}: cannot write: {exc.strerror or exc}") from None
    with os.fdopen(fd, "wb", buffering=0) as out:
        def write(block: memoryview) -> None:
            try:
                while block:
                    block = block[out.write(block):]
            except OSError as exc:  # the disk written to, not the archive read: said as such
                raise write_error(exc, target) or BundleError(f"{target}: cannot write: {exc.strerror or exc}") from None

        read_member_into(tar, member, rel, write, buf)


def extract(path: Path | str, dest: Path | str, limits: Limits = DEFAULT_LIMITS,
            select: Callable[[str], bool] | None = None) -> Path:
    """Safely extract the archive `path` into the directory `dest` (created; must be empty).

    `select(rel)` may restrict which members are written (names and counts of all are checked).
    Returns `dest`. On refusal, what was written under `dest` is removed and BundleError raised.
    """
    _extract(Path(path), Path(dest), limits, select, None)
    return Path(dest)


class LinkToDeferred(Exception):
    """A link in the archive needs the data of a deferred member (see :func:`extract_deferring`)."""


def extract_deferring(path: Path | str, dest: Path | str, defer: Callable[[str], bool],
                      limits: Limits = DEFAULT_LIMITS) -> list[tuple[str, int]]:
    """:func:`extract`, except that the regular files for which `defer(rel)` is true are checked
    (names, sizes, counts, duplicates, as if written) but not written: their (rel, size), in
    archive order, is returned, and their data stays in the archive (read it with
    :func:`iter_members` and :func:`read_member_into`). Raises :class:`LinkToDeferred` (after
    removing what it wrote) when a link lies among or points at deferred files."""
    return _extract(Path(path), Path(dest), limits, None, defer).deferred


def _extract(path: Path, dest: Path, limits: Limits, select: Callable[[str], bool] | None,
             defer: Callable[[str], bool] | None) -> _Scan:
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise BundleError(f"{dest}: extraction directory is not empty")
    limits = limits.for_archive(path, dest)
    scan = _Scan()
    errors = read_errors()
    buf = bytearray(COPY_CHUNK)
    try:
        for member, rel, tar in iter_members(path, limits):
            if not rel:
                continue
            if select is not None and not select(rel):  # (folders of selected files are made as needed)
                scan.members += 1
                if scan.members > limits.max_members:
                    raise BundleError(f"refusing bundle: more than {limits.max_members} members")
                continue
            if member.isdir():
                _count(scan, 0, rel, limits)
                if scan.kinds.get(rel) not in (None, "dir", "vdir"):
                    raise BundleError(f"refusing bundle: {rel!r} is both a file and a directory")
                _mkdirs(dest, rel + "/x", scan)
            elif member.issym() or member.islnk():
                _count(scan, 0, rel, limits)
                target = _link_target(rel, member.linkname if member.issym() else safe_member_name(member.linkname, limits), member.islnk())
                if rel in scan.kinds:
                    raise BundleError(f"refusing bundle: duplicate member {rel!r}")
                scan.kinds[rel] = "link"
                scan.links.append((rel, target, "hard" if member.islnk() else "sym"))
                _mkdirs(dest, rel, scan)
            elif member.isreg() and not member.issparse():
                _count(scan, member.size, rel, limits)
                if rel in scan.kinds:
                    raise BundleError(f"refusing bundle: duplicate member {rel!r}")
                if defer is not None and defer(rel):
                    _mkdirs(dest, rel, scan, create=False)
                    scan.kinds[rel] = "deferred"
                    scan.deferred.append((rel, member.size))
                    continue
                parent = _mkdirs(dest, rel, scan)
                scan.kinds[rel] = "file"
                try:
                    _write_member(tar, member, parent / rel.rsplit("/", 1)[-1], rel, buf)
                except BundleError:
                    raise
                except errors as exc:
                    raise BundleError(f"{path}: unreadable archive: {_describe(exc)}") from None
            elif member.ischr() or member.isblk():
                raise BundleError(f"refusing bundle: device file {rel!r}")
            elif member.isfifo():
                raise BundleError(f"refusing bundle: FIFO {rel!r}")
            else:
                raise BundleError(f"refusing bundle: special member {rel!r} (type {member.type!r})")
        if defer is not None and any(defer(rel) for rel, _, _ in scan.links):
            raise LinkToDeferred(path)
        _materialise_links(dest, scan, limits)
        for rel in sorted(r for r, k in scan.kinds.items() if k == "vdir"):  # folders of deferred files
            _mkdirs(dest, rel + "/x", scan)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return scan


def _materialise_links(dest: Path, scan: _Scan, limits: Limits) -> None:
    """Replace each link inside the bundle by a copy of the regular file it resolves to."""
    targets = {rel: tgt for rel, tgt, _ in scan.links}
    for rel, _, kind in scan.links:
        cur, seen = rel, set()
        while scan.kinds.get(cur) == "link":
            if cur in seen or len(seen) > 40:
                cur = None
                break
            seen.add(cur)
            cur = targets[cur]
        if scan.kinds.get(cur) == "deferred":
            raise LinkToDeferred(rel)
        if cur is None or scan.kinds.get(cur) != "file":
            if kind == "hard":
                raise BundleError(f"refusing bundle: hard link {rel!r} to a member that is not an earlier file")
            continue  # a link to a directory or to nothing: not materialised
        src = dest / cur
        size = src.stat().st_size
        _count(scan, size, rel, limits)
        parent = _mkdirs(dest, rel, scan)
        out = parent / rel.rsplit("/", 1)[-1]
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(out, flags, 0o644)
        with open(src, "rb") as fi, os.fdopen(fd, "wb") as fo:
            shutil.copyfileobj(fi, fo, COPY_CHUNK)
        scan.kinds[rel] = "file"


# --------------------------------------------------------------------------- directories


def scan_dir(root: Path | str, limits: Limits = DEFAULT_LIMITS) -> Path:
    """Check an extracted bundle directory in place with the same refusals as archives."""
    root = Path(root)
    if not root.is_dir():
        raise BundleError(f"{root}: not a directory")
    real_root = os.path.realpath(root)
    scan = _Scan()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root).replace(os.sep, "/")
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                real = os.path.realpath(p)
                if os.path.commonpath([real_root, real]) != real_root:
                    raise BundleError(f"refusing bundle: symbolic link {rel!r} -> {os.readlink(p)!r} leaves the bundle")
                _count(scan, 0, rel, limits)
            elif stat.S_ISDIR(st.st_mode):
                _count(scan, 0, rel, limits)
            elif stat.S_ISREG(st.st_mode):
                _count(scan, st.st_size, rel, limits)
            elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
                raise BundleError(f"refusing bundle: device file {rel!r}")
            elif stat.S_ISFIFO(st.st_mode):
                raise BundleError(f"refusing bundle: FIFO {rel!r}")
            else:
                raise BundleError(f"refusing bundle: special file {rel!r}")
    return root


def find_root(tree: Path) -> Path:
    """The directory holding manifest.json: `tree` itself, or its single top-level folder."""
    if (tree / MANIFEST).exists():
        return tree
    entries = [e for e in tree.iterdir() if not e.name.startswith(".")]
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink() and (entries[0] / MANIFEST).exists():
        return entries[0]
    return tree


def open_bundle(path: Path | str, workdir: Path | str | None = None, limits: Limits = DEFAULT_LIMITS) -> Bundle:
    """Open a bundle for reading: a directory is checked in place, an archive extracted safely.

    With `workdir` (an empty or absent directory) the archive is extracted there; otherwise into a
    new temporary directory recorded in ``Bundle.workdir`` (the caller removes it when done).
    """
    path = Path(path)
    if not path.exists():
        raise BundleError(f"{path}: no such file or directory")
    if path.is_dir():
        scan_dir(path, limits)
        root = find_root(path)
        return Bundle(root=root, manifest=read_manifest(root), source=path)
    if not path.is_file():
        raise BundleError(f"{path}: not a regular file")
    made = None
    if workdir is None:
        made = Path(tempfile.mkdtemp(prefix="forensics-bundle-"))
        dest = made
    else:
        dest = Path(workdir)
    try:
        extract(path, dest, limits)
        root = find_root(dest)
        manifest = read_manifest(root)
    except BaseException:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        else:
            shutil.rmtree(dest, ignore_errors=True)
        raise
    return Bundle(root=root, manifest=manifest, source=path, workdir=made)


def archive_kind(path: Path | str, limits: Limits = DEFAULT_LIMITS, scan_bytes: int | None = None) -> str:
    """What an archive holds, from member names only: "bundle" (a manifest.json at the top or in
    its single top folder), "sosreport" (a sos_commands/ folder) or "tar" (anything else).

    `scan_bytes`: decide from the members met before that many bytes of member data (a quick look
    that never decompresses far; a bomb is left to :func:`extract`)."""
    tops: set[str] = set()
    sos = False
    manifest_in: str | None = None
    seen = 0
    for member, rel, _tar in iter_members(path, limits):
        if scan_bytes is not None:
            seen += max(0, member.size)
            if seen > scan_bytes:
                break
        parts = rel.split("/")
        if not rel:
            continue
        tops.add(parts[0])
        if rel == MANIFEST:
            return "bundle"
        if len(parts) == 2 and parts[1] == MANIFEST:
            manifest_in = parts[0]
        if "sos_commands" in parts[:2]:
            sos = True
    if manifest_in is not None and tops == {manifest_in}:
        return "bundle"
    return "sosreport" if sos else "tar"
