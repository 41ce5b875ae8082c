"""Property tests: arbitrary bytes and mutations of real fixtures never break a parser's accounting."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixture_cases import cases
from forensics.sources import ParseContext, registry
from test_sources_conformance import check_accounting

SOURCES = sorted(registry())
FIXTURE_BYTES = {s: [f.read_bytes()[:20000] for _, f in cases(s)] for s in SOURCES}
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("name", SOURCES)
@SETTINGS
@given(data=st.binary(max_size=4000))
def test_arbitrary_bytes(name, data):
    res = registry()[name].parse(data, ParseContext(host="h", file="fuzz"))
    check_accounting(res, data, name)


@st.composite
def mutated(draw, source):
    pool = FIXTURE_BYTES[source]
    if not pool:
        return draw(st.binary(max_size=2000))
    base = bytearray(draw(st.sampled_from(pool)))
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "dup_line", "cut"]))
        if not base:
            break
        i = draw(st.integers(0, len(base) - 1))
        if op == "flip":
            base[i] = draw(st.integers(0, 255))
        elif op == "insert":
            base[i:i] = draw(st.binary(min_size=1, max_size=40))
        elif op == "delete":
            del base[i : i + draw(st.integers(1, 200))]
        elif op == "dup_line":
            j = base.find(b"\n", i)
            k = base.rfind(b"\n", 0, i)
            if j > k >= 0:
                base[j:j] = base[k:j]
        else:
            del base[i:]
    return bytes(base)


@pytest.mark.parametrize("name", SOURCES)
def test_mutated_fixtures(name):
    @SETTINGS
    @given(data=mutated(name))
    def run(data):
        res = registry()[name].parse(data, ParseContext(host="h", file="mutated"))
        check_accounting(res, data, name)

    run()


DEEP = b"[" * 100_000 + b"]" * 100_000
NESTED_JSON = {  # the JSON shapes the sources read (dcgmi diag -j, NCCL RAS, sadf -j), nested past Python's recursion limit
    "plain": DEEP + b"\n",
    "dcgm": b'{"DCGM Diagnostic": ' + DEEP + b"}\n",
    "nccl_ras": b'{"communicators": ' + DEEP + b"}\n",
    "sysstat": b'{"sysstat": {"hosts": ' + DEEP + b"}}\n",
}


@pytest.mark.parametrize("shape", sorted(NESTED_JSON))
@pytest.mark.parametrize("name", SOURCES)
def test_json_nested_past_the_recursion_limit_is_unparsed_not_an_error(name, shape):
    """json's decoder raises RecursionError (not ValueError) on deep nesting: every parser keeps such a
    document as unparsed lines, as it keeps any other text it cannot read."""
    data = NESTED_JSON[shape]
    res = registry()[name].parse(data, ParseContext(host="h", file="deep.json"))
    check_accounting(res, data, name)
