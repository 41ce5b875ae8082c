"""A paste quoted or indented as a block: the prefix shared by (nearly) all of an input's lines.

Tool output pasted into a mail reply comes back with every line behind ``> `` (``> > `` one reply
later); pasted into markdown, a commit message or a forum's code block, behind a constant indent
(two to eight spaces, a tab). No tool of the project prints either in front of every line, so a
prefix held by nearly all non-blank lines of an input's start is the paste's, not the tool's:
recognition and parsing read the input without it (line numbers unchanged: only the prefix of each
line that carries it is removed) and the file's summary says what was removed.

Quote prefixes are always removed. An indent is removed only where the source reads the input at
least as well without it (its sniffer's confidence is not lower), because some tools' outputs are
indented by themselves (``ethtool -S`` counters, the records of ``nvidia-smi -q``), and a paste of
only those lines is indented by the tool, not by the paste.

>>> block_prefix(b"> > a\\n> > b\\n> >\\n> > c\\n")
b'> > '
>>> block_prefix(b"  node 0 cpus: 0 1\\n\\n  node 0 size: 1 MB\\n  node 1 cpus: 2\\n")
b'  '
>>> block_prefix(b"a\\n  b\\n  c\\n") is None
True
>>> strip_prefix(b"> a\\n>\\n[...]\\n> b", b"> ")
b'a\\n\\n[...]\\nb'
"""
from __future__ import annotations

import re
from collections import Counter

# tables carry this beside the parsers' versions (forensics.ingest.run.parser_versions): reading a
# paste without its prefix changes what any source's parser makes of such an input; it versions the
# whole paste layer of sources.parse_pasted (2: lines ending in Markdown hard line breaks are read
# without them, lines that only mark an elision such as "[...]" are skipped and counted; 3: an elision mark
# behind an indented quote ("\t> > [...]") is one too, and a quoted blank line of a quoted-printable mail
# (">=20": the quote's trailing space encoded) is read as the bare quote; 4: elision marks ("[...]") left
# unquoted between the quoted lines are not weighed when the quote prefix is sought: "[...]" and seven
# quoted lines was not a quoted paste before, 7/8 < SHARE)
# 5: a list mark before (nearly) every line ("* ", "- ", "| ": bullet_prefix) is taken off where the source reads
# the input better without it; lines that only open or close a Markdown code fence are skipped and counted)
# 6: a comment mark before (nearly) every line ("% " MATLAB/TeX, "# " shell/Python/R, "// " C/Go/JS, "-- " SQL/Lua,
# "; " Lisp/ini: comment_prefix, output kept as comments of a source file) is taken off where the source reads the
# input better without it, as a list mark is; 7: a node name and ": " before (nearly) every line (pdsh, clush,
# talosctl -n A,B: forensics.sources._hosts) is taken off where the source reads the input at least as well
# without it, and each node's lines are read as one input of that host; 8: the marks before an elision or fence
# line are one character each ("%+" inside a repeated group backtracked exponentially: a line of 24 "#" took
# 8 CPU s, a banner of 80 never ended), "/" alone counts as one, and a line over MARK_MAX bytes is no such line);
# 9: node names are looked for behind a quote prefix ("> node01: ...") and one level inside another ("login1:
# gpu1: ...", a parallel shell run through another: read per inner node, forensics.sources._hosts.nodes_view)
# 10: a quote put before every line of a quoted-printable mail body after its encoding (on each soft break's next
# line too) is taken off before decoding, the rest of the prefix after (the quote was read inside joined lines);
# 11: up to PREAMBLE unquoted lines above the first quoted one (the reply's "On ... wrote:", a "Here is the output:")
# are not weighed when the quote prefix is sought: one such line above four quoted ones was no quoted paste (4/5 < SHARE)
VERSION = 11
VERSION_KEY = "paste_prefix"

SHARE = 0.9        # share of the non-blank lines of the start that must carry a quote prefix
INDENT_SHARE = 1.0  # ... an indent: all (tools indent most lines of some outputs themselves: nvidia-smi -q)
MIN_LINES = 2      # fewer prefixed lines than this: no block (one quoted line proves nothing)
SCAN_LINES = 400   # lines of the input's start weighed (the sniffers' window)
MAX_INDENT = 8     # a deeper common indent is not taken for a paste's
PREAMBLE = 3       # lines above the first quoted (or node-named: forensics.sources._hosts) one that are not weighed

