"""Bounds on what one DuckDB connection may use: memory, spill space, time; Ctrl-C stops it.

- :func:`configure` (before the connection is locked down): ``memory_limit`` from the process
  budget (:func:`forensics.limits.duckdb_memory`), spill into a fresh private folder (mode 0700,
  removed by :func:`release`) capped at half the free space there, never ``$PWD/.tmp``. DuckDB
  lets a query read its own spill folder, so it spills into a subfolder that DuckDB creates itself
  in that fresh one (nothing but this connection's spill files is ever there), and the statement
  check refuses the functions that would tell its random name (:data:`forensics.db.safety.REVEALING`).
  A connection still open when the process exits (a command that ends with its bundle open) has its
  spill folder removed by an exit handler: nothing is left in ``$TMPDIR``.
- :func:`run` executes a statement on a worker thread while the calling thread waits: a timeout or
  a Ctrl-C (``KeyboardInterrupt`` in the waiting thread) calls ``con.interrupt()``, which DuckDB
  honours within milliseconds even inside ``range(1e12)`` or a recursive CTE. A Python signal
  handler alone cannot do this: it only runs once the blocking DuckDB call has returned.
"""
from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, TypeVar

import duckdb

from forensics import limits

T = TypeVar("T")
POLL_S = 0.1
_SPILL: dict[int, Path] = {}


class QueryTimeout(ValueError):
    """A statement ran past its time limit and was stopped."""


def configure(con: duckdb.DuckDBPyConnection, memory: int | None = None) -> Path:
    """Memory limit and a private spill folder for `con`; returns the folder (see :func:`release`)."""
    spill = Path(tempfile.mkdtemp(prefix="forensics-spill-"))  # mode 0700, a fresh name
    mem = memory if memory is not None else limits.duckdb_memory()
    room = max(64 << 20, int(limits.free_bytes(spill) * limits.SPILL_SHARE))
    con.execute(f"SET memory_limit = '{int(mem)}B'")
    con.execute(f"SET temp_directory = '{_quote(str(spill / 'duckdb'))}'")  # (made by DuckDB when it spills)
    con.execute(f"SET max_temp_directory_size = '{int(room)}B'")
    _SPILL[id(con)] = spill
    return spill


def _remove_left_spill() -> None:
    """At exit: the spill folders of connections never released (their files are DuckDB's, which
    the process no longer needs)."""
    for spill in list(_SPILL.values()):
        shutil.rmtree(spill, ignore_errors=True)
    _SPILL.clear()


atexit.register(_remove_left_spill)


def release(con: duckdb.DuckDBPyConnection) -> None:
    """Close `con` and remove its spill folder."""
    try:
        con.close()
    finally:
        spill = _SPILL.pop(id(con), None)
        if spill is not None:
            shutil.rmtree(spill, ignore_errors=True)


def run(con: duckdb.DuckDBPyConnection, fn: Callable[[], T], timeout_s: float | None = None) -> T:
    """``fn()`` (which uses `con`) on a worker thread, interrupted after `timeout_s` or on Ctrl-C."""
    box: dict = {}
    done = threading.Event()  # (not Thread.join: a join interrupted by Ctrl-C leaves the thread looking dead)

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            # without its traceback: its frames hold the interrupted relation, which keeps the
            # connection busy (close() then refuses)
            box["error"] = exc.with_traceback(None)
        finally:
            done.set()

    t = threading.Thread(target=work, name="forensics-query", daemon=True)
    deadline = None if not timeout_s or timeout_s <= 0 else time.monotonic() + timeout_s
    t.start()
    try:
        while not done.wait(POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - time.monotonic()))):
            if deadline is not None and time.monotonic() >= deadline:
                _stop(con, done)
                raise QueryTimeout(f"stopped after {timeout_s:g} s (the query's time limit; "
                                   "raise it with --timeout SECONDS)")
    except KeyboardInterrupt:
        _stop(con, done)
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]


def _stop(con: duckdb.DuckDBPyConnection, done: threading.Event) -> None:
    """Interrupt the running statement until its thread has finished (an interrupt that comes
    between two calls of the statement's thread is lost: repeated)."""
    while True:
        con.interrupt()
        if done.wait(POLL_S):
            return


def _quote(text: str) -> str:
    return text.replace("'", "''")
