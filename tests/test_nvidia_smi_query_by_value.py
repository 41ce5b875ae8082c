"""nvidia_smi query-gpu CSV series (issue 21): from 256 rows a field is converted once per distinct value and
nvidia-smi's own time stamps are read by their fixed positions. The tables must be those of the value-by-value
conversion (every field through ``_convert``) on every CSV fixture, grown past the threshold, and the stamps
those of strptime for any text."""
from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest

from forensics.sources import ParseContext
from forensics.sources.nvidia_smi import parse, query_csv

FX = Path(__file__).parent / "fixtures" / "nvidia_smi"
FIXTURES = sorted(p for p in FX.glob("nvidia_smi--*") if not p.name.endswith(".expected.json"))


def _csv_fixtures() -> list[Path]:
    out = []
    for p in FIXTURES:
        res = parse(p.read_bytes(), ParseContext(host="h", tz="UTC"))
        if str(res.meta.get("variant", "")).startswith("csv"):
            out.append(p)
    return out


CSV = _csv_fixtures()


SMALL = 64  # the threshold the tests use (the same code from fewer rows; the real one needs big inputs)


def _both(data: bytes, ctx: ParseContext, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(query_csv, "_SERIES_ROWS", SMALL)
        m.setattr(query_csv, "_UNIQUE_ROWS", SMALL)
        fast = parse(data, ctx)
    with monkeypatch.context() as m:
        m.setattr(query_csv, "_SERIES_ROWS", 1 << 40)  # every field value by value, as before
        m.setattr(query_csv, "_UNIQUE_ROWS", 1 << 40)
        slow = parse(data, ctx)
    return fast, slow


def _same(a, b) -> None:
    assert a.tables.keys() == b.tables.keys()
    for t in a.tables:
        assert a.tables[t].schema == b.tables[t].schema, t
        assert a.tables[t].equals(b.tables[t]), t
    assert a.unparsed.equals(b.unparsed)
    assert a.lines == b.lines and a.meta == b.meta


def test_the_csv_fixtures_are_found():
    assert len(CSV) >= 10


@pytest.mark.parametrize("path", CSV, ids=lambda p: p.name)
def test_a_csv_fixture_grown_past_the_threshold_gives_the_same_tables(path, monkeypatch):
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        data += b"\n"
    n = max(1, data.count(b"\n"))
    grown = data * (SMALL // n + 2)  # (headers repeat: a block each, as a `-l` series with them)
    for ctx in (ParseContext(host="h", tz="UTC"), ParseContext(host="h", tz="Europe/Berlin")):
        fast, slow = _both(grown, ctx, monkeypatch)
        _same(fast, slow)
        assert sum(fast.rows().values()) > 0 or fast.unparsed.height


def test_damaged_cells_are_reported_alike(monkeypatch):
    """Cells that do not convert (a unit-less word, a bad mask, a stamp of another form), N/A tokens, empty cells,
    blanks around values and a short row: the same rows kept and the same unparsed reasons by value as cell by
    cell."""
    path = FX / "nvidia_smi--csv-header-units-timestamp-3090ti.csv.txt"
    head, *rows = path.read_text().splitlines()
    rng = random.Random(7)
    bad = ["abc W", "[N/A]", "N/A", "", "  61  ", "61 C", "-1 %", "1e3 W", "0x", "[Not Supported]", "451.06W",
           "2025/09/28 21:49:39", "2025-09-28 21:49:39.046", "NVIDIA GeForce RTX 3090 Ti ", "\t100 %"]
    out = [head]
    for k in range(400):
        cells = rows[k % len(rows)].split(", ")
        if rng.random() < 0.3:
            cells[rng.randrange(len(cells))] = rng.choice(bad)
        if rng.random() < 0.02:
            cells = cells[:-1]
        out.append(", ".join(cells))
    data = ("\n".join(out) + "\n").encode()
    fast, slow = _both(data, ParseContext(host="h", tz="UTC"), monkeypatch)
    _same(fast, slow)
    assert fast.unparsed.height and fast.tables["gpu_samples"].height


@pytest.mark.parametrize("rows", [10, 300])
def test_rows_of_another_field_count_are_unparsed_with_their_count(rows, monkeypatch):
    """A row with fewer or more fields than the header (the cells are cut at the first n - 1 commas, the rest of
    the line kept in the last one) is unparsed with its own number of fields, the others are read."""
    path = FX / "nvidia_smi--csv-header-units-timestamp-3090ti.csv.txt"
    head, good = path.read_text().splitlines()[:2]
    cells = good.split(", ")
    shapes = [cells[:1], cells[:4], cells, cells + ["x"], cells + cells[:4], cells[:4] + [""], cells + [""],
              [",".join(cells)], cells[:2] + ["a,b"] + cells[3:]]
    lines = [head] + [", ".join(shapes[k % len(shapes)]) for k in range(rows)]
    data = ("\n".join(lines) + "\n").encode()
    with monkeypatch.context() as m:
        m.setattr(query_csv, "_SERIES_ROWS", SMALL)
        res = parse(data, ParseContext(host="h", tz="UTC"))
    want = {k + 2: f"{t.count(',') + 1} fields where the header has 5" for k, t in enumerate(lines[1:]) if t.count(",") != 4}
    got = dict(zip(res.unparsed["line_no"].to_list(), res.unparsed["reason"].to_list()))
    assert got == want
    assert res.tables["gpu_samples"].height == rows - len(want)


_GOOD = "2026/12/05 04:00:00.690"


def _stamps(seed: int) -> list[str | None]:
    rng = random.Random(seed)
    edge = [_GOOD, "2026/12/05 23:59:59.999", "2026/12/05 24:00:00.000", "2026/12/05 23:60:00.000",
            "2026/12/05 23:59:60.000", "2026/02/29 10:00:00.000", "2024/02/29 10:00:00.000", "2026/13/01 10:00:00.000",
            "2026/00/10 10:00:00.000", "2026/12/00 10:00:00.000", "0000/01/01 00:00:00.000", "9999/12/31 23:59:59.999",
            "2026/12/05 04:00:00", "2026/12/05 04:00:00.6901", "2026/12/05 04:00:00.69", " 2026/12/05 04:00:00.690",
            "2026/12/05 04:00:00.690 ", "2026-12-05 04:00:00.690", "2026/12/05T04:00:00.690", "N/A", "[N/A]", "", None,
            "2026/1/05 04:00:00.690", "2026/12/05 4:00:00.690", "+026/12/05 04:00:00.690", "2026/12/05 04:00:00,690"]
    out = list(edge)
    digits = "0123456789"
    for _ in range(3000):
        s = list(_GOOD)
        for _ in range(rng.randint(1, 3)):  # a digit changed, or any character
            k = rng.randrange(len(s))
            s[k] = rng.choice(digits) if rng.random() < 0.8 else rng.choice(" /:.-x9\t")
        out.append("".join(s))
    rng.shuffle(out)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_stamps_by_position_are_those_of_strptime(seed):
    raw = pl.Series("r", _stamps(seed), dtype=pl.String)
    want = pl.DataFrame({"r": raw}).select(query_csv._convert(pl.col("r"), "ts")[0].alias("c"))["c"]
    got = query_csv._convert_stamps(raw)
    assert got.dtype == want.dtype
    assert got.equals(want)
    assert got.null_count() < raw.len()  # (both forms are in: values and nulls)
