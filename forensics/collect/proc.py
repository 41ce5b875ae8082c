"""Running one command safely: no shell, LC_ALL=C, own process group, timeout, byte cap (tail kept).

Standard library only, Python 3.8 syntax (runs on production GPU nodes).

A command's stdout goes to a :class:`CappedFile`: once more than ``cap`` bytes arrive, only the
last ``cap`` bytes are kept (cut at a line start) and the result says it was truncated. stderr keeps
its last few kB. On timeout or stop request the whole process group gets SIGTERM, then SIGKILL;
after the command exits, anything left in its group is killed before the command is reaped.

Descendants that leave the group (``setsid``, daemons) are found by a marker: every command runs
with ``FORENSICS_COLLECT_RUN=<run token>.<command number>`` in its environment, which children
inherit, and :func:`kill_marked` scans ``/proc/<pid>/environ`` for it (when a command is killed, and
once for the whole run at its end). Limits: a descendant that clears or replaces its environment
(``env -i``, a re-exec with a fresh one) and leaves the process group is not found, and without
root only the collector user's own processes can be read (the commands run as that user anyway).
"""
from __future__ import annotations

import datetime as _dt
import errno
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import time

from forensics.atomic import atomic_path

STDERR_TAIL = 4096
READ_CHUNK = 1 << 16
KILL_GRACE_S = 1.5
MARK = "FORENSICS_COLLECT_RUN"


def utcnow():
    return _dt.datetime.now(_dt.timezone.utc)


def iso(t):
    return t.astimezone(_dt.timezone.utc).isoformat(timespec="microseconds")


def command_env():
    """The environment of collected commands: ours with a C locale (sysstat changes output with it)."""
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("LC_") or k in ("LANG", "LANGUAGE"):
            del env[k]
    env.pop(MARK, None)
    env["LC_ALL"] = "C"
    env["LANG"] = "C"
    return env


def run_token():
    """A marker value no other run (and no other user) can guess: pid and 64 random bits."""
    return "%d-%s" % (os.getpid(), secrets.token_hex(8))


def marked(procfs="/proc", value=None, prefix=None):
    """Pids whose environment holds MARK=`value` (exactly) or MARK=`prefix`... (a whole run)."""
    key = (MARK + "=").encode()
    want = None if value is None else key + value.encode() + b"\0"
    start = None if prefix is None else key + prefix.encode()
    me = os.getpid()
    out = []
    try:
        entries = os.listdir(procfs)
    except OSError:
        return out
    for e in entries:
        if not e.isdigit() or int(e) == me:
            continue
        try:
            with open(os.path.join(procfs, e, "environ"), "rb") as fh:
                data = b"\0" + fh.read(1 << 20) + b"\0"
        except OSError:  # gone, or not ours to read
            continue
        if (want is not None and b"\0" + want in data) or (start is not None and b"\0" + start in data):
            out.append(int(e))
    return out


def kill_marked(sig, value=None, prefix=None, procfs="/proc"):
    """Send `sig` to every process carrying the marker; returns their pids."""
    pids = marked(procfs, value, prefix)
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
    return pids


def end_run(prefix, grace=None, procfs="/proc"):
    """Stop whatever a run left behind (descendants that left their group): SIGTERM, then SIGKILL.
    Returns how many processes were found."""
    found = kill_marked(signal.SIGTERM, prefix=prefix, procfs=procfs)
    if not found:
        return 0
    end = time.monotonic() + (KILL_GRACE_S if grace is None else grace)
    while time.monotonic() < end:
        time.sleep(0.05)
        if not _alive(marked(procfs, prefix=prefix), procfs):
            return len(found)
    killed = kill_marked(signal.SIGKILL, prefix=prefix, procfs=procfs)
    end = time.monotonic() + 2.0  # SIGKILL is not instant: wait until they are gone (or zombies)
    while _alive(killed, procfs) and time.monotonic() < end:
        time.sleep(0.02)
    return len(set(found) | set(killed))


def _alive(pids, procfs="/proc"):
    """The pids of `pids` that are not zombies."""
    out = []
    for pid in pids:
        try:
            with open(os.path.join(procfs, str(pid), "stat"), "rb") as fh:
                state = fh.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != b"Z":
            out.append(pid)
    return out


class CappedFile(object):
    """An append-only file of which at most `cap` bytes (the tail) survive."""

    def __init__(self, path, cap, append=True):
        self.path = path
        self.cap = int(cap)
        self.fh = open(path, "ab" if append else "wb")
        self.base = self.fh.tell()  # bytes that were there before (earlier snapshots)
        self.seen = 0
        self.truncated = False

    def write(self, data):
        if not data:
            return
        self.seen += len(data)
        self.fh.write(data)
        if self.fh.tell() - self.base > 2 * self.cap + READ_CHUNK:
            self._trim()

    def _trim(self):
        """Keep the base (earlier content) and the last `cap` bytes of what this run wrote, from a line start.

        Streams through the file in blocks: memory stays at one block whatever the cap or line length."""
        self.fh.flush()
        size = self.fh.tell()
        written = size - self.base
        if written <= self.cap:
            return
        self.truncated = True
        self.fh.close()
        start = size - self.cap
        with open(self.path, "rb") as src:  # the first line start in the kept tail (none: cut mid-line)
            src.seek(start)
            pos = start
            while pos < size - 1:
                block = src.read(min(1 << 20, size - pos))
                if not block:
                    break
                nl = block.find(b"\n")
                if nl >= 0:
                    if pos + nl + 1 < size:
                        start = pos + nl + 1
                    break
                pos += len(block)
        # not flushed to disk: the file is rewritten often while the command runs, and read back at once
        with atomic_path(self.path, suffix=".trim", fsync=False) as tmp, \
                open(self.path, "rb") as src, open(tmp, "wb") as dst:
            _copy(src, dst, self.base)
            src.seek(start)
            _copy(src, dst, size - start)
        self.fh = open(self.path, "ab")

    def close(self):
        """Trim to the cap; returns the number of bytes this run left in the file."""
        self._trim()
        self.fh.flush()
        kept = self.fh.tell() - self.base
        self.fh.close()
        return kept


