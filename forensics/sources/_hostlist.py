"""Slurm hostlist expressions (``node[01-04,07]``, ``cpn-h22-29,cpn-h23-[11-13,15-16,32,34]``) -> host names.

The syntax is Slurm's (src/common/hostlist.c, what ``scontrol show hostnames`` expands): a comma
outside brackets separates hosts; ``[...]`` holds comma-separated numbers and ranges ``a-b``, each
number printed with the width of the range's first bound (``[01-10]``: 01..10; ``[8-10]``: 8, 9, 10);
a name with several bracket groups (``rack[1-2]-n[1-2]``) expands to their product, in order.
Bounded: more than `limit` names (or a range of more) is refused with ValueError, as is any
expression that is not a hostlist (an unclosed bracket, a bound that is not a number, b < a).

>>> expand("node[01-04,07]")
['node01', 'node02', 'node03', 'node04', 'node07']
>>> expand("cpn-h22-29,cpn-h23-[11-13,32]")
['cpn-h22-29', 'cpn-h23-11', 'cpn-h23-12', 'cpn-h23-13', 'cpn-h23-32']
>>> expand("r[1-2]n[8-10]")
['r1n8', 'r1n9', 'r1n10', 'r2n8', 'r2n9', 'r2n10']
>>> expand("gpu[1-3")
Traceback (most recent call last):
ValueError: unclosed '[' in hostlist 'gpu[1-3'
"""
from __future__ import annotations

import re

LIMIT = 65536  # names one expression may expand to (Slurm's own MAX_RANGE is 64 Ki)
_RANGE = re.compile(r"^([0-9]{1,9})(?:-([0-9]{1,9}))?$")


def expand(expr: str, limit: int = LIMIT) -> list[str]:
    """The host names of a Slurm hostlist expression (see the module's docstring)."""
    out: list[str] = []
    for item in _split_top(expr):
        names = [""]
        rest = item
        while rest:
            i = rest.find("[")
            if i < 0:
                names = [n + rest for n in names]
                break
            j = rest.find("]", i)
            if j < 0:
                raise ValueError(f"unclosed '[' in hostlist {expr!r}")
            prefix, body, rest = rest[:i], rest[i + 1:j], rest[j + 1:]
            if "[" in body or "]" in prefix:
                raise ValueError(f"nested or stray bracket in hostlist {expr!r}")
            nums = _numbers(body, expr, limit)
            if len(names) * len(nums) + len(out) > limit:
                raise ValueError(f"hostlist {expr!r} names more than {limit} hosts")
            names = [n + prefix + x for n in names for x in nums]
        out.extend(n for n in names if n)
        if len(out) > limit:
            raise ValueError(f"hostlist {expr!r} names more than {limit} hosts")
    return out


def _split_top(expr: str) -> list[str]:
    """`expr` split at the commas outside brackets."""
    items, depth, cur = [], 0, []
    for ch in expr.strip():
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"stray ']' in hostlist {expr!r}")
        if ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise ValueError(f"unclosed '[' in hostlist {expr!r}")
    items.append("".join(cur))
    for it in items:
        if not it or any(c.isspace() for c in it):
            raise ValueError(f"empty or blank host name in hostlist {expr!r}")
    return items


def _numbers(body: str, expr: str, limit: int) -> list[str]:
    nums: list[str] = []
    for part in body.split(","):
        m = _RANGE.match(part)
        if not m:
            raise ValueError(f"'{part}' is not a number or range in hostlist {expr!r}")
        lo, hi = m.group(1), m.group(2) or m.group(1)
        a, b = int(lo), int(hi)
        if b < a or b - a + len(nums) >= limit:
            raise ValueError(f"range '{part}' of hostlist {expr!r} is reversed or longer than {limit}")
        width = len(lo)
        nums.extend(str(k).zfill(width) for k in range(a, b + 1))
    return nums
