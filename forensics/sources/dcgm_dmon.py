"""``dcgmi dmon -e <field ids> [-d <ms>] [-c <count>]`` -> ``dcgm_dmon``: DCGM's field values per entity
and sample (SM active, SM occupancy, tensor active, DRAM active, PCIe/NVLink bytes, power, clocks,
utilisation, the last Xid, ...), one row per (sample, entity, field).

What dcgmi prints (DCGM 2.x to 4.x; ``dcgmi/DeviceMonitor.cpp``): a header of the fields' short
names and a line of their units, then per sample one row per entity, values left-aligned in the
header's columns (profiling ratios with three decimals; ``N/A`` while a value is blank), the header
printed again every 14 samples::

    #Entity   NVLTX                       NVLRX                       PCITX                       PCIRX
    ID
    GPU 0     N/A                         N/A                         N/A                         N/A
    GPU 0     0                           0                           498948                      1555

DCGM 2.0 printed ``# EntityId`` and right-aligned the values; MIG instances are ``GPU-I <n>`` (and
``GPU-CI``), NVSwitches ``Switch <n>``, links ``GPU <g> LINK <l>``. A row is read by splitting on
blanks when it has one value per column, else by the header's column positions (a blank cell is a
field with no value). A sample ends when an entity is seen again. dcgmi prints no time: with the
collector's start time of the command and its ``-d`` delay (dcgmi's default 1000 ms when the argv
has none), sample k is at start + k x delay (``sampled``); a file given without its command has
``ts`` null. Collector markers (one run per marker) give each run's start the same way. Short
names are mapped to their field ids and metric names with ``dcgmi dmon -l`` of DCGM 3.1.8; an
unknown short name keeps its lower-cased name and a null id. Lines of dcgmi itself (``Error ...``,
the stop notice) and anything else go to ``unparsed`` with a reason.

>>> from forensics.sources import ParseContext
>>> sample = (b"#Entity   SMACT   TENSO   POWER\\nID                        W\\n"
...           b"GPU 0     0.912   0.521   612.4\\nGPU 1     N/A     N/A     98.0\\nGPU 0     0.210   0.000   233.1\\n")
>>> res = parse(sample, ParseContext(host="n1", hints={"argv": ["dcgmi", "dmon", "-e", "1002,1004,155", "-d", "5000"]}))
>>> res.tables["dcgm_dmon"].select("line_no", "sample_no", "entity", "gpu", "metric", "field_id", "value").rows()[:4]
[(3, 0, 'GPU', 0, 'sm_active', 1002, 0.912), (3, 0, 'GPU', 0, 'tensor_active', 1004, 0.521), (3, 0, 'GPU', 0, 'power_w', 155, 612.4), (4, 0, 'GPU', 1, 'sm_active', 1002, None)]
>>> res.tables["dcgm_dmon"].filter(pl.col("line_no") == 5)["sample_no"].unique().to_list(), res.meta["delay_ms"]
([1], 5000)
"""
from __future__ import annotations

import datetime as dt
import re

import numpy as np
import polars as pl

from forensics.layout import MARKER_PREFIX
from forensics.sources._base import (
    NULL_TOKENS,
    ParseContext,
    ParseResult,
    Sniff,
    drop_before_first_marker,
    head_text,
    leftover_reason,
    marker_split,
    result,
    split_lines,
    unparsed_rows,
)
from forensics.sources._bounded import INT32, finite, int_or_none

NAME = "dcgm_dmon"
VERSION = 3  # 3: a cell past a double's range (a run of hundreds of digits) has no value (was inf; raw keeps the text); 2: a -d/--delay past a C int (any run of digits) is no delay (int() refused over 4,300 digits: the file was lost)
TABLES = ("dcgm_dmon",)
DESCRIPTION = ("dcgmi dmon -e <fields> series (DCGM 2.x-4.x): per sample and GPU/MIG/NVSwitch/link entity, SM active, "
               "SM occupancy, tensor/DRAM active, PCIe and NVLink bytes, power, clocks, utilisation, Xid")
SNIFF_PRIORITY = 30

