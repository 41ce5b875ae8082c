"""The hostile-input suite's shared kit (issue 15): run the real command line in a child process and
check the five properties the issue asks of every hostile case.

:func:`hostile` runs ``forensics ARGS`` in a sandbox (``HOME``, ``TMPDIR`` and the working folder are
fresh folders inside the test's ``tmp_path``, beside a canary file holding a secret) and asserts:

1. exit 2 with one ``forensics: error:`` line (``fails=``; after the warnings that say what was
   skipped, when ``warns=`` too), or success with a stated warning (``warns=``);
2. no traceback;
3. peak memory under a stated bound (``max_mb=``): the largest sum of the resident memory of the
   child and all its descendants (ingest and redaction workers included), sampled from /proc every
   10 ms, and never less than the child's own high-water mark (VmHWM);
4. nothing written outside: every file and folder under ``tmp_path`` (the inputs, HOME, the working
   folder) is as it was but the cache and the outputs the case names (``writes=``); TMPDIR is empty
   afterwards; and nothing read outside: the canary's secret is in no output, stdout or stderr;
5. nothing lost that was readable: the case's own assertions on the returned :class:`Run` (the rows of
   the rest of the bundle, the findings of the rest) follow the call.

Which test covers which item of the issue's list: the map in tests/test_hostile_inputs.py's docstring
(checked by its ``test_the_item_map_names_real_tests``).
"""
from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

FORENSICS = str(Path(sys.executable).with_name("forensics"))
CANARY = "canary-7c1e0b52-outside-the-bundle"  # the secret of the file beside every hostile input


@dataclass
class Run:
    rc: int
    out: str
    err: str
    peak_mb: float   # peak resident memory of the child and its descendants in MiB (see run())
    seconds: float

    def one_line_error(self) -> str:
        """The single `forensics: error: ...` line (asserts exit 2, no traceback, nothing else)."""
        assert self.rc == 2, (self.rc, self.err[-2000:])
        assert "Traceback" not in self.err, self.err[-3000:]
        lines = [ln for ln in self.err.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("forensics: error: "), self.err[-2000:]
        return lines[0]

    def no_traceback(self) -> None:
        assert "Traceback" not in self.err, self.err[-3000:]


def env(cache: Path, **extra: str) -> dict:
    # the tables' sealing key: this session's own (the one every other command-line test uses, so that
    # a shared cache's entries stay valid), never one in the sandbox's HOME
    tables_key = os.environ.get("FORENSICS_TABLES_KEY_FILE") or str(Path.home() / ".config" / "forensics" / "tables.key")
    e = dict(os.environ, TZ="UTC", LC_ALL="C", FORENSICS_CACHE_DIR=str(cache), FORENSICS_REDACT_KEY_FILE=str(cache / "key"),
             FORENSICS_TABLES_KEY_FILE=tables_key)
    e.update(extra)
    return e


def run(args: list[str], cache: Path, *, interrupt_after: float | None = None, timeout: float = 600,
        cwd: Path | None = None, ulimit_nofile: int | None = None, max_file_bytes: int | None = None,
        signal_when: tuple[Callable[[], bool], int] | None = None, argv0: list[str] | None = None,
        **extra_env: str) -> Run:
    """`forensics ARGS` (or `argv0 + ARGS`) in a child; SIGINT after `interrupt_after` seconds when
    given; signal `sig` as soon as `when()` holds for ``signal_when=(when, sig)``; at most
    `ulimit_nofile` open files when given; no file written beyond `max_file_bytes` (RLIMIT_FSIZE: a
    full disk, as the child sees it: its writes past that size fail with EFBIG) when given."""
    import resource

    def limit() -> None:
        # the signals this harness sends stand for a terminal's Ctrl-C and an ssh drop, which reach a
        # command that has them at their defaults: a suite started under nohup or as a background job
        # hands its children SIGHUP (or SIGINT) ignored, which the collector and the CLI rightly keep
        for s in (signal.SIGINT, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGHUP})
        if ulimit_nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (ulimit_nofile, ulimit_nofile))
        if max_file_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        p = subprocess.Popen([*(argv0 or [FORENSICS]), *map(str, args)], stdout=out, stderr=err,
                             env=env(cache, **extra_env), cwd=cwd,
                             preexec_fn=limit)
        deadline = t0 + timeout
        hwm = tree = 0
        sent = False
        while True:
            hwm = max(hwm, _status_kib(p.pid, "VmHWM:"))
            tree = max(tree, sum(_status_kib(q, "VmRSS:") for q in _descendants(p.pid)))
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            now = time.monotonic()
            if not sent and interrupt_after is not None and now - t0 >= interrupt_after:
                p.send_signal(signal.SIGINT)
                sent = True
            if not sent and signal_when is not None and signal_when[0]():
                p.send_signal(signal_when[1])
                sent = True
            if now > deadline:
                p.kill()
                pid, status, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.01)
        p.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        # ru_maxrss of a child starts at the RSS of the process that forked it (Linux carries the
        # high-water mark across exec), so pytest's own size would count: the child's own VmHWM and
        # the sampled sum over its process tree, where /proc has them
        peak = max(hwm, tree) if hwm else usage.ru_maxrss
        return Run(p.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace"),
                   peak / 1024, seconds)


