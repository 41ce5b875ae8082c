"""``dcgmi diag -r <level>`` (DCGM's NVVS diagnostic) -> ``dcgm_diag``: every test's verdict and message.

What dcgmi prints (DCGM 2.x to 4.x, the text table; ``-j`` JSON is read too, see below)::

    Successfully ran diagnostic for group.
    +---------------------------+------------------------------------------------+
    | Diagnostic                | Result                                         |
    +===========================+================================================+
    |-----  Metadata  ----------+------------------------------------------------|
    | DCGM Version              | 3.3.8                                          |
    |-----  Deployment  --------+------------------------------------------------|
    | Persistence Mode          | Fail                                           |
    | Error                     | Persistence mode for GPU 0 is currently disab  |
    |                           | led. The DCGM diagnostic requires peristence   |
    +-----  Hardware  ----------+------------------------------------------------+
    | GPU Memory                | Pass - GPU: 1                                  |
    |                           | Fail - GPU: 0                                  |

Section rows (``|-----  Deployment  ---...``, ``+-----  Stress  ---...``) give the category; a row
with a test name and ``Pass``/``Fail``/``Warn``/``Skip`` (optionally ``- All`` or ``- GPU: 0``) is a
verdict, a nameless row with another verdict is one more verdict of the same test; ``Warning``,
``Error`` and ``Info`` rows are messages of the test above them, continued on nameless rows: dcgmi
cuts messages every 45 characters, mid-word, so the pieces are joined back as they were cut.
``Error: ...`` lines of dcgmi itself (the diagnostic could not run) are ``run_error`` rows. Shell
prompts and other lines go to ``unparsed``; a table pasted with an indent (Markdown) is read.

``dcgmi diag -j`` prints one JSON document per run instead (jsoncpp's styled writer: keys sorted, TAB
indents). DCGM 4.x (dcgmi/Diag.cpp HelperJsonBuildOutput, NVIDIA/DCGM @72fa3fe; real output of DCGM
4.2.3 in tests/fixtures/dcgm): ``{"DCGM Diagnostic": {"test_categories": [{"category", "tests": [{"name",
"results": [{"entity_group", "entity_id", "status", "warnings": [{"warning", "error_id", ...}], "info":
[...]}], "test_summary": {"status", "info", "warnings"}}]}]}, "entity_groups": [...], "metadata":
{"version", "Driver Version Detected"}}``; DCGM 3.x names the root ``"DCGM GPU Diagnostic"``, a result's
GPU ``gpu_id`` (``gpu_ids`` in NVVS' own JSON) and keeps ``version``, ``Driver Version Detected`` and
``runtime_error`` beside ``test_categories``. Every result becomes a ``result`` row (its GPU from
``entity_id`` of a GPU entity, or ``gpu_id``), every warning a ``warning`` row and every info string an
``info`` row of that GPU; a test summary's status becomes a result row only when the test has no
per-GPU result, and its warnings only those no result carried (dcgmi repeats every error there);
``runtime_error`` is a ``run_error`` row. A row's line is the line of the key it comes from.

>>> from forensics.sources import ParseContext
>>> sample = (b"Successfully ran diagnostic for group.\\n"
...           b"|-----  Deployment  --------+------------------------------------------------|\\n"
...           b"| Persistence Mode          | Fail                                           |\\n"
...           b"| Error                     | Persistence mode for GPU 0 is currently disab  |\\n"
...           b"|                           | led.                                           |\\n"
...           b"+-----  Hardware  ----------+------------------------------------------------+\\n"
...           b"| GPU Memory                | Pass - GPU: 1                                  |\\n"
...           b"|                           | Fail - GPU: 0                                  |\\n")
>>> res = parse(sample, ParseContext(host="n1"))
>>> for r in res.tables["dcgm_diag"].select("line_no", "category", "test", "record", "result", "gpus", "gpu", "message").rows():
...     print(r)
(3, 'Deployment', 'Persistence Mode', 'result', 'fail', None, None, None)
(4, 'Deployment', 'Persistence Mode', 'error', None, None, 0, 'Persistence mode for GPU 0 is currently disabled.')
(7, 'Hardware', 'GPU Memory', 'result', 'pass', '1', 1, None)
(8, 'Hardware', 'GPU Memory', 'result', 'fail', '0', 0, None)
>>> res.lines, res.unparsed.height
(8, 0)
"""
from __future__ import annotations

