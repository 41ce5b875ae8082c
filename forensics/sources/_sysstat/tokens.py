"""Words of many lines at once (vectorised readers) and numbers as sysstat prints them."""
from __future__ import annotations

import re

import polars as pl

from forensics.sources._base import NULL_TOKENS


# ---------------------------------------------------------------- words of many lines at once (vectorised readers)

# bytes Python's str.split() treats as blanks and polars' patterns do not (\s is Unicode White_Space)
SPLIT_ONLY_BLANKS = (b"\x1c", b"\x1d", b"\x1e", b"\x1f")
_WORD_ASCII = r"[^ \t\r\x0b\x0c]+"  # \S+ for ASCII text without \n and \x1c-\x1f (a third faster than \S+)


def has_any(data: bytes, needles: tuple[bytes, ...]) -> bool:
    """Whether any of `needles` occurs in `data` (memchr per needle: far quicker than a regex search)."""
    return any(x in data for x in needles)


def words(text: pl.Expr, data: bytes) -> pl.Expr:
    """Each line's whitespace-separated words as str.split() gives them, for `data` without
    SPLIT_ONLY_BLANKS: one pattern pass (ASCII: the blanks str.split() knows, no newline within a line).

    The pattern is twice as quick as splitting at spaces and dropping the empty words (polars 2.1,
    sar-50mb.txt: 0.48-0.57 against 0.94-1.06 CPU s, one thread)."""
    return text.str.extract_all(_WORD_ASCII if data.isascii() else r"\S+")


# ---------------------------------------------------------------- numbers

_NUM = re.compile(r"^[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)$")
_HUMAN = re.compile(r"^[0-9]+(?:[.,][0-9]+)?[kKMGTPE]B?$")
_HUMAN_TOK = re.compile(r"^[0-9]+(?:[.,][0-9]+)?(?:[BkKMGTPE]B?|%)$")


class BadValue(ValueError):
    """A value that is neither a number nor one of the 'not available' tokens."""


def value(tok: str) -> float | None:
    """A sysstat number (decimal comma of de_DE and friends accepted); N/A tokens -> None.

    >>> value("12,50"), value("N/A"), value("-3.85")
    (12.5, None, -3.85)
    """
    t = tok.strip()
    if t in NULL_TOKENS:
        return None
    if _NUM.match(t):
        return float(t.replace(",", "."))
    if _HUMAN.match(t):
        raise BadValue(f"human-readable value {t!r} (--human/-h: converted in kB columns only)")
    raise BadValue(f"not a number: {t[:40]!r}")


def is_number(tok: str) -> bool:
    """A number, also as --human prints it (``2.7%``, ``1.2M``): a data word, not a header word."""
    t = tok.strip()
    return bool(_NUM.match(t) or _HUMAN_TOK.match(t))