def _status_kib(pid: int, field: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _descendants(pid: int) -> list[int]:
    """`pid` and every process below it (/proc/<pid>/task/<tid>/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            pass
    return out


def snapshot(root: Path, skip: Iterable[Path] = ()) -> dict[str, tuple]:
    """{relative path: (kind, size, mtime_ns, mode)} of everything under `root` but `skip` (and their insides)."""
    skip = {Path(p).absolute() for p in skip}
    out = {}
    for dirpath, dirs, files in os.walk(root):
        here = Path(dirpath)
        dirs[:] = [d for d in dirs if here / d not in skip]
        for name in dirs + files:
            p = here / name
            if p in skip:
                continue
            st = p.lstat()
            kind = st.st_mode >> 12
            # (a folder's size and time change with its entries, which are compared themselves)
            out[p.relative_to(root).as_posix()] = (kind, st.st_mode & 0o7777) if kind == 4 else \
                (kind, st.st_size, st.st_mtime_ns, st.st_mode & 0o7777)
    return out


def _written_bytes(path: Path):
    """The bytes of an output (a file, each file of a folder, each member of a (compressed) tar)."""
    paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []
    for p in paths:
        if p.name.endswith((".tar", ".tar.gz", ".tgz", ".tar.zst")):
            if p.name.endswith(".tar.zst"):
                import zstandard

                fh = zstandard.ZstdDecompressor().stream_reader(open(p, "rb"), closefd=True)
            else:
                fh = gzip.open(p) if p.name.endswith(("gz", "tgz")) else open(p, "rb")
            with fh, tarfile.open(fileobj=fh, mode="r|") as tar:
                for m in tar:
                    if m.isfile():
                        yield tar.extractfile(m).read()
        else:
            yield p.read_bytes()


def hostile(args: list, tmp_path: Path, *, max_mb: float, fails: str | None = None, warns: str | None = None,
            rc_ok: tuple[int, ...] = (0,), writes: Iterable[Path] = (), cache: Path | None = None,
            cwd: Path | None = None, **run_kw) -> Run:
    """`forensics ARGS` run as a hostile case, the properties of the module's docstring asserted:
    exit 2 and one line holding `fails` (when given), else an exit in `rc_ok` with `warns` on stderr
    (when given); no traceback; peak memory of the process tree under `max_mb` MiB; nothing under
    `tmp_path` changed but the cache (`cache`, default ``tmp_path/cache``) and `writes`; TMPDIR left
    empty; the canary beside the input read by nothing. Returns the :class:`Run` for the case's own
    "nothing lost" checks."""
    tmp_path = Path(tmp_path)
    cache = Path(cache) if cache is not None else tmp_path / "cache"
    box = tmp_path / ".sandbox"
    for d in ("home", "tmp", "cwd"):
        (box / d).mkdir(parents=True, exist_ok=True)
    canary = tmp_path / "canary.txt"
    if not canary.exists():
        canary.write_text(CANARY + "\n")
    (box / "home" / ".netrc").write_text(f"machine example password {CANARY}\n")
    writes = [Path(w).absolute() for w in writes]
    skip = [cache.absolute(), *writes, (box / "tmp").absolute()]
    before = snapshot(tmp_path, skip)
    extra = {"HOME": str(box / "home"), "TMPDIR": str(box / "tmp"), **run_kw.pop("env", {})}
    r = run(args, cache, cwd=cwd or box / "cwd", **extra, **run_kw)
    if fails is not None and warns is not None:  # the stated warnings, then the one error line
        assert r.rc == 2, (r.rc, r.err[-2000:])
        r.no_traceback()
        *said, line = [ln for ln in r.err.splitlines() if ln.strip()] or [""]
        assert said and all(ln.startswith("forensics: warning: ") for ln in said), r.err[-2000:]
        assert warns in "\n".join(said) and line.startswith("forensics: error: ") and fails in line, r.err[-2000:]
    elif fails is not None:
        line = r.one_line_error()
        assert fails in line, line
    else:
        assert r.rc in rc_ok, (r.rc, r.err[-3000:])
        r.no_traceback()
        if warns is not None:
            assert warns in r.err, r.err[-3000:]
    assert r.peak_mb < max_mb, f"peak {r.peak_mb:.0f} MiB >= {max_mb} MiB"
    after = snapshot(tmp_path, skip)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"written outside the cache and the outputs: {changed[:10]}"
    left = sorted(p.name for p in (box / "tmp").iterdir())
    assert not left, f"left in TMPDIR: {left}"
    assert CANARY not in r.out and CANARY not in r.err, "the canary beside the input was read"
    for w in writes:
        for data in _written_bytes(w):
            assert CANARY.encode() not in data, f"the canary beside the input is in {w}"
    return r


class Repeat:
    """A file-like object of `size` bytes: `head`, then `fill` repeated, then `tail` (generated as
    read, never held whole)."""

    def __init__(self, head: bytes, fill: bytes, size: int, tail: bytes = b""):
        self.parts = [(head, len(head)), (fill, size - len(head) - len(tail)), (tail, len(tail))]
        self.size = size
        self.filled = 0

    def read(self, n: int = -1) -> bytes:
        out = []
        n = self.size if n is None or n < 0 else n
        while n > 0 and self.parts:
            unit, left = self.parts[0]
            if left <= 0:
                self.parts.pop(0)
                continue
            take = min(n, left, 1 << 20)
            if len(unit) >= left:  # head or tail: its remaining bytes
                chunk = unit[len(unit) - left:len(unit) - left + take]
            else:  # the fill, continued where the last read left it (whole lines stay whole)
                start = self.filled % len(unit)
                chunk = (unit * ((start + take) // len(unit) + 1))[start:start + take]
                self.filled += len(chunk)
            self.parts[0] = (unit, left - len(chunk))
            out.append(chunk)
            n -= len(chunk)
        return b"".join(out)


def small_bundle_members(nodes: int = 2) -> dict[str, bytes]:
    """Members of a small simulated bundle (manifest, hosts, raw outputs), without tables."""
    from forensics.simulate import SimConfig, Simulation

    sim = Simulation(SimConfig("xid_79", nodes=nodes, gpus_per_node=2, duration_s=60, interval_s=5, seed=3))
    return {k: v for k, v in sim.members() if not k.startswith(("tables/", "truth/"))}


def write_tar_zst(path: Path, members: dict[str, bytes], big: dict[str, Repeat] | None = None) -> Path:
    """A .tar.zst of `members` and generated `big` members (streamed through the compressor)."""
    import io
    import tarfile

    import zstandard

    with open(path, "wb") as raw:
        with zstandard.ZstdCompressor(level=3).stream_writer(raw, closefd=False) as zw:
            with tarfile.open(fileobj=zw, mode="w|") as tf:
                for name, data in members.items():
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    tf.addfile(info, io.BytesIO(data))
                for name, obj in (big or {}).items():
                    info = tarfile.TarInfo(name)
                    info.size = obj.size
                    tf.addfile(info, obj)
    return path
