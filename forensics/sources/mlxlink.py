"""``mlxlink -d <dev> [-p <port>] [-m] [-c] [--show_ber]`` (NVIDIA MFT) -> ``mlxlink``: every field of
every section, one row per (run, field): link state, speed, width, FEC, mlxlink's own troubleshooting
verdict, firmware, the module (temperature, power, vendor, cable) and the physical counters and BER
(symbol errors, effective and raw errors and BER, link down and error recovery counters).

What mlxlink prints (MFT 4.2x-4.3x; text, ``--json`` is not read)::

    Operational Info
    ----------------
    State                              : Active
    Speed                              : 100G
    FEC                                : Standard RS-FEC - RS(528,514)

    Physical Counters and BER Info
    ------------------------------
    Effective Physical Errors          : 0
    Effective Physical BER             : 15E-255
    Raw Physical Errors Per Lane       : 0,0,0,0
    Raw Physical BER                   : 1E-8

A section is its title over a line of dashes (a known title alone is one too: the dashes are gone
when the output was filtered with grep); a ``Key : value`` line is a field of the current section.
Each ``Operational Info`` (or a counters section after another run's) starts a run, that is one
port. The device and port come from the command line before it (``mlxlink -d <dev> -p <n>``, a
prompt or a script's echo), a ``========== <name> ==========`` banner or the collector's marker
(its argv). BERs are printed as ``<coef>E-<exp>``
(``15E-255`` is mlxlink's "no error counted"); ``value_num`` holds numbers and BERs as floats,
lists per lane stay text (a number past a float's range, such as a run of hundreds of digits, has none). mlxlink's ``-E-``/``-W-`` messages and other lines go to ``unparsed``.

>>> from forensics.sources import ParseContext
>>> sample = (b"$ sudo mlxlink -d mlx5_0 -p 1 -c\\n\\nOperational Info\\n----------------\\n"
...           b"State                              : Active\\nSpeed                              : IB-HDR\\n\\n"
...           b"Physical Counters and BER Info\\n------------------------------\\n"
...           b"Symbol BER                         : 15E-255\\nRaw Physical BER                   : 1E-8\\n")
>>> res = parse(sample, ParseContext(host="n1"))
>>> res.tables["mlxlink"].select("run_no", "device", "port", "field", "value", "value_num").rows()
[(0, 'mlx5_0', 1, 'state', 'Active', None), (0, 'mlx5_0', 1, 'speed', 'IB-HDR', None), (0, 'mlx5_0', 1, 'symbol_ber', '15E-255', 1.5e-254), (0, 'mlx5_0', 1, 'raw_physical_ber', '1E-8', 1e-08)]
"""
from __future__ import annotations

import datetime as dt
import functools
import re

import polars as pl

from forensics.layout import MARKER_PREFIX
from forensics.sources._base import NULL_TOKENS, ParseContext, ParseResult, Sniff, drop_before_first_marker, head_text, marker_split, result, split_lines, unparsed_rows
from forensics.sources._bounded import INT32, finite, float_or_none, int_or_none

NAME = "mlxlink"
VERSION = 2  # 2: a port hint past Int32 (any run of digits) is no port (int() refused over 4,300 digits: the file was lost); a value past a float's range has no value_num (was inf)
TABLES = ("mlxlink",)
DESCRIPTION = ("mlxlink -m -c (NVIDIA MFT): link state, speed, FEC, troubleshooting verdict, module info and the "
               "physical counters and BER (symbol/effective/raw errors and BER, link down counter) per port")
SNIFF_PRIORITY = 30

_TS = pl.Datetime("us", "UTC")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_US = dt.timedelta(microseconds=1)
SECTIONS = ("Operational Info", "Supported Info", "Troubleshooting Info", "Tool Information", "Module Info",
            "Physical Counters and BER Info", "Histogram of FEC Errors", "Eye Opening Info", "FEC Capability Info",
            "Serdes Tx parameters", "Device Info", "Port Info", "Test Mode Info", "Physical Counters Info",
            "BER Monitor Info", "Cable DDM Information", "DDM Flags", "Host Class Info", "CPO Info")
