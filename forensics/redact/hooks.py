"""``--redact`` for the commands that write bundles: `forensics collect` and `forensics bundle`.

Each wrapper has the signature of the function it wraps, so the command calls it exactly as it
called the original: the bundle is written to a temporary file beside the output, redacted into
the output, and the temporary file removed. Nothing unredacted is left under the output's name:
if redaction fails after `collect` (whose capture cannot be repeated), the unredacted bundle is
kept beside it as ``<name>.UNREDACTED.<suffix>`` and a BundleError says so. Nothing here prints:
progress and warnings go to the `say` callback the command gives.
"""
from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from forensics.bundle.errors import BundleError

_SUFFIXES = (".tar.gz", ".tgz", ".tar.zst", ".tzst", ".tar")


def _split(path: Path) -> tuple[str, str]:
    name = path.name
    for s in _SUFFIXES:
        if name.endswith(s):
            return name[: -len(s)], s
    raise BundleError(f"output name must end with one of {', '.join(_SUFFIXES)}: {path}")


def _tmp_beside(out: Path) -> Path:
    _, suffix = _split(out)
    return out.parent / f".forensics-unredacted-{os.getpid()}{suffix}"


def redacting_build(build, enabled: bool, key_file=None, keep=(), mapping_out=None, say=None):
    """`build_bundle` itself, or one that redacts what it builds (same arguments, same summary).
    `say(message)`: progress and warnings of the redaction."""
    if not enabled:
        return build
    from forensics.redact import redact
    from forensics.redact.bundle import parse_keep

    parse_keep(keep)  # an unknown class fails before any work

    def wrapper(inputs, out, *args, **kwargs):
        out = Path(out)
        tmp = _tmp_beside(out)
        try:
            summary = build(inputs, tmp, *args, **kwargs)
            res = redact(tmp, out, key_file=key_file, keep=keep, mapping_out=mapping_out,
                         progress=say, warn=say)
        finally:
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
        summary["hosts"] = res["hosts"]
        summary["errors"] = []  # their file names hold the original host names
        summary["inputs"] = []  # (what each loose file was taken to be: it names the original host)
        summary["redaction"] = res
        return summary

    return wrapper


def redacting_collect(run, enabled: bool, key_file=None, keep=(), mapping_out=None, say=None):
    """`forensics.collect.main.run` itself, or one that redacts the bundle it writes (an unknown
    `keep` class or output suffix is a BundleError before anything is collected).

    Without ``--out`` the redacted bundle is named ``<host pseudonym>-<UTC time>.tar.gz``.
    `say(message)`: progress and warnings of the redaction.
    """
    if not enabled:
        return run
    from forensics.redact import redact
    from forensics.redact.bundle import parse_keep

    parse_keep(keep)

    def wrapper(duration, interval, out=None, *args, **kwargs):
        final = Path(out) if out else None
        tmp = _tmp_beside(final if final is not None else Path("x.tar.gz"))
        code = run(duration, interval, str(tmp), *args, **kwargs)
        if not tmp.exists():
            return code
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        target = final if final is not None else tmp.parent / f".forensics-redacted-{os.getpid()}.tar.gz"
        try:
            res = redact(tmp, target, key_file=key_file, keep=keep, mapping_out=mapping_out, progress=say, warn=say)
        except BundleError as exc:
            base, suffix = _split(final if final is not None else Path(f"unnamed-{stamp}.tar.gz"))
            keep_as = tmp.parent / f"{base}.UNREDACTED{suffix}"
            os.replace(tmp, keep_as)
            raise BundleError(f"redaction failed ({exc}); the unredacted bundle is {keep_as}") from None
        tmp.unlink()
        os.chmod(target, 0o600)  # as collect writes its bundles: they hold process command lines
        if final is None:
            host = res["hosts"][0] if res["hosts"] else "redacted"
            final = target.parent / f"{host}-{stamp}.tar.gz"
            os.replace(target, final)
        if say is not None:
            say(f"wrote {final} (key id {res['key_id']})")
        return code

    return wrapper
