"""The library's exceptions. Nothing in the library prints or exits: the CLI (:mod:`forensics.cli`)
alone turns these into one line on standard error and an exit status.

- :class:`ForensicsError`: base of them all; its message is one line.
- :class:`UserError`: the input cannot be used (a file, an option, a bundle); exit status 2
  unless `exit_code` says otherwise.
- :class:`BundleError`: a bundle (or an input to build one from) that cannot be read or written,
  including a limit it exceeds (size, members, time); also a ValueError, as it has always been.
- :class:`WriteError`: an output (a file, the cache, a temporary folder) that cannot be written
  because its disk is full, a quota or file-size limit is hit, or it is read-only: said as such,
  never blamed on the input (see :func:`out_of_space`).
"""
from __future__ import annotations

import errno as _errno

# errors of a write that the disk, not the input, is to blame for
SPACE_ERRNOS = frozenset({_errno.ENOSPC, _errno.EFBIG, _errno.EDQUOT, _errno.EROFS})
_SPACE_TEXTS = ("no space left on device", "file too large", "disk quota exceeded", "read-only file system")


class ForensicsError(Exception):
    """Base of the library's exceptions."""


class UserError(ForensicsError):
    """An error caused by the user's input: printed as one line, exit code 2 (or as given)."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code


class BundleError(UserError, ValueError):
    """A bundle (or bundle input) that cannot be read or written; the message is one clear line."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class WriteError(UserError):
    """An output that cannot be written (full disk, quota, file-size limit, read-only)."""


def out_of_space(exc: BaseException) -> str | None:
    """The reason ("No space left on device", "File too large", ...) when `exc` is a write that failed
    for lack of space or a read-only disk: an OSError with such an errno, or an error of a library
    (DuckDB, polars, Arrow) whose message says so; else None."""
    import os

    if isinstance(exc, OSError) and exc.errno in SPACE_ERRNOS:
        return os.strerror(exc.errno)
    low = str(exc).lower()
    for text in _SPACE_TEXTS:
        if text in low:
            return text[0].upper() + text[1:]
    return None


def write_error(exc: BaseException, where) -> WriteError | None:
    """A :class:`WriteError` naming `where` when `exc` is out of space (:func:`out_of_space`), else None."""
    why = out_of_space(exc)
    if why is None:
        return None
    return WriteError(f"{where}: cannot write: {why} (a limit of the disk written to, not a fault of the input)")


__all__ = ["BundleError", "ForensicsError", "UserError", "WriteError", "out_of_space", "write_error"]
