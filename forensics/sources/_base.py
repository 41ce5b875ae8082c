"""What every source parser shares: its context, its result, and line handling.

A parser is a module ``forensics/sources/<name>.py`` with::

    NAME = "dmesg"            # source name, used by --source and in every row's `source`
    VERSION = 1               # bump when output changes: cached tables are re-parsed
    TABLES = ("kernel_log",)  # tables it can produce (each has schemas/<table>.json)
    DESCRIPTION = "..."       # one line for `forensics sources`
    def sniff(head: bytes) -> Sniff: ...   # (a plain bool is still accepted: see as_sniff)
    def parse(data: bytes, ctx: ParseContext) -> ParseResult: ...

Accounting rule (tested for every source and fixture): ``result.lines`` is the number of lines of
the input as :func:`split_lines` counts them, and every line is either used (it produced a row or is
structure the format defines: a header, a blank separator, a marker) or appears exactly once in
``result.unparsed`` with a reason, or is skipped on purpose: another tool's line that the parser
recognises but that holds no data (an ifconfig address line pasted with ``ethtool -S``), counted in
``result.meta["skipped"]`` (reason -> lines), so that used + unparsed + skipped = lines.

Recognition rule: ``sniff`` says how sure it is, never only yes or no: it returns a :class:`Sniff`
(confidence 0..1 and what it saw, in words), true from ``SNIFF_ACCEPT`` on, so that an input is
either recognised with a stated confidence or reported as not recognised, and a file given with
``--source S`` that S's sniffer rejects is said to be so.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
import polars as pl

from forensics import schema
from forensics.layout import MARKER_PREFIX, parse_marker

NULL_TOKENS = ("N/A", "[N/A]", "[Not Supported]", "Not Supported", "[Unknown Error]", "Unknown Error",
               "[Not Found]", "Not Available", "[Insufficient Permissions]", "Insufficient Permissions",
               "-", "")


SNIFF_ACCEPT = 0.5  # confidence from which an input is taken to be a source's output


@dataclass(frozen=True)
class Sniff:
    """A sniffer's verdict on the start of an input.

    confidence: 0.0 (clearly not this source's output) .. 1.0 (certainly it); the input is taken to
    be this source's from SNIFF_ACCEPT on, and the object is true exactly then (so ``if
    mod.sniff(head):`` reads as before).
    reason: what was seen, for the user ("38 of 40 lines carry a kernel log prefix").

    >>> bool(Sniff(0.95, "x")), bool(Sniff(0.2, "y")), Sniff.of(True).confidence
    (True, False, 1.0)
    """

    confidence: float
    reason: str = ""

    def __bool__(self) -> bool:
        return self.confidence >= SNIFF_ACCEPT

    @staticmethod
    def of(value: "Sniff | bool") -> "Sniff":
        """A sniffer's return value as a Sniff (a bool from a sniffer that states no confidence: 1.0 / 0.0)."""
        if isinstance(value, Sniff):
            return value
        return Sniff(1.0, "recognised by its sniffer") if value else Sniff(0.0, "not recognised by its sniffer")

    @staticmethod
    def ratio(hits: int, total: int, what: str, floor: int = 1, bonus: float = 0.0) -> "Sniff":
        """confidence = hits / total lines + `bonus` (at most 1; 0 below `floor` hits), reason "hits of
        total lines <what>"."""
        conf = hits / total + bonus if total and hits >= floor else 0.0
        return Sniff(round(min(1.0, conf), 3), f"{hits} of {total} lines {what}")


