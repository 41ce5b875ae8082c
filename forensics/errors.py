"""The library's exceptions. Nothing in the library prints or exits: the CLI (:mod:`forensics.cli`)
alone turns these into one line on standard error and an exit status.

- :class:`ForensicsError`: base of them all; its message is one line.
- :class:`UserError`: the input cannot be used (a file, an option, a bundle); exit status 2
  unless `exit_code` says otherwise.
- :class:`BundleError`: a bundle (or an input to build one from) that cannot be read or written,
  including a limit it exceeds (size, members, time); also a ValueError, as it has always been.
"""
from __future__ import annotations


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


__all__ = ["BundleError", "ForensicsError", "UserError"]
