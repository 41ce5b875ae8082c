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


# --- the shell prompt: one definition of its shapes for every parser ------------------------------------
# A prompt as people paste it shows its user and host ("user@host:~$ ", "root@node1:/tmp# ", SUSE's
# "knight@x4105c5s5b0n0:~> ", zsh's "user@host %", Red Hat's "[user@host dir]$ "), perhaps behind a conda or
# venv environment ("(base) ", "(.venv) "), or is bare ("$ ", "% "). RE_PROMPT is such a prompt at a line's
# start, recognisable without a command after it; before a command line's command (command_re) any text of
# up to 80 characters that ends in a prompt character counts ("node1:~ # ", "sh-4.2$ ", "PS C:\> "): the
# command after it is the evidence. Every parser uses these (nccl's reason for a prompt line, ethtool's
# command lines and host, the commands of numactl, sar, iostat and nvidia-smi in meta).
ENV = r"(?:\([A-Za-z0-9_.\-/]{1,64}\) )?"
_USER_AT = r"[A-Za-z0-9._-]+@"
HOST = r"[A-Za-z0-9][A-Za-z0-9._-]*"
RE_PROMPT = (ENV + r"(?:" + _USER_AT + r"[^\s]+ ?[#$%>]|\[" + _USER_AT + r"[^\]]+\][#$%]|[$%])(?: |$)")
# the host a prompt names ("user@node1:~$" -> node1; "[user@node1 ~]$" -> node1)
PROMPT_HOST = re.compile(r"^\s*" + ENV + r"\[?" + _USER_AT + r"(" + HOST + r")[:~ \]]")
# what runs the command: sudo (with its options), doas, time, nice, command, exec, watch (with its options), and
# what runs it in a container's network namespace: nsenter with its options ("nsenter -t 23061 -n", "--net=..."
# takes no value here), "ip netns exec NAME"
RE_RUNNERS = (r"(?:(?:sudo(?:[ \t]+-[A-Za-z]+)*|doas|time|nice|command|exec"
              r"|watch(?:[ \t]+-[A-Za-z-]+(?:[ \t]*[0-9.]+)?)*"
              r"|nsenter(?:[ \t]+-[A-Za-z-]+(?:=?[ \t]*[0-9]+)?)*|ip[ \t]+netns[ \t]+exec[ \t]+[A-Za-z0-9_.-]+)[ \t]+)*")
# what may stand before a command on its line: a prompt (any text ending in a prompt character) or a shell
# separator ("; ", "| ", "&& ", "$(", "do ", "then "), then runners
RE_BEFORE_COMMAND = (r"(?:.{0,80}?[$#%>][ \t]*|.{0,80}?(?:[;&|(`]|\$\(|\bdo|\bthen)[ \t]*)?" + RE_RUNNERS)


# a prompt with a command after it ("$ sudo apt install sysstat", "user@host:~$ cat log"): a command line of the
# paste's shell. A parser whose own command lines are taken (take_shell_lines) may count the others as skipped
# (OTHER_PROMPT), never as its output: the prompt shapes of RE_PROMPT only (a bare "# " is a comment or a root
# prompt, each parser decides), and the command a word that starts with a letter, "." or "/"
RE_OTHER_PROMPT = r"^\s*" + RE_PROMPT + r"[ \t]*[A-Za-z./][^\s]*"
OTHER_PROMPT = "shell prompt line of another command (the paste's shell, not the tool's output)"


def command_re(tool: str) -> str:
    """A line that invokes `tool` (a regex of its name): alone or after a prompt or shell separator
    (:data:`RE_BEFORE_COMMAND`), with runners such as sudo, time or watch -n N before it."""
    return r"^\s*" + RE_BEFORE_COMMAND + tool + r"(?:\.exe)?(?:\s|$)"


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
