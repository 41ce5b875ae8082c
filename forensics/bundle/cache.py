"""Where a bundle's files are on disk: :func:`bundle_root` gives an archive's safely extracted tree
in the cache (extracting once) or checks a directory bundle in place. Parsing the tree into
``tables/`` is :func:`forensics.ingest.load`'s job.

An archive is extracted (safely) into ``<cache>/<sha256 of the file>/``; the cache folder is
``cache_dir``, else ``$FORENSICS_CACHE_DIR``, else ``~/.cache/forensics``. The raw files of the hosts
(``hosts/<host>/raw/<source>/...``) are checked but not written: their names and sizes go to
``.archive-members.json`` and ingest reads them from the archive (writing GBs of raw outputs to
disk cost more than parsing them, and the cache stays small); an archive where a link needs one
of them is extracted whole.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from forensics.atomic import atomic_path
from forensics.bundle import scratch
from forensics.bundle.errors import BundleError
from forensics.errors import write_error
from forensics.bundle.trust import check_members, file_sha256  # (file_sha256: imported from here by others)
from forensics.bundle.manifest import read_manifest
from forensics.bundle.read import (DEFAULT_LIMITS, LinkToDeferred, Limits, extract, extract_deferring, find_root,
                                   open_bundle)
from forensics.layout import ARCHIVE_MEMBERS, HOSTS_DIR, WORK_PREFIXES



def cache_root(cache_dir: Path | str | None = None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("FORENSICS_CACHE_DIR")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "forensics"




def extracted(path: Path | str, cache_dir: Path | str | None = None, limits: Limits = DEFAULT_LIMITS) -> Path:
    """Root of the safely extracted tree of the archive `path` in the cache (extracting once)."""
    path = Path(path)
    base = cache_root(cache_dir)
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BundleError(f"{base}: cannot create the cache folder ({exc.strerror})") from None
    target = base / archive_digest(path, base)
    if target.is_dir() and not _entry_sound(target):
        shutil.rmtree(target, ignore_errors=True)  # a broken entry (removed in part, damaged): rebuilt
    created = False
    if not target.is_dir():
        scratch.sweep(base, (PARTIAL,))  # entries that killed runs left half-extracted
        try:
            tmp = scratch.make(base, f"{PARTIAL}{target.name[:16]}-")
        except OSError as exc:
            raise write_error(exc, base) or BundleError(f"{base}: cannot write ({exc.strerror or exc})") from None
        try:
            _extract_without_raw(path, tmp, limits)
            try:
                (tmp / ENTRY_MARK).write_text(json.dumps({"archive_bytes": path.stat().st_size}) + "\n")
            except OSError as exc:
                raise write_error(exc, base) or exc from None
            try:
                os.rename(tmp, target)
                scratch.release(tmp)
                created = True
            except OSError:
                if not target.is_dir():  # not a concurrent loader that won the race
                    raise
                scratch.remove(tmp)
        except BaseException:
            scratch.remove(tmp)
            raise
    hold(target)
    if created:
        from forensics import limits as budget

        prune(base, budget.cache_limit(base))  # least recently used entries out (this one is held)
    root = find_root(target)
    read_manifest(root)
    return root


DIGESTS = ".archive-digests"  # archive_digest's memo (a dot folder: no entry, never pruned as one)
DIGESTS_KEEP = 1024  # memo files kept; past that the least recently written half goes


def archive_digest(path: Path, base: Path) -> str:
    """The sha256 of the archive `path` (its cache entry's name), read once per state of the file: kept in
    ``<base>/.archive-digests/`` under the file's identity (real path, device, inode, size, modification and
    change time, as :func:`forensics.bundle.trust.tree_digest` tells the raw files' states apart), so the
    next open of an unchanged archive stats it instead of reading it all (0.3-0.5 CPU s for the 354 MB of a
    64-node x 1 h bundle at every `forensics analyze`). Rewriting the file moves its change time (which no
    call can set back), replacing it changes its inode: either is a new identity, hashed again. A digest is
    kept only when the file's identity is the same after the read as before it (a file written meanwhile
    is hashed again next time)."""
    def identity() -> str:
        st = os.stat(path)
        return f"{os.path.realpath(path)}\0{st.st_dev}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}"

    before = identity()
    memo = base / DIGESTS / hashlib.sha256(before.encode()).hexdigest()
    try:
        text = memo.read_text(encoding="ascii")
        if len(text) == 64 and all(c in "0123456789abcdef" for c in text):
            return text
    except (OSError, ValueError):
        pass  # none yet (or unreadable): hashed
    digest = file_sha256(path)
    if identity() == before:
        try:
            memo.parent.mkdir(exist_ok=True)
            with atomic_path(memo) as tmp:
                Path(tmp).write_text(digest, encoding="ascii")
            _trim_digests(memo.parent)
        except OSError:
            pass  # a cache folder that cannot take it: hashed again next time
    return digest


def _trim_digests(folder: Path) -> None:
    """At most :data:`DIGESTS_KEEP` memo files: past that, the older half removed."""
    try:
        names = [n for n in os.listdir(folder) if len(n) == 64]
        if len(names) <= DIGESTS_KEEP:
            return
        aged = sorted(names, key=lambda n: os.lstat(folder / n).st_mtime_ns)
        for n in aged[:len(aged) - DIGESTS_KEEP // 2]:
            (folder / n).unlink(missing_ok=True)
    except OSError:
        pass


PARTIAL = ".partial-"  # an entry being extracted (see forensics.bundle.scratch)
ENTRY_MARK = ".forensics-entry.json"  # written last into a complete entry, before it is renamed into place


def _entry_sound(target: Path) -> bool:
    """Whether a cache entry is whole: its completion mark, its manifest (a run that removed part of
    the cache, or a damaged disk, must not break every later run)."""
    if not (target / ENTRY_MARK).is_file():
        return False
    try:
        root = find_root(target)
        read_manifest(root)
        archive_members(root)
    except (BundleError, OSError, ValueError):
        return False
    return True


def _is_raw(rel: str) -> bool:
    """A host's raw file (``hosts/<host>/raw/<source>/...``), at the top or in one top folder."""
    parts = rel.split("/")
    for p in (parts, parts[1:]):
        if len(p) >= 5 and p[0] == HOSTS_DIR and p[2] == "raw":
            return True
    return False


