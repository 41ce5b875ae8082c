"""A mail stored without its transfer encoding decoded: quoted-printable (RFC 2045 section 6.7).

Mailing-list archives (lore, marc, the mbox mirrors) keep a message body as it travelled. A body sent
``Content-Transfer-Encoding: quoted-printable`` has each trailing blank of a line written ``=20``
(``=09`` a tab), every ``=`` written ``=3D``, any byte outside printable ASCII written ``=XX``, and every
line longer than 76 characters cut into pieces that end in a soft break ``=`` (RFC 2045 rule 5). Tool
output pasted in such a mail and copied from the archive reaches the project in that form: the
trailing blanks of ``numactl -H``'s matrix or of a kernel message become ``=20``, a long kernel line
(a module list, a register dump) is cut at 76 columns mid-word.

Some mailers (Outlook/Exchange relaying a StGit patch, e.g.) also encode each line's own newline,
so that every line ends ``=0A=``: the newline written out, then a soft break. Such a line ends
there (the ``=0A=`` is its end of line, not a join with the next one), and a newline encoded inside
a line (``...=0A> node 0 free: ...``, a whole reply on one encoded line) is read as a blank: the
line count must not change.

Recognition and parsing read such an input decoded, with its line count unchanged: ``=XX`` becomes
the byte it encodes, and a line that ends in a soft break takes the next line's text (the next line
is left empty, so it is read as a blank line: counted, not lost; unparsed lines keep the file's
text). An input is taken for quoted-printable only on evidence no tool's output gives: at least
MIN_MARKS lines ending in ``=20``/``=09`` or in a soft break at the width an encoder cuts, and
MIN_SHARE of its non-blank lines so.

>>> decode(b"node   0   1 =20\\n  0:  10  20 =20\\n  1:  20  10 =20\\n")
b'node   0   1  \\n  0:  10  20  \\n  1:  20  10  \\n'
>>> looks_encoded(b"a=\\nb\\n")
False
>>> decode(b"node 1 cpus:=0A=\\nnode 1 size: 16122 MB=0A=\\n   0:  10  50 greater=\\n=0A=\\n")
b'node 1 cpus:\\nnode 1 size: 16122 MB\\n   0:  10  50 greater\\n\\n'
"""
from __future__ import annotations

import re

VERSION_KEY = "mail_qp"
VERSION = 2  # 2: a line ending in an encoded newline and a soft break ("=0A=") ends there (it took every following line onto it), a newline encoded inside a line is read as a blank (it added lines); such lines count as evidence of the encoding

MIN_MARKS = 3      # lines ending in an encoded blank or a soft break: fewer prove nothing
MIN_SHARE = 0.1    # ... and at least this share of the non-blank lines weighed
SCAN_LINES = 400   # the sniffers' window
SOFT_MIN = 60      # a soft break is written at (or a few columns before) the 76-column limit:
SOFT_MAX = 76      # a line of this length ending in "=" (the "=" included)

_END_BLANK = re.compile(rb"=(?:20|09)$")
_END_NEWLINE = re.compile(rb"(?:=0D)?=0A=?$")  # the line's own newline encoded (and a soft break after it)
_HEX = re.compile(rb"=([0-9A-F]{2})")


def _mark(line: bytes) -> bool:
    line = line.rstrip(b"\r")
    if _END_BLANK.search(line) or _END_NEWLINE.search(line):
        return True
    return line.endswith(b"=") and SOFT_MIN <= len(line) <= SOFT_MAX


def looks_encoded(head: bytes) -> bool:
    """Whether `head` (an input's start) reads as a quoted-printable body: see the module doc."""
    if b"=" not in head:
        return False
    lines = head.split(b"\n", SCAN_LINES)[:SCAN_LINES]
    if len(lines) > 1 and not head.endswith(b"\n"):
        lines = lines[:-1]  # a last line cut by the head's end is not weighed
    body = [ln for ln in lines if ln.strip()]
    marks = sum(1 for ln in body if _mark(ln))
    return marks >= MIN_MARKS and marks >= MIN_SHARE * len(body)


def _byte(m: re.Match) -> bytes:
    b = int(m.group(1), 16)
    return b" " if b in (10, 13) else bytes([b])  # a newline inside a line: a blank (the line count stays)


def decode(data: bytes) -> bytes:
    """`data` decoded as quoted-printable, its line count unchanged (a soft break joins the next
    line's text onto its line and leaves that line empty)."""
    lines = data.split(b"\n")
    out: list[bytes] = []
    i = 0
    while i < len(lines):
        cur, cr = lines[i], b""
        if cur.endswith(b"\r"):
            cur, cr = cur[:-1], b"\r"
        joined = 0
        # a soft break: "=" last (not the "=" of an "=XX" escape, which is followed by two hex digits);
        # after an encoded newline ("...=0A=") the line ends there
        while cur.endswith(b"=") and not cur.endswith(b"=0A=") and i + joined + 1 < len(lines):
            joined += 1
            nxt = lines[i + joined]
            cr = b"\r" if nxt.endswith(b"\r") else b""
            cur = cur[:-1] + (nxt[:-1] if cr else nxt)
        m = _END_NEWLINE.search(cur)
        if m:
            cur = cur[:m.start()]
        out.append(_HEX.sub(_byte, cur) + cr)
        out.extend([b""] * joined)
        i += joined + 1
    return b"\n".join(out)