DEFAULT_DELAY_MS = 1000  # dcgmi dmon -d: "[default = 1000 msec, Minimum value = 1 msec.]"
_TS = pl.Datetime("us", "UTC")
#: short name -> (field id, metric) from `dcgmi dmon -l` (DCGM 3.1.8; tests/fixtures/README.md)
FIELDS: dict[str, tuple[int, str]] = {
    "SMCLK": (100, "sm_clock_mhz"), "MMCLK": (101, "memory_clock_mhz"), "SACLK": (110, "sm_app_clock_mhz"),
    "DVCCTR": (112, "clock_throttle_reasons"), "MMTMP": (140, "memory_temp_c"), "TMPTR": (150, "gpu_temp_c"),
    "POWER": (155, "power_w"), "TOTEC": (156, "total_energy_mj"), "EPLMT": (164, "enforced_power_limit_w"),
    "PSTAT": (190, "pstate"), "TXTPT": (200, "pcie_tx_throughput"), "RXTPT": (201, "pcie_rx_throughput"),
    "RPCTR": (202, "pcie_replay_counter"), "GPUTL": (203, "gpu_util_pct"), "MCUTL": (204, "mem_copy_util_pct"),
    "XIDER": (230, "xid"), "PCILG": (237, "pcie_link_gen"), "PCILW": (238, "pcie_link_width"),
    "PVIOL": (240, "power_violation_us"), "TVIOL": (241, "thermal_violation_us"), "FBTTL": (250, "fb_total_mib"),
    "FBFRE": (251, "fb_free_mib"), "FBUSD": (252, "fb_used_mib"), "ESVTL": (310, "ecc_sbe_volatile_total"),
    "EDVTL": (311, "ecc_dbe_volatile_total"), "ESATL": (312, "ecc_sbe_aggregate_total"),
    "EDATL": (313, "ecc_dbe_aggregate_total"),
    "GRACT": (1001, "gr_engine_active"), "SMACT": (1002, "sm_active"), "SMOCC": (1003, "sm_occupancy"),
    "TENSO": (1004, "tensor_active"), "DRAMA": (1005, "dram_active"), "FP64A": (1006, "fp64_active"),
    "FP32A": (1007, "fp32_active"), "FP16A": (1008, "fp16_active"), "PCITX": (1009, "pcie_tx_bytes"),
    "PCIRX": (1010, "pcie_rx_bytes"), "NVLTX": (1011, "nvlink_tx_bytes"), "NVLRX": (1012, "nvlink_rx_bytes"),
    "TIMMA": (1013, "tensor_imma_active"), "THMMA": (1014, "tensor_hmma_active"),
    "TDFMA": (1015, "tensor_dfma_active"), "INTAC": (1016, "integer_active"),
}
_HEADER = re.compile(r"^\s*#\s*Entity(?:\s*Id)?\s+(\S.*?)\s*$", re.I)
_UNITS = re.compile(r"^\s*I[Dd](?:\s.*)?$")
_ENTITY = re.compile(r"^\s*(?:(GPU|SW) ([0-9]{1,6}) LINK ([0-9]{1,4})|(GPU-CI|GPU-I|GPU_CI|GPU_I|GPU|vGPU|Switch|CPU_CORE|CPU"
                     r"|ConnectX) ([0-9]{1,9}))(?=\s|$)")
_NUM = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")
_PROMPT = re.compile(r"(?:^|[\s$#>/])dcgmi\s+dmon\b")
_STOP = "dmon was stopped due to receiving a signal"
_BLANKS = frozenset(NULL_TOKENS) | {"N/W", "N/S", ""}
_COLS = {"line_no": pl.Int64, "sample_no": pl.Int64, "ts": _TS, "entity": pl.String, "entity_id": pl.Int64,
         "gpu": pl.Int32, "link": pl.Int32, "field": pl.String, "field_id": pl.Int32, "metric": pl.String,
         "value": pl.Float64, "raw": pl.String}
_ROW_COLS = ("line_no", "sample_no", "ts", "entity", "entity_id", "gpu", "link")
_CELL_COLS = ("field", "field_id", "metric", "raw")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_NAIVE_EPOCH = dt.datetime(1970, 1, 1)
_US = dt.timedelta(microseconds=1)
# a row of cells (joined by one space) that are each a number or blank ("" a positional blank; the blank
# words with a space in them can never be a cell)
_ROW = re.compile("(?:{0})(?: (?:{0}))*".format("|".join(
    [_NUM.pattern[1:-1]] + [re.escape(t) for t in sorted(_BLANKS, key=len, reverse=True) if not any(ch.isspace() for ch in t)])))


def sniff(head: bytes) -> Sniff:
    text = head_text(head)
    lines = [ln for ln in text.splitlines()[:400] if ln.strip() and not ln.startswith(MARKER_PREFIX)]
    if not lines:
        return Sniff(0.0, "no lines")
    headers = [m for ln in lines if (m := _HEADER.match(ln))]
    if not headers or not any(tok in FIELDS for m in headers for tok in m.group(1).split()):
        return Sniff(0.0, "no dcgmi dmon '#Entity' header naming a DCGM field")
    rows = sum(1 for ln in lines if _ENTITY.match(ln))
    hits = rows + len(headers) + sum(1 for ln in lines if _UNITS.match(ln))
    return Sniff(round(min(1.0, hits / len(lines) + 0.2), 3), f"{rows} entity rows under {len(headers)} dmon header(s)")


