"""manifest.json: its shape checked (format version, host names usable as one path component,
times, kind, redaction) before anything in a bundle is read by the names it gives."""
from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

from forensics.bundle.errors import BundleError
from forensics.layout import FORMAT_VERSION, HOSTS_DIR, MANIFEST

MANIFEST_MAX_BYTES = 4 << 20
KINDS = ("node", "cluster", "loose", "simulated")
_HOST_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$")


def _why(exc: BaseException) -> str:
    """What is wrong with a JSON text, in a few words (never a whole 5000-digit number)."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    msg = getattr(exc, "msg", None) or str(exc)
    return "a number too long" if "integer string conversion" in msg else msg.split(";")[0][:120]


def check_host_name(name: object, where: str = "manifest") -> str:
    """A host name usable as one path component (letters, digits, '.', '_', '-')."""
    if not isinstance(name, str) or not _HOST_RE.fullmatch(name) or name in (".", ".."):
        raise BundleError(f"{where}: unsafe or invalid host name {name!r}")
    return name


def _iso(value: object, key: str) -> None:
    if not isinstance(value, str):
        raise BundleError(f"manifest.json: {key} must be an ISO-8601 string")
    try:
        dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise BundleError(f"manifest.json: {key} is not an ISO-8601 time: {value[:60]!r}") from None


def check_manifest(obj: object) -> dict:
    """Validate the shape of a parsed manifest.json; returns it."""
    if not isinstance(obj, dict):
        raise BundleError("manifest.json: not a JSON object")
    if "format_version" not in obj:
        raise BundleError("manifest.json: no format_version")
    fv = obj["format_version"]
    if not isinstance(fv, int) or isinstance(fv, bool):
        raise BundleError(f"manifest.json: format_version must be an integer, not {fv!r}"[:200])
    if fv != FORMAT_VERSION:
        raise BundleError(f"unsupported bundle format version {fv} (this forensics reads version {FORMAT_VERSION})")
    hosts = obj.get("hosts")
    if not isinstance(hosts, list):
        raise BundleError("manifest.json: hosts must be a list of host names")
    for h in hosts:
        check_host_name(h, "manifest.json")
    if len(set(hosts)) != len(hosts):
        raise BundleError("manifest.json: duplicate host names in hosts")
    if "created_by" in obj and not isinstance(obj["created_by"], str):
        raise BundleError("manifest.json: created_by must be a string")
    if "created_at" in obj:
        _iso(obj["created_at"], "created_at")
    if "kind" in obj and obj["kind"] not in KINDS:
        raise BundleError(f"manifest.json: kind must be one of {', '.join(KINDS)}, not {obj['kind']!r}"[:200])
    if obj.get("redaction") is not None and not isinstance(obj["redaction"], dict):
        raise BundleError("manifest.json: redaction must be null or an object")
    return obj


def read_manifest(root: Path) -> dict:
    p = root / MANIFEST
    if p.is_symlink() or not p.is_file():
        raise BundleError(f"{root}: no manifest.json (not a forensics bundle)")
    if p.stat().st_size > MANIFEST_MAX_BYTES:
        raise BundleError("manifest.json: too large")
    try:
        obj = json.loads(p.read_bytes().decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # (bad UTF-8 or JSON, a 5000-digit number, deep nesting)
        raise BundleError(f"manifest.json: not valid JSON ({_why(exc)})") from None
    man = check_manifest(obj)
    for h in man["hosts"]:
        d = root / HOSTS_DIR / h
        if d.is_symlink() or not d.is_dir():
            raise BundleError(f"manifest.json lists host {h!r} but the bundle has no {HOSTS_DIR}/{h}/")
    return man
