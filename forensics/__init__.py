"""forensics: offline log and counter forensics for GPU training clusters."""

__version__ = "0.1.0"


def open_bundle(path, **kwargs):
    """Open a bundle (tar or directory) for SQL; see :mod:`forensics.db`."""
    from forensics.db import open_bundle as _open

    return _open(path, **kwargs)
