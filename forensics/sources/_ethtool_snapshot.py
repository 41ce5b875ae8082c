"""Where an ethtool snapshot's time and interface come from; a helper of :mod:`forensics.sources.ethtool`.

The collector's marker lines (``#### forensics-sample ts=... argv="ethtool -S eth2"``), shell
command lines pasted into tickets (``user@host:~$ sudo ethtool -S p3p1``, which also name the
host), ``watch`` headers (``Every 1.0s: ethtool -S eth1   Tue Apr 16 08:23:27 2013``: a local
time), sosreport file names (``ethtool_-S_IFACE``) and the ``iface`` hint.
"""
from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

import polars as pl

from forensics.layout import parse_marker
from forensics.sources._base import ParseContext
from forensics.sources._shell import PROMPT_HOST, RE_BEFORE_COMMAND  # noqa: F401 - PROMPT_HOST: ethtool reads it here

_TS = pl.Datetime("us", "UTC")
MARKER_RE = r'^#### forensics-sample ts=(\S+)(?: argv="((?:[^"\\]|\\.)*)")?\s*$'

# `ethtool [opts] -S|--statistics IFACE` anywhere in a line (prompt, sudo, watch header), or a
# sosreport file name `ethtool_-S_IFACE` (e.g. `grep pause sos_commands/networking/ethtool_-S_eth1`).
IFACE = r"[A-Za-z0-9_.:@-]+"
CMD_RE = (r"(?:^|[^A-Za-z0-9_])ethtool(?:[ \t]+-[A-Za-z-]+)*?[ \t]+(?:-S|--statistics)(?:[ \t]+(" + IFACE
          + r"))?(?=[ \t|;&>)]|$)|ethtool_-S_(" + IFACE + r")")
CMD = re.compile(CMD_RE)
# A match of CMD is a command line only with a shell prompt (or nothing, or a runner such as sudo /
# watch / a shell separator) before `ethtool`, and nothing but options then the end, a pipe, a
# redirection, a separator or a comment after the interface; or in a `watch` header. A sentence
# that names the command ("ethtool -S eth0 provides a lot of statistics.") is prose: no interface.
_QUOTES = re.compile(r"^[ \t]*(?:>[ \t]*)*")
_PREFIX_OK = re.compile(r"^" + RE_BEFORE_COMMAND + r"['\"]?$")  # (the shell's shapes: forensics.sources._shell)
_WATCH_HEAD = re.compile(r"^Every[ \t]+[0-9.]+s:[ \t]*$")
_SUFFIX_OK = re.compile(r"^(?:[ \t]+--?[A-Za-z0-9][A-Za-z0-9_=.,:-]*)*[ \t]*(?:$|[|;&<>)'\"`#\\])")
WATCH_TIME = re.compile(
    r"((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +[0-9]{1,2}"
    r" [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4})\s*$")
SOS_FILE = re.compile(r"ethtool_-S_(" + IFACE + r")$")


def command_at(text: str) -> re.Match[str] | None:
    """The CMD match of `text` when it is a command line (see _PREFIX_OK / _SUFFIX_OK), else None.

    >>> [bool(command_at(t)) for t in ("ethtool -S eth0", "$ sudo ethtool -S eth0 | grep drop",
    ...  "> > root@(none):~$ ethtool -S sff2", "Every 1.0s: ethtool -S eth1   Tue Apr 16 08:23:27 2013",
    ...  "grep pause sos_commands/networking/ethtool_-S_eth1",
    ...  "ethtool -S eth0 provides a lot of statistics.", "I ran ethtool -S eth0 twice")]
    [True, True, True, True, True, False, False]
    """
    for m in CMD.finditer(text):
        if m.group(2) is not None:  # a sosreport file name
            return m
        at = text.index("ethtool", m.start())
        prefix = text[_QUOTES.match(text).end():at]
        if _WATCH_HEAD.match(prefix):
            return m
        if _PREFIX_OK.match(prefix) and _SUFFIX_OK.match(text[m.end():]):
            return m
    return None


def iface_of(command: str | None) -> str | None:
    m = CMD.search(command or "")
    return (m.group(1) or m.group(2)) if m else None


def snapshot_markers(mk: pl.DataFrame) -> tuple[pl.Series, pl.Series, list[int]]:
    """Per snapshot (marker order): ts, iface; and the line_nos of malformed marker lines."""
    g = mk.select(pl.col("line_no"), pl.col("text"),
                  pl.col("text").str.extract_groups(MARKER_RE).struct.rename_fields(["ts", "argv"]).alias("m"))
    mk = g.unnest("m").select(
        "line_no", "text",
        pl.col("ts").str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%:z", time_zone="UTC", strict=False).alias("_mts"),
        pl.col("argv").str.replace_all(r"\\(.)", "${1}").alias("_margv"))
    argv = mk["_margv"].to_list()
    if mk["_mts"].null_count():
        ts = mk["_mts"].to_list()
        bad = []
        for i in [i for i, t in enumerate(ts) if t is None]:  # unusual spellings: the reference parser decides
            m = parse_marker(mk["text"][i])
            if m is None:
                bad.append(int(mk["line_no"][i]))
                argv[i] = None
            else:
                ts[i], argv[i] = m
        m_ts = pl.Series(ts, dtype=_TS)
    else:
        m_ts, bad = mk["_mts"], []
    ifaces = {a: iface_of(a) for a in set(argv) if a is not None}
    return m_ts, pl.Series([ifaces.get(a) for a in argv], dtype=pl.String), bad


def watch_ts(text: str, tz: str | None) -> dt.datetime | None:
    """Local time printed by `watch` in its header line, as UTC (None when absent or unreadable)."""
    if not text.lstrip().startswith("Every "):
        return None
    m = WATCH_TIME.search(text)
    if not m:
        return None
    try:
        naive = dt.datetime.strptime(" ".join(m.group(1).split()), "%a %b %d %H:%M:%S %Y")
        zone = ZoneInfo(tz or "UTC")
    except (ValueError, KeyError, OSError):
        return None
    return naive.replace(tzinfo=zone).astimezone(dt.timezone.utc)


def hint_iface(ctx: ParseContext) -> str | None:
    hint_iface = ctx.hints.get("iface") if ctx.hints else None
    if hint_iface is None and ctx.file:
        fm = SOS_FILE.search(ctx.file.replace("\\", "/").rsplit("/", 1)[-1])
        hint_iface = fm.group(1) if fm else None
    return hint_iface