_DASHES = re.compile(r"^\s*-{4,}\s*$")
_KV = re.compile(r"^\s*([A-Za-z(][^:]*?)\s+:\s?(.*?)\s*$")
_CMD = re.compile(r"\bmlxlink\b(.*)$")
_DEV = re.compile(r"(?:^|\s)(?:-d|--device)[ =](\S+)")
_PORT = re.compile(r"(?:^|\s)(?:-p|--port)[ =]([0-9]{1,4})\b")
_BANNER = re.compile(r"^\s*={3,}\s*(\S+)(?:\s.*?)?\s*={3,}\s*$")
_NUM = re.compile(r"^[-+]?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$")


def _field(key: str) -> str:
    """The column-safe name of a field's key; each distinct key of at most 128 characters computed once
    (a series prints the same ~40 keys every sample; at most 1,024 are kept)."""
    return _field_of_short(key) if len(key) <= 128 else _field_of(key)


def _field_of(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", re.sub(r"\[[^]]*\]|\([^)]*\)", "", key.lower())).strip("_")


_field_of_short = functools.lru_cache(maxsize=1024)(_field_of)


def sniff(head: bytes) -> Sniff:
    text = head_text(head)
    lines = [ln.rstrip() for ln in text.splitlines()[:500] if ln.strip() and not ln.startswith(MARKER_PREFIX)]
    if not lines:
        return Sniff(0.0, "no lines")
    titles = sum(1 for ln in lines if ln.strip() in SECTIONS)
    keys = {m.group(1) for ln in lines if (m := _KV.match(ln))}
    marks = len(keys & {"State", "Physical state", "FEC", "Effective Physical BER", "Raw Physical BER",
                        "Effective Physical Errors", "Recommendation", "Symbol BER", "Link Down Counter"})
    if not titles or marks < 2:
        return Sniff(0.0, "no mlxlink section title with its State/FEC/BER fields")
    hits = sum(1 for ln in lines if ln.strip() in SECTIONS or _DASHES.match(ln) or _KV.match(ln))
    return Sniff(round(min(1.0, hits / len(lines) + 0.2), 3), f"{titles} mlxlink sections, {hits} of {len(lines)} lines")


class _Runs:
    def __init__(self, ts, device, port):
        self.ts, self.device, self.port = ts, device, port
        self.pending = False  # a command line or banner named the next port: its first line opens a run
        self.run = -1
        self.section = None
        self.seen: set = set()
        self.rows: list[tuple] = []

    def start(self) -> None:
        self.run += 1
        self.seen, self.section, self.pending = set(), None, False

    def name_next(self, device: str, port: int | None) -> None:
        self.device, self.port, self.pending = device, port, True

    def title(self, name: str) -> None:
        if self.pending or self.run < 0 or name in self.seen or (name == "Operational Info" and self.seen):
            self.start()
        self.seen.add(name)
        self.section = name


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    df = split_lines(data)
    n = df.height
    hints = ctx.hints or {}
    device = hints.get("device")
    port = int_or_none(str(hints.get("port", "")), *INT32)  # (the port column; a hint is any run of digits)
    cap = ctx.capture_time
    if cap is not None and cap.tzinfo is None:
        cap = cap.replace(tzinfo=dt.timezone.utc)
    # times as microseconds since the epoch until the frame is built (a Python datetime each way cost ~1 us a
    # line read and a row made: a third of the parse of a host-hour's mlxlink series)
    st = _Runs(None if cap is None else (cap - _EPOCH) // _US, device, port)
    bad: list[tuple[int, str, str]] = []
    fields = None
    if n:
        df = drop_before_first_marker(marker_split(df), bad)  # (only a series' first lines go: the next line stays next)
        fields = _read(df, st, bad)
    cols = {"line_no": pl.Int64, "sample_no": pl.Int64, "run_no": pl.Int64, "ts": pl.Int64, "device": pl.String,
            "port": pl.Int32, "section": pl.String, "field": pl.String, "key": pl.String, "value": pl.String,
            "value_num": pl.Float64}
    out = pl.DataFrame(st.rows, schema=cols, orient="row")
    if fields is not None and fields.height:  # the field lines read as columns, with those read line by line
        fields = fields.select(list(cols))
        out = pl.concat([out, fields]).sort("line_no", maintain_order=True) if out.height else fields
    out = out.with_columns(pl.col("ts").cast(_TS)).with_columns(
        pl.when(pl.col("ts").is_not_null()).then(pl.lit("sampled")).otherwise(pl.lit("none")).alias("ts_quality"))
    variant = ("text" if out.height else "unrecognised") if n else "empty"
    bad.sort(key=lambda r: r[0])  # (stable: the lines before the first marker first, then in line order)
    return result(NAME, ctx, n, {"mlxlink": out}, [unparsed_rows(bad, ctx, NAME)] if bad else [],
                  variant=variant, runs=st.run + 1)


# Python's whitespace (str.strip(), and \s of a str pattern: str.isspace()), spelt out for polars' patterns and
# strip (Rust's whitespace differs: U+001C-U+001F are Python's, not Rust's)
_WS = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())
_WS_CLASS = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in _WS) + "]"
# _KV for polars: the same pattern, \s as Python reads it (a test checks both agree on hostile lines)
KV_PL = _KV.pattern.replace(r"\s", _WS_CLASS)
_NUM_PL = _NUM.pattern


