"""Bundle layout constants and the snapshot marker line (standard library only: used by collect).

A repeated snapshot of a command that prints no time of its own is preceded by::

    #### forensics-sample ts=2026-11-30T10:15:02.123456+00:00 argv="ethtool -S eth2"
"""
from __future__ import annotations

import datetime as _dt
import re as _re
import shlex as _shlex

FORMAT_VERSION = 1
MARKER_PREFIX = "#### forensics-sample "
MANIFEST = "manifest.json"
HOSTS_DIR = "hosts"
TABLES_DIR = "tables"
TRUTH_DIR = "truth"
ARCHIVE_MEMBERS = ".archive-members.json"  # in a cached bundle: raw files left in its archive
WORK_PREFIXES = (".tables-", ".hosts-")  # a run's work folders in a bundle's tree (forensics.bundle.scratch)

# the argv as an unrolled loop (runs of plain characters between escapes): the same lines and groups as
# ``((?:[^"\\]|\\.)*)``, which Python's re steps through one character and one alternation at a time: 3.4 ->
# 0.66 us a 357-character marker (7,722 markers in a simulated host-hour)
_MARKER = _re.compile(r'^#### forensics-sample ts=(\S+)(?: argv="([^"\\]*(?:\\.[^"\\]*)*)")?\s*$')
_UNESCAPE = _re.compile(r"\\(.)")  # a marker's argv: \\ and \" back to \ and "


def format_marker(ts, argv=None):
    """The marker line (without newline) for a snapshot taken at `ts` (aware datetime) of `argv`."""
    if ts.tzinfo is None:
        raise ValueError("marker timestamps must be timezone-aware")
    line = MARKER_PREFIX + "ts=" + ts.astimezone(_dt.timezone.utc).isoformat(timespec="microseconds")
    if argv is not None:
        text = argv if isinstance(argv, str) else " ".join(_shlex.quote(a) for a in argv)
        line += ' argv="' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return line


def parse_marker(line):
    """(ts as aware UTC datetime, argv text or None), or None when `line` is not a valid marker."""
    m = _MARKER.match(line.rstrip("\r\n"))
    if not m:
        return None
    try:
        ts = _dt.datetime.fromisoformat(m.group(1))
    except ValueError:
        return None
    if ts.tzinfo is None:
        return None
    argv = m.group(2)
    if argv is not None and "\\" in argv:  # (most argv have no escape: no substitution to run)
        argv = _UNESCAPE.sub(r"\1", argv)
    return ts.astimezone(_dt.timezone.utc), argv


def raw_path(host, source, name):
    """Path of a raw output inside a bundle."""
    return "%s/%s/raw/%s/%s" % (HOSTS_DIR, host, source, name)


def table_path(table, host):
    return "%s/%s/host=%s/part-0.parquet" % (TABLES_DIR, table, host)