def _extract_without_raw(path: Path, tmp: Path, limits: Limits) -> None:
    """Extract all but the hosts' raw files, listed in ``<root>/.archive-members.json`` instead."""
    try:
        deferred = extract_deferring(path, tmp, _is_raw, limits)
    except LinkToDeferred:
        extract(path, tmp, limits)
        deferred = []
    root = find_root(tmp)
    manifest = read_manifest(root)
    prefix = "" if root == tmp else root.relative_to(tmp).as_posix() + "/"
    members = [[rel[len(prefix):], size] for rel, size in deferred if rel.startswith(prefix)]
    check_members(root, manifest, dict((rel, size) for rel, size in members))
    (root / ARCHIVE_MEMBERS).unlink(missing_ok=True)  # the cache's own name: never one an archive ships
    if members:
        (root / ARCHIVE_MEMBERS).write_text(json.dumps({"prefix": prefix, "members": members}) + "\n")


def archive_members(root: Path) -> tuple[str, list[tuple[str, int]]] | None:
    """(prefix, [(rel, size), ...]) of ``<root>/.archive-members.json`` (the raw files a cache entry
    left in its archive), None when there is none; BundleError when it is not that shape (JSON
    of another shape, wrong types, negative sizes: a damaged or altered entry)."""
    path = root / ARCHIVE_MEMBERS
    if not path.exists():
        return None
    bad = BundleError(f"{path}: unreadable list of archive members (clear the cache folder)")
    try:
        obj = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):
        raise bad from None
    if not isinstance(obj, dict) or not isinstance(obj.get("prefix"), str) or not isinstance(obj.get("members"), list):
        raise bad
    out = []
    for item in obj["members"]:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                and type(item[1]) is int and 0 <= item[1] < 1 << 62):
            raise bad
        out.append((item[0], item[1]))
    return obj["prefix"], out


