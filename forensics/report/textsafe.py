"""Text from bundles, made safe to show: control characters become visible escapes.

Log lines come from strangers' machines. A kernel message or NCCL line holding ``ESC [2J`` (clear
the screen), ``ESC [8m`` (hide what follows) or an OSC title sequence would act on the reader's
terminal if printed as it is, and a carriage return or backspace can hide the text before it. Every
renderer that writes bundle text for a person (terminal text, tables, the timeline, Markdown) passes
it through :func:`printable`: C0 controls, DEL and C1 controls are written as ``\\x1b``-style
escapes, so the text stays readable and its bytes can still be told apart. Tab and newline are kept
only where the caller's layout allows them (``keep_newlines``).
"""
from __future__ import annotations

import re

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROLS_AND_LAYOUT = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(m: re.Match) -> str:
    c = m.group(0)
    return _NAMED.get(c) or f"\\x{ord(c):02x}"


def printable(text: object, keep_newlines: bool = False) -> str:
    """`text` as a string with every control character shown as an escape (``\\x1b``, ``\\r``);
    newlines and tabs too unless `keep_newlines`. None is the empty string.

    >>> printable("Xid 79\\x1b[2J on\\tGPU")
    'Xid 79\\\\x1b[2J on\\\\tGPU'
    >>> printable("a\\nb", keep_newlines=True)
    'a\\nb'
    """
    if text is None:
        return ""
    s = text if isinstance(text, str) else str(text)
    pattern = _CONTROLS if keep_newlines else _CONTROLS_AND_LAYOUT
    return pattern.sub(_escape, s) if pattern.search(s) else s
