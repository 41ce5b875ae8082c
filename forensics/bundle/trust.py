"""Which parsed tables may be used as they are: only those this machine built, for these inputs.

A bundle may ship a ``tables/`` folder and a ``tables/_meta.json`` claiming current parser
versions; believing it would let a bundle forge findings (rows the raw files never said) or crash
the reader with columns of the wrong type. So:

- :func:`seal` adds to the ``_meta.json`` that ingest writes: every table file with its size, a
  digest of the raw inputs it was parsed from (each file's path, size, modification time and content, or
  change time for a large one, under ``hosts/``: see :func:`tree_digest`; and the archive's member list) and an HMAC of all that under a key that never
  leaves this machine (``~/.config/forensics/tables.key`` or ``$FORENSICS_TABLES_KEY_FILE``,
  mode 0600, made on first use);
- :func:`current` accepts ``tables/`` only when that seal verifies, the parser versions are current,
  the raw inputs are unchanged and every table file is there with its size. Anything else (a shipped
  ``_meta.json``, a file rewritten or deleted, a cache entry removed in part) means: parse again from
  the raw files;
- :func:`check_parsed_dir` is for a folder holding only ``tables/`` (nothing to re-parse from): no
  link and nothing but regular files under it (see also :func:`forensics.db._build.check_types` for
  the columns' types and time ranges).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from pathlib import Path

from forensics.bundle.errors import BundleError
from forensics.layout import ARCHIVE_MEMBERS, HOSTS_DIR, TABLES_DIR

META = "_meta.json"
FOOTERS = "footers"  # the table files' footer facts ingest records (forensics.bundle.footers.record)
DERIVED = "_derived"  # rebuilt caches of views, checked by forensics.db.derived itself
_process_key: bytes | None = None


def _key() -> bytes:
    """This machine's sealing key (created once); a per-process key where none can be stored."""
    global _process_key
    path = key_path()
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as fh:
                key = fh.read(64)
            if len(key) == 32:
                return key
            break
        except FileNotFoundError:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            except FileExistsError:
                continue  # another process made it: read that one
            except OSError:
                break
            with os.fdopen(fd, "wb") as fh:
                fh.write(secrets.token_bytes(32))
        except OSError:
            break
    if _process_key is None:
        _process_key = secrets.token_bytes(32)
    return _process_key


def key_path() -> Path:
    env = os.environ.get("FORENSICS_TABLES_KEY_FILE")
    return Path(env) if env else Path.home() / ".config" / "forensics" / "tables.key"


def raw_digest(root: Path) -> str:
    """Digest of what ingest reads: every entry under ``hosts/`` (see :func:`tree_digest`) and the
    archive member list of a cache entry."""
    h = hashlib.sha256(tree_digest(root / HOSTS_DIR, root).encode())
    try:
        h.update((root / ARCHIVE_MEMBERS).read_bytes())
    except OSError:
        pass
    return h.hexdigest()


#: files up to this size enter :func:`tree_digest` by their content, larger ones by their change time
CONTENT_DIGEST_BYTES = 1 << 20


def tree_digest(base: Path, rel_to: Path | None = None) -> str:
    """Digest of every entry under `base` (links not followed): its path, type, size and modification
    time, and what a copy keeps that a rewrite changes: a regular file's SHA-256 up to
    :data:`CONTENT_DIGEST_BYTES`, a link's target, a larger file's change time. Rewriting, adding,
    removing or renaming a file changes it, a restored mtime does not hide a rewrite (the content, or the
    change time, moves), and a copy made with ``cp -a`` (new change times and inodes, same times and bytes)
    does not: the files under ``hosts/`` of an extracted archive in the cache are all small (host.json,
    commands.jsonl: the raw outputs stay in the archive), so a cache folder copied that way is reused as it is."""
    h = hashlib.sha256()
    root = rel_to if rel_to is not None else base
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames + dirnames):
            p = os.path.join(dirpath, name)
            try:
                st = os.lstat(p)
                kind = stat.S_IFMT(st.st_mode)
                if kind == stat.S_IFDIR:
                    what = ""  # (its entries are in the digest themselves)
                elif kind == stat.S_IFLNK:
                    what = os.readlink(p)
                elif kind == stat.S_IFREG and st.st_size <= CONTENT_DIGEST_BYTES:
                    what = _small_file_sha256(p, st)
                else:
                    what = str(st.st_ctime_ns)
            except OSError:
                continue
            rel = os.path.relpath(p, root)
            h.update(f"{rel}\0{kind}\0{st.st_size}\0{st.st_mtime_ns}\0{what}\n".encode())
    return h.hexdigest()


def _small_file_sha256(path: str, st: os.stat_result) -> str:
    """SHA-256 of the regular file `path` (`st`: its lstat), read without following a link put in its
    place meanwhile; its change time when it changed type or size meanwhile (the digest then differs)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return f"unreadable {st.st_ctime_ns}"
    with os.fdopen(fd, "rb") as fh:
        now = os.fstat(fh.fileno())
        if not stat.S_ISREG(now.st_mode) or now.st_size != st.st_size:
            return f"changed {st.st_ctime_ns}"
        return hashlib.sha256(fh.read(CONTENT_DIGEST_BYTES + 1)).hexdigest()


def table_files(tables: Path) -> dict[str, int]:
    """{relative path: size} of every file under `tables` but _meta.json and the _derived/ cache."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(tables, followlinks=False):
        rel_dir = os.path.relpath(dirpath, tables)
        if rel_dir == DERIVED or rel_dir.startswith(DERIVED + os.sep):
            dirnames[:] = []
            continue
        for name in filenames:
            rel = os.path.normpath(os.path.join(rel_dir, name)).replace(os.sep, "/")
            if rel != META:
                out[rel] = os.lstat(os.path.join(dirpath, name)).st_size
    return out


