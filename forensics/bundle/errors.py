"""The one error type of the bundle layer (defined with the library's others in :mod:`forensics.errors`)."""
from __future__ import annotations

from forensics.errors import BundleError

__all__ = ["BundleError"]
