"""``dcgmi diag -r <level>`` (DCGM's NVVS diagnostic) -> ``dcgm_diag``: every test's verdict and message.

What dcgmi prints (DCGM 2.x to 4.x, the text table; ``-j`` JSON is not read yet)::

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

import datetime as dt
import re

import polars as pl

from forensics import schema
from forensics.sources._base import ParseContext, ParseResult, Sniff, drop_before_first_marker, leftover_reason, marker_split, result, sniff_lines, split_lines, unparsed_rows

NAME = "dcgm"
VERSION = 1
TABLES = ("dcgm_diag",)
DESCRIPTION = "dcgmi diag -r 1|2|3|4 results (DCGM 2.x-4.x table): each test's pass/fail/warn/skip, its messages, DCGM and driver versions"
SNIFF_PRIORITY = 30

WRAP = 45  # dcgmi cuts a message into pieces of this many characters (the 48-wide cell, padded)
_TS = pl.Datetime("us", "UTC")
_ROW = re.compile(r"^\s*\|([^|]*)\|(.*)\|\s*$")
_SECTION = re.compile(r"^\s*[|+]-{3,}\s+([A-Za-z][A-Za-z /-]*?)\s+-+\+-+[|+]\s*$")
_BORDER = re.compile(r"^\s*\+[-=]+\+[-=]+\+\s*$")
_VERDICT = re.compile(r"^(Pass|Fail|Warn|Skip|Not Run)(?:\s*-\s*(All|GPUs?:?\s*[0-9][0-9, ]*))?$", re.I)
_GPU = re.compile(r"\bGPU (\d+)\b")
_MESSAGES = {"Warning": "warning", "Error": "error", "Info": "info"}
_METADATA = {"DCGM Version": "dcgm_version", "Driver Version Detected": "driver_version"}
_HEADER = ("Diagnostic", "Result")
_DONE = "Successfully ran diagnostic for group."
_RUN_ERROR = re.compile(r"^\s*Error: ")
_PROMPT = re.compile(r"(?:^|[\s$#>/])dcgmi\s+diag\b")


def sniff(head: bytes) -> Sniff:
    lines = sniff_lines(head, 300)
    if not lines:
        return Sniff(0.0, "no lines")
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
    cap = ctx.capture_time
    if cap is not None and cap.tzinfo is None:
        cap = cap.replace(tzinfo=dt.timezone.utc)
    if n:
        df = marker_split(df)
        has_markers = bool(df["is_marker"].any())
        for line_no, text, is_marker, sample_no, sample_ts in drop_before_first_marker(df, bad).select(
                "line_no", "text", "is_marker", "sample_no", "sample_ts").iter_rows():
            ts = sample_ts if has_markers else cap
            if is_marker:
                run.new_run(ts)
                continue
            run.ts = ts
            _line(run, line_no, text, ts, bad)
    out = run.frame() if run.rows else None
    table = out if out is not None else schema.empty("dcgm_diag")
    variant = "table" if run.rows else "unrecognised"
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
        if any(r["sample_no"] == run.sample for r in run.rows):
            run.new_run(ts)  # a second table without 'Successfully ran' before it
        return
    piece = cell[1:1 + WRAP] if cell.startswith(" ") else cell[:WRAP]
    if name in _MESSAGES:
        g = _GPU.search(value)
        run.msg = run.add(line_no=line_no, test=run.test, record=_MESSAGES[name], gpu=int(g.group(1)) if g else None,
                          _pieces=[piece])
        return
    v = _VERDICT.match(value)
    if name == "" and v and run.test is not None and run.msg is None:
        _verdict(run, line_no, run.test, v)
        return
    if name == "":
        if run.msg is not None:
            run.msg["_pieces"].append(piece)
            if run.msg.get("gpu") is None:
                g = _GPU.search("".join(run.msg["_pieces"]))
                run.msg["gpu"] = int(g.group(1)) if g else None
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
        _verdict(run, line_no, name, v)
        return
    bad.append((line_no, text, "test row without a Pass/Fail/Warn/Skip verdict"))


def _verdict(run: _Run, line_no: int, test: str, v: re.Match) -> None:
    gpus = _gpus(v.group(2).split(":", 1)[-1].strip() if v.group(2) and ":" in v.group(2) else v.group(2))
    one = int(gpus) if gpus and gpus.isdigit() else None
    run.add(line_no=line_no, test=test, record="result", result=v.group(1).lower(), gpus=gpus, gpu=one)
