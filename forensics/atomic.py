"""Write a file all at once or not at all: a temporary file beside the target, renamed over it.

A reader of the target sees the old file or the whole new one, never a part; a write that fails
(an exception, a full disk, Ctrl-C) leaves neither a partial target nor its temporary file. The
rename is atomic because the temporary file is in the target's own folder (same file system).

This is the one such writer of the package. It is standard library only, in Python 3.8 syntax,
because the collector (``forensics/collect/``, which runs on nodes from a zipapp with no
dependencies) writes its bundles and the zipapp with it: ``collect/zipapp.py`` puts this module
into the zipapp beside ``layout.py`` and ``descriptor.py``. Everything else (the lake's Parquet
files, DuckDB exports, redaction maps) uses it too.

    with atomic_path(out) as tmp:      # tmp: an empty file beside `out`, mode 0600
        write_something(tmp)           # any writer that takes a path
    # here `out` is the whole new file (flushed to disk first); after an exception, no trace
"""
from __future__ import annotations

import contextlib
import os
import tempfile


def umask_mode():
    """The mode a newly created file would get (0666 less the process's umask)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def reserve(target, prefix=None, suffix=".partial", mode=None):
    """Create an empty temporary file in the folder of `target`; returns (open fd, its path).
    Named ``<prefix>XXXXXXXX<suffix>`` (`prefix` default ``.<target name>.``). mkstemp makes it
    0600; `mode` changes that."""
    target = os.path.abspath(str(target))
    folder, name = os.path.split(target)
    fd, tmp = tempfile.mkstemp(prefix="." + name + "." if prefix is None else prefix, suffix=suffix, dir=folder)
    if mode is not None:
        try:
            os.chmod(tmp, mode)
        except BaseException:
            os.close(fd)
            discard(tmp)
            raise
    return fd, tmp


def commit(tmp, target, fsync=True):
    """Flush the written file `tmp` to disk (unless `fsync` is false) and rename it over `target`."""
    if fsync:
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    os.replace(tmp, str(target))


def discard(tmp, leftovers=()):
    """Remove `tmp` and the files ``tmp + s`` for each s in `leftovers`, those that exist."""
    for path in [tmp] + [tmp + s for s in leftovers]:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


@contextlib.contextmanager
def atomic_path(target, prefix=None, suffix=".partial", mode=None, fsync=True, leftovers=()):
    """Yield the path (str) of an empty temporary file beside `target` for the body to write (by
    name, with any writer; it may also remove it and let a writer create it). When the body ends
    normally the file is flushed to disk and renamed over `target`; when it raises (any exception,
    KeyboardInterrupt too) the file and its `leftovers` (suffixes: files a writer keeps beside it,
    such as DuckDB's ``.wal``) are removed and the exception goes on. `prefix`, `suffix`, `mode`:
    see :func:`reserve`."""
    fd, tmp = reserve(target, prefix=prefix, suffix=suffix, mode=mode)
    os.close(fd)
    try:
        yield tmp
        commit(tmp, target, fsync=fsync)
    except BaseException:
        discard(tmp, leftovers)
        raise


__all__ = ["atomic_path", "commit", "discard", "reserve", "umask_mode"]