def _read(df: pl.DataFrame, st: _Runs, bad: list) -> pl.DataFrame | None:
    """The rows of the plain field lines (``Key : value`` and nothing a title, banner or command could be), read
    as columns; every other line (markers, titles, banners, command lines, messages) through :func:`_line` in
    order, as are the first field line after each of those (where a named port's run opens), whose state every
    field line up to the next such line shares (a Python loop over every line was 2/3 of the parse). Returns the
    columns' rows (None: no such line); `st.rows` and `bad` get the rest."""
    s = pl.col("text").str.strip_chars(_WS)
    skip = (pl.col("_s") == "") | pl.col("_s").str.contains(r"^-{4,}$")
    plain = (pl.col("_kv").struct.field("1").is_not_null() & ~pl.col("is_marker")
             & ~pl.col("_s").is_in(SECTIONS) & ~pl.col("text").str.contains("===", literal=True)
             & ~pl.col("_s").str.contains("mlxlink", literal=True))
    kind = pl.when(pl.col("is_marker")).then(2).when(skip).then(0).when(plain).then(1).otherwise(2)
    # a plain field line after a line of another kind (skipped lines between do not count) leads its group
    prev = pl.when(pl.col("_kind") > 0).then(pl.col("_kind")).otherwise(None).shift(1).forward_fill()
    lead = (pl.col("_kind") == 1) & (prev.fill_null(0) != 1)
    # (one plan: each polars call costs ~0.2 ms, as much as a thousand lines' worth of work here)
    df = (df.lazy().with_columns(s.alias("_s"), pl.col("text").str.extract_groups(KV_PL).alias("_kv"))
          .with_columns(kind.alias("_kind"), pl.col("text").shift(-1, fill_value="").alias("_next"))
          .with_columns(lead.alias("_lead")).with_columns(pl.col("_lead").cum_sum().cast(pl.UInt32).alias("_group"))
          .collect())
    key = pl.col("_kv").struct.field("1").str.strip_chars(_WS)
    todo, keys = pl.collect_all([
        df.lazy().filter((pl.col("_kind") == 2) | pl.col("_lead")).select(
            "line_no", "text", "_next", "_kind", "is_marker", "sample_no", pl.col("sample_ts").dt.epoch("us"),
            "sample_argv"),
        df.lazy().filter(pl.col("_kind") == 1).select(key.unique().alias("key"))])
    states: list[tuple] = []
    for line_no, text, nxt, kind, is_marker, sample_no, sample_ts, sample_argv in todo.iter_rows():
        if is_marker:
            st.ts, st.section = sample_ts, None
            if sample_argv:
                _command(st, sample_argv)
        elif kind == 2:
            _line(st, line_no, text, nxt, max(sample_no, 0), bad)
        else:  # the lead of a group of plain field lines: what _line does for its first line, for all of them
            if st.pending:  # output filtered by grep: fields of the named port before (or without) a title
                st.start()
            ok = st.section is not None or st.run >= 0 and not st.seen
            states.append((len(states) + 1, ok, st.run, st.ts, st.device, st.port, st.section))
    if not states:
        return None
    state = pl.LazyFrame(states, schema={"_group": pl.UInt32, "_ok": pl.Boolean, "run_no": pl.Int64, "ts": pl.Int64,
                                         "device": pl.String, "port": pl.Int32, "section": pl.String}, orient="row")
    keys = keys["key"].to_list()
    names = pl.LazyFrame({"key": keys, "field": [_field(k) for k in keys]}, schema={"key": pl.String, "field": pl.String})
    lines = df.lazy().filter(pl.col("_kind") == 1).select(
        "line_no", "text", pl.col("sample_no").clip(lower_bound=0), "_group", key.alias("key"),
        pl.col("_kv").struct.field("2").str.strip_chars(_WS).alias("value")).join(
        state, on="_group", how="left", maintain_order="left").join(
        names, on="key", how="left", maintain_order="left").with_columns(
        pl.when(pl.col("value").is_in(NULL_TOKENS)).then(None).otherwise(pl.col("value")).alias("value"),
        finite(pl.when(pl.col("value").str.contains(_NUM_PL)).then(pl.col("value")).cast(pl.Float64, strict=False))
        .alias("value_num")).collect()
    if not lines["_ok"].all():
        bad.extend((line_no, text, "field before any mlxlink section title")
                   for line_no, text in lines.filter(~pl.col("_ok")).select("line_no", "text").iter_rows())
        lines = lines.filter(pl.col("_ok"))
    return lines


