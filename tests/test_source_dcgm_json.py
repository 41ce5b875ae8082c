"""dcgm: `dcgmi diag -j` JSON documents (DCGM 4.x real output in tests/fixtures/dcgm), read into the
same dcgm_diag rows as the text table: results per GPU, their warnings and info, the versions."""
from __future__ import annotations

from pathlib import Path

from forensics.sources import ParseContext, dcgm

GB10 = Path(__file__).parent / "fixtures" / "dcgm" / "dcgm--diag-r1-j-dcgm423-gb10-software-fail.json.txt"


def _rows(data: bytes):
    res = dcgm.parse(data, ParseContext(host="n1"))
    return res, res.tables["dcgm_diag"].select("line_no", "sample_no", "dcgm_version", "driver_version", "category",
                                                "test", "record", "result", "gpus", "gpu", "message").rows()


def test_gb10_document_rows_and_lines():
    res, rows = _rows(GB10.read_bytes())
    assert dcgm.sniff(GB10.read_bytes())
    assert res.meta["variant"] == "json" and res.unparsed.height == 0
    assert [r[:10] for r in rows] == [
        (18, 0, "4.2.3", "580.82.09", "Deployment", "software", "result", "fail", "0", 0),
        (25, 0, "4.2.3", "580.82.09", "Deployment", "software", "warning", None, None, 0),
        (32, 0, "4.2.3", "580.82.09", "Deployment", "software", "info", None, None, 0),
        (43, 0, "4.2.3", "580.82.09", "Metadata", "GPU Device IDs", "metadata", None, None, None),
        (60, 0, "4.2.3", "580.82.09", "Metadata", "Driver Version Detected", "metadata", None, None, None),
        (61, 0, "4.2.3", "580.82.09", "Metadata", "DCGM Version", "metadata", None, None, None),
    ]
    # the escaped quotes of the message come back as dcgmi wrote them before JSON escaping
    assert rows[1][10] == ('Persistence Mode: Persistence mode for GPU 0 is disabled. Enable persistence mode by '
                           'running "nvidia-smi -i <gpuId> -pm 1 " as root.')
    assert rows[3][10] == "2e12"


def test_test_summary_gives_no_second_verdict_when_results_exist():
    """dcgmi repeats the test's overall status (and every error) in test_summary: one result row only."""
    _, rows = _rows(GB10.read_bytes())
    assert sum(1 for r in rows if r[6] == "result") == 1


def test_prompt_and_two_runs_and_a_cut_document():
    data = GB10.read_bytes()
    res, rows = _rows(b"$ dcgmi diag -r 1 -j\n" + data + data)
    assert sorted({r[1] for r in rows}) == [0, 1] and len(rows) == 12
    assert res.unparsed["line_no"].to_list() == [1]
    # a document cut short is not read as a result (no silent verdict): its lines are unparsed
    res, rows = _rows(data[:300])
    assert rows == [] and res.unparsed.height == sum(1 for ln in data[:300].split(b"\n") if ln.strip())


def test_many_lines_opening_with_a_brace_cost_one_join_not_one_each():
    """Every line that opens with '{' is a candidate document. Each used to join the rest of the file up to the next
    marker before decoding, quadratic in the lines (20,000 JSON lines: 9 CPU s; 100,000: minutes). Now the lines are
    joined once, and a '{' with no DCGM root key near it is not decoded: each line is unparsed, in well under a second.
    A run of real (if tiny) documents, one per line, is read whole, one run each."""
    import time

    other = b'{"event": "step", "loss": 1.25}\n' * 100_000
    t = time.process_time()
    res = dcgm.parse(other, ParseContext(host="h", file="x"))
    assert time.process_time() - t < 10
    assert res.unparsed.height == 100_000 and res.tables["dcgm_diag"].height == 0
    docs = b'{"DCGM Diagnostic": {"runtime_error": "Unable to create a diagnostic group"}}\n' * 20_000
    t = time.process_time()
    res = dcgm.parse(docs, ParseContext(host="h", file="x"))
    assert time.process_time() - t < 10
    rows = res.tables["dcgm_diag"]
    assert rows.height == 20_000 and set(rows["record"]) == {"run_error"} and rows["sample_no"].n_unique() == 20_000


def test_many_documents_that_never_close_cost_linear_time():
    """Lines that open a DCGM document which never closes (or never decodes) are refused without decoding each
    against the rest of the file: a decode error's message counts the lines before it, so each bad candidate cost
    time in proportion to its place (20,000 such lines: 1.5 CPU s, 4x the lines ~13x the time). Braces are matched
    once; an unclosed '{' is not decoded and a balanced span that fails is not tried again inside. Every line stays
    unparsed, nothing is read as a result."""
    import time

    for line in (b'{"DCGM Diagnostic": {"k": 1,', b'{"DCGM Diagnostic": [', b'{"DCGM Diagnostic": {"a": "}{", "b": [1,'):
        data = (line + b"\n") * 100_000
        t = time.process_time()
        res = dcgm.parse(data, ParseContext(host="h", file="x"))
        assert time.process_time() - t < 5, line
        assert res.unparsed.height == 100_000 and res.tables["dcgm_diag"].height == 0, line
    # balanced but invalid: the outer span fails once; a real document after it is still read
    good = GB10.read_bytes()
    res, rows = _rows(b'{"DCGM Diagnostic": {"x": nonsense}}\n' * 50_000 + good)
    assert len(rows) == 6 and res.unparsed.height == 50_000
