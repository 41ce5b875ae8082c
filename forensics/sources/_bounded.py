"""An integer written in an untrusted file, read within the bounds of what it can be: one reading for every
parser, with its three outcomes said apart (a value, a number out of its range, not a number at all).

A file may hold any run of digits where a port, a GPU id, a PID or a buffer size belongs. Each caller
decides what an out-of-range number means for its line (a null the schema allows, the line in ``unparsed``
with its reason, a BadValue); none may take it for a smaller number or crash on it. Digits are ASCII only
(``str.isdigit`` also accepts '²', on which int() raises, and other scripts' digits no tool prints), and a
number of more digits than its bounds is out of range without int() reading it (int() refuses strings of
over 4,300 digits; leading zeros do not count).

>>> bounded_int("255", 0, 255)
Bounded(outcome=<Outcome.VALUE: 'value'>, value=255)
>>> bounded_int("256", 0, 255).outcome, bounded_int("0" * 50 + "7", 0, 255).value
(<Outcome.OUT_OF_RANGE: 'out of range'>, 7)
>>> bounded_int("-3", -8, 7, signed=True).value, bounded_int("-3", 0, 7).outcome, bounded_int("²", 0, 9).outcome
(-3, <Outcome.NOT_A_NUMBER: 'not a number'>, <Outcome.NOT_A_NUMBER: 'not a number'>)

A float has the same hazard the other way round: float() and polars' cast to Float64 read a number past a
double's range (a run of a few hundred digits, or 1e999) as inf, a value the file never wrote. Written
numbers past the range have no value (None, or null in a column: :func:`float_or_none`, :func:`finite`); a
tool's own word for a non-finite value ('nan', 'inf': a diverged loss) holds no digit and keeps its value
(:func:`finite` takes only strings a pattern took as digits: there every infinity is a number past the range).

>>> float_or_none("1.5"), float_or_none("9" * 400), float_or_none("-1e999"), float_or_none("nan")
(1.5, None, None, nan)
>>> float_or_none(10 ** 400), float_or_none("12 s")
(None, None)
"""
from __future__ import annotations

import enum
import math
from typing import NamedTuple

import polars as pl

INT32 = (-(1 << 31), (1 << 31) - 1)  # a polars Int32 column
INT64 = (-(1 << 63), (1 << 63) - 1)  # Int64
U32 = (0, (1 << 32) - 1)             # a kernel u32


class Outcome(enum.Enum):
    VALUE = "value"
    OUT_OF_RANGE = "out of range"
    NOT_A_NUMBER = "not a number"


class Bounded(NamedTuple):
    outcome: Outcome
    value: int | None  # the number where `outcome` is VALUE, else None

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.VALUE


_NOT_A_NUMBER = Bounded(Outcome.NOT_A_NUMBER, None)
_OUT_OF_RANGE = Bounded(Outcome.OUT_OF_RANGE, None)


def bounded_int(text: str | int | None, lo: int, hi: int, *, signed: bool = False) -> Bounded:
    """`text`, decimal ASCII digits (with `signed`, after one leading '+' or '-'; no spaces), or an int
    (a JSON document's), as a number within [lo, hi]."""
    if isinstance(text, bool) or text is None:
        return _NOT_A_NUMBER
    if isinstance(text, int):
        return Bounded(Outcome.VALUE, text) if lo <= text <= hi else _OUT_OF_RANGE
    if not isinstance(text, str):
        return _NOT_A_NUMBER
    negative = False
    if signed and text[:1] in ("+", "-"):
        negative, text = text[0] == "-", text[1:]
    if not text or not (text.isascii() and text.isdigit()):
        return _NOT_A_NUMBER
    digits = text.lstrip("0") or "0"
    if len(digits) > max(len(str(abs(lo))), len(str(abs(hi)))):
        return _OUT_OF_RANGE
    v = -int(digits) if negative else int(digits)
    return Bounded(Outcome.VALUE, v) if lo <= v <= hi else _OUT_OF_RANGE


def int_or_none(text: str | int | None, lo: int, hi: int, *, signed: bool = False) -> int | None:
    """:func:`bounded_int`'s value, None where there is none (for a caller to whom both other outcomes
    mean "no value": a nullable column)."""
    return bounded_int(text, lo, hi, signed=signed).value


def float_or_none(text: str | float | int | None) -> float | None:
    """`text` (what float() accepts, or a JSON document's number) as a float; None where it is no number,
    or one written with digits past a double's range (float() reads it as inf, or raises on an int)."""
    if text is None or isinstance(text, bool):
        return None
    try:
        v = float(text)
    except (ValueError, OverflowError, TypeError):
        return None
    if math.isinf(v) and (isinstance(text, (int, float)) or any(c.isdigit() for c in str(text))):
        return None
    return v


def finite(num: pl.Expr) -> pl.Expr:
    """:func:`float_or_none` for a column: `num`, a Float64 read from strings a pattern took as written digits
    (every caller's: a tool's 'inf' or 'nan' never reaches it), an infinity null (polars' cast reads a number
    past a double's range as inf, as float() does). As cheap as the cast (no string is read again)."""
    return num.replace([math.inf, -math.inf], None)


def to_float(text: pl.Expr) -> pl.Expr:
    """The strings `text` (written digits, as :func:`finite` asks) cast to Float64 (not strict: no number is
    null), a number past a double's range null."""
    return finite(text.cast(pl.Float64, strict=False))
