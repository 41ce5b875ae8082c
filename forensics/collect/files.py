"""Opening the files the collector copies (NCCL logs) without following a link it was not told to.

Standard library only, Python 3.8 syntax. The collector runs as root (``sudo``) and NCCL logs often
sit in world-writable folders (``/tmp/nccl.%h.%p.log``), where anybody can plant a link to a
root-only file or to ``/proc/<pid>/environ``, or a FIFO that blocks a reader. So a file matched by a
``--nccl-log`` glob is opened only this way:

- the glob's literal folder (the part before the first wildcard, which the user named) is opened
  as given; a link among its own components is followed only when that link is owned by root or
  by a job user (what the kernel's ``fs.protected_symlinks`` allows in sticky folders), and it must
  not resolve into ``/proc``, ``/sys`` or ``/dev``;
- every component below it is opened relative to its parent's descriptor with ``O_NOFOLLOW``
  (``openat``), so no link and no ``..`` is followed there and nothing resolves outside that folder;
- the file itself is opened ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO cannot block) and kept only when
  ``fstat`` of the opened descriptor says: a regular file, one link (a hard link to another file is
  refused), owned by root or by a job user (:func:`job_uids`).

:func:`open_captured` returns the open descriptor or raises :class:`Refused` saying why.
"""
from __future__ import annotations

import glob
import os
import stat

REFUSED_ROOTS = ("/proc", "/sys", "/dev")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class Refused(Exception):
    """A file the collector will not read (the message says why)."""


def job_uids(process_uids=()):
    """Owners whose files may be copied: root, the user running the collector (and the one who ran
    sudo), and the owners of the recorded GPU processes."""
    uids = {0, os.getuid(), os.geteuid()}
    sudo = os.environ.get("SUDO_UID", "")
    if sudo.isdigit():
        uids.add(int(sudo))
    uids.update(int(u) for u in process_uids if u is not None)
    return uids


def literal_base(pattern):
    """The folder of a glob pattern before its first wildcard (absolute, normalised)."""
    parts = os.path.abspath(pattern).split(os.sep)
    fixed = []
    for p in parts[:-1]:
        if glob.has_magic(p):
            break
        fixed.append(p)
    return os.sep.join(fixed) or os.sep


def _refused_root(path):
    return any(path == r or path.startswith(r + os.sep) for r in REFUSED_ROOTS)


def _check_base(base, owners):
    """Links among the base folder's components: only those owned by root or a job user."""
    path = os.sep
    for comp in base.split(os.sep):
        if not comp:
            continue
        path = os.path.join(path, comp)
        try:
            st = os.lstat(path)
        except OSError as exc:
            raise Refused("cannot read %s: %s" % (path, exc.strerror or exc))
        if stat.S_ISLNK(st.st_mode) and st.st_uid not in owners:
            raise Refused("%s is a link owned by uid %d (not root or a job user): not followed" % (path, st.st_uid))
    real = os.path.realpath(base)
    if _refused_root(real) or _refused_root(base):
        raise Refused("%s is under %s: never copied" % (base, ", ".join(REFUSED_ROOTS)))
    return real


def open_captured(path, base, owners):
    """A read-only descriptor of the regular file `path` (a match of a glob whose literal folder is `base`)."""
    path = os.path.abspath(path)
    if _refused_root(path):
        raise Refused("under %s: never copied" % ", ".join(REFUSED_ROOTS))
    rel = os.path.relpath(path, base)
    parts = [p for p in rel.split(os.sep) if p not in ("", ".")]
    if not parts or ".." in parts:
        raise Refused("outside the folder asked for (%s)" % base)
    dfd = os.open(_check_base(base, owners), _DIR_FLAGS)
    try:
        for comp in parts[:-1]:
            try:
                nfd = os.open(comp, _DIR_FLAGS | getattr(os, "O_NOFOLLOW", 0), dir_fd=dfd)
            except OSError as exc:
                raise Refused("%s: %s (links are not followed)" % (comp, exc.strerror or exc))
            os.close(dfd)
            dfd = nfd
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=dfd)
        except OSError as exc:
            if os.path.islink(path):
                raise Refused("a symbolic link: not followed (name its target if it is wanted)")
            raise Refused("cannot read: %s" % (exc.strerror or exc))
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("not a regular file")
        if st.st_nlink != 1:
            raise Refused("a file with %d hard links (may be another file): not copied" % st.st_nlink)
        if st.st_uid not in owners:
            raise Refused("owned by uid %d, not root or a job user: not copied" % st.st_uid)
    except BaseException:
        os.close(fd)
        raise
    return fd