@dataclass
class ParseContext:
    """What a parser may know beyond the bytes it is given.

    host: host name to stamp on rows that carry none of their own.
    file: path of the input as it should appear in `file` columns.
    tz: IANA zone of the host, for sources that print local time (sar, iostat, dmesg -T, NCCL).
    boot_time: the host's boot time (UTC), for dmesg seconds since boot.
    capture_time: when the output was captured (UTC), for snapshots without their own time.
    year: year to assume for formats that print none (syslog "Nov 30 10:15:02").
    hints: source-specific extras, e.g. {"iface": "eth2"} for ethtool.
    """

    host: str | None = None
    file: str = "<input>"
    tz: str | None = None
    boot_time: dt.datetime | None = None
    capture_time: dt.datetime | None = None
    year: int | None = None
    hints: dict[str, Any] = field(default_factory=dict)


@dataclass
class ParseResult:
    """Tables produced from one input, the lines not used, and facts learned on the way."""

    tables: dict[str, pl.DataFrame]
    unparsed: pl.DataFrame
    lines: int
    meta: dict[str, Any] = field(default_factory=dict)

    def rows(self) -> dict[str, int]:
        return {name: df.height for name, df in self.tables.items()}


def split_lines(data: bytes | str) -> pl.DataFrame:
    """Lines of `data` as a frame (line_no: Int64 starting at 1, text: String).

    Bytes are decoded as UTF-8 with replacement characters for invalid sequences; CRLF and a
    lone trailing CR are stripped; a final line without newline counts; an empty input has no lines.
    Inputs of a megabyte or more are split by polars' CSV reader (twice as fast, a quarter of the
    memory), falling back to the reference splitter below on any doubt.
    """
    if isinstance(data, (bytes, bytearray)) and len(data) >= FAST_SPLIT_BYTES:
        fast = _split_lines_csv(bytes(data))
        if fast is not None:
            return fast
    return _split_lines_py(data)


FAST_SPLIT_BYTES = 1 << 20


def _split_lines_csv(data: bytes) -> pl.DataFrame | None:
    """split_lines() through polars' CSV reader: one column, a separator byte absent from the data,
    no quoting. None when in doubt (no free separator byte, a reader error, another line count)."""
    sep = next((c for c in ("\x1f", "\x1e", "\x1d", "\x1c") if c.encode() not in data), None)
    if sep is None:
        return None
    try:
        df = pl.read_csv(data, has_header=False, separator=sep, quote_char=None, new_columns=["text"],
                         encoding="utf8-lossy", infer_schema=False, comment_prefix=None)
    except Exception:  # noqa: BLE001 - the reference splitter decides
        return None
    if df.height != count_lines(data) or df.columns != ["text"]:
        return None
    text = pl.col("text").fill_null("")
    if data.startswith(b"\xef\xbb\xbf"):  # the CSV reader drops a BOM; the reference keeps it
        text = pl.when(pl.int_range(pl.len()) == 0).then("\ufeff" + text).otherwise(text)
    return df.select(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("line_no"), text.alias("text"))


def _split_lines_py(data: bytes | str) -> pl.DataFrame:
    text = data.decode("utf-8", errors="replace") if isinstance(data, (bytes, bytearray, memoryview)) else data
    if not text:
        return pl.DataFrame({"line_no": pl.Series([], dtype=pl.Int64), "text": pl.Series([], dtype=pl.String)})
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    s = pl.Series("text", parts, dtype=pl.String)
    df = pl.DataFrame({"line_no": pl.int_range(1, len(parts) + 1, eager=True, dtype=pl.Int64), "text": s})
    if "\r" in text:
        df = df.with_columns(pl.col("text").str.strip_suffix("\r"))
    return df


def count_lines(data: bytes) -> int:
    """Number of lines split_lines would return, without building them.

    From a megabyte on, numpy counts the newlines a megabyte at a time (50 MB after a parse: 6-10 CPU ms
    against bytes.count's 17-30; one comparison over the whole input made a temporary as big as it,
    11 ms alone but a median 87 and up to 330 ms in a process a parse had just used, load ~55)."""
    if not data:
        return 0
    if len(data) < COUNT_CHUNK:
        n = data.count(b"\n")
    else:
        import numpy as np  # (a dependency; loaded with pyarrow anyway, so only for big inputs here)

        buf = np.frombuffer(data, dtype=np.uint8)
        n = sum(int(np.count_nonzero(buf[i:i + COUNT_CHUNK] == 10)) for i in range(0, len(buf), COUNT_CHUNK))
    return n if data.endswith(b"\n") else n + 1


