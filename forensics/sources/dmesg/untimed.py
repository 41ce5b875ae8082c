"""Kernel messages without any time: ``dmesg -t`` (``--notime``) output, and pastes whose times were
cut off (commit messages, forum posts: `` pcieport 0000:00:1c.0: AER: Corrected error received``).

Such a line has no prefix to recognise it by, so a file is taken to be one only as a whole: at
least UNTIMED_MIN_STRONG lines, and at least UNTIMED_STRONG_SHARE of its lines, must have a shape
only the kernel prints (a driver and its PCI device, ``NVRM:``, an oops or hung-task header), and
UNTIMED_SHARE of them a kernel message shape at all (``driver device: ``, ``subsystem: ``); a file
with any timed kernel line never is (its lines without a prefix stay unparsed). The rows have no
time (``ts_quality`` ``none``); lines of another shape stay in ``unparsed``.
"""
from __future__ import annotations

import re

import polars as pl

from forensics.sources._quote import MARK_MAX, RE_ELISION, RE_FENCE
from forensics.sources.dmesg.fields import RE_BRACKET, RE_DEV, RE_MODFN, RE_WORD

# shapes only the kernel prints: dev_printk with a PCI device ("pcieport 0000:00:1c.0: ",
# "mlx5_core 0000:08:00.2 ens1f0: "), the NVIDIA driver, oops / warning / hung task / RCU / MCE heads
RE_STRONG = (r"^(?:[A-Za-z][A-Za-z0-9_.-]* (?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
             r"(?: [A-Za-z][A-Za-z0-9_.@-]*)?: "
             r"|NVRM: |BUG: |WARNING: CPU: |Oops: |Kernel panic - |INFO: task .+ blocked for more than "
             r"|Call Trace:|RIP: |CPU: [0-9]+ (?:UID: [0-9]+ )?PID: |Hardware name: |#PF: |rcu: INFO: "
             r"|watchdog: BUG: |Out of memory: |mce: \[Hardware Error\]"
             # the hung-task report's other lines (kernel/hung_task.c, sched_show_task): its hint, the task's
             # state line (since 5.x "task:comm state:D ..."), and arm64's spelling of the trace head
             r"|\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message\."
             r"|task:\S+\s+state:[A-Z] |Call trace:"
             # SysRq's own header (2.6 "SysRq : Show Blocked State", since 5.x "sysrq: Show Blocked State")
             r"|[Ss]ys[Rr]q ?: "
             # the 2.6 task state line with the task's saved PC ("khubd  D ffff8800010220c0  0  170  2"): only
             # sched_show_task prints an address between a one-letter state and three numbers
             r"|.{1,15}\s+[RSDTtXZPIKWN] +(?:[0-9a-f]{8}|[0-9a-f]{16}) +[0-9]+ +[0-9]+ +[0-9]+(?:\s|$))")
# the task line of a hung-task report before 5.13 (sched_show_task: "%-15.15s %c" comm and state, then
# " %5lu %5d %6d 0x%08lx" free stack, pid, ppid, flags: "kworker/u4:3    D    0   166      2 0x80004000");
# before 3.x (2.6) the task's saved PC came after the state ("khubd         D ffff8800010220c0     0   170
# 2 0x00000000", 32-bit "c0123456", or "running" / "running task"), before ~2.6.30 without the flags, and in
# 2.6.9-era sysrq-t output with the child/sibling pids and "(NOTLB)" after them; and the "Workqueue: name
# func" line print_worker_info adds under it
RE_TASK_STATE = (r"^.{1,15}\s+[RSDTtXZPIKWN] +(?:(?:[0-9a-f]{8}|[0-9a-f]{16}|running(?: task)?) +)?"
                 r"[0-9]+ +[0-9]+ +[0-9]+(?: 0x[0-9a-f]{8}| +[0-9]+(?: +[0-9]+)?(?: +\([A-Z-]+\))?)?\s*$"
                 r"|^Workqueue: \S+ \S+"
                 # the task's stack words under it (show_stack), whose first line 2.6.9-era kernels did not indent:
                 # "00000101b9b9bef8 0000000000000002 0000003700000037 00000101c13608a0"
                 r"|^(?:[0-9a-f]{16}|[0-9a-f]{8})(?: (?:[0-9a-f]{16}|[0-9a-f]{8})){1,7}\s*$")
# what a kernel message looks like at all (the shapes fields.py reads the subsystem from)
RE_MESSAGE = "|".join((RE_STRONG, RE_TASK_STATE, RE_DEV, RE_WORD, RE_MODFN, RE_BRACKET, r"^-+\[ cut here \]-+$",
                       r"^-+\[ end trace [0-9a-f]+ \]-+$"))
UNTIMED_MIN_STRONG = 2
UNTIMED_STRONG_SHARE = 0.25  # an oops: a few heads, then register dumps ("RAX: ...")
UNTIMED_SHARE = 0.8
UNTIMED = "untimed"

_STRONG = re.compile(RE_STRONG)
_MESSAGE = re.compile(RE_MESSAGE)
# the paste's own lines around and inside the kernel's: a Markdown code fence ("```", "~~~ text") and an elision mark
# ("...", "[...]"), as the paste layer reads them (forensics.sources._quote; the parser's result skips and counts them)
_PASTE_MARK = re.compile(RE_ELISION + "|" + RE_FENCE)


def _paste_mark(line: str) -> bool:
    return len(line) <= MARK_MAX and bool(_PASTE_MARK.match(line))


def untimed_share(lines: list[str]) -> tuple[int, int, int]:
    """(kernel-only shapes, kernel message shapes, lines considered) among `lines` (blank and indented
    lines, the further lines of a message, and the paste's fence and elision marks aside)."""
    considered = [ln for ln in lines if ln.strip() and ln[:1] not in " \t" and not _paste_mark(ln)]
    strong = sum(1 for ln in considered if _STRONG.match(ln))
    shaped = sum(1 for ln in considered if _MESSAGE.match(ln))
    return strong, shaped, len(considered)


def is_untimed(strong: int, shaped: int, considered: int) -> bool:
    return (considered > 0 and strong >= UNTIMED_MIN_STRONG and strong >= UNTIMED_STRONG_SHARE * considered
            and shaped >= UNTIMED_SHARE * considered)


_PASTE_RE = RE_ELISION + "|" + RE_FENCE


def untimed_lines(left: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """When the lines no reader took (`left`: line_no, text; the file gave no timed line) are a kernel
    log without times: (the lines of a kernel message shape, the others); else None."""
    main = left.filter((pl.col("text").str.strip_chars() != "") & ~pl.col("text").str.contains(_PASTE_RE))
    if not main.height:
        return None
    if not is_untimed(*untimed_share(main["text"].head(2000).to_list())):
        return None
    ok = pl.col("text").str.contains(RE_MESSAGE)
    return left.filter(ok), left.filter(~ok)
