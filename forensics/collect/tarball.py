"""Atomic tar writing (standard library only; zstd when the optional zstandard package is present).

Members are added from bytes or files; the archive is written to a temporary file in the target
folder and renamed into place on close, so a reader never sees a half-written bundle (the steps
are :mod:`forensics.atomic`'s, which the zipapp carries; the writer stays open across add_* calls,
so it uses reserve/commit/discard rather than the context manager).
"""
from __future__ import annotations

import io
import os
import tarfile
import time

from forensics.atomic import commit, discard, reserve, umask_mode

SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.zst", ".tzst")


def compression_for(path):
    """"" (plain tar), "gz" or "zst" from the file name; ValueError for anything else."""
    p = str(path)
    if p.endswith(".tar"):
        return ""
    if p.endswith(".tar.gz") or p.endswith(".tgz"):
        return "gz"
    if p.endswith(".tar.zst") or p.endswith(".tzst"):
        return "zst"
    raise ValueError("output name must end with one of %s: %s" % (", ".join(SUFFIXES), p))


class AtomicTar(object):
    """Write a tar (``.tar``, ``.tar.gz``/``.tgz``, ``.tar.zst``/``.tzst``) atomically."""

    def __init__(self, path, mtime=None, level=None, mode=None):
        self.path = str(path)
        comp = compression_for(self.path)
        if comp == "zst":
            try:
                import zstandard
            except ImportError:
                raise ValueError("zstd output needs the zstandard package (use .tar.gz): %s" % self.path)
        self.mtime = int(time.time()) if mtime is None else int(mtime)
        # by default a bundle gets the usual file mode (a temporary file is made 0600)
        fd, self.tmp = reserve(self.path, prefix=".forensics-", mode=umask_mode() if mode is None else mode)
        self._fh = os.fdopen(fd, "wb")
        self._gz = None
        if comp == "gz":
            import gzip

            self._gz = gzip.GzipFile(fileobj=self._fh, mode="wb", mtime=self.mtime,
                                     compresslevel=6 if level is None else level)
        elif comp == "zst":
            cctx = zstandard.ZstdCompressor(level=10 if level is None else level)
            self._gz = cctx.stream_writer(self._fh, closefd=False)
        self.tar = tarfile.open(fileobj=self._gz if self._gz is not None else self._fh, mode="w",
                                format=tarfile.PAX_FORMAT)
        self.names = set()
        self.closed = False

    def _info(self, name, size):
        if name in self.names:
            raise ValueError("duplicate bundle member %r" % name)
        self.names.add(name)
        info = tarfile.TarInfo(name)
        info.size = size
        info.mtime = self.mtime
        info.mode = 0o644
        info.uname = info.gname = ""
        return info

    def add_bytes(self, name, data):
        self.tar.addfile(self._info(name, len(data)), io.BytesIO(data))

    def add_file(self, name, path):
        """Add the file at `path` as member `name`, streaming (never read whole into memory)."""
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            self.tar.addfile(self._info(name, size), fh)

    def close(self):
        if self.closed:
            return
        self.tar.close()
        if self._gz is not None:
            self._gz.close()
        self._fh.close()
        commit(self.tmp, self.path)
        self.closed = True

    def abort(self):
        if self.closed:
            return
        self.closed = True
        for obj in (self.tar, self._gz, self._fh):
            if obj is None:
                continue
            try:
                obj.close()
            except Exception:
                pass
        discard(self.tmp)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False
