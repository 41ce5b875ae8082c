"""forensics.layout's snapshot marker: parse_marker gives back what format_marker wrote, escapes included, and
reads every line as the plain `re.sub(r"\\(.)", r"\1", argv)` did before the unescape was precompiled and skipped
for argv without a backslash (issue 21: 2.1 us a marker, 0.9 of it the uncompiled substitution), and with the argv
pattern unrolled (3.4 -> 0.66 us a 357-character marker)."""
from __future__ import annotations

import datetime as dt
import random
import re

from forensics.layout import format_marker, parse_marker

T0 = dt.datetime(2026, 11, 30, 10, 15, 2, 123456, tzinfo=dt.timezone.utc)


def _before(line):
    """parse_marker as it was (the substitution run on every argv, its pattern looked up each call)."""
    m = re.match(r'^#### forensics-sample ts=(\S+)(?: argv="((?:[^"\\]|\\.)*)")?\s*$', line.rstrip("\r\n"))
    if not m:
        return None
    try:
        ts = dt.datetime.fromisoformat(m.group(1))
    except ValueError:
        return None
    if ts.tzinfo is None:
        return None
    argv = m.group(2)
    if argv is not None:
        argv = re.sub(r"\\(.)", r"\1", argv)
    return ts.astimezone(dt.timezone.utc), argv


def test_round_trip_with_escapes():
    for argv in ["ethtool -S eth2", 'sh -c "echo \\"x\\""', "a\\b", "a\\\\b", "\\", '"', "", "tr '\\n' ' '"]:
        assert parse_marker(format_marker(T0, argv)) == (T0, argv), argv
    assert parse_marker(format_marker(T0, ["printf", "%s\\n", 'a"b'])) == (T0, "printf '%s\\n' 'a\"b'")
    assert parse_marker(format_marker(T0)) == (T0, None)


def test_every_line_reads_as_before():
    rng = random.Random(7)
    alphabet = ['a', ' ', '\\', '"', 'n', '\t', '\n', 'é', '-']
    lines = [format_marker(T0, "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))) for _ in range(2000)]
    lines += ["#### forensics-sample ts=" + "".join(rng.choice(alphabet + ['2', ':', '+']) for _ in range(rng.randrange(30)))
              for _ in range(500)]
    # argv as a collector never writes it (bare quotes and backslashes anywhere, blanks after the closing quote):
    # the argv pattern (an unrolled loop since 2026-12-07) takes the same lines and the same argv as the old one
    raw = alphabet + ['\\"', '\\\\', ' "', '" ', '\r']
    lines += ['#### forensics-sample ts=2026-11-30T10:15:02+00:00 argv="' + "".join(rng.choice(raw) for _ in range(rng.randrange(16)))
              + '"' + "".join(rng.choice([' ', '\t', '"', 'x']) for _ in range(rng.randrange(3))) for _ in range(3000)]
    lines += ['#### forensics-sample ts=2026-11-30T10:15:02+00:00 argv="a\\', '#### forensics-sample ts=2026-11-30T10:15:02',
              '#### forensics-sample ts=2026-11-30T10:15:02+00:00 argv="x\\\ny"\r\n', "not a marker"]
    for line in lines:
        assert parse_marker(line) == _before(line), repr(line)
