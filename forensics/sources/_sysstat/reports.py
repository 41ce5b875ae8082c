"""Reports of a sysstat text read in bulk: the lines' texts fetched as needed, where each report starts, and each
line's kind as a number (what iostat's vectorised reader compares to apply one report's layout to the others)."""
from __future__ import annotations

import numpy as np
import polars as pl

from forensics.sources._sysstat.tokens import Stamps


class Texts:
    """The lines' texts for a vectorised reader, which reads few of them one by one: those it
    steers on are fetched from the column in one go (`prefetch`), any other (a rejected row) when
    asked for. Saves making a Python string of every line (a twentieth of the reader's time)."""

    def __init__(self, col: pl.Series):
        self.col = col
        self.got: dict[int, str] = {}

    def __len__(self) -> int:
        return self.col.len()

    def prefetch(self, idx: np.ndarray) -> None:
        self.got.update(zip(idx.tolist(), self.col.gather(idx).to_list()))

    def span(self, a: int, b: int) -> list[str]:
        """The texts of lines a..b-1 (0-based)."""
        return self.col.slice(a, b - a).to_list()

    def __getitem__(self, i: int) -> str:
        t = self.got.get(i)
        return t if t is not None else self.col[i]


def report_bounds(texts: Texts, steer_at: np.ndarray, ntok: np.ndarray, stamps: Stamps, least: int) -> np.ndarray | None:
    """The first line (0-based) of each report, then the line count: the -t times when there are any, else the
    lines with the text of the first avg-cpu or Device header; None when fewer than `least` (not worth a template)."""
    if len(stamps) >= least:
        at = stamps.at  # (in row order)
    elif len(stamps):  # a few times among untimed reports: each report walked (a template would not carry a time)
        return None
    else:
        first = next((texts[i] for i in steer_at[ntok[steer_at] > 0][:64].tolist()
                      if texts[i].lstrip().startswith(("avg-cpu:", "Device"))), None)
        if first is None:
            return None
        at = np.array([i for i in steer_at.tolist() if ntok[i] > 0 and texts[i] == first], dtype=np.int64)
        if len(at) < least:
            return None
    return np.append(at, len(texts))


def line_codes(texts: Texts, steer_at: np.ndarray, ntok: np.ndarray, stamps: Stamps, num0: np.ndarray,
               numl: np.ndarray) -> np.ndarray:
    """Each line's kind as a number, what the reading of a line depends on besides the state: a plain line its
    word count and whether its first and last words are numbers, a blank -1, a -t time -2, any other
    steering line its text (a number per distinct text)."""
    code = (ntok.astype(np.int64) << 3) | (num0.astype(np.int64) << 1) | numl.astype(np.int64) | (1 << 40)
    code[steer_at] = -1  # blank (overwritten below for the others)
    said = steer_at[ntok[steer_at] > 0]
    at = stamps.at if len(stamps) else None
    if at is not None:
        timed = np.zeros(len(code), dtype=bool)
        timed[at] = True
        said = said[~timed[said]]  # (the -t times: -2 below)
    if len(said):  # equal texts, equal numbers: each distinct text's place among the distinct texts (exact, not a
        # hash; a quarter of the CPU of ranking them, which sorts)
        said_t = texts.col.gather(said)
        distinct = said_t.unique()
        code[said] = said_t.replace_strict(distinct, pl.int_range(1, distinct.len() + 1, eager=True, dtype=pl.Int64),
                                           return_dtype=pl.Int64).to_numpy()
    if at is not None:
        code[at] = -2
    return code


def alike(code: np.ndarray, a: int, e: int, rest: np.ndarray) -> int:
    """How many of the reports starting at `rest` (each up to the next; the last entry ends the last) have, one
    after the other from the first, the line kinds `code` of lines a..e-1."""
    same = np.diff(rest) == e - a
    if not same.any():
        return 0
    cand = rest[:-1][same]
    match = (code[cand[:, None] + np.arange(e - a)] == code[a:e]).all(axis=1)
    ok = np.zeros(len(rest) - 1, dtype=bool)
    ok[np.flatnonzero(same)[match]] = True
    return len(ok) if ok.all() else int(np.argmin(ok))