def bundle_root(path: Path | str, cache_dir: Path | str | None = None) -> tuple[Path, Path | None]:
    """(root of the bundle's tree, the archive its raw files are read from or None) for the bundle at
    `path`: a directory is checked in place, an archive is extracted into the cache once."""
    path = Path(path)
    if not path.exists():
        raise BundleError(f"{path}: no such file or directory")
    if path.is_dir():
        return open_bundle(path).root, None
    if path.is_file():
        return extracted(path, cache_dir), path
    raise BundleError(f"{path}: not a regular file or directory")


# --- size limit and eviction -------------------------------------------------------------------

class Entry:
    """One cache entry: an extracted archive (``<sha256>/``) or a merged bundle (``merged-*.tar``)."""

    def __init__(self, path: Path):
        self.path = path
        self.size = _tree_size(path)
        try:
            self.used = path.stat().st_mtime  # touched by every load that uses it
        except OSError:
            self.used = 0.0
        self.what = "merged bundle" if path.name.startswith("merged-") else "extracted archive"


def _tree_size(path: Path) -> int:
    """Bytes on disk under `path`, links not followed."""
    try:
        st = path.lstat()
    except OSError:
        return 0
    if not path.is_dir() or path.is_symlink():
        return st.st_blocks * 512
    total = st.st_blocks * 512
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        for name in filenames + dirnames:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
            except OSError:
                pass
    return total


def entries(base: Path) -> list[Entry]:
    """Every entry of the cache folder `base`, least recently used first (work in progress excluded)."""
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    out = [Entry(base / n) for n in names if not n.startswith(".") and not n.endswith(".lock")]
    return sorted(out, key=lambda e: e.used)


def _busy(path: Path) -> bool:
    """Whether another process holds `path` (its lock file is locked shared by every user)."""
    import fcntl

    lock = path.parent / (path.name + ".lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return True
    _EVICTING[str(path)] = fd  # held (exclusive) until the entry is gone
    return False


_EVICTING: dict[str, int] = {}
_HELD: dict[str, int] = {}


def hold(path: Path) -> None:
    """Mark the entry `path` in use by this process (until it exits) and as just used."""
    import fcntl

    key = str(path)
    if key not in _HELD:
        fd = os.open(path.parent / (path.name + ".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        fcntl.flock(fd, fcntl.LOCK_SH)  # waits while another process evicts it
        _HELD[key] = fd
    try:
        os.utime(path, follow_symlinks=False)
    except OSError:
        pass


def prune(base: Path, keep_bytes: int) -> tuple[int, int]:
    """Remove least recently used entries until at most `keep_bytes` remain; entries other
    processes are using stay. Returns (entries removed, bytes freed)."""
    found = entries(base)
    total = sum(e.size for e in found)
    removed = freed = 0
    for e in found:
        if total <= keep_bytes:
            break
        if str(e.path) in _HELD or _busy(e.path):
            continue
        try:
            if e.path.is_dir() and not e.path.is_symlink():
                shutil.rmtree(e.path)
            else:
                e.path.unlink()
        except OSError:
            continue
        finally:
            fd = _EVICTING.pop(str(e.path), None)
            if fd is not None:
                os.close(fd)
        total -= e.size
        removed += 1
        freed += e.size
    return removed, freed


def sweep_work(base: Path, stale_s: float | None = scratch.STALE_S) -> list[str]:
    """Remove the work folders that killed runs left in the cache `base` (half-extracted entries,
    ingest's folders inside entries): those whose owner is gone, and with `stale_s` those of an
    older version (no lock file) unchanged that long. Never one a run in progress owns. Returns
    their paths relative to `base`."""
    out = scratch.sweep(base, (PARTIAL,), stale_s)
    for e in entries(base):
        if e.path.is_dir() and not e.path.is_symlink():
            root = find_root(e.path)
            out += [os.path.relpath(root / n, base) for n in scratch.sweep(root, WORK_PREFIXES, stale_s)]
    return out
