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
import shutil
import stat
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from forensics.bundle.errors import BundleError
from forensics.bundle.manifest import read_manifest
from forensics.bundle.members import (
    COPY_CHUNK,
    DEFAULT_LIMITS,
    Limits,
    Scan,
    count_member,
    describe_read_error,
    iter_members,
    link_target,
    read_errors,
    read_member_into,
    safe_member_name,
)
from forensics.errors import write_error
from forensics.layout import MANIFEST

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


def _mkdirs(dest: Path, rel: str, scan: Scan, create: bool = True) -> Path:
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
             defer: Callable[[str], bool] | None) -> Scan:
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise BundleError(f"{dest}: extraction directory is not empty")
    limits = limits.for_archive(path, dest)
    scan = Scan()
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
                count_member(scan, 0, rel, limits)
                if scan.kinds.get(rel) not in (None, "dir", "vdir"):
                    raise BundleError(f"refusing bundle: {rel!r} is both a file and a directory")
                _mkdirs(dest, rel + "/x", scan)
            elif member.issym() or member.islnk():
                count_member(scan, 0, rel, limits)
                target = link_target(rel, member.linkname if member.issym() else safe_member_name(member.linkname, limits), member.islnk())
                if rel in scan.kinds:
                    raise BundleError(f"refusing bundle: duplicate member {rel!r}")
                scan.kinds[rel] = "link"
                scan.links.append((rel, target, "hard" if member.islnk() else "sym"))
                _mkdirs(dest, rel, scan)
            elif member.isreg() and not member.issparse():
                count_member(scan, member.size, rel, limits)
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
                    raise BundleError(f"{path}: unreadable archive: {describe_read_error(exc)}") from None
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


def _materialise_links(dest: Path, scan: Scan, limits: Limits) -> None:
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
        count_member(scan, size, rel, limits)
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
    scan = Scan()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root).replace(os.sep, "/")
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                real = os.path.realpath(p)
                if os.path.commonpath([real_root, real]) != real_root:
                    raise BundleError(f"refusing bundle: symbolic link {rel!r} -> {os.readlink(p)!r} leaves the bundle")
                count_member(scan, 0, rel, limits)
            elif stat.S_ISDIR(st.st_mode):
                count_member(scan, 0, rel, limits)
            elif stat.S_ISREG(st.st_mode):
                count_member(scan, st.st_size, rel, limits)
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
