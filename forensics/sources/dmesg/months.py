"""Month abbreviations as syslog and ``journalctl -o short`` print them (``strftime("%b")`` in the
host's locale): the C locale's, and those of glibc locales seen in public logs (``jan.`` of nb_NO,
``фев`` of ru_RU, ``Okt``/``Dez`` of de_DE, ...). Matched case-insensitively without a trailing dot;
an abbreviation not listed leaves the time unconverted (reported, never guessed)."""
from __future__ import annotations

import polars as pl

_BY_MONTH = (
    # the C locale first, then de, fr, es, it, pt, nl, sv, nb, pl, ru (each name once)
    ("jan", "janv", "ene", "gen", "sty", "янв"),
    ("feb", "févr", "fev", "lut", "фев"),
    ("mar", "mär", "mars", "mrt", "мар"),
    ("apr", "avr", "avril", "abr", "april", "kwi", "апр"),
    ("may", "mai", "mag", "mei", "maj", "мая"),
    ("jun", "juin", "giu", "juni", "cze", "июн"),
    ("jul", "juil", "lug", "juli", "lip", "июл"),
    ("aug", "août", "ago", "sie", "авг"),
    ("sep", "sept", "set", "wrz", "сен"),
    ("oct", "okt", "out", "ott", "paź", "окт"),
    ("nov", "lis", "ноя"),
    ("dec", "dez", "déc", "dic", "des", "gru", "дек"),
)
MONTH_NUMBER = {abbr: i for i, names in enumerate(_BY_MONTH, start=1) for abbr in names}
# every spelling looked up directly (lower, capitalised, upper case; with and without the dot): one
# hash lookup per line instead of case folding and stripping every line first
_SPELLINGS = {f(a) + dot: i for a, i in MONTH_NUMBER.items() for f in (str.lower, str.capitalize, str.upper)
              for dot in ("", ".")}


def month_number(mon: pl.Expr) -> pl.Expr:
    """'Nov' / 'jan.' / 'фев' -> 11 / 1 / 2 (Int32; null when not known)."""
    return mon.replace_strict(_SPELLINGS, default=None, return_dtype=pl.Int32)
