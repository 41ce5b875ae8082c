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

Recognition and parsing read such an input decoded: ``=XX`` becomes the byte it encodes, and a line
that ends in a soft break takes the next line's text. Parsing reads the joined lines as one line
(:func:`decode_joined`; the paste layer gives its rows the file's line numbers back and counts the
encoded lines it took as skipped); recognition reads them with the line count unchanged (:func:`decode`:
the lines taken are left empty). Unparsed lines keep the file's text. An input is taken for quoted-printable only on evidence no tool's output gives: at least
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
VERSION = 3  # 3: a line joined by soft breaks is read as one line with the next encoded line after it (RFC 2045 6.7 rule 5), not followed by blank lines (a blank ended a wrapped cpus list, a table, a wrapped record); the encoded lines it took are skipped and counted (meta skipped), its rows keep the line it starts on; a newline encoded inside a line ("=0A") ends a line there (it was read as a blank: two lines run into one), both on the encoded line's number; 2: a line ending in an encoded newline and a soft break ("=0A=") ends there (it took every following line onto it), a newline encoded inside a line is read as a blank (it added lines); such lines count as evidence of the encoding

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
    line's text onto its line and leaves that line empty): for recognition, which weighs a head's lines."""
    out: list[bytes] = []
    for line, joined in _decoded(data):
        out.append(line)
        out.extend([b""] * joined)
    return b"\n".join(out)


def decode_joined(data: bytes) -> tuple[bytes, list[int]]:
    """`data` decoded as RFC 2045 reads it (section 6.7 rule 5: a soft break is no line break, the two
    encoded lines are one line of the text), and for each line of the result the line of `data` (from 1)
    it starts on. A parser reading it sees a line cut by the encoder whole and the line after it next, not
    a blank line between them (a blank ends a wrapped list, a table, a block); a newline encoded inside a
    line ("=0A", a whole reply on one encoded line) ends a line of the text there, as it does in the mail
    (read as a blank, it ran two lines of a tool's output into one).

    >>> decode_joined(b"node 0 cpus: 0 1 2=\\n 3 4\\nnode 0 size: 1 MB=20\\n")
    (b'node 0 cpus: 0 1 2 3 4\\nnode 0 size: 1 MB \\n', [1, 3])
    >>> decode_joined(b"node 0 size: 1 MB=0A> node 0 free: 0 MB=0A=\\n")
    (b'node 0 size: 1 MB\\n> node 0 free: 0 MB\\n', [1, 1])
    """
    out: list[bytes] = []
    starts: list[int] = []
    at = 1
    for line, joined in _decoded(data, newlines=True):
        for part in line.split(b"\n"):  # (a newline encoded inside the line: lines of the text, on one encoded line)
            out.append(part)
            starts.append(at)
        at += joined + 1
    if data.endswith(b"\n") and out and out[-1] == b"":  # (the empty piece after the last newline)
        starts.pop()
    return b"\n".join(out), starts


def _byte_newline(m: re.Match) -> bytes:
    b = int(m.group(1), 16)
    return b"\n" if b == 10 else (b" " if b == 13 else bytes([b]))


def _decoded(data: bytes, newlines: bool = False):
    """(decoded line, how many encoded lines after it its soft breaks joined onto it) for each line; with
    `newlines`, a newline encoded inside a line ("=0A", "=0D=0A") is one in the decoded line, else a blank."""
    lines = data.split(b"\n")
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
        if newlines:
            yield _HEX.sub(_byte_newline, cur.replace(b"=0D=0A", b"=0A")) + cr, joined
        else:
            yield _HEX.sub(_byte, cur) + cr, joined
        i += joined + 1
