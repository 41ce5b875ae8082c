"""Helpers for the hostile-input suite (tests/test_hostile_*.py): run the real command line in a
child process and measure what it used (exit status, stderr, peak resident memory of that child)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

FORENSICS = str(Path(sys.executable).with_name("forensics"))


@dataclass
class Run:
    rc: int
    out: str
    err: str
    peak_mb: float   # peak resident memory of the child in MiB (see run())
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
    e = dict(os.environ, TZ="UTC", LC_ALL="C", FORENSICS_CACHE_DIR=str(cache), FORENSICS_REDACT_KEY_FILE=str(cache / "key"))
    e.update(extra)
    return e


def run(args: list[str], cache: Path, *, interrupt_after: float | None = None, timeout: float = 300,
        cwd: Path | None = None, ulimit_nofile: int | None = None, max_file_bytes: int | None = None,
        **extra_env: str) -> Run:
    """`forensics ARGS` in a child; SIGINT after `interrupt_after` seconds when given; at most
    `ulimit_nofile` open files when given; no file written beyond `max_file_bytes` (RLIMIT_FSIZE: a
    full disk, as the child sees it: its writes past that size fail with EFBIG) when given."""
    import resource

    def limit() -> None:
        if ulimit_nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (ulimit_nofile, ulimit_nofile))
        if max_file_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        p = subprocess.Popen([FORENSICS, *map(str, args)], stdout=out, stderr=err, env=env(cache, **extra_env),
                             cwd=cwd, preexec_fn=limit if (ulimit_nofile, max_file_bytes) != (None, None) else None)
        if interrupt_after is not None:
            time.sleep(interrupt_after)
            p.send_signal(signal.SIGINT)
        deadline = t0 + timeout
        hwm = 0
        while True:
            hwm = max(hwm, _vm_hwm_kib(p.pid))
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                pid, status, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.01)
        p.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        # ru_maxrss of a child starts at the RSS of the process that forked it (Linux carries the
        # high-water mark across exec), so pytest's own size would count: VmHWM of the child's own
        # memory, polled every 10 ms, where /proc has it
        peak = hwm if hwm else usage.ru_maxrss
        return Run(p.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace"),
                   peak / 1024, seconds)


def _vm_hwm_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class Repeat:
    """A file-like object of `size` bytes: `head`, then `fill` repeated, then `tail` (generated as
    read, never held whole)."""

    def __init__(self, head: bytes, fill: bytes, size: int, tail: bytes = b""):
        self.parts = [(head, len(head)), (fill, size - len(head) - len(tail)), (tail, len(tail))]
        self.size = size

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
            else:  # the fill (its phase across reads does not matter)
                chunk = (unit * (take // len(unit) + 1))[:take]
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