COUNT_CHUNK = 1 << 20


def unparsed_frame(lines: pl.DataFrame, reason: str | pl.Expr, ctx: ParseContext, source: str) -> pl.DataFrame:
    """Turn a subset of `split_lines` rows into `unparsed` rows with a reason."""
    reason_expr = reason if isinstance(reason, pl.Expr) else pl.lit(reason)
    df = lines.select(
        pl.col("line_no").cast(pl.Int64),
        pl.col("text"),
        reason_expr.cast(pl.String).alias("reason"),
    )
    return schema.conform(df, "unparsed", host=ctx.host, source=source, file=ctx.file)


def unparsed_rows(rows: Iterable[tuple[int, str, str]], ctx: ParseContext, source: str) -> pl.DataFrame:
    """`unparsed` rows from (line_no, text, reason) tuples (for parsers with a Python state machine)."""
    rows = list(rows)
    df = pl.DataFrame(
        {
            "line_no": pl.Series([r[0] for r in rows], dtype=pl.Int64),
            "text": pl.Series([r[1] for r in rows], dtype=pl.String),
            "reason": pl.Series([r[2] for r in rows], dtype=pl.String),
        }
    )
    return schema.conform(df, "unparsed", host=ctx.host, source=source, file=ctx.file)


def result(source: str, ctx: ParseContext, lines: int, tables: dict[str, pl.DataFrame],
           unparsed: list[pl.DataFrame] | pl.DataFrame | None = None, **meta: Any) -> ParseResult:
    """Conform every table to its schema (filling host/source/file) and build a ParseResult."""
    out = {}
    # the user named the host of this file (--host): it wins over host names inside its lines
    stated = ctx.host if (ctx.hints or {}).get("host_stated") and ctx.host else None
    for name, df in tables.items():
        fill = {"host": ctx.host, "source": source, "file": ctx.file}
        cols = schema.polars_schema(name)
        if df.height == 0 and list(df.schema.items()) == list(cols.items()):
            out[name] = df  # an empty table already in its schema: nothing to fill or cast
            continue
        out[name] = schema.conform(df, name, **{k: v for k, v in fill.items() if k in cols})
        if stated and "host" in cols:
            out[name] = out[name].with_columns(pl.lit(stated, dtype=cols["host"]).alias("host"))
    if unparsed is None:
        up = schema.empty("unparsed")
    elif isinstance(unparsed, list):
        up = pl.concat([schema.conform(u, "unparsed") for u in unparsed]) if unparsed else schema.empty("unparsed")
    else:
        up = schema.conform(unparsed, "unparsed")
    if up.height:
        up = up.sort("line_no")
    return ParseResult(tables=out, unparsed=up, lines=lines, meta=meta)


def null_if_na(expr: pl.Expr) -> pl.Expr:
    """Map nvidia-smi/sysstat 'not available' tokens to null, on purpose (strips whitespace first)."""
    e = expr.str.strip_chars()
    return pl.when(e.is_in(list(NULL_TOKENS))).then(None).otherwise(e)


def is_na_token(value: str | None) -> bool:
    return value is None or value.strip() in NULL_TOKENS


def local_to_utc(naive: pl.Expr, tz: str | None) -> pl.Expr:
    """Interpret naive local datetimes in zone `tz` (UTC when None) and convert to UTC.

    Ambiguous (DST fall-back) times take the earliest; non-existent ones become null.
    """
    zone = tz or "UTC"
    return naive.dt.replace_time_zone(zone, ambiguous="earliest", non_existent="null").dt.convert_time_zone("UTC")


