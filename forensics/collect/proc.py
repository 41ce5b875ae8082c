"""Running one command safely: no shell, LC_ALL=C, own process group, timeout, byte cap (tail kept).

Standard library only, Python 3.8 syntax (runs on production GPU nodes).

A command's stdout goes to a :class:`CappedFile`: once more than ``cap`` bytes arrive, only the
last ``cap`` bytes are kept (cut at a line start) and the result says it was truncated. stderr keeps
its last few kB. On timeout or stop request the whole process group gets SIGTERM, then SIGKILL;
after the command exits, anything left in its group is killed before the command is reaped, so no
child outlives the collector.
"""
from __future__ import annotations

import datetime as _dt
import errno
import os
import selectors
import shutil
import signal
import subprocess
import time

STDERR_TAIL = 4096
READ_CHUNK = 1 << 16
KILL_GRACE_S = 1.5


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
    env["LC_ALL"] = "C"
    env["LANG"] = "C"
    return env


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
        """Keep the base (earlier content) and the last `cap` bytes of what this run wrote, from a line start."""
        self.fh.flush()
        size = self.fh.tell()
        written = size - self.base
        if written <= self.cap:
            return
        self.truncated = True
        with open(self.path, "rb") as src:
            src.seek(size - self.cap)
            tail = src.read(self.cap)
        nl = tail.find(b"\n")
        if 0 <= nl < len(tail) - 1:
            tail = tail[nl + 1:]
        self.fh.close()
        tmp = self.path + ".trim"
        with open(self.path, "rb") as src, open(tmp, "wb") as dst:
            left = self.base
            while left > 0:
                block = src.read(min(left, 1 << 20))
                if not block:
                    break
                dst.write(block)
                left -= len(block)
            dst.write(tail)
        os.replace(tmp, self.path)
        self.fh = open(self.path, "ab")

    def close(self):
        """Trim to the cap; returns the number of bytes this run left in the file."""
        self._trim()
        self.fh.flush()
        kept = self.fh.tell() - self.base
        self.fh.close()
        return kept


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


def run(argv, out, timeout, stop=None, expected_stop=False, env=None):
    """Run `argv` writing stdout to the CappedFile `out`; never longer than `timeout` seconds.

    `stop` (a threading.Event) ends the command early (SIGTERM to its group). With
    `expected_stop` (streams like `nvidia-smi -l` that only end when told), being stopped or
    reaching the timeout is the normal end and not an error.
    """
    res = Result(argv)
    exe = shutil.which(argv[0], path=(env or os.environ).get("PATH"))
    if exe is None:
        res.error = "not found"
        res.end = utcnow()
        out.close()
        return res
    try:
        proc = subprocess.Popen([exe] + list(argv[1:]), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env or command_env(), start_new_session=True,
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
                _killpg(pgid, signal.SIGTERM)
                term_at = now
            if term_at is not None and now - term_at > KILL_GRACE_S:
                _killpg(pgid, signal.SIGKILL)
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
                    _killpg(pgid, signal.SIGTERM)
                    term_at = time.monotonic()
                    end_wait = term_at + KILL_GRACE_S
                    continue
                _killpg(pgid, signal.SIGKILL)
                break
            time.sleep(0.02)
        _killpg(pgid, signal.SIGKILL)
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