import bisect
import datetime as dt
import itertools
import json
import re

import polars as pl

from forensics import schema
from forensics.sources._base import ParseContext, ParseResult, Sniff, drop_before_first_marker, leftover_reason, marker_split, result, sniff_lines, split_lines, unparsed_rows
from forensics.sources._bounded import INT32, Bounded, Outcome, bounded_int

NAME = "dcgm"
VERSION = 4  # 4: a result whose GPU id is beyond Int32 is an unparsed line (before, a result of no GPU); 3: a GPU id beyond Int32 is null (the row keeps gpus and message; before, a ComputeError lost the file); 2: dcgmi diag -j JSON documents (DCGM 3.x and 4.x)
TABLES = ("dcgm_diag",)
DESCRIPTION = ("dcgmi diag -r 1|2|3|4 results (DCGM 2.x-4.x table, or -j JSON of DCGM 3.x/4.x): each test's "
               "pass/fail/warn/skip, its messages, DCGM and driver versions")
SNIFF_PRIORITY = 30

WRAP = 45  # dcgmi cuts a message into pieces of this many characters (the 48-wide cell, padded)
_TS = pl.Datetime("us", "UTC")
_ROW = re.compile(r"^\s*\|([^|]*)\|(.*)\|\s*$")
_SECTION = re.compile(r"^\s*[|+]-{3,}\s+([A-Za-z][A-Za-z /-]*?)\s+-+\+-+[|+]\s*$")
_BORDER = re.compile(r"^\s*\+[-=]+\+[-=]+\+\s*$")
_VERDICT = re.compile(r"^(Pass|Fail|Warn|Skip|Not Run)(?:\s*-\s*(All|GPUs?:?\s*[0-9][0-9, ]*))?$", re.I)
_GPU = re.compile(r"\bGPU (\d+)\b")


NOT_GPU = "GPU id beyond the gpu column's 32 bits (DCGM's entity ids are small: DCGM_MAX_NUM_DEVICES GPUs)"


def _gpu_no(text) -> Bounded:
    """The GPU id of the digits (or JSON int) `text` within the gpu column's Int32. A result's id out of that
    range sends its line to ``unparsed`` (:data:`NOT_GPU`: no result of an unknown GPU); a GPU named in a
    message's prose that is out of range leaves the message's gpu null (the message kept whole); text that is
    not one number (a list '0,1', 'All') is a result of several GPUs: gpu null, gpus says which."""
    return bounded_int(text, *INT32)


_MESSAGES = {"Warning": "warning", "Error": "error", "Info": "info"}
_METADATA = {"DCGM Version": "dcgm_version", "Driver Version Detected": "driver_version"}
_HEADER = ("Diagnostic", "Result")
_DONE = "Successfully ran diagnostic for group."
_RUN_ERROR = re.compile(r"^\s*Error: ")
_PROMPT = re.compile(r"(?:^|[\s$#>/])dcgmi\s+diag\b")
_JSON_ROOTS = ("DCGM Diagnostic", "DCGM GPU Diagnostic")
_JSON_ROOT = re.compile(r'"DCGM (?:GPU )?Diagnostic"\s*:')
_JSON_META = {"version": "dcgm_version", "Driver Version Detected": "driver_version"}


