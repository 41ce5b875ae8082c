"""Which readers try the lines of each route (the first character of a line after -r/-x prefixes),
in order: each takes what it recognises and passes the rest on."""
from __future__ import annotations

from forensics.sources.dmesg.readers import (
    _parse_ctime,
    _parse_iso,
    _parse_kernel_only,
    _parse_logread,
    _parse_raw,
    _parse_short,
    _parse_short_year,
)
from forensics.sources.dmesg.structured import _parse_journal_json, _parse_kmsg

ROUTES = (
    ("[", (_parse_raw, _parse_ctime)),
    ("digit", (_parse_iso, _parse_kmsg, _parse_short_year)),
    ("upper", (_parse_short, _parse_logread)),
    ("letter", (_parse_short, _parse_kernel_only)),  # lower case or another alphabet: "jan.", "фев", "kernel:"
    ("{", (_parse_journal_json,)),
)
