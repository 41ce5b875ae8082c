"""One conformance test walks the source registry: every entry has what the contract demands."""
from __future__ import annotations

import doctest
import json

import polars as pl
import pytest

from fixture_cases import cases, context_for, load_expected, summarize
from forensics import schema
from forensics.sources import ParseContext, detect, parse_bytes, registry, split_lines

EXPECTED_SOURCES = {"dmesg", "ethtool", "iostat", "sar", "numactl", "nvidia_smi", "nccl"}
SOURCES = sorted(registry())


def check_accounting(res, data: bytes, name: str) -> None:
    lines = split_lines(data)
    assert res.lines == lines.height, f"{name}: lines {res.lines} != {lines.height}"
    up = res.unparsed
    assert up.schema == schema.polars_schema("unparsed")
    nos = up["line_no"].to_list()
    assert len(nos) == len(set(nos)), f"{name}: a line is unparsed twice"
    assert all(1 <= n <= res.lines for n in nos), f"{name}: unparsed line_no out of range"
    assert up["reason"].null_count() == 0
    for table, df in res.tables.items():
        assert df.schema == schema.polars_schema(table), f"{name}: {table} does not match its schema"
        if "line_no" in df.columns and df.height:
            assert df["line_no"].min() >= 1 and df["line_no"].max() <= max(res.lines, 1)


def test_all_seven_sources_registered():
    assert EXPECTED_SOURCES <= set(SOURCES)


@pytest.mark.parametrize("name", SOURCES)
def test_source_contract(name):
    mod = registry()[name]
    assert isinstance(mod.VERSION, int) and mod.VERSION >= 1
    assert mod.DESCRIPTION and mod.__doc__
    for table in mod.TABLES:
        schema.load(table)  # raises when the schema is missing
    assert ">>>" in mod.__doc__, f"{name}: docstring has no example"
    failures, tried = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert tried > 0 and failures == 0
    assert cases(name), f"{name}: no real fixture under tests/fixtures/{name}/"


ALL_CASES = cases()


@pytest.mark.parametrize("source,fixture", ALL_CASES, ids=[f.name for _, f in ALL_CASES])
def test_fixture_parses_as_expected(source, fixture):
    data = fixture.read_bytes()
    mod = registry()[source]
    # as the library reads a file: a paste quoted or indented as a block is read without that prefix
    _, res = parse_bytes(data, source, context_for(fixture))
    check_accounting(res, data, fixture.name)
    assert set(res.tables) <= set(mod.TABLES)
    expected = load_expected(fixture)
    assert expected is not None, f"{fixture.name}: no .expected.json (python tests/regen_expected.py {source})"
    got = json.loads(json.dumps(summarize(res), default=str))
    regen = f"(python tests/regen_expected.py {source}, then review the diff)"
    assert "sha256" in expected, f"{fixture.name}: .expected.json does not pin the tables in full {regen}"
    changed = sorted(t for t in set(got["sha256"]) | set(expected["sha256"])
                     if got["sha256"].get(t) != expected["sha256"].get(t))
    assert {k: v for k, v in got.items() if k != "sha256"} == {k: v for k, v in expected.items() if k != "sha256"}
    assert not changed, f"{fixture.name}: content of {', '.join(changed)} changed {regen}"


@pytest.mark.parametrize("source,fixture", ALL_CASES, ids=[f.name for _, f in ALL_CASES])
def test_fixture_is_recognised_by_content(source, fixture):
    side = fixture.with_name(fixture.name + ".ctx.json")
    if side.is_file() and '"sniff": false' in side.read_text():
        pytest.skip("fixture documented as not sniffable alone (excerpt)")
    assert detect(fixture.read_bytes()) == source


BAD_INPUTS = {
    "empty": b"",
    "newline": b"\n",
    "crlf": b"line one\r\nline two\r\n",
    "garbage": bytes(range(256)) * 8,
    "nul": b"\x00\x00\x00\n\x00",
    "non_utf8": "caf\xe9 na\xefve\n".encode("latin-1"),
    "long_line": b"x" * (5 << 20) + b"\n",
}


@pytest.mark.parametrize("name", SOURCES)
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_accounted(name, case):
    data = BAD_INPUTS[case]
    res = registry()[name].parse(data, ParseContext(host="h", file=f"{case}.txt"))
    check_accounting(res, data, f"{name}/{case}")


@pytest.mark.parametrize("source,fixture", ALL_CASES, ids=[f.name for _, f in ALL_CASES])
def test_truncated_fixture_is_accounted(source, fixture):
    data = fixture.read_bytes()
    for cut in (len(data) // 3, len(data) // 2 + 7, max(len(data) - 5, 0)):
        piece = data[:cut]
        res = registry()[source].parse(piece, context_for(fixture))
        check_accounting(res, piece, f"{fixture.name}[:{cut}]")


def test_crlf_fixture_parses_like_lf():
    for source, fixture in ALL_CASES:
        data = fixture.read_bytes()
        if b"\r" in data:
            continue
        mod = registry()[source]
        a = mod.parse(data, context_for(fixture))
        b = mod.parse(data.replace(b"\n", b"\r\n"), context_for(fixture))
        assert a.rows() == b.rows(), fixture.name
        assert a.unparsed.height == b.unparsed.height, fixture.name


def test_expected_pins_every_row():
    """The .expected.json digest changes with any value of any row, not only the three shown."""
    from fixture_cases import table_digest

    source, fixture = next((s, f) for s, f in ALL_CASES if s == "numactl")
    res = registry()[source].parse(fixture.read_bytes(), context_for(fixture))
    df = res.tables["numa_distances"]
    assert df.height > 3
    last = df.with_columns(pl.when(pl.int_range(pl.len()) == df.height - 1).then(pl.col("distance") + 1)
                           .otherwise(pl.col("distance")).alias("distance"))
    assert table_digest(last) != table_digest(df)
    assert table_digest(df.reverse()) == table_digest(df)  # row order is not pinned (a set's order may vary)
