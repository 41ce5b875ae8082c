"""The local redaction key: read from a key file, or created there (mode 0600) on first use.

The key never enters a bundle; what a bundle records is its *key id* (the first 8 hex digits of
HMAC(key, "key-id")), so the owner can tell which key redacted it. The default key file is
``$FORENSICS_REDACT_KEY_FILE``, else ``~/.config/forensics/redact.key``: redacting several bundles
on one machine gives the same pseudonyms without any option. A key file holds 64 hex digits (what
this module writes) or any other secret of 16 bytes or more (used as is).
"""
from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from forensics.bundle.errors import BundleError

ENV = "FORENSICS_REDACT_KEY_FILE"


def default_key_file() -> Path:
    env = os.environ.get(ENV)
    if env:
        return Path(env)
    return Path.home() / ".config" / "forensics" / "redact.key"


def load_key(path: Path | str | None = None, create: bool = True, warn=None) -> tuple[bytes, Path, bool]:
    """(key bytes, key file, created) for the key file `path` (default: :func:`default_key_file`)."""
    p = Path(path) if path is not None else default_key_file()
    created = False
    if not p.exists():
        if not create:
            raise BundleError(f"{p}: no such key file")
        if path is None:
            p.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        elif not p.parent.is_dir():
            raise BundleError(f"{p.parent}: no such directory (for the key file)")
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:  # created concurrently: read it below
            pass
        except OSError as exc:
            raise BundleError(f"{p}: cannot create the key file ({exc.strerror})") from None
        else:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32) + "\n")
            created = True
    if not p.is_file():
        raise BundleError(f"{p}: key file is not a regular file")
    mode = p.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO) and warn:
        warn(f"{p}: key file is readable by others (chmod 600 it)")
    data = p.read_bytes()
    text = data.strip()
    try:
        key = bytes.fromhex(text.decode("ascii")) if len(text) >= 32 else b""
    except (UnicodeDecodeError, ValueError):
        key = b""
    if not key:
        key = data
    if len(key) < 16:
        raise BundleError(f"{p}: key file holds fewer than 16 bytes of key")
    return key, p, created
