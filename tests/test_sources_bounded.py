"""forensics.sources._bounded: the parsers' one reading of an integer within bounds (a value, out of range,
not a number), and dcgm's use of it: a result whose GPU id is out of range is an unparsed line, not a
result of no GPU."""
from __future__ import annotations

from pathlib import Path

import pytest

from forensics.sources import ParseContext, dcgm
from forensics.sources._bounded import INT32, U32, Outcome, bounded_int, int_or_none

DCGM = Path(__file__).parent / "fixtures" / "dcgm"
GB10 = DCGM / "dcgm--diag-r1-j-dcgm423-gb10-software-fail.json.txt"
H100 = DCGM / "dcgm--diag-r3-nccl-issue-h100-cuinit-fail-prompt.txt"


@pytest.mark.parametrize("text, lo, hi, signed, outcome, value", [
    ("0", 0, 255, False, Outcome.VALUE, 0),
    ("255", 0, 255, False, Outcome.VALUE, 255),
    ("256", 0, 255, False, Outcome.OUT_OF_RANGE, None),
    ("000000000000000000000000000000255", 0, 255, False, Outcome.VALUE, 255),  # leading zeros do not count
    ("9" * 5000, 0, 255, False, Outcome.OUT_OF_RANGE, None),  # (int() refuses over 4,300 digits)
    ("2147483647", *INT32, False, Outcome.VALUE, 2147483647),
    ("2147483648", *INT32, False, Outcome.OUT_OF_RANGE, None),
    ("-2147483648", *INT32, True, Outcome.VALUE, -2147483648),
    ("-2147483649", *INT32, True, Outcome.OUT_OF_RANGE, None),
    ("+7", 0, 9, True, Outcome.VALUE, 7),
    ("-7", 0, 9, False, Outcome.NOT_A_NUMBER, None),  # a sign only where the caller allows one
    ("-", -9, 9, True, Outcome.NOT_A_NUMBER, None),
    ("", 0, 9, False, Outcome.NOT_A_NUMBER, None),
    (" 7", 0, 9, False, Outcome.NOT_A_NUMBER, None),
    ("7.0", 0, 9, False, Outcome.NOT_A_NUMBER, None),
    ("\u00b2", 0, 9, False, Outcome.NOT_A_NUMBER, None),  # '²'.isdigit() is True, int() raises on it
    ("\u0663", 0, 9, False, Outcome.NOT_A_NUMBER, None),  # Arabic-Indic 3: int() reads it, no tool prints it
    ("4294967295", *U32, False, Outcome.VALUE, 4294967295),
    (None, 0, 9, False, Outcome.NOT_A_NUMBER, None),
    (5, 0, 9, False, Outcome.VALUE, 5),  # a JSON document's int
    (1 << 40, *INT32, False, Outcome.OUT_OF_RANGE, None),
    (True, 0, 9, False, Outcome.NOT_A_NUMBER, None),  # (a JSON true is no number)
])
def test_bounded_int(text, lo, hi, signed, outcome, value):
    b = bounded_int(text, lo, hi, signed=signed)
    assert (b.outcome, b.value, b.ok) == (outcome, value, outcome is Outcome.VALUE)
    assert int_or_none(text, lo, hi, signed=signed) == value


def _parse(data: bytes):
    res = dcgm.parse(data, ParseContext(host="n1"))
    return res, res.tables["dcgm_diag"]


def test_a_table_result_of_a_gpu_id_beyond_32_bits_is_unparsed():
    data = H100.read_bytes()
    line = next(i for i, ln in enumerate(data.split(b"\n"), 1) if b"| Fail - All" in ln)
    res0, t0 = _parse(data)
    res, t = _parse(data.replace(b"| Fail - All  ", b"| Fail - GPU: 99999999999", 1))
    assert line not in t["line_no"].to_list() and t.height == t0.height - 1
    up = res.unparsed.filter(res.unparsed["line_no"] == line)
    assert up["reason"].to_list() == [dcgm.NOT_GPU] and res.unparsed.height == res0.unparsed.height + 1
    # within 32 bits: a result of that GPU
    res, t = _parse(data.replace(b"| Fail - All  ", b"| Fail - GPU: 2147483647", 1))
    row = t.filter(t["line_no"] == line)
    assert row.select("record", "result", "gpus", "gpu").rows() == [("result", "fail", "2147483647", 2147483647)]
    assert res.unparsed.height == res0.unparsed.height


def test_a_json_result_of_an_entity_id_beyond_32_bits_is_unparsed():
    data = GB10.read_bytes()
    assert b'"entity_id" : 0,' in data
    res, t = _parse(data.replace(b'"entity_id" : 0,', b'"entity_id" : 99999999999,', 1))
    line = next(i for i, ln in enumerate(data.split(b"\n"), 1) if b'"entity_id" : 0,' in ln)
    assert res.unparsed.select("line_no", "reason").rows() == [(line, dcgm.NOT_GPU)]
    # its result and warning are not read as rows of no GPU, and the test summary gives no verdict in its place
    # (its info, which names GPU 0 in prose, stays)
    assert t.filter(t["record"].is_in(["result", "warning", "info"])).select("record", "gpu").rows() == [("info", 0)]
    # a GPU named in a message's prose out of range leaves that message's gpu null (the message kept whole)
    res, t = _parse(data.replace(b"for GPU 0 is disabled", b"for GPU 99999999999 is disabled", 1))
    assert res.unparsed.height == 0
    assert t.filter(t["record"] == "warning")["gpu"].to_list() == [0]  # (the result's GPU: entity_id 0)


def test_a_slurm_exit_code_beyond_a_wait_status_is_no_exit_code():
    from forensics.sources import slurm

    assert slurm._exit("1:0") == {"exit_status": 1, "exit_signal": 0}
    assert slurm._exit("255:127") == {"exit_status": 255, "exit_signal": 127}
    assert slurm._exit("256:0") == {} and slurm._exit("0:256") == {} and slurm._exit("9" * 5000) == {}
    assert slurm._int("2147483647") == 2147483647 and slurm._int("2147483648") is None and slurm._int("2-4") == 2
