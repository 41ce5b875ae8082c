"""Work folders that a run makes inside a bundle's tree or the cache (``.tables-*``, ``.hosts-*``,
``.tables-old-*``, a cache entry's ``.partial-*``), and their removal once the run that made them
is gone, however it ended (a SIGKILL, the kernel's out-of-memory killer, a power cut).

:func:`make` first creates and locks (``flock``, exclusive) a lock file ``<name>.owner``, then the
folder ``<name>`` beside it; the lock is held until :func:`release`, after the folder is gone or
renamed. The kernel drops a lock when its process ends, so a folder whose lock can be taken has no
owner any more: :func:`sweep` removes those, and never a folder whose lock is held (a run in
progress, in this process or another). Folders of these names without a lock file (left by a
version before this one) are removed only where every folder is the tool's own (the cache:
``forensics cache prune``) and only after :data:`STALE_S` without a change.
"""
from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import stat
import time
from pathlib import Path

OWNER = ".owner"      # suffix of a folder's lock file
STALE_S = 6 * 3600    # a folder without a lock file unchanged this long is abandoned (see sweep)
_HELD: dict[str, int] = {}


def make(parent: Path, prefix: str, create: bool = True) -> Path:
    """A new folder ``<parent>/<prefix><random>`` owned by this process until :func:`release`
    (`create` False: only the name is reserved, for a folder renamed there)."""
    for _ in range(100):
        path = Path(parent) / f"{prefix}{secrets.token_hex(4)}"
        try:
            fd = os.open(str(path) + OWNER, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # (a fresh file: nobody else holds it)
            if create:
                os.mkdir(path, 0o700)
        except BaseException:
            os.close(fd)
            os.unlink(str(path) + OWNER)
            raise
        _HELD[str(path)] = fd
        return path
    raise FileExistsError(f"{parent}: no free name for a work folder {prefix}*")


def release(path: Path) -> None:
    """Give up the folder `path` made by :func:`make` (after removing or renaming it)."""
    fd = _HELD.pop(str(path), None)
    if fd is None:
        return
    try:
        os.unlink(str(path) + OWNER)
    except OSError:
        pass
    os.close(fd)


def remove(path: Path) -> None:
    """Remove the folder `path` made by :func:`make`, then release it."""
    shutil.rmtree(path, ignore_errors=True)
    release(path)


def sweep(parent: Path, prefixes: tuple[str, ...], stale_s: float | None = None) -> list[str]:
    """Remove the folders ``<parent>/<prefix>*`` whose owner is gone (their lock can be taken) and
    their lock files; with `stale_s`, also those without a lock file unchanged for that long.
    Links are never followed. Returns the names removed."""
    try:
        names = os.listdir(parent)
    except OSError:
        return []
    removed = []
    now = time.time()
    for name in sorted(names):
        if not name.startswith(prefixes) or name.endswith(OWNER):
            continue
        path = Path(parent) / name
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or str(path) in _HELD:
            continue
        try:
            fd = os.open(str(path) + OWNER, os.O_RDWR | os.O_NOFOLLOW)
        except FileNotFoundError:
            if stale_s is not None and now - st.st_mtime > stale_s:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(name)
            continue
        except OSError:  # a link, or not ours to open: left alone
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its owner runs
            shutil.rmtree(path, ignore_errors=True)
            try:
                os.unlink(str(path) + OWNER)
            except OSError:
                pass
            removed.append(name)
        finally:
            os.close(fd)
    return removed