# a line that only marks an elision: "[...]", "[ ... ]", "[…]", "...", "…", "[snip]", "<snip>", "(...)", "-- snip --",
# an "8<" scissors line, alone on a line (after mail quoting, itself indented or not: "\t> > [...]"; or after a
# comment mark: "% ...")
RE_ELISION = (r"(?i)^\s*(?:[>*+|%#;/-]\s*)*(?:\[\s*(?:\.{2,}|…|snip(?:ped)?|cut|trimmed|truncated|skipped|removed|more)\s*\]"
              r"|<\s*(?:\.{2,}|…|snip(?:ped)?)\s*>|\(\s*(?:\.{2,}|…|snip(?:ped)?)\s*\)|\.{3,}|…"
              r"|-+\s*(?:snip|cut)\s*-+|-*\s*8<\s*-*)\s*$")
_ELISION = re.compile(RE_ELISION.encode("utf-8"))
# a line that only opens or closes what the paste was put in: a Markdown code fence (CommonMark: three or more
# backticks, or three or four tildes, with an optional info string "```sh", "~~~ text"), or a C-style comment
# ("/*", " */": output kept in a source file's comment), behind mail quotes, comment marks or an indent or not
RE_FENCE = (r"^[ \t]*(?:[>*+|%#;/-][ \t]*)*(?:`{3,}[ \t]*[A-Za-z0-9_+.#-]*|~{3,4}[ \t]*[A-Za-z0-9_+.#-]*|/\*+|\*+/)[ \t]*$")
_FENCE = re.compile(RE_FENCE.encode("utf-8"))
_QUOTE_RUN = re.compile(rb"^(?:> ?)+")
# a list mark before every line: "* ", " - ", "+ ", "| " (a forum's bulleted list, a wiki's or mail client's bar quote)
_BULLET = re.compile(rb"^([ \t]{0,4}[*+|-])([ \t]+)")
# a comment mark before every line, with at least one blank after it: "% " (MATLAB, TeX), "# " (shell, Python, R,
# YAML), "// " (C, Go, JavaScript), "-- " (SQL, Lua, Haskell), "; " (Lisp, ini, assembler)
_COMMENT = re.compile(rb"^([ \t]{0,4}(?:%+|#+|/{2,}|--|;+))([ \t]+)")
COMMENT_MARKS = b"%#/;-"
_INDENT = re.compile(rb"^[ \t]+")


def _lines(head: bytes) -> list[bytes]:
    """The non-blank lines of `head`'s start that are weighed: an elision mark the paste's author put
    between quoted lines, unquoted ("[...]" before "> ..."), is the author's, not the quoted text's,
    and is not weighed (the paste layer skips it: forensics.sources._base.skip_elisions); nor is a line
    that only opens or closes a code fence or comment around the paste (:data:`RE_FENCE`)."""
    lines = head.split(b"\n", SCAN_LINES)[:SCAN_LINES]
    if len(lines) > 1 and not head.endswith(b"\n"):
        lines = lines[:-1]  # a last line perhaps cut by the head's end is not weighed
    return [t for ln in lines if (t := ln.rstrip(b"\r\n\t ")) and not _mark_line(t)]


MARK_MAX = 256  # bytes: an elision or fence line is a few marks ("> > [...]", "% ```sh"); a longer line is none


def _mark_line(t: bytes) -> bool:
    """Whether `t` only marks an elision or opens or closes a fence. Python's backtracking re takes time
    quadratic in a run of "-" (the prefix's marks and "-- snip --" both take it), so a line longer than
    any such mark (`MARK_MAX`) is not tried: a 100 KB line of "-" took 219 CPU s here."""
    return len(t) <= MARK_MAX and bool(_ELISION.match(t) or _FENCE.match(t))


def _carried(lines: list[bytes], prefix: bytes) -> int:
    bare = prefix.rstrip()
    return sum(1 for ln in lines if ln.startswith(prefix) or (bare and ln == bare))


def _longest(lines: list[bytes], candidates: list[bytes], share: float = SHARE) -> bytes | None:
    """The longest candidate carried by `share` of `lines` (candidates longest first)."""
    need = max(MIN_LINES, share * len(lines))
    for c in candidates:
        if _carried(lines, c) >= need:
            return c
    return None