def marker_split(lines: pl.DataFrame) -> pl.DataFrame:
    """Annotate lines with the snapshot they belong to, from forensics-sample marker lines.

    Adds columns is_marker (bool), sample_no (Int64, 0-based; lines before any marker get 0 when the
    input has no marker at all, else -1), sample_ts (UTC) and sample_argv (String).
    """
    # (on Series, not frame expressions: most inputs are small files, where each polars query's fixed cost
    # counts: a host-hour's 41 such files 38 -> 28 CPU ms, the same frames; issue 21)
    text = lines.get_column("text")
    is_marker = text.str.starts_with(MARKER_PREFIX).alias("is_marker")
    if not is_marker.any():
        return lines.with_columns(
            is_marker,
            pl.lit(0, dtype=pl.Int64).alias("sample_no"),
            pl.lit(None, dtype=pl.Datetime("us", "UTC")).alias("sample_ts"),
            pl.lit(None, dtype=pl.String).alias("sample_argv"),
        )
    parsed = [parse_marker(t) for t in text.filter(is_marker)]
    ts = pl.Series("sample_ts", [p[0] if p else None for p in parsed], dtype=pl.Datetime("us", "UTC"))
    argv = pl.Series("sample_argv", [p[1] if p else None for p in parsed], dtype=pl.String)
    order = lines.get_column("line_no")
    steps = np.diff(order.to_numpy().astype(np.int64, copy=False)) if not order.null_count() else None
    if steps is not None and bool((steps > 0).all()):
        # lines in order (as split_lines gives them): a line's sample is the number of markers up to it, less
        # one, and its time and argv those of the last marker up to it that has them (a malformed one has none)
        no = (is_marker.cum_sum().cast(pl.Int64) - 1).alias("sample_no")
        at = no.clip(lower_bound=0)
        cols = [ts.forward_fill().gather(at), argv.forward_fill().gather(at)]
        if no[0] < 0:  # (`no` never decreases: only a first run of lines is before any marker)
            cols = [pl.select(pl.when(pl.lit(no) >= 0).then(pl.lit(s))).to_series().alias(s.name) for s in cols]
        return lines.with_columns(is_marker, *cols, no)
    df = lines.with_columns(is_marker)
    info = pl.DataFrame({"line_no": order.filter(is_marker), "sample_ts": ts, "sample_argv": argv}).with_columns(
        pl.int_range(0, pl.len(), dtype=pl.Int64).alias("sample_no"))
    df = df.join(info, on="line_no", how="left").sort("line_no")
    df = df.with_columns(pl.col("sample_no", "sample_ts", "sample_argv").forward_fill())
    return df.with_columns(pl.col("sample_no").fill_null(-1))


# mail and forum quoting of a pasted line: "> ", ">> ", "> > " (a line of tool output never starts with ">")
RE_MAIL_QUOTE = r"^(?:> ?)+"


BEFORE_FIRST_MARKER = "line before the first forensics-sample marker"


def drop_before_first_marker(df: pl.DataFrame, bad: list[tuple[int, str, str]]) -> pl.DataFrame:
    """The lines of `df` (annotated by :func:`marker_split`) without those before the first marker of
    a marker series: each of those that is not blank goes to `bad` as (line_no, text, reason)."""
    before = df.select((pl.col("sample_no") < 0) & ~pl.col("is_marker")).to_series()
    if not before.any() and not before.null_count():  # (a series' first line is its first marker)
        return df
    lost = df.filter(before).filter(pl.col("text").str.strip_chars() != "")
    bad.extend((line_no, text, BEFORE_FIRST_MARKER) for line_no, text in lost.select("line_no", "text").iter_rows())
    return df.filter(~before)