def _command(st: _Runs, cmd: str) -> None:
    d, p = _DEV.search(cmd), _PORT.search(cmd)
    if d:
        st.name_next(d.group(1), int(p.group(1)) if p else None)


def _line(st: _Runs, line_no: int, text: str, nxt: str, sample_no: int, bad: list) -> None:
    # (the substring tests before _DASHES and _BANNER: what each pattern needs, a fifth of a match call; most
    # lines are fields and skip both)
    s = text.strip()
    if not s or "----" in text and _DASHES.match(text):
        return
    if s in SECTIONS:
        st.title(s)
        return
    if "----" in nxt and _DASHES.match(nxt) and not _KV.match(text):  # a title this parser does not know: its fields still read
        st.title(s)
        return
    b = _BANNER.match(text) if "===" in text else None
    if b:
        st.name_next(b.group(1), None)
        return
    c = _CMD.search(s) if "mlxlink" in s else None  # (the pattern needs the word: most lines skip the search)
    if c and ("-d " in c.group(1) or "--device" in c.group(1)):
        _command(st, c.group(1))
        bad.append((line_no, text, "shell prompt or command line (its -d/-p name the next port)"))
        return
    m = _KV.match(text)
    if m and st.pending:  # output filtered by grep: fields of the named port before (or without) a title
        st.start()
    if m and (st.section is not None or st.run >= 0 and not st.seen):
        key, value = m.group(1).strip(), m.group(2).strip()
        num = float_or_none(value) if _NUM.match(value) else None  # (a run of hundreds of digits: none, not inf)
        st.rows.append((line_no, sample_no, st.run, st.ts, st.device, st.port, st.section, _field(key), key,
                        None if value in NULL_TOKENS else value, num))
        return
    if s.startswith(("-E-", "-W-", "-I-")):
        bad.append((line_no, text, "mlxlink message"))
    elif m:
        bad.append((line_no, text, "field before any mlxlink section title"))
    else:
        bad.append((line_no, text, "not an mlxlink section title or 'Key : value' field"))
