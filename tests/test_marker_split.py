"""forensics.sources._base.marker_split on lines in order (as split_lines gives them) against a plain loop over
the lines: a line's sample is the number of markers up to it less one, its time and argv the last of each among the
valid markers up to it; lines before the first marker get -1 and nulls. Checks the Series path of issue 21 (each column
gathered once, masked only when lines come before the first marker) row for row, dtypes and column order."""
from __future__ import annotations

import datetime as dt
import random

import polars as pl
import pytest

from forensics.layout import MARKER_PREFIX, format_marker, parse_marker
from forensics.sources._base import marker_split

T0 = dt.datetime(2026, 11, 30, 10, 15, 2, 123456, tzinfo=dt.timezone.utc)


def _loop(texts: list[str]) -> pl.DataFrame:
    count, ts, argv, rows = 0, None, None, []
    for no, text in enumerate(texts, 1):
        marker = text.startswith(MARKER_PREFIX)
        if marker:
            count += 1
            p = parse_marker(text)
            if p is not None:  # (each column forward-filled alone: a marker without argv keeps the last argv)
                ts, argv = p[0], argv if p[1] is None else p[1]
        rows.append((no, text, marker, ts if count else None, argv if count else None, count - 1))
    return pl.DataFrame(rows, orient="row", schema={
        "line_no": pl.Int64, "text": pl.String, "is_marker": pl.Boolean, "sample_ts": pl.Datetime("us", "UTC"),
        "sample_argv": pl.String, "sample_no": pl.Int64})


def _lines(rng: random.Random, before: int) -> list[str]:
    out = [f"stray {i}" for i in range(before)]
    for k in range(rng.randint(1, 30)):
        kind = rng.random()
        if kind < 0.1:
            out.append(MARKER_PREFIX + "ts=not-a-time")  # malformed: keeps the previous marker's time and argv
        elif kind < 0.2:
            out.append(format_marker(T0 + dt.timedelta(seconds=k)))  # no argv
        else:
            out.append(format_marker(T0 + dt.timedelta(seconds=k), ["ethtool", "-S", f'e"th{k}\\']))
        out += [f"     rx_bytes: {rng.randint(0, 9)}" for _ in range(rng.randint(0, 4))]
    return out


@pytest.mark.parametrize("seed", range(40))
def test_marker_split_equals_the_loop(seed):
    rng = random.Random(seed)
    texts = _lines(rng, before=rng.choice([0, 0, 1, 3]))
    df = pl.DataFrame({"line_no": pl.Series(range(1, len(texts) + 1), dtype=pl.Int64), "text": texts})
    got, want = marker_split(df), _loop(texts)
    assert got.schema == want.schema
    assert got.equals(want)


def test_first_line_before_the_first_marker_is_masked():
    texts = ["stray", MARKER_PREFIX + "ts=bad", format_marker(T0, ["x"]), "a"]
    got = marker_split(pl.DataFrame({"line_no": pl.Series([1, 2, 3, 4], dtype=pl.Int64), "text": texts}))
    assert got["sample_no"].to_list() == [-1, 0, 1, 1]
    assert got["sample_ts"].to_list() == [None, None, T0, T0]
    assert got["sample_argv"].to_list() == [None, None, "x", "x"]


@pytest.mark.parametrize("seed", range(10))
def test_lines_out_of_order_give_the_same_rows_in_line_order(seed):
    rng = random.Random(seed)
    texts = _lines(rng, before=rng.choice([0, 2]))
    df = pl.DataFrame({"line_no": pl.Series(range(1, len(texts) + 1), dtype=pl.Int64), "text": texts})
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=seed)
    # (sample_no there numbers the markers in the order the frame holds them, as it always has: not compared)
    assert marker_split(shuffled).drop("sample_no").equals(_loop(texts).drop("sample_no"))


def test_no_marker_at_all_is_sample_zero():
    df = pl.DataFrame({"line_no": pl.Series([1, 2], dtype=pl.Int64), "text": ["a", "b"]})
    got = marker_split(df)
    assert got.columns == ["line_no", "text", "is_marker", "sample_no", "sample_ts", "sample_argv"]
    assert got["sample_no"].to_list() == [0, 0] and got["sample_ts"].null_count() == 2
    assert got["is_marker"].to_list() == [False, False]