def quote_prefix(lines: list[bytes]) -> bytes | None:
    runs = Counter(m.group(0) for ln in lines if (m := _QUOTE_RUN.match(ln)))
    if not runs:
        return None
    run = runs.most_common(1)[0][0]
    # the run and each shorter run that ends at one of its '>' (with the space after it, if any)
    cuts = sorted({run} | {run[: i + 1] + (b" " if run[i + 1:i + 2] == b" " else b"")
                           for i in range(len(run)) if run[i:i + 1] == b">"}, key=len, reverse=True)
    return _longest(lines, cuts)


def indent_prefix(lines: list[bytes]) -> bytes | None:
    runs = Counter(m.group(0) for ln in lines if (m := _INDENT.match(ln)))
    if not runs:
        return None
    run = runs.most_common(1)[0][0][:MAX_INDENT]
    return _longest(lines, [run[:i] for i in range(len(run), 0, -1)], INDENT_SHARE)


def bullet_prefix(lines: list[bytes]) -> bytes | None:
    """The list mark ("* ", " - ", "| ") with its blanks that `SHARE` of `lines` start with, or None. No tool of
    the project starts its lines with one followed by a blank (nvidia-smi's and dcgmi's tables start theirs
    with "|" but have "+---" rules between); still, the paste layer takes it off only where the source reads
    the input better without it (:func:`is_bullet`, forensics.sources.paste_prefix)."""
    found = [m for ln in lines if (m := _BULLET.match(ln))]
    if not found:
        return None
    mark = Counter(m.group(1) for m in found).most_common(1)[0][0]
    # the blanks after the mark that every such line has (more are the tool's own indent: "* \t Link 0: ...")
    blanks = min((m.group(2) for m in found if m.group(1) == mark), key=len)
    common = 0
    while common < len(blanks) and all(m.group(2)[common:common + 1] == blanks[common:common + 1]
                                       for m in found if m.group(1) == mark):
        common += 1
    return _longest(lines, [mark + blanks[:max(common, 1)]])


def comment_prefix(lines: list[bytes]) -> bytes | None:
    """The comment mark ("% ", "# ", "// ", "-- ", "; ") with the blanks after it that `SHARE` of `lines` start with,
    or None: tool output kept in a source file's comments (``nvidia-smi -q`` under MATLAB's ``%``, an ``ethtool -S``
    under a script's ``#``). Some tools start a few lines with "#" themselves (``nvidia-smi dmon``'s two header
    lines, a root prompt's "# "), never nearly all of them; still, as a list mark, the paste layer takes it off only
    where the source reads the input at least as well without it (forensics.sources.paste_prefix)."""
    found = [m for ln in lines if (m := _COMMENT.match(ln))]
    if not found:
        return None
    mark = Counter(m.group(1) for m in found).most_common(1)[0][0]
    same = [m.group(2) for m in found if m.group(1) == mark]
    common = 0  # the blanks after the mark that every such line has (more are the tool's own indent)
    while common < min(map(len, same)) and len({b[common:common + 1] for b in same}) == 1:
        common += 1
    return _longest(lines, [mark + same[0][:max(common, 1)]])


def _mark(indent: bytes) -> bytes:
    """The comment mark ("%", "//") of a comment prefix, or the non-blank part of another indent."""
    m = _COMMENT.match(indent)
    return m.group(1).strip(b" \t") if m else indent.strip(b" \t")


def is_comment(indent: bytes) -> bool:
    """Whether the indent part of a prefix is a comment mark (:func:`comment_prefix`)."""
    return bool(_COMMENT.match(indent))


def is_bullet(indent: bytes) -> bool:
    """Whether the indent part of a prefix holds a list mark (not only blanks, not a comment mark)."""
    return bool(_mark(indent)) and not is_comment(indent)


