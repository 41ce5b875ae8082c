"""The one error type of the bundle layer."""
from __future__ import annotations


class BundleError(ValueError):
    """A bundle (or bundle input) that cannot be read or written; the message is one clear line.

    The CLI prints it as ``forensics: error: <message>`` and exits with status 2.
    """

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))
