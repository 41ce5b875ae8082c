"""Time helpers: zones, durations, ISO parsing."""
from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_DUR = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNITS = {"ms": 0.001, "s": 1, None: 1, "m": 60, "h": 3600, "d": 86400}


def check_zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}") from None


def parse_duration(text: str) -> float:
    """'90s', '3m', '1h', '250ms', '10' -> seconds."""
    m = _DUR.match(text)
    if not m:
        raise ValueError(f"bad duration {text!r} (use e.g. 90s, 3m, 1h)")
    return float(m.group(1)) * _UNITS[m.group(2)]


def parse_when(text: str) -> dt.datetime:
    """ISO-8601 time; naive means UTC."""
    try:
        t = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"bad time {text!r} (use ISO-8601, e.g. 2026-11-30T10:15:02Z)") from None
    return t.replace(tzinfo=dt.timezone.utc) if t.tzinfo is None else t.astimezone(dt.timezone.utc)