def sniff(head: bytes) -> Sniff:
    lines = sniff_lines(head, 300)
    if not lines:
        return Sniff(0.0, "no lines")
    text = "\n".join(lines)
    if _JSON_ROOT.search(text) and ('"test_categories"' in text or '"runtime_error"' in text):
        return Sniff(0.95, "a dcgmi diag -j JSON document (DCGM Diagnostic with test_categories or runtime_error)")
    hits = sum(1 for ln in lines if _ROW.match(ln) or _SECTION.match(ln) or _BORDER.match(ln) or ln.strip() == _DONE)
    header = any(_DONE == ln.strip() for ln in lines) or any(
        (m := _ROW.match(ln)) and m.group(1).strip() == "Diagnostic" and m.group(2).strip() == "Result" for ln in lines)
    sections = any(_SECTION.match(ln) for ln in lines)
    verdicts = sum(1 for ln in lines if (m := _ROW.match(ln)) and len(m.group(1)) == 27 and _VERDICT.match(m.group(2).strip()))
    if not (header or sections) and not (verdicts and hits >= 0.6 * len(lines)):
        return Sniff(0.0, "no dcgmi diag header, section row or 27-wide verdict row")
    return Sniff.ratio(hits, len(lines), "are dcgmi diag table rows", floor=0, bonus=0.2)


def _gpus(text: str | None) -> str | None:
    if not text:
        return None
    if text.lower() == "all":
        return "All"
    return ",".join(re.findall(r"[0-9]+", text))


