"""The shell around a pasted output: the command line that produced it and the shell's `time` report.

People paste a tool's output with the prompt and command above it (``user@box:~$ time nvidia-smi``)
and, when they timed it, bash's report below it (``real\\t0m0,022s`` / ``user\\t0m0,001s`` /
``sys\\t0m0,011s``, in the locale's decimal separator). These lines are not the tool's output, but
they are not unknown either: :func:`take_shell_lines` takes them out of a parse's ``unparsed`` rows
into facts (the command as typed; the three times in seconds) that the parser puts in its ``meta``.
A ``time`` report is taken only as the whole three-line block; a command line only where it invokes
the tool (`tool_re`) at the start of the line or right after a prompt character.
"""
from __future__ import annotations

import math
import re

import polars as pl

from forensics.sources._bounded import INT32, int_or_none

# bash's `time` keyword: "real\t0m0.022s" (TIMEFORMAT default, %3lR); a comma in locales that write one
_TIME = re.compile(r"^\s*(real|user|sys)\s+([0-9]+)m([0-9]+(?:[.,][0-9]+)?)s\s*$")


def command_re(tool: str) -> str:
    """A line that invokes `tool` (a regex of its name): alone or after a prompt ending in $ # % >,
    with sudo, time or watch -n N before it."""
    return (r"^(?:.{0,80}?[$#%>]\s*|\s*)(?:sudo\s+)?(?:time\s+)?(?:watch(?:\s+-[A-Za-z]+(?:\s*[0-9.]+)?)*\s+)?"
            + tool + r"(?:\.exe)?(?:\s|$)")


def _seconds(m: re.Match) -> float | None:
    """The seconds a `time` line reports; None where its minutes are past a C int or its seconds are no
    finite number (the runs of digits are untrusted: int() refuses over 4,300 of them, and float() reads
    a few hundred as inf)."""
    minutes = int_or_none(m.group(2), 0, INT32[1])
    seconds = float(m.group(3).replace(",", "."))
    return None if minutes is None or not math.isfinite(seconds) else minutes * 60 + seconds


def take_shell_lines(unparsed: pl.DataFrame, tool_re: str) -> tuple[pl.DataFrame, dict]:
    """(`unparsed` without the command lines and `time` blocks it holds, meta facts about them:
    ``commands`` [{line_no, command}] and ``shell_time`` [{line_no, real_s, user_s, sys_s}])."""
    if not unparsed.height:
        return unparsed, {}
    rows = dict(zip(unparsed["line_no"].to_list(), unparsed["text"].to_list()))
    used: list[int] = []
    meta: dict = {}
    cmd = re.compile(command_re(tool_re))
    for ln, text in rows.items():
        if cmd.match(text):
            meta.setdefault("commands", []).append({"line_no": ln, "command": text.strip()})
            used.append(ln)
    for ln, text in rows.items():
        m = _TIME.match(text)
        if not m or m.group(1) != "real":
            continue
        nxt = [_TIME.match(rows.get(ln + k, "")) for k in (1, 2)]
        if nxt[0] and nxt[1] and nxt[0].group(1) == "user" and nxt[1].group(1) == "sys":
            secs = [_seconds(x) for x in (m, *nxt)]
            if None in secs:  # (the block stays unparsed)
                continue
            meta.setdefault("shell_time", []).append(
                {"line_no": ln, "real_s": secs[0], "user_s": secs[1], "sys_s": secs[2]})
            used += [ln, ln + 1, ln + 2]
    if not used:
        return unparsed, {}
    return unparsed.filter(~pl.col("line_no").is_in(pl.Series(used, dtype=pl.Int64).implode())), meta