def delay_ms(argv) -> int | None:
    """dcgmi dmon's -d/--delay in the command's argv (its default when the argv has none); None without argv."""
    if not isinstance(argv, (list, tuple)) or not argv:
        return None
    args = [str(a) for a in argv]
    for i, a in enumerate(args):
        v = a.split("=", 1)[1] if a.startswith("--delay=") else (args[i + 1] if a in ("-d", "--delay") and i + 1 < len(args) else None)
        if v is not None:
            return int_or_none(v, 1, INT32[1])  # (dcgmi reads -d into a C int; any run of digits: int() refuses over 4,300)
    return DEFAULT_DELAY_MS


class _Reader:
    """State of one file: the current header's columns, the run's start and the sample being filled."""

    def __init__(self, start, delay: int | None):
        self.cols: list[tuple[str, int]] = []  # (short name, column start)
        self.start, self.delay = start, delay
        self.sample = -1  # sample within the file
        self.run_sample = -1  # sample within the current run (its time offset)
        self.fresh = True  # the next entity row opens a sample (a run's first)
        self.seen: set = set()
        self.meta: tuple[list, list, list] = ([], [], [])  # the header's (short names, field ids, metrics)
        self.out: dict[str, list] = {c: [] for c in _CELL_COLS}  # one item per cell, column by column
        self.rows: dict[str, list] = {c: [] for c in _ROW_COLS}  # one item per entity row (its cells share them)
        self.width: list[int] = []  # cells of each entity row
        self.sample_ts: int | None = None  # ts() of the sample being filled

    def new_run(self, start, delay) -> None:
        self.start, self.delay, self.run_sample, self.fresh = start, delay, -1, True

    def header(self, text: str, m: re.Match) -> None:
        names = m.group(1).split()
        pos, cols = m.start(1), []
        for name in names:
            pos = text.index(name, pos)
            cols.append((name, pos))
            pos += len(name)
        self.cols = cols
        metas = [FIELDS.get(name, (None, name.lower())) for name in names]
        self.meta = (names, [fid for fid, _ in metas], [metric for _, metric in metas])

    def cells(self, text: str, rest_at: int) -> list[str] | None:
        toks = text[rest_at:].split()
        if len(toks) == len(self.cols):
            return toks
        if len(toks) > len(self.cols):
            return None
        out = []  # fewer values than columns: blank cells, read by the header's positions
        for i, (_, at) in enumerate(self.cols):
            end = self.cols[i + 1][1] if i + 1 < len(self.cols) else len(text)
            cell = text[max(at, rest_at):end].strip() if end > rest_at else ""
            if " " in cell:
                return None
            out.append(cell)
        return out

    def ts(self) -> int | None:
        """The sample's time in microseconds since the epoch (UTC)."""
        if self.start is None or self.delay is None:
            return None
        t = self.start + dt.timedelta(milliseconds=self.delay * max(0, self.run_sample))
        return (t - (_EPOCH if t.tzinfo else _NAIVE_EPOCH)) // _US  # (a naive time is UTC, as polars reads one)

    @staticmethod
    def bad_cell(cells: list[str]) -> str | None:
        """The first cell that is neither a number nor blank, if any (one regular expression over the
        row: the cells hold no space, so the row's words are exactly its cells)."""
        if _ROW.fullmatch(" ".join(cells)):
            return None
        return next(c for c in cells if c not in _BLANKS and not _NUM.match(c))

    def row(self, line_no: int, text: str, m: re.Match, bad: list) -> None:
        if not self.cols:
            bad.append((line_no, text, "entity row before any dcgmi dmon '#Entity' header"))
            return
        cells = self.cells(text, m.end())
        if cells is None:
            bad.append((line_no, text, f"row does not fit the {len(self.cols)} columns of its header"))
            return
        wrong = self.bad_cell(cells)
        if wrong is not None:
            bad.append((line_no, text, f"value {wrong[:40]!r} is neither a number nor N/A"))
            return
        if m.group(1):
            entity, eid, link = "LINK", int(m.group(3)), int(m.group(3))
            gpu = int(m.group(2)) if m.group(1) == "GPU" else None
            key = (m.group(1), int(m.group(2)), link)
        else:
            entity, eid, link = m.group(4).replace("_", "-") if m.group(4) in ("GPU_I", "GPU_CI") else m.group(4), int(m.group(5)), None
            gpu = eid if entity == "GPU" else None
            key = (entity, eid, None)
        if self.fresh or key in self.seen:
            self.sample += 1
            self.run_sample += 1
            self.seen, self.fresh = set(), False
            self.sample_ts = self.ts()  # (start, delay and run_sample change only here and in new_run)
        self.seen.add(key)
        out, rows, (names, fids, metrics) = self.out, self.rows, self.meta
        for col, v in (("line_no", line_no), ("sample_no", self.sample), ("ts", self.sample_ts), ("entity", entity),
                       ("entity_id", eid), ("gpu", gpu), ("link", link)):
            rows[col].append(v)
        self.width.append(len(cells))
        out["field"].extend(names)
        out["field_id"].extend(fids)
        out["metric"].extend(metrics)
        out["raw"].extend(cells)  # (values: from these, at the end)


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    df = split_lines(data)
    n = df.height
    hints = ctx.hints or {}
    delay = delay_ms(hints.get("argv"))
    cap = ctx.capture_time
    if cap is not None and cap.tzinfo is None:
        cap = cap.replace(tzinfo=dt.timezone.utc)
    rd = _Reader(cap, delay)
    bad: list[tuple[int, str, str]] = []
    out = None
    if n:
        df = drop_before_first_marker(marker_split(df), bad)
        if n >= FAST_MIN_LINES:
            out = _fast(df, rd)
        if out is None:
            for line_no, text, is_marker, sample_no, sample_ts, sample_argv in df.select(
                    "line_no", "text", "is_marker", "sample_no", "sample_ts", "sample_argv").iter_rows():
                if is_marker:
                    rd.new_run(sample_ts, delay_ms(sample_argv.split()) if sample_argv else delay)
                    continue
                _line(rd, line_no, text, bad)
    if out is None:
        # each entity row's columns repeated for its cells (made once per row, not once per cell, in Python)
        cell_row = pl.Series(np.repeat(np.arange(len(rd.width), dtype=np.int64), np.array(rd.width, dtype=np.int64)))
        out = pl.DataFrame([pl.Series(c, rd.rows[c], dtype=pl.Int64 if c == "ts" else _COLS[c]).gather(cell_row)
                            for c in _ROW_COLS]
                           + [pl.Series(c, rd.out[c], dtype=_COLS[c]) for c in _CELL_COLS])
    raw = pl.col("raw")
    # every cell is a number or blank (bad_cell): float() and polars' cast read such a number alike; one past a
    # double's range (a run of hundreds of digits) has no value (raw keeps it), not inf
    cell = pl.when(raw.is_in(list(_BLANKS))).then(None).otherwise(raw)
    out = out.with_columns(pl.col("ts").cast(_TS), finite(cell.cast(pl.Float64)).alias("value"),
                           pl.when(raw != "").then(raw).alias("raw"))
    out = out.select(*_COLS).with_columns(
        pl.when(pl.col("ts").is_not_null()).then(pl.lit("sampled")).otherwise(pl.lit("none")).alias("ts_quality"))
    variant = ("table" if out.height else "unrecognised") if n else "empty"
    return result(NAME, ctx, n, {"dcgm_dmon": out}, [unparsed_rows(bad, ctx, NAME)] if bad else [],
                  variant=variant, samples=rd.sample + 1, delay_ms=delay)


