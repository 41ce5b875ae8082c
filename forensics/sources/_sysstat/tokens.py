"""Words of many lines at once (vectorised readers), iostat -t times in bulk, and numbers as sysstat prints them."""
from __future__ import annotations

import datetime as dt
import re

import numpy as np
import polars as pl

from forensics.sources._base import NULL_TOKENS
from forensics.sources._sysstat.dates import parse_date


# ---------------------------------------------------------------- words of many lines at once (vectorised readers)

# bytes Python's str.split() treats as blanks and polars' patterns do not (\s is Unicode White_Space)
SPLIT_ONLY_BLANKS = (b"\x1c", b"\x1d", b"\x1e", b"\x1f")
_WORD_ASCII = r"[^ \t\r\x0b\x0c]+"  # \S+ for ASCII text without \n and \x1c-\x1f (a third faster than \S+)


def has_any(data: bytes, needles: tuple[bytes, ...]) -> bool:
    """Whether any of `needles` occurs in `data` (memchr per needle: far quicker than a regex search).

    A needle with non-ASCII bytes cannot occur in ASCII data, and one isascii() pass is far quicker
    than searching for a multi-byte needle (26 MB sar text: 0.8 ms against ~15 ms per 3-byte needle)."""
    ascii_data: bool | None = None
    for x in needles:
        if not x.isascii():
            if ascii_data is None:
                ascii_data = data.isascii()
            if ascii_data:
                continue
        if x in data:
            return True
    return False


def words(text: pl.Expr, data: bytes) -> pl.Expr:
    """Each line's whitespace-separated words as str.split() gives them, for `data` without
    SPLIT_ONLY_BLANKS: one pattern pass (ASCII: the blanks str.split() knows, no newline within a line).

    The pattern is twice as quick as splitting at spaces and dropping the empty words (polars 2.1,
    sar-50mb.txt: 0.48-0.57 against 0.94-1.06 CPU s, one thread)."""
    return text.str.extract_all(_WORD_ASCII if data.isascii() else r"\S+")


_TOD_RX = r"^([0-9]{1,2}):([0-9]{2}):([0-9]{2})$"


_EPOCH = dt.datetime(1970, 1, 1)


class Stamps:
    """:func:`stamp_frame` as a read-only mapping 0-based row -> naive datetime (iterated in row order), kept as
    arrays: ``at`` the rows, ``us`` their times as microseconds since the epoch (as S.local_us gives them), ``pos``
    each row's place in them (-1: no time). A datetime is made only for the rows asked for (a reader that
    applies a template to thousands of reports asks for few)."""

    def __init__(self, got: pl.DataFrame | None, n: int):
        empty = got is None or not got.height
        self.at = np.zeros(0, dtype=np.int64) if empty else got["_i"].to_numpy().astype(np.int64)
        self.us = np.zeros(0, dtype=np.int64) if empty else got["ts"].cast(pl.Int64).to_numpy()
        self.pos = np.full(n, -1, dtype=np.int64)
        self.pos[self.at] = np.arange(len(self.at))

    def __len__(self) -> int:
        return len(self.at)

    def __iter__(self):
        return iter(self.at.tolist())

    def get(self, i: int, default: dt.datetime | None = None) -> dt.datetime | None:
        k = int(self.pos[i]) if 0 <= i < len(self.pos) else -1
        return default if k < 0 else _EPOCH + dt.timedelta(microseconds=int(self.us[k]))

    def __getitem__(self, i: int) -> dt.datetime:
        v = self.get(i)
        if v is None:
            raise KeyError(i)
        return v

    def __contains__(self, i: object) -> bool:
        return isinstance(i, (int, np.integer)) and 0 <= i < len(self.pos) and self.pos[i] >= 0


def stamps(df: pl.DataFrame, order: str) -> Stamps:
    """:func:`stamp_frame` as a :class:`Stamps` mapping of the rows of `df`."""
    return Stamps(stamp_frame(df, order), df.height)


def stamp_frame(df: pl.DataFrame, order: str) -> pl.DataFrame | None:
    """The local times of iostat's ``-t`` lines ``<date> <h:mm:ss> [AM|PM]``, read in bulk as
    parse_timestamp reads them one by one: each distinct date once, the time of day as a column
    expression. `df` has each line's words in ``_toks`` and their number in ``_n``; the result maps
    its 0-based row (``_i``, UInt32) to the naive datetime (``ts``, Datetime("us")), None where no line is one.
    Lines left out (other shapes, invalid values) go to the line reader."""
    toks = pl.col("_toks")
    t0, t1, t2 = toks.list.get(0, null_on_oob=True), toks.list.get(1, null_on_oob=True), toks.list.get(2, null_on_oob=True)
    cand = (df.lazy().with_row_index("_i")
            .filter(pl.col("_n").is_in([2, 3]) & t0.str.contains(r"^[0-9]") & t1.str.contains(_TOD_RX))
            .select("_i", t0.alias("d"), t1.str.extract_groups(_TOD_RX).alias("g"), pl.col("_n"), t2.alias("ap"))
            .unnest("g").collect(engine="in-memory"))
    if not cand.height:
        return None
    days = {d: parse_date(d, order) for d in cand["d"].unique().to_list()}
    days = {d: v for d, v in days.items() if v is not None}
    if not days:
        return None
    h, mi, se = (pl.col(c).cast(pl.Int64) for c in ("1", "2", "3"))
    ampm = pl.col("ap").is_in(["AM", "PM", "am", "pm"]).fill_null(False)
    twelve = pl.col("_n") == 3
    secs = (pl.when(twelve).then((h % 12 + pl.when(pl.col("ap").is_in(["PM", "pm"])).then(12).otherwise(0)) * 3600)
            .otherwise(h * 3600) + mi * 60 + pl.min_horizontal(se, pl.lit(59)))
    ok = ((mi <= 59) & (se <= 60) & pl.col("d").is_in(list(days))
          & pl.when(twelve).then(ampm & (h >= 1) & (h <= 12)).otherwise(h <= 23))
    got = cand.filter(ok).select(
        "_i", (pl.col("d").replace_strict(days, return_dtype=pl.Date).cast(pl.Datetime("us"))
               + pl.duration(seconds=secs)).alias("ts"))
    return got


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