def _mac(meta: dict) -> str:
    body = json.dumps({k: v for k, v in meta.items() if k != "seal"}, sort_keys=True).encode()
    return hmac.new(_key(), body, hashlib.sha256).hexdigest()


def seal(meta: dict, tables: Path, raw: str) -> dict:
    """`meta` with the table files of `tables`, the digest `raw` of the inputs they were parsed
    from (:func:`raw_digest`, taken before parsing began) and the seal."""
    out = dict(meta, files=table_files(tables), raw=raw)
    out["seal"] = _mac(out)
    return out


def sealed(meta: dict) -> bool:
    """Whether `meta` (a ``_meta.json`` read) carries a seal this machine made over all it says (its
    claims about the table files then came from this machine's ingest; whether the files are still
    those it sealed is the reader's to check, see :func:`current`)."""
    return isinstance(meta, dict) and isinstance(meta.get("seal"), str) and hmac.compare_digest(meta["seal"], _mac(meta))


def unsealed(meta: dict) -> dict:
    """`meta` without what only this machine can check (the seal, the digest of the raw files'
    local sizes and times, and the footer facts, believed only under the seal): for tables written
    into a bundle that leaves it, where a reader never trusts them anyway and the same inputs must
    give the same bytes."""
    return {k: v for k, v in meta.items() if k not in ("seal", "raw", FOOTERS)}


def claimed_current(root: Path, versions: dict[str, int]) -> bool:
    """Whether ``root/tables/_meta.json`` *claims* parsers at least `versions` (unverified: for
    redaction, which rewrites whatever tables a bundle ships and checks every value it writes;
    nothing reads such tables as fact, see :func:`current`)."""
    try:
        meta = json.loads((Path(root) / TABLES_DIR / META).read_text())
    except (OSError, ValueError, RecursionError):
        return False
    have = meta.get("parser_versions") if isinstance(meta, dict) else None
    return isinstance(have, dict) and all(isinstance(have.get(n), int) and have[n] >= v for n, v in versions.items())


def current(root: Path, versions: dict[str, int]) -> bool:
    """Whether ``root/tables`` was built here, by parsers at least `versions`, from the raw inputs
    as they are now, and is whole."""
    tables = Path(root) / TABLES_DIR
    try:
        meta = json.loads((tables / META).read_text())
    except (OSError, ValueError, RecursionError):
        return False
    if not sealed(meta):
        return False
    have = meta.get("parser_versions")
    if not isinstance(have, dict):
        return False
    for name, version in versions.items():
        v = have.get(name)
        if not isinstance(v, int) or v < version:
            return False
    try:
        if table_files(tables) != meta.get("files"):
            return False
    except OSError:
        return False
    return meta.get("raw") == raw_digest(Path(root))


def check_parsed_dir(root: Path) -> None:
    """A folder of parsed tables only: nothing under ``tables/`` but folders and regular files, no link."""
    tables = Path(root) / TABLES_DIR
    st = os.lstat(tables)
    if stat.S_ISLNK(st.st_mode):
        raise BundleError(f"refusing bundle: {TABLES_DIR}/ is a symbolic link")
    for dirpath, dirnames, filenames in os.walk(tables, followlinks=False):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            mode = os.lstat(p).st_mode
            rel = os.path.relpath(p, root)
            if stat.S_ISLNK(mode):
                raise BundleError(f"refusing bundle: symbolic link {rel!r} in its parsed tables")
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise BundleError(f"refusing bundle: {rel!r} is not a regular file")


HASH_CHUNK = 4 << 20


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while True:
            block = fh.read(HASH_CHUNK)
            if not block:
                break
            h.update(block)
    return h.hexdigest()


def check_members(root: Path, manifest: dict, deferred: dict[str, int]) -> None:
    """The manifest's member list (written by ``forensics bundle`` and ``redact``) against what the
    archive held: every listed member present with its size, and the SHA-256 of those extracted
    to disk (`deferred`: {path: size} of the raw files left in the archive, whose sizes the tar
    headers gave). BundleError names the first member missing or damaged."""
    listed = manifest.get("members")
    if listed is None:
        return  # bundles of older writers and of the collector have no list
    if not isinstance(listed, dict):
        raise BundleError("manifest.json: members must be an object")
    for rel, info in listed.items():
        if not isinstance(info, dict) or not isinstance(info.get("size"), int) or not isinstance(info.get("sha256"), str):
            raise BundleError(f"manifest.json: member {rel[:200]!r} needs an integer size and a sha256")
        if rel in deferred:
            if deferred[rel] != info["size"]:
                raise BundleError(f"damaged bundle: {rel!r} holds {deferred[rel]} bytes, the manifest says {info['size']}")
            continue
        p = Path(root) / rel
        try:
            st = os.lstat(p)
        except (OSError, ValueError):
            raise BundleError(f"damaged bundle: {rel!r} is missing (the manifest lists {len(listed)} members; "
                              "a truncated or altered archive)") from None
        if not stat.S_ISREG(st.st_mode) or st.st_size != info["size"] or file_sha256(p) != info["sha256"]:
            raise BundleError(f"damaged bundle: {rel!r} differs from the size and SHA-256 the manifest lists")