FAST_MIN_LINES = 200  # below this the line loop is as quick
# what the vectorised reader takes (else the line loop reads the file): printable ASCII lines, each blank, a
# '#' header, a units line or a 'GPU <n>' row of number or blank cells (a token of the line loop's _ROW each)
_TOK = _ROW.pattern.split("(?: ", 1)[0]  # (one cell: a number or a blank word)
_FAST_ROW = r"^[ \t]*GPU ([0-9]{1,9})((?:[ \t]+" + _TOK + r")+)[ \t]*$"
_FAST_UNITS = r"^[ \t]*I[Dd](?:[ \t].*)?$"


def _plain(lines: pl.DataFrame) -> bool:
    """Every line printable ASCII or tab (Python's and polars' notions of blank and word then agree)."""
    text = lines.get_column("text")
    return bool((text.str.len_bytes() == text.str.len_chars()).all()) and not text.str.contains(
        r"[\x00-\x08\x0a-\x1f\x7f]").any()


def _fast(df: pl.DataFrame, rd: _Reader) -> pl.DataFrame | None:
    """The cell frame the line loop would build from `df` (split, marked, lines before the first marker
    dropped), in polars, or None (nothing of `rd` changed) when a line is not of the plain kinds that
    _ASCII and the _FAST_ patterns describe or a header differs from the first; fills `rd`'s header
    and sample count as the loop would. Python still walks the GPU rows' (run, GPU) pairs to number
    the samples (one integer test a row) and computes each sample's time as the loop does."""
    text = pl.col("text")
    lines = df.filter(~pl.col("is_marker")).select(
        "line_no", "sample_no", text,
        pl.when(text.str.contains(r"^[ \t]*$")).then(0).when(text.str.contains(r"^[ \t]*#")).then(1)
        .when(text.str.contains(_FAST_UNITS)).then(2).when(text.str.contains(_FAST_ROW)).then(3)
        .otherwise(4).alias("kind"))
    kinds = lines.get_column("kind")
    if lines.height == 0 or (kinds == 4).any() or not _plain(lines):
        return None
    heads = lines.filter(pl.col("kind") == 1)
    if heads.height == 0:
        return None
    later = lines.filter(pl.col("kind") >= 2)
    if later.height and later.item(0, "line_no") < heads.item(0, "line_no"):
        return None  # (a units line or row before any header: the loop's unparsed lines)
    texts = heads.get_column("text").unique(maintain_order=True).to_list()
    matches = [_HEADER.match(t) for t in texts]
    if not all(matches) or len({tuple(m.group(1).split()) for m in matches}) != 1:
        return None
    ncols = len(matches[0].group(1).split())
    # a row's words: 'GPU', its number, then its cells (the row pattern matched: no other word)
    rows = lines.filter(pl.col("kind") == 3).select(
        "line_no", "sample_no", text.str.extract(r"^[ \t]*GPU ([0-9]+)", 1).cast(pl.Int64).alias("entity_id"),
        text.str.extract_all(r"[^ \t]+").list.slice(2).alias("raw"))
    if not (rows.get_column("raw").list.len() == ncols).all():
        return None  # (fewer cells than columns: read by position in the loop)
    starts = {}
    if df.get_column("is_marker").any():
        delay = rd.delay
        for sample_no, sample_ts, sample_argv in df.filter(pl.col("is_marker")).select(
                "sample_no", "sample_ts", "sample_argv").iter_rows():
            starts[sample_no] = (sample_ts, delay_ms(sample_argv.split()) if sample_argv else delay)
    else:
        starts[0] = (rd.start, rd.delay)
    rd.header(texts[0], matches[0])
    samples, stamps = [], []
    run, seen, ts = None, set(), None
    for r, key in zip(rows.get_column("sample_no").to_list(), rows.get_column("entity_id").to_list()):
        if r != run:
            run = r
            rd.new_run(*starts[r])
        if rd.fresh or key in seen:
            rd.sample += 1
            rd.run_sample += 1
            seen, rd.fresh = set(), False
            ts = rd.ts()
        seen.add(key)
        samples.append(rd.sample)
        stamps.append(ts)
    names, fids, metrics = rd.meta
    pick = pl.Series(np.tile(np.arange(ncols, dtype=np.int64), rows.height))
    eid = pl.col("entity_id")
    return rows.with_columns(pl.Series("sample_no", samples, dtype=pl.Int64), pl.Series("ts", stamps, dtype=pl.Int64),
                             pl.lit("GPU", dtype=pl.String).alias("entity"), eid.cast(pl.Int32).alias("gpu"),
                             pl.lit(None, dtype=pl.Int32).alias("link")).explode("raw").select(
        *_ROW_COLS, pl.Series("field", names, dtype=pl.String).gather(pick),
        pl.Series("field_id", fids, dtype=pl.Int32).gather(pick),
        pl.Series("metric", metrics, dtype=pl.String).gather(pick), "raw")


def _line(rd: _Reader, line_no: int, text: str, bad: list) -> None:
    s = text.strip()
    if not s:
        return
    m = _HEADER.match(text)
    if m:
        rd.header(text, m)
        return
    if _UNITS.match(text) and rd.cols:
        return
    m = _ENTITY.match(text)
    if m:
        rd.row(line_no, text, m, bad)
        return
    if s == _STOP:
        bad.append((line_no, text, "dcgmi's notice that dmon was stopped by a signal"))
    else:
        bad.append((line_no, text, leftover_reason(s, _PROMPT, "dcgmi dmon", "not a dcgmi dmon header or entity row",
                                                   error="dcgmi error message")))