def leftover_reason(s: str, prompt: re.Pattern, tool: str, otherwise: str, error: str | None = None) -> str:
    """The ``unparsed`` reason of a line a reader could not place (`s`: stripped): the tool's own
    error message (starts with "Error"; only where `error` says what it is), a shell prompt or command
    line (`prompt` finds the tool's command in it), else `otherwise`."""
    if error is not None and s.startswith("Error"):
        return error
    if prompt.search(s):
        return f"shell prompt or command line, not {tool} output"
    return otherwise


def head_text(head: bytes, limit: int = 65536) -> str:
    """Decoded start of an input, for sniffers."""
    return head[:limit].decode("utf-8", errors="replace")


def sniff_lines(head: bytes, most: int = 400) -> list[str]:
    """The lines a sniffer weighs: of the first `most` lines of the input's start, those that are not
    blank and not a collector's sample marker."""
    return [ln for ln in head_text(head).splitlines()[:most] if ln.strip() and not ln.startswith(MARKER_PREFIX)]


# --- line length cap: what a parser sees of an over-long line --------------------------------

def truncation_mark(dropped: int) -> bytes:
    """What replaces the dropped end of an over-long line (the raw file itself is untouched)."""
    return b" [forensics: %d bytes of this line dropped]" % dropped


class Truncation:
    """Lines cut to the cap while reading one input: how many, and how many bytes were dropped."""

    def __init__(self) -> None:
        self.lines = 0
        self.bytes = 0


def _first_long(b: bytes, j: int, cap: int) -> int:
    """Start of the first line at or after `j` with no newline within `cap` bytes, or -1 when
    every line from `j` is short (the tail may be a partial line of at most `cap` bytes).
    About len/cap calls of rfind: a pass over memory, no per-line Python."""
    n = len(b)
    while n - j > cap:
        k = b.rfind(b"\n", j, j + cap + 1)
        if k < 0:
            return j
        j = k + 1
    return -1


def capped_blocks(blocks: Iterable[bytes], cap: int, stats: Truncation) -> Iterable[bytes]:
    """`blocks` (consecutive pieces of one input) with every line longer than `cap` bytes cut to
    its first `cap` bytes plus :func:`truncation_mark`; the dropped bytes are never held. A block
    without a long line is passed on as it is."""
    cur = 0          # bytes of the current (unfinished) line passed on so far
    dropping = False  # inside the dropped part of a long line
    dropped = 0
    for b in blocks:
        n, pos, out = len(b), 0, []
        while pos < n:
            if dropping:
                nl = b.find(b"\n", pos)
                if nl < 0:
                    dropped += n - pos
                    break
                dropped += nl - pos
                out.append(truncation_mark(dropped))
                stats.lines, stats.bytes = stats.lines + 1, stats.bytes + dropped
                dropping, cur, pos = False, 0, nl
                continue
            room = cap - cur
            nl = b.find(b"\n", pos, pos + room + 1)
            if nl < 0:
                if n - pos <= room:
                    out.append(b[pos:] if pos else b)
                    cur += n - pos
                    break
                out.append(b[pos:pos + room])
                dropping, dropped, pos = True, 0, pos + room
                continue
            bad = _first_long(b, nl + 1, cap)
            if bad < 0:
                out.append(b[pos:] if pos else b)
                cur = n - (b.rfind(b"\n", nl) + 1)
                break
            out.append(b[pos:bad])
            cur, pos = 0, bad
        if out:
            yield out[0] if len(out) == 1 else b"".join(out)
    if dropping:
        stats.lines, stats.bytes = stats.lines + 1, stats.bytes + dropped
        yield truncation_mark(dropped)


def cap_lines(data: bytes, cap: int | None = None, stats: Truncation | None = None) -> bytes:
    """`data` with lines longer than `cap` (default MAX_LINE_BYTES) cut (see :func:`capped_blocks`);
    `data` itself when none is (one pass of rfind over it)."""
    from forensics.limits import MAX_LINE_BYTES

    cap = cap or MAX_LINE_BYTES
    stats = stats if stats is not None else Truncation()
    if _first_long(data, 0, cap) < 0:
        return data
    return b"".join(capped_blocks([data], cap, stats))