def _copy(src, dst, n):
    """Copy `n` bytes from src to dst in blocks."""
    while n > 0:
        block = src.read(min(n, 1 << 20))
        if not block:
            break
        dst.write(block)
        n -= len(block)


def _killpg(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except OSError as exc:
        if exc.errno not in (errno.ESRCH, errno.EPERM):
            raise


def _exited_unreaped(pid):
    """True once `pid` has exited (it stays a zombie, so its process group id stays reserved)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


class Result(object):
    __slots__ = ("argv", "start", "end", "exit_code", "bytes", "truncated", "timed_out", "stopped", "error", "stderr_tail")

    def __init__(self, argv):
        self.argv = list(argv)
        self.start = utcnow()
        self.end = None
        self.exit_code = None
        self.bytes = 0
        self.truncated = False
        self.timed_out = False
        self.stopped = False
        self.error = None
        self.stderr_tail = ""

    def ok(self):
        return self.error is None and self.exit_code == 0 and not self.timed_out


def _kill(pgid, sig, marker):
    """`sig` to the command's process group and to its descendants that left it (by marker)."""
    _killpg(pgid, sig)
    if marker:
        kill_marked(sig, value=marker)


def run(argv, out, timeout, stop=None, expected_stop=False, env=None, marker=None):
    """Run `argv` writing stdout to the CappedFile `out`; never longer than `timeout` seconds.

    `stop` (a threading.Event) ends the command early (SIGTERM to its group). With
    `expected_stop` (streams like `nvidia-smi -l` that only end when told), being stopped or
    reaching the timeout is the normal end and not an error. `marker`: the value of MARK in the
    command's environment, by which its descendants outside its group are found and killed with it.
    """
    res = Result(argv)
    env = dict(env or command_env())
    if marker:
        env[MARK] = marker
    exe = shutil.which(argv[0], path=env.get("PATH"))
    if exe is None:
        res.error = "not found"
        res.end = utcnow()
        out.close()
        return res
    try:
        proc = subprocess.Popen([exe] + list(argv[1:]), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, start_new_session=True,
                                close_fds=True)
    except OSError as exc:
        res.error = "cannot start: %s" % (exc.strerror or exc)
        res.end = utcnow()
        out.close()
        return res
    pgid = proc.pid
    deadline = time.monotonic() + max(0.0, float(timeout))
    err_tail = b""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "out")
    sel.register(proc.stderr, selectors.EVENT_READ, "err")
    open_pipes = 2
    term_at = None
    try:
        while open_pipes:
            now = time.monotonic()
            if term_at is None and (now >= deadline or (stop is not None and stop.is_set())):
                if now >= deadline:
                    res.timed_out = True
                else:
                    res.stopped = True
                _kill(pgid, signal.SIGTERM, marker)
                term_at = now
            if term_at is not None and now - term_at > KILL_GRACE_S:
                _kill(pgid, signal.SIGKILL, marker)
                if now - term_at > KILL_GRACE_S + 3:
                    break  # pipes held open by something we cannot kill: give up reading
            wait = 0.2 if term_at is not None else min(0.2, max(0.0, deadline - now))
            for key, _ in sel.select(timeout=wait):
                try:
                    data = os.read(key.fileobj.fileno(), READ_CHUNK)
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(key.fileobj)
                    open_pipes -= 1
                    continue
                if key.data == "out":
                    out.write(data)
                else:
                    err_tail = (err_tail + data)[-STDERR_TAIL:]
        # stdout closed: wait for the exit (bounded), then kill what is left of the group, then reap
        end_wait = time.monotonic() + (KILL_GRACE_S if term_at is not None else max(0.5, deadline - time.monotonic()))
        while not _exited_unreaped(proc.pid):
            if time.monotonic() >= end_wait:
                if term_at is None:
                    res.timed_out = True
                    _kill(pgid, signal.SIGTERM, marker)
                    term_at = time.monotonic()
                    end_wait = term_at + KILL_GRACE_S
                    continue
                _kill(pgid, signal.SIGKILL, marker)
                break
            time.sleep(0.02)
        _kill(pgid, signal.SIGKILL, marker if term_at is not None else None)
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
    finally:
        sel.close()
        for fh in (proc.stdout, proc.stderr):
            try:
                fh.close()
            except OSError:
                pass
        res.bytes = out.close()
        res.truncated = out.truncated
    res.end = utcnow()
    res.stderr_tail = err_tail.decode("utf-8", "replace")
    if res.timed_out or res.stopped:
        res.exit_code = None
        if expected_stop:
            res.timed_out = False
        elif res.timed_out:
            res.error = "timed out after %gs" % float(timeout)
        else:
            res.error = "stopped (collection interrupted)"
    else:
        res.exit_code = code
        if code is None:
            res.error = "did not exit"
        elif code < 0:
            res.error = "killed by signal %d" % -code
        elif code != 0:
            res.error = "exit status %d" % code
    return res
