"""Atomic tar writing (standard library only).

Members are added from bytes; the archive is written to a temporary file in the target folder and
renamed into place on close, so a reader never sees a half-written bundle.
"""
from __future__ import annotations

import io
import os
import tarfile
import tempfile
import time

_MODES = {".tar": "w", ".gz": "w:gz", ".tgz": "w:gz"}


class AtomicTar(object):
    """Write a tar (``.tar``, ``.tar.gz``/``.tgz``) atomically. ``.zst`` is handled by the bundle layer."""

    def __init__(self, path, mtime=None):
        self.path = str(path)
        mode = "w"
        for suffix, m in _MODES.items():
            if self.path.endswith(suffix):
                mode = m
        self.mtime = int(time.time()) if mtime is None else int(mtime)
        folder = os.path.dirname(os.path.abspath(self.path))
        fd, self.tmp = tempfile.mkstemp(prefix=".forensics-", suffix=".partial", dir=folder)
        self._fh = os.fdopen(fd, "wb")
        if mode == "w:gz":
            import gzip

            self._gz = gzip.GzipFile(fileobj=self._fh, mode="wb", mtime=self.mtime, compresslevel=6)
            self.tar = tarfile.open(fileobj=self._gz, mode="w", format=tarfile.PAX_FORMAT)
        else:
            self._gz = None
            self.tar = tarfile.open(fileobj=self._fh, mode="w", format=tarfile.PAX_FORMAT)
        self.names = set()

    def add_bytes(self, name, data):
        if name in self.names:
            raise ValueError("duplicate bundle member %r" % name)
        self.names.add(name)
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mtime = self.mtime
        info.mode = 0o644
        info.uname = info.gname = ""
        self.tar.addfile(info, io.BytesIO(data))

    def add_file(self, name, path):
        with open(path, "rb") as fh:
            self.add_bytes(name, fh.read())

    def close(self):
        self.tar.close()
        if self._gz is not None:
            self._gz.close()
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        os.replace(self.tmp, self.path)

    def abort(self):
        try:
            self.tar.close()
        except Exception:
            pass
        try:
            self._fh.close()
        finally:
            if os.path.exists(self.tmp):
                os.unlink(self.tmp)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False