class _Run:
    """Rows of one file: the current run, category, test and message being continued."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.sample = -1
        self.category = self.test = None
        self.msg: dict | None = None
        self.meta: dict = {}
        self.ts = None
        self.started = 0  # rows of the current run start here (for its versions)

    def new_run(self, ts) -> None:
        self._close_run()
        self.sample += 1
        self.category = self.test = self.msg = None
        self.meta = {}
        self.ts = ts
        self.started = len(self.rows)

    def _close_run(self) -> None:
        for r in self.rows[self.started:]:
            r.update(self.meta)

    def add(self, **row) -> dict:
        if self.sample < 0:  # a table pasted without its start: one run, keeping what was read so far
            self.sample = 0
        row.update(sample_no=self.sample, ts=self.ts, category=self.category)
        self.rows.append(row)
        return row

    def frame(self) -> pl.DataFrame:
        self._close_run()
        for r in self.rows:
            if r.get("_pieces") is not None:
                r["message"] = "".join(r.pop("_pieces")).strip()
        cols = {"line_no": pl.Int64, "sample_no": pl.Int64, "ts": _TS, "dcgm_version": pl.String, "driver_version": pl.String,
                "category": pl.String, "test": pl.String, "record": pl.String, "result": pl.String, "gpus": pl.String,
                "gpu": pl.Int32, "message": pl.String}
        df = pl.DataFrame([{k: r.get(k) for k in cols} for r in self.rows], schema=cols, orient="row")
        return df.with_columns(pl.when(pl.col("ts").is_not_null()).then(pl.lit("sampled")).otherwise(pl.lit("none"))
                               .alias("ts_quality"))


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    df = split_lines(data)
    n = df.height
    run = _Run()
    bad: list[tuple[int, str, str]] = []
    json_docs = 0
    cap = ctx.capture_time
    if cap is not None and cap.tzinfo is None:
        cap = cap.replace(tzinfo=dt.timezone.utc)
    if n:
        df = marker_split(df)
        has_markers = bool(df["is_marker"].any())
        rows = drop_before_first_marker(df, bad).select("line_no", "text", "is_marker", "sample_ts").rows()
        seg = None  # the lines up to the next collector marker, joined once for the JSON documents among them
        i = 0
        while i < len(rows):
            line_no, text, is_marker, sample_ts = rows[i]
            ts = sample_ts if has_markers else cap
            i += 1
            if is_marker:
                run.new_run(ts)
                continue
            run.ts = ts
            if text.lstrip().startswith("{"):
                if seg is None or not seg.lo <= i - 1 < seg.hi:
                    seg = _Segment(rows, i - 1)
                used = _json_document(run, seg, i - 1, ts, bad)
                if used:
                    json_docs += 1
                    i += used - 1
                    continue
            _line(run, line_no, text, ts, bad)
    out = run.frame() if run.rows else None
    table = out if out is not None else schema.empty("dcgm_diag")
    variant = ("json" if json_docs and json_docs == run.sample + 1 else "table+json" if json_docs else "table") \
        if run.rows else "unrecognised"
    return result(NAME, ctx, n, {"dcgm_diag": table}, [unparsed_rows(bad, ctx, NAME)] if bad else [],
                  variant=variant if n else "empty", runs=run.sample + 1)


def _line(run: _Run, line_no: int, text: str, ts, bad: list) -> None:
    s = text.strip()
    if not s:
        return
    if s == _DONE:
        run.new_run(ts)
        return
    m = _SECTION.match(text)
    if m:
        run.category, run.test, run.msg = m.group(1).strip(), None, None
        return
    if _BORDER.match(text):
        return
    if _RUN_ERROR.match(text):
        run.add(line_no=line_no, record="run_error", message=s[len("Error: "):].strip())
        return
    m = _ROW.match(text)
    if not m:
        bad.append((line_no, text, leftover_reason(s, _PROMPT, "dcgmi diag", "not a dcgmi diag table row")))
        return
    name, cell = m.group(1).strip(), m.group(2)
    value = cell.strip()
    if (name, value) == _HEADER:
        if run.rows and run.rows[-1]["sample_no"] == run.sample:  # (rows come in run order: the last is the newest)
            run.new_run(ts)  # a second table without 'Successfully ran' before it
        return
    piece = cell[1:1 + WRAP] if cell.startswith(" ") else cell[:WRAP]
    if name in _MESSAGES:
        g = _GPU.search(value)
        run.msg = run.add(line_no=line_no, test=run.test, record=_MESSAGES[name], gpu=_gpu_no(g.group(1)).value if g else None,
                          _pieces=[piece])
        return
    v = _VERDICT.match(value)
    if name == "" and v and run.test is not None and run.msg is None:
        if not _verdict(run, line_no, run.test, v):
            bad.append((line_no, text, NOT_GPU))
        return
    if name == "":
        if run.msg is not None:
            run.msg["_pieces"].append(piece)
            if run.msg.get("gpu") is None:
                g = _GPU.search("".join(run.msg["_pieces"]))
                run.msg["gpu"] = _gpu_no(g.group(1)).value if g else None
            return
        bad.append((line_no, text, "continuation row with nothing to continue"))
        return
    if run.category == "Metadata" or name in _METADATA or name == "GPU Device IDs Detected":
        if name in _METADATA:
            run.meta[_METADATA[name]] = value
        run.msg = None
        run.add(line_no=line_no, test=name, record="metadata", message=value)
        return
    if v:
        run.test, run.msg = name, None
        if not _verdict(run, line_no, name, v):
            bad.append((line_no, text, NOT_GPU))
        return
    bad.append((line_no, text, "test row without a Pass/Fail/Warn/Skip verdict"))


def _verdict(run: _Run, line_no: int, test: str, v: re.Match) -> bool:
    """Adds the result row; False (no row) where its GPU id is out of range."""
    gpus = _gpus(v.group(2).split(":", 1)[-1].strip() if v.group(2) and ":" in v.group(2) else v.group(2))
    one = _gpu_no(gpus) if gpus else None
    if one is not None and one.outcome is Outcome.OUT_OF_RANGE:
        return False
    run.add(line_no=line_no, test=test, record="result", result=v.group(1).lower(), gpus=gpus,
            gpu=one.value if one is not None else None)
    return True


class _Segment:
    """rows[lo:hi], the lines from `start` up to the next collector marker (a document ends there at most), joined
    once: each line that opens with '{' is tried as a document from its offset in this text, so trying many
    such lines costs one join, not one join of the rest of the file each."""

    def __init__(self, rows: list, start: int):
        end = start
        while end < len(rows) and not rows[end][2]:
            end += 1
        self.rows, self.lo, self.hi = rows, start, end
        texts = [r[1] for r in rows[start:end]]
        self.text = "\n".join(texts)
        self.starts = [0, *itertools.accumulate(len(t) + 1 for t in texts)]  # each line's offset in text
        self._closes: dict[int, int] | None = None
        self.failed_to = -1  # end of the last balanced span that did not decode: '{' lines inside it are not tried

    def close(self, at: int) -> int | None:
        """Offset of the '}' that closes the '{' at offset `at` (braces inside JSON strings not counted), or
        None when nothing closes it. One pass over the text, on first use: a candidate that is never closed
        (a document cut short, or a stranger's file of '{' lines) is refused without decoding it."""
        if self._closes is None:
            self._closes, stack = {}, []
            for m in _BRACE_TOKENS.finditer(self.text):
                tok = m.group()
                if tok == "{":
                    stack.append(m.start())
                elif tok == "}" and stack:
                    self._closes[stack.pop()] = m.start()
        return self._closes.get(at)

    def row(self, at: int) -> tuple:
        """The row that holds offset `at` of text."""
        return self.rows[self.lo + bisect.bisect_right(self.starts, at) - 1]

    def line_no(self, at: int) -> int:
        """The line number of the row that holds offset `at` of text."""
        return self.row(at)[0]


# how far into a document its DCGM root key may stand: jsoncpp sorts keys, so "DCGM Diagnostic" (capital D)
# is the first key; a '{' line with no root key this near opens no dcgmi document and is not decoded
_ROOT_WITHIN = 4096
# a JSON string (it cannot span lines: one with no closing quote ends at the line's end), or a brace
_BRACE_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*(?:"|(?=\n)|$)|[{}]')


def _json_document(run: _Run, seg: _Segment, start: int, ts, bad: list) -> int:
    """Reads the dcgmi -j document that opens at rows[start] into `run`; returns how many lines it took
    (0 when no DCGM diagnostic document starts there: the line is then read as a table line)."""
    joined = seg.text
    first = joined.index("{", seg.starts[start - seg.lo])
    if first <= seg.failed_to or not _JSON_ROOT.search(joined, first, first + _ROOT_WITHIN):
        return 0
    end = seg.close(first)
    if end is None:
        return 0
    # decoded from its own slice: an error's message counts the lines before its position, which from the start of
    # the segment was quadratic over many bad candidates; balanced spans that fail are disjoint, so this is linear
    try:
        doc, stop = json.JSONDecoder().raw_decode(joined[first:end + 1])
    except (ValueError, RecursionError):  # (RecursionError: nested past Python's limit) read as table lines
        seg.failed_to = end
        return 0
    stop += first
    if not isinstance(doc, dict) or not any(isinstance(doc.get(k), dict) for k in _JSON_ROOTS):
        return 0

    class Cursor:
        pos = first

        def line(self, key: str) -> int:
            """Line of the next '"key"' after the cursor (the document's first line when not found)."""
            at = joined.find(json.dumps(key), self.pos, stop)
            if at < 0:
                return seg.rows[start][0]
            self.pos = at + 1
            return seg.line_no(at)

        def row(self, key: str) -> tuple[int, str]:
            """(line number, text) of the line of the next '"key"' after the cursor (as :meth:`line`)."""
            at = joined.find(json.dumps(key), self.pos, stop)
            row = seg.row(at) if at >= 0 else seg.rows[start]
            self.pos = max(self.pos, at + 1)
            return row[0], row[1]

    cur = Cursor()
    if run.rows and run.rows[-1]["sample_no"] == run.sample:  # (rows come in run order: the last is the newest)
        run.new_run(ts)
    elif run.sample < 0:
        run.sample = 0
    root_key = next(k for k in _JSON_ROOTS if isinstance(doc.get(k), dict))
    for key, value in doc.items():
        if key == root_key:
            _json_root(run, cur, value, bad)
        elif key == "metadata" and isinstance(value, dict):
            _json_meta(run, cur, value)
        elif key == "entity_groups" and isinstance(value, list):
            for group in value:
                if isinstance(group, dict) and isinstance(group.get("entities"), list):
                    ids = [str(e.get("device_id")) for e in group["entities"] if isinstance(e, dict) and e.get("device_id") is not None]
                    if ids:
                        run.category, run.test = "Metadata", None
                        run.add(line_no=cur.line("entity_groups"), test=f"{group.get('entity_group', 'GPU')} Device IDs",
                                record="metadata", message=",".join(ids))
    return bisect.bisect_right(seg.starts, stop - 1) - (start - seg.lo)


def _json_root(run: _Run, cur, root: dict, bad: list) -> None:
    for key, value in root.items():
        if key == "test_categories" and isinstance(value, list):
            for cat in value:
                if not isinstance(cat, dict):
                    continue
                run.category, run.msg = str(cat.get("category")) if cat.get("category") is not None else None, None
                for test in cat.get("tests") or []:
                    if isinstance(test, dict):
                        _json_test(run, cur, test, bad)
        elif key == "runtime_error" and value:
            run.category, run.test = None, None
            run.add(line_no=cur.line(key), record="run_error", message=str(value))
        elif key in _JSON_META or key in ("GPU Device IDs", "GPU Device Serials"):
            _json_meta(run, cur, {key: value})


def _json_meta(run: _Run, cur, meta: dict) -> None:
    for key, value in meta.items():
        if isinstance(value, (dict, list)):
            value = ",".join(str(v) for v in (value.values() if isinstance(value, dict) else value))
        if key in _JSON_META:
            run.meta[_JSON_META[key]] = str(value)
        run.category, run.test = "Metadata", None
        run.add(line_no=cur.line(key), test="DCGM Version" if key == "version" else key, record="metadata", message=str(value))


def _json_gpu(res: dict) -> tuple[str | None, Bounded | None, str | None]:
    """(gpus text, its one GPU id, the key that gave it) of a result."""
    if res.get("entity_group", "GPU") == "GPU" and isinstance(res.get("entity_id"), int):
        return str(res["entity_id"]), _gpu_no(res["entity_id"]), "entity_id"
    key = "gpu_id" if "gpu_id" in res else "gpu_ids"
    ids = res.get(key)
    gpus = _gpus(str(ids)) if ids is not None else None
    return gpus, _gpu_no(gpus) if gpus else None, key


def _json_test(run: _Run, cur, test: dict, bad: list) -> None:
    name = str(test.get("name"))
    run.test = name
    cur.line("name")
    seen: set[str] = set()
    results = [r for r in test.get("results") or [] if isinstance(r, dict)]
    for key, value in test.items():
        if key == "results":
            for res in results:
                gpus, gpu, key = _json_gpu(res)
                if gpu is not None and gpu.outcome is Outcome.OUT_OF_RANGE:
                    line_no, text = cur.row(key)
                    if not bad or bad[-1][0] != line_no:  # (a document on one line: that line once)
                        bad.append((line_no, text, NOT_GPU))
                    continue  # no result, warning or info of an unknown GPU
                _json_result(run, cur, name, res, gpus, gpu.value if gpu is not None else None, seen, True)
        elif key == "test_summary" and isinstance(value, dict):
            _json_result(run, cur, name, value, None, None, seen, not results)


def _json_result(run: _Run, cur, name: str, res: dict, gpus, gpu, seen: set, verdict: bool) -> None:
    for key, value in res.items():
        if key == "status" and verdict:
            run.add(line_no=cur.line(key), test=name, record="result", result=str(value).lower(), gpus=gpus, gpu=gpu)
        elif key == "warnings" and isinstance(value, list):
            for w in value:
                text = w.get("warning") if isinstance(w, dict) else w
                if text is None or str(text) in seen:
                    continue
                seen.add(str(text))
                g = _GPU.search(str(text))
                run.add(line_no=cur.line("warning" if isinstance(w, dict) else key), test=name, record="warning",
                        gpu=gpu if gpu is not None else _gpu_no(g.group(1)).value if g else None, message=str(text))
        elif key == "info":
            for text in value if isinstance(value, list) else [value]:
                g = _GPU.search(str(text))
                run.add(line_no=cur.line(key), test=name, record="info",
                        gpu=gpu if gpu is not None else _gpu_no(g.group(1)).value if g else None, message=str(text))