def block_parts(head: bytes) -> tuple[bytes, bytes]:
    """(prefix, indent): what nearly all non-blank lines of `head` start with, as the quote prefix
    (``> ``, ``> > ``, ``>> ``; with any indent before it, as a quote inside a markdown list has) and
    the indent after it (b"" for none), which may end in a list mark (``* ``, ``- ``, ``| ``: :func:`bullet_prefix`). A file with no quote prefix has only an indent, if any."""
    lines = _after_preamble(_lines(head))
    prefix, indent, listed = b"", b"", False
    for _ in range(3):  # indent, quote, indent: each level peeled once
        if len(lines) < MIN_LINES:
            break
        got = indent_prefix(lines) if not indent else None
        if got:
            indent, lines = got, [ln[len(got):] for ln in lines]
        quote = quote_prefix(lines)
        if not quote:  # a bulleted list (once), perhaps behind the quote and indent, perhaps a quote behind it
            mark = None if listed else (bullet_prefix(lines) or comment_prefix(lines))
            if not mark:
                break
            listed, indent = True, indent + mark
            lines = [ln[len(mark):] if ln.startswith(mark) else ln for ln in lines]
            quote = quote_prefix(lines)
            if not quote:
                break
        prefix, indent = prefix + indent + quote, b""
        lines = [ln[len(quote):] for ln in lines if ln.startswith(quote)]
        lines = [ln for ln in lines if ln.strip()]
    return prefix, indent


def _after_preamble(lines: list[bytes]) -> list[bytes]:
    """`lines` without the (at most PREAMBLE) unquoted lines above the first quoted one, where only without them
    the rest is a quoted block of at least twice as many lines: the author's own words above what they quoted ("On
    Tue, 20 Jan 2026, X wrote:", "Here is the output:") are the author's, not the quoted text's, and stay as they are."""
    first = next((i for i, ln in enumerate(lines[:PREAMBLE + 1]) if ln[:1] == b">"), 0)
    if not first or len(lines) - first < max(MIN_LINES, 2 * first) or quote_prefix(lines):
        return lines
    return lines[first:] if quote_prefix(lines[first:]) else lines


def block_prefix(head: bytes) -> bytes | None:
    """The quote prefix, indent, or quote followed by an indent, that nearly all non-blank lines of
    `head` start with; None when there is none."""
    return b"".join(block_parts(head)) or None


def is_quote(prefix: bytes) -> bool:
    return prefix[:1] == b">"


def strip_prefix(data: bytes, prefix: bytes) -> bytes:
    """`data` with `prefix` removed from the start of every line that carries it; with a quote prefix
    (or list mark), a line of only its marks and blanks (a quoted blank line, perhaps of an outer level)
    becomes empty; other lines and the line count unchanged."""
    _, indent = split_prefix(prefix)
    if is_comment(indent):  # a line of only the comment mark (a commented blank line) becomes empty
        bullet = [_mark(indent).decode("ascii", "replace")]
    else:
        bullet = [c for c in prefix.decode("ascii", "replace") if c in "*+|-"][:1]  # (a line of dashes stays one)
    one = (b"(?:" + re.escape(bullet[0]).encode() + rb"[ \t>]*)?") if bullet else b""
    blank = (rb"[ \t>]*" + one + rb"(?=\r?$)|") if (b">" in prefix or bullet) else b""
    return re.sub(rb"(?m)^(?:" + blank + re.escape(prefix) + rb")", b"", data)


def split_prefix(prefix: bytes) -> tuple[bytes, bytes]:
    """(quote, indent) of a prefix :func:`block_prefix` found."""
    m = re.match(rb"^(?:[ \t]*(?:> ?)+)*", prefix)
    quote = m.group(0) if m else b""
    return quote, prefix[len(quote):]


def describe(prefix: bytes) -> str:
    """How the summary names the prefix: 'quoted "> "', 'indented 2 spaces', 'quoted "> ", indented a tab'."""
    q, i = split_prefix(prefix)
    quote, rest = q.decode("ascii"), i.decode("ascii", "replace")
    parts = [f'quoted "{quote}"'] if quote else []
    if rest and is_comment(i):
        parts.append(f'behind the comment mark "{rest}"')
    elif rest and is_bullet(i):
        parts.append(f'behind the list mark "{rest}"')
    elif rest:
        n = len(rest)
        kind = "tab" if set(rest) == {"\t"} else ("space" if set(rest) == {" "} else "blank")
        parts.append(f"indented {'a' if n == 1 else n} {kind}{'' if n == 1 else 's'}")
    return ", ".join(parts)