def read_capped(fh, cap: int | None = None, stats: Truncation | None = None, block: int = 8 << 20) -> Iterable[bytes]:
    """Blocks of the open binary file `fh` with long lines cut: never more than `block` + `cap`
    bytes of one line in memory, however long the line."""
    from forensics.limits import MAX_LINE_BYTES

    stats = stats if stats is not None else Truncation()
    return capped_blocks(iter(lambda: fh.read(block), b""), cap or MAX_LINE_BYTES, stats)


# --- lines a paste's author put in place of lines left out ------------------------------------

ELIDED = "elision mark: lines the paste's author left out"
# (the lines that only mark one: RE_ELISION, in the paste layer's _quote, which weighs them too)
from forensics.sources._quote import RE_ELISION  # noqa: E402 - one pattern for the paste layer and the parsers


FENCE = "code fence or comment delimiter around the paste: the paste's, not the tool's"
# (the lines that only open or close one: RE_FENCE, in the paste layer's _quote, which leaves them unweighed too)
from forensics.sources._quote import RE_FENCE  # noqa: E402


def skip_elisions(res: ParseResult) -> ParseResult:
    """`res` with the unparsed lines that only mark an elision (:data:`RE_ELISION`) or only open or close a
    Markdown code fence (:data:`RE_FENCE`) moved to ``meta["skipped"]`` (reason -> lines): they are the
    paste's, not the tool's, and hold no data.

    >>> r = ParseResult({}, unparsed_rows([(2, "> [...]", "x"), (3, "junk", "y")], ParseContext(), "t"), 3)
    >>> r = skip_elisions(r)
    >>> r.unparsed["line_no"].to_list(), r.meta["skipped"]
    ([3], {"elision mark: lines the paste's author left out": 1})
    """
    if not res.unparsed.height:
        return res
    text = res.unparsed.get_column("text")
    for pattern, reason in ((RE_ELISION, ELIDED), (RE_FENCE, FENCE)):
        mark = text.str.contains(pattern)
        n = int(mark.sum())
        if n:
            skipped = dict(res.meta.get("skipped") or {})
            skipped[reason] = skipped.get(reason, 0) + n
            res.meta["skipped"] = skipped
            res.unparsed = res.unparsed.filter(~mark)
            text = res.unparsed.get_column("text")
    return res


# --- Markdown hard line breaks: a paste whose lines end in " \" ----------------------------------

_HARD_BREAK_END = re.compile(rb"[ \t]*\\[ \t]*\r?$")
_HARD_BREAK_ALL = re.compile(rb"(?m)[ \t]*\\[ \t]*(?=\r?$)")


def hard_breaks(head: bytes) -> int:
    """How many of the first 400 lines of `head` end in a Markdown hard line break (a backslash), when
    that is at least half of its non-blank lines and two or more (a tool's own line rarely ends in one); else 0.
    A one-byte scan first: inputs without a backslash cost nothing more.

    >>> hard_breaks(b"Driver Version : 396.54 \\\\\\n\\nGPU 00000000:01:00.0 \\\\\\n"), hard_breaks(b"Name : C:\\\\dir\\\\\\nx\\n")
    (2, 0)
    """
    if b"\\" not in head:
        return 0
    lines = head.split(b"\n", 400)[:400]
    n = sum(1 for ln in lines if _HARD_BREAK_END.search(ln))
    nonblank = sum(1 for ln in lines if ln.strip())
    return n if n >= 2 and n * 2 >= nonblank else 0


def strip_hard_breaks_bytes(data: bytes) -> tuple[bytes, int]:
    """`data` without the backslash (and blanks around it) at the end of its lines, and how many lines had one."""
    return _HARD_BREAK_ALL.subn(b"", data)
