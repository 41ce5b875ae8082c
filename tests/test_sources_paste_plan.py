"""The paste layer's checks run once per file: :func:`forensics.sources.paste_plan` says the head is read as it
is, and ``parse_pasted(..., plain=True)`` then skips the checks that ``_paste_read`` would repeat. The shortcut
must never change what is read: wherever the plan says plain, ``_paste_read`` returns the input untouched."""
from __future__ import annotations

import quopri

import pytest

from fixture_cases import cases, context_for
from forensics.sources import SNIFF_BYTES, _paste_read, get, parse_pasted, paste_plan, paste_prefix


def _shapes(data: bytes) -> dict[str, bytes]:
    lines = data.split(b"\n")
    return {
        "as is": data,
        "quoted": b"\n".join(b"> " + ln for ln in lines),
        "hard breaks": b"\n".join(ln + b" \\" if ln.strip() else ln for ln in lines),
        "quoted-printable": quopri.encodestring(data),  # a mail body as RFC 2045 encodes it
    }


@pytest.mark.parametrize("shape", ["as is", "quoted", "hard breaks", "quoted-printable"])
def test_plain_means_the_paste_layer_reads_the_input_as_it_is(shape):
    plain_seen = other_seen = 0
    for source, f in cases():
        data = _shapes(f.read_bytes())[shape]
        head = data[:SNIFF_BYTES]
        prefix, plain = paste_plan(source, head)
        assert prefix == paste_prefix(source, head), f.name
        read, got_prefix, qp, breaks = _paste_read(data, prefix, joined=True)
        untouched = read is data and not (got_prefix or qp or breaks)
        if plain:
            plain_seen += 1
            assert untouched, f"{f.name} ({shape}): plain, but the paste layer reads it otherwise"
        else:
            other_seen += 1
    # the check means something in both directions: real fixtures as they are are mostly plain, and every
    # shape a paste gives them takes at least some off the plain path
    assert plain_seen > 50 if shape == "as is" else other_seen > 30, (shape, plain_seen, other_seen)


def test_plain_parse_is_the_same_parse():
    for source, f in cases()[::7]:
        data = f.read_bytes()
        prefix, plain = paste_plan(source, data[:SNIFF_BYTES])
        if not plain:
            continue
        mod, ctx = get(source), context_for(f)
        a = parse_pasted(mod, data, ctx, prefix)
        b = parse_pasted(mod, data, ctx, prefix, plain=True)
        assert a.rows() == b.rows() and a.lines == b.lines and a.meta == b.meta, f.name
        assert a.unparsed.equals(b.unparsed), f.name
        for t in a.tables:
            assert a.tables[t].equals(b.tables[t]), (f.name, t)
