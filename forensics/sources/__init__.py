"""Source parsers: one module (or subpackage) per tool, discovered from this package (never listed
by hand), each with a descriptor module ``<name>_spec.py`` beside it (how it is collected, where it
lives in a sosreport and a bug report, its file-name hints and timeline events: see
:mod:`forensics.descriptor`).

Importing this package needs only the standard library (the collector reads the descriptors on
nodes without polars); the parser side (:func:`registry`, ``ParseContext``, ...) loads on use.

>>> {'dmesg', 'ethtool', 'iostat', 'nccl', 'numactl', 'nvidia_smi', 'sar'} <= set(registry())
True
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forensics.sources._base import ParseContext, ParseResult, Sniff

REQUIRED = ("NAME", "VERSION", "TABLES", "DESCRIPTION", "sniff", "parse")
SNIFF_BYTES = 65536
# node names read one inside the other at most: a parallel shell run through another ("login1: gpu1: ...", read per
# inner node: forensics.sources._hosts, which is imported on use only)
HOST_LEVELS = 2
SPEC_SUFFIX = "_spec"
_BASE = ("SNIFF_ACCEPT", "ParseContext", "ParseResult", "Sniff", "split_lines")


def __getattr__(name):
    if name in _BASE:  # the parser base needs polars: loaded on first use, not by the collector
        from forensics.sources import _base

        return getattr(_base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _names() -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))


@lru_cache(maxsize=None)
def descriptors() -> dict:
    """source name -> :class:`forensics.descriptor.Descriptor` of every ``<name>_spec`` module here."""
    found = {}
    for name in _names():
        if name.endswith(SPEC_SUFFIX):
            d = importlib.import_module(f"{__name__}.{name}").DESCRIPTOR
            found[d.source] = d
    return dict(sorted(found.items()))


def file_hints(source: str, name: str) -> dict:
    """Parser hints the collector-layout raw file name `name` of `source` gives (``raw/ethtool/eth0.txt``:
    ``{"iface": "eth0"}``)."""
    d = descriptors().get(source)
    return d.hints_for(name) if d is not None else {}


@lru_cache(maxsize=None)
def registry() -> dict:
    """name -> module for every parser module in this package (modules starting with _ and the
    ``*_spec`` descriptors skipped)."""
    found = {}
    for name in _names():
        if name.endswith(SPEC_SUFFIX):
            continue
        mod = importlib.import_module(f"{__name__}.{name}")
        missing = [a for a in REQUIRED if not hasattr(mod, a)]
        if missing:
            raise ImportError(f"source module {name} lacks {missing}")
        found[mod.NAME] = mod
    return dict(sorted(found.items()))


def get(name: str):
    try:
        return registry()[name]
    except KeyError:
        raise KeyError(f"unknown source {name!r} (known: {', '.join(registry())})") from None


def sniff_as(name: str, head: bytes) -> Sniff:
    """Source `name`'s verdict on `head` (a sniffer that raises: confidence 0 with the error)."""
    from forensics.sources._base import Sniff

    try:
        return Sniff.of(get(name).sniff(head[:SNIFF_BYTES]))
    except Exception as exc:  # noqa: BLE001 - a sniffer must never break detection of the others
        return Sniff(0.0, f"its sniffer failed: {type(exc).__name__}")


def sniff_pasted(name: str, head: bytes) -> Sniff:
    """Source `name`'s verdict on `head` read as :func:`parse_bytes` reads it when told the source
    (``forensics parse --source``): without the paste's quote prefix (and indent, see :func:`paste_prefix`),
    decoded where it is a quoted-printable mail body, without Markdown hard line breaks; the raw head's
    verdict where that is at least as sure. The reason says what was left out, as :func:`recognise`'s does."""
    from forensics.sources import _mail_qp as mail_qp
    from forensics.sources._base import Sniff
    from forensics.sources._quote import describe, split_prefix

    head = head[:SNIFF_BYTES]
    from forensics.sources import _hosts

    nodes, view, _, _ = _hosts.nodes_view(head)
    if nodes:  # every line behind its node's name: weighed without the names where that is surer
        got, without = _sniff_pasted(name, head), _sniff_pasted(name, view)
        if without.confidence > got.confidence:
            return Sniff(without.confidence, f"{without.reason} ({_nodes_said(nodes)})")
        return got
    return _sniff_pasted(name, head)


def _sniff_pasted(name: str, head: bytes) -> Sniff:
    from forensics.sources import _mail_qp as mail_qp
    from forensics.sources._base import Sniff
    from forensics.sources._quote import describe, split_prefix

    raw = sniff_as(name, head)
    prefix, plain = paste_plan(name, head)
    if plain:  # (read as it is: _paste_read would find nothing to take off)
        return raw
    read, prefix, qp, breaks = _paste_read(head, prefix)
    if not (prefix or qp or breaks):
        return raw
    got = sniff_as(name, read)
    if got.confidence <= raw.confidence:
        return raw
    what = [f"read without the paste's prefix: {describe(prefix)}"] if any(split_prefix(prefix)) else []
    if qp:
        what.append(("a " if what else "read as a ") + "quoted-printable mail body, decoded")
    if breaks:
        what.append(f"{'without' if what else 'read without'} the Markdown line breaks ' \\' ending {breaks} lines")
    return Sniff(got.confidence, f"{got.reason} ({'; '.join(what)})")


def recognise(head: bytes, hints: dict | None = None) -> tuple[str | None, Sniff]:
    """The source `head` is taken to be (:func:`recognise_pasted`); a paste whose every line starts with the name
    of the node that printed it (pdsh, clush, talosctl: :mod:`forensics.sources._hosts`) is weighed without those
    names too, and taken so where a source recognises it so more surely."""
    from forensics.sources import _hosts
    from forensics.sources._base import Sniff
    from forensics.sources._quote import describe

    head = head[:SNIFF_BYTES]
    name, got = recognise_pasted(head, hints)
    nodes, view, quote, _ = _hosts.nodes_view(head)
    if not nodes:
        return name, got
    name_h, got_h = recognise_pasted(view, hints)
    if name_h is None or (name is not None and got_h.confidence <= got.confidence):
        return name, got
    said = _nodes_said(nodes) + (f"; read without the paste's prefix: {describe(quote)}" if quote else "")
    return name_h, Sniff(got_h.confidence, f"{got_h.reason} ({said})")


def _nodes_said(nodes: list[bytes]) -> str:
    shown = ", ".join(n.decode("ascii") for n in nodes[:4]) + (", ..." if len(nodes) > 4 else "")
    return f"read per node without the node name before every line: {len(nodes)} node{'s' * (len(nodes) > 1)}, {shown}"


def recognise_pasted(head: bytes, hints: dict | None = None) -> tuple[str | None, Sniff]:
    """The source `head` is taken to be, with its verdict: the first source (by SNIFF_PRIORITY,
    then name) whose sniffer accepts it; then, with `hints` the user stated (e.g. nvidia-smi's
    query_fields), the first source whose ``sniff_stated(head, hints)`` accepts it; else (None, a
    verdict naming the closest source, or where no sniffer saw anything of its own in it, saying so with the
    sources' names).

    A paste quoted or indented as a block (:mod:`forensics.sources._quote`) is weighed without its
    quote prefix, and without its indent where that source reads it at least as well so
    (:func:`paste_prefix`); the verdict's reason says what was left out."""
    from forensics.sources import _mail_qp as mail_qp
    from forensics.sources._base import Sniff
    from forensics.sources._quote import block_parts, describe, strip_prefix

    from forensics.sources._base import hard_breaks, strip_hard_breaks_bytes

    head = head[:SNIFF_BYTES]
    if mail_qp.looks_encoded(head) and not _quoted_after_encoding(head):  # a mail body stored undecoded: decoded
        name, got = recognise(mail_qp.decode(head), hints)
        return name, Sniff(got.confidence, f"{got.reason} (read as a quoted-printable mail body, decoded)")
    breaks = hard_breaks(head)
    if breaks:  # pasted from Markdown with a backslash hard line break ending its lines: weighed without them
        name, got = recognise(strip_hard_breaks_bytes(head)[0], hints)
        return name, Sniff(got.confidence, f"{got.reason} (read without the Markdown line breaks ' \\' "
                                           f"ending {breaks} lines)")
    quote, indent = block_parts(head)
    if not (quote or indent):
        return _recognise(head, hints)
    unquoted = strip_prefix(head, quote) if quote else head
    if quote and mail_qp.looks_encoded(unquoted):  # quoted after the encoding: its soft breaks show unquoted
        name, got = recognise(mail_qp.decode(unquoted), hints)
        return name, Sniff(got.confidence, f"{got.reason} (read without the paste's prefix: {describe(quote)}; "
                                            "a quoted-printable mail body, decoded)")
    name, got = _recognise(unquoted, hints)
    used = quote
    if indent and name is not None:
        if paste_prefix(name, head) == quote + indent:  # (a tool's own indent is kept: see there)
            got, used = sniff_as(name, strip_prefix(unquoted, indent)), quote + indent
    elif indent:  # not recognised with the indent: perhaps without it
        name_i, got_i = _recognise(strip_prefix(unquoted, indent), hints)
        if name_i is not None or got_i.confidence > got.confidence:
            name, got, used = name_i, got_i, quote + indent
    if used and name is not None:
        got = Sniff(got.confidence, f"{got.reason} (read without the paste's prefix: {describe(used)})")
    return name, got


def paste_prefix(name: str, head: bytes) -> bytes:
    """The prefix a paste put before (nearly) every line of `head` that source `name` reads the input
    without: its quote prefix, with the indent after it where `name`'s sniffer is at least as sure of
    the input without the indent as with it (b"" for none)."""
    return paste_plan(name, head)[0]


def paste_plan(name: str, head: bytes) -> tuple[bytes, bool]:
    """(:func:`paste_prefix`, whether `head` is read as it is: no prefix, no quoted-printable body, no Markdown
    hard breaks). Where it is, an input that starts with `head` needs none of the paste layer's checks again:
    ``parse_pasted(..., plain=True)`` skips them (~1 ms on a 64 KiB head, run twice per file before)."""
    from forensics.sources import _mail_qp as mail_qp
    from forensics.sources._quote import block_parts, strip_prefix

    from forensics.sources._base import hard_breaks, strip_hard_breaks_bytes

    head = head[:SNIFF_BYTES]
    if first := _quoted_after_encoding(head):  # taken off before decoding (see _paste_read)
        return first + paste_prefix(name, strip_prefix(head, first)), False
    encoded = mail_qp.looks_encoded(head)
    if encoded:
        head = mail_qp.decode(head)
    breaks = hard_breaks(head)
    if breaks:
        head = strip_hard_breaks_bytes(head)[0]
    quote, indent = block_parts(head)
    if not indent:
        return quote, not (quote or encoded or breaks)
    unquoted = strip_prefix(head, quote) if quote else head
    without, kept = sniff_as(name, strip_prefix(unquoted, indent)).confidence, sniff_as(name, unquoted).confidence
    if without >= kept:  # (an indent, or list mark, that the source reads the input at least as well without)
        return quote + indent, False
    return quote, not (quote or encoded or breaks)


def _recognise(head: bytes, hints: dict | None = None) -> tuple[str | None, Sniff]:
    from forensics.sources._base import Sniff

    mods = sorted(registry().values(), key=lambda m: (getattr(m, "SNIFF_PRIORITY", 50), m.NAME))
    best: tuple[str, Sniff] | None = None
    for mod in mods:
        got = sniff_as(mod.NAME, head)
        if got:
            return mod.NAME, got
        if got.confidence > 0 and (best is None or got.confidence > best[1].confidence):
            best = (mod.NAME, got)
    for mod in mods if hints else ():
        stated = getattr(mod, "sniff_stated", None)
        got = Sniff.of(stated(head[:SNIFF_BYTES], hints)) if stated else Sniff(0.0)
        if got:
            return mod.NAME, got
    if best is None:  # (no closest source to name: the names --source takes instead)
        names = ", ".join(sorted(m.NAME for m in mods))
        return None, Sniff(0.0, f"no source recognises it: no source's sniffer saw any line of its own in it "
                                f"(sources: {names})")
    return None, Sniff(best[1].confidence,
                       f"no source recognises it (closest: {best[0]} at {best[1].confidence:.2f}: {best[1].reason})")


def detect(head: bytes) -> str | None:
    """Name of the first source (by SNIFF_PRIORITY, then name) whose sniff() accepts `head`."""
    return recognise(head)[0]


def parse_bytes(data: bytes, source: str | None = None, ctx: ParseContext | None = None) -> tuple[str, ParseResult]:
    """Detect (unless given) and parse `data`; returns (source name, result)."""
    from forensics.sources._base import ParseContext

    ctx = ctx or ParseContext()
    name = source or detect(data[:SNIFF_BYTES])
    if name is None:
        raise ValueError(f"{ctx.file}: no source recognises this input")
    return name, parse_pasted(get(name), data, ctx, paste_prefix(name, data))


def parse_pasted(mod, data: bytes, ctx: ParseContext, prefix: bytes, levels: int = HOST_LEVELS,
                 plain: bool = False) -> ParseResult:
    """`mod.parse` of `data` read without the paste's `prefix` (see :func:`paste_prefix`; b"": as is),
    and decoded first where it is a mail body stored quoted-printable (:mod:`forensics.sources._mail_qp`).
    Line numbers are unchanged; unparsed lines keep their text as the file has it, and the result's
    meta says what was left out (:func:`paste_meta`) or decoded (``decoded``); a paste whose lines end in
    Markdown hard line breaks (a backslash) is read without them (meta ``hard_breaks``); lines that only
    mark an elision (``[...]``, ``<snip>``) are skipped and counted (:func:`forensics.sources._base.skip_elisions`).
    A paste with a node's name before every line is read per node (:func:`host_split`), `levels` names one inside
    the other at most (0: not read per node). `plain`: :func:`paste_plan` found `data`'s first SNIFF_BYTES read
    as they are (the caller checked that they are the head it asked about): the prefix, quoted-printable and
    hard-break checks are not run a second time."""
    from forensics.sources._base import count_lines, skip_elisions, split_lines

    read, prefix, qp, breaks = (data, b"", False, 0) if plain else _paste_read(data, prefix, joined=True)
    # every line behind the name of the node that printed it (pdsh, clush, talosctl): read per node
    res = host_split(mod, read, ctx, levels) if levels > 0 else None
    if res is None and not (prefix or qp or breaks):
        return skip_elisions(mod.parse(data, ctx))
    if res is None:
        res = mod.parse(read, ctx)
    if qp:  # lines joined by quoted-printable soft breaks: the file's line numbers back
        res = _unjoin(res, qp, count_lines(data))
    if breaks:
        res.meta["hard_breaks"] = breaks
    if res.unparsed.height:
        text = split_lines(data).get_column("text")
        idx = (res.unparsed.get_column("line_no") - 1).clip(0, max(text.len() - 1, 0))
        res.unparsed = res.unparsed.with_columns(text.gather(idx).alias("text"))
    res.meta.update(paste_meta(prefix))
    if qp:
        res.meta["decoded"] = "quoted-printable"
    return skip_elisions(res)


QP_JOINED = "quoted-printable soft break: the encoded line's text is read as part of the line before (RFC 2045)"


def _unjoin(res: ParseResult, starts: list[int], lines: int) -> ParseResult:
    """`res` of an input whose lines soft breaks joined (:func:`forensics.sources._mail_qp.decode_joined`)
    with the file's line numbers: `starts` is the file's line each line read starts on. Rows and unparsed
    lines keep the line their text starts on (the lines of the text one encoded line held, "=0A" between
    them, that line's) (a record's ``lines`` spans the encoded lines it took), facts
    in meta with a ``line_no`` likewise, and the encoded lines a join took are skipped and counted."""
    import polars as pl

    at = pl.Series(starts + [lines + 1], dtype=pl.Int64)  # (one past the last: a record's end)

    def remap(df: pl.DataFrame) -> pl.DataFrame:
        if "line_no" not in df.columns or not df.height:
            return df
        idx = (df.get_column("line_no") - 1).clip(0, len(at) - 2)
        out = {"line_no": at.gather(idx).cast(df.schema["line_no"])}
        if "lines" in df.columns:  # a record's first line and continuation lines
            end = at.gather((idx + df.get_column("lines").cast(pl.Int64).fill_null(1)).clip(0, len(at) - 1))
            out["lines"] = (end - out["line_no"]).clip(lower_bound=1).cast(df.schema["lines"])
        return df.with_columns(**out)

    res.tables = {t: remap(df) for t, df in res.tables.items()}
    # (lines of the text that one encoded line held, "=0A" between them: that line is unparsed once)
    res.unparsed = remap(res.unparsed).unique(subset="line_no", keep="first", maintain_order=True)
    for v in res.meta.values():  # facts with a line number: commands, shell_time, ...
        if isinstance(v, list):
            for item in v:
                if isinstance(item, dict) and isinstance(item.get("line_no"), int) and 1 <= item["line_no"] <= len(starts):
                    item["line_no"] = starts[item["line_no"] - 1]
    taken = lines - len(set(starts[:res.lines]))  # encoded lines that start no line of the text
    res.lines = lines
    if taken > 0:
        skipped = dict(res.meta.get("skipped") or {})
        skipped[QP_JOINED] = skipped.get(QP_JOINED, 0) + taken
        res.meta["skipped"] = skipped
    return res


def host_split(mod, data: bytes, ctx: ParseContext, levels: int) -> ParseResult | None:
    """`mod.parse` of a paste whose every line starts with the name of the node that printed it
    (:mod:`forensics.sources._hosts`): each node's lines read as one input of that host (``ctx.host`` the node's
    name, unless the user stated the host), in the paste's order, with the line numbers of the file (the caller,
    :func:`parse_pasted`, puts back the text the file has on the unparsed lines); meta ``host_prefix``: the nodes
    and how many lines carried a name. `levels`: how many node names one inside the other are read (a node's lines
    are read with `levels` - 1; 1: the outer names only).
    None where there is no such prefix, or `mod` reads the input no more surely without it."""
    import dataclasses

    import polars as pl

    from forensics.sources import _hosts

    head = data[:SNIFF_BYTES]
    # (the names before the lines themselves, not behind a quote: the caller took that off; the view is without the
    # inner names too, where a shell ran through another)
    _, grouped, quote, nodes = _hosts.nodes_view(head)
    if not nodes or quote:
        return None
    without, kept = _sniff_pasted(mod.NAME, grouped).confidence, _sniff_pasted(mod.NAME, head).confidence
    if without < kept or without <= 0:
        return None
    if without == kept and _reads_more(mod, head, grouped, ctx):
        return None  # (as sure either way, and read better with the names: the tool's own words; a sniffer that finds
        #             its lines anywhere in a line, as NCCL's, is as sure either way, and the names are read per node)
    parts, prefixed = _hosts.groups(data)
    stated = bool((ctx.hints or {}).get("host_stated") and ctx.host)
    tables: dict[str, list[pl.DataFrame]] = {}
    unparsed, meta, lines = [], {}, 0
    for node, text, numbers in parts:
        sub = ctx if (node is None or stated) else dataclasses.replace(ctx, host=node.decode("ascii"))
        # (the inner names of a shell run through another: read per inner node, once)
        res = parse_pasted(mod, text, sub, paste_prefix(mod.NAME, text[:SNIFF_BYTES]), levels - 1)
        back = pl.Series("line_no", numbers, dtype=pl.Int64)
        lines += res.lines

        def renumber(df: pl.DataFrame) -> pl.DataFrame:
            if not df.height or "line_no" not in df.columns:
                return df
            idx = (df.get_column("line_no") - 1).clip(0, len(numbers) - 1)
            return df.with_columns(back.gather(idx).alias("line_no"))

        for t, df in res.tables.items():
            tables.setdefault(t, []).append(renumber(df))
        if res.unparsed.height:
            unparsed.append(renumber(res.unparsed))
        inner = res.meta.pop("host_prefix", None)  # (a shell run through this one: its nodes printed the lines)
        if inner:
            meta.setdefault("_inner", []).extend(n for n in inner["nodes"] if n not in meta.get("_inner", []))
        for k, v in res.meta.items():  # (as forensics.ingest.files merges the meta of a file's chunks)
            if isinstance(v, list) and isinstance(meta.get(k), list):
                meta[k] = meta[k] + [x for x in v if x not in meta[k]]
            elif isinstance(v, dict) and isinstance(meta.get(k), dict) and all(
                    isinstance(n, int) for n in list(v.values()) + list(meta[k].values())):
                meta[k] = {w: meta[k].get(w, 0) + v.get(w, 0) for w in {**meta[k], **v}}
            else:
                meta.setdefault(k, v)
    out = {}
    for t, dfs in tables.items():  # (rows in the file's line order, each node's rows in their own order)
        df = dfs[0] if len(dfs) == 1 else pl.concat(dfs, how="vertical_relaxed")
        out[t] = df.sort("line_no", maintain_order=True) if len(dfs) > 1 and "line_no" in df.columns else df
    up = pl.concat(unparsed, how="vertical_relaxed").sort("line_no") if unparsed else None
    from forensics.sources._base import ParseResult, unparsed_rows

    meta["host_prefix"] = {"nodes": [n.decode("ascii") for n in nodes], "lines": prefixed}
    if meta.get("_inner"):  # the names inside: the rows' hosts
        meta["host_prefix"]["inner_nodes"] = meta.pop("_inner")
    return ParseResult(out, up if up is not None else unparsed_rows([], ctx, mod.NAME), lines, meta)


def _reads_more(mod, grouped: bytes, head: bytes, ctx: ParseContext) -> bool:
    """Whether `mod` leaves fewer lines unparsed of `grouped` than of `head` (the same lines, one way with the node
    names, the other per node without them): the tie-break where its sniffer is as sure of both."""
    def unread(text: bytes) -> int:
        text = text[:text.rfind(b"\n") + 1] if len(text) >= SNIFF_BYTES else text  # (whole lines of the head)
        try:
            return mod.parse(text, ctx).unparsed.height
        except Exception:  # noqa: BLE001 - a parser that fails on a head reads it no better
            return 1 << 30
    return unread(grouped) < unread(head)


def _paste_read(data: bytes, prefix: bytes, joined: bool = False) -> tuple[bytes, bytes, bool | list[int], int]:
    """`data` as the paste layer reads it: (text without the paste's `prefix`, decoded where it is a
    quoted-printable mail body, without Markdown hard line breaks; the prefix; whether it was decoded;
    how many hard breaks were taken off). `data` itself (not copied) where none applies. With `joined`,
    lines a soft break cut are read joined (:func:`forensics.sources._mail_qp.decode_joined`) and, where
    decoded, the third value is the line of `data` each line read starts on."""
    from forensics.sources import _mail_qp as mail_qp
    from forensics.sources._base import hard_breaks, strip_hard_breaks_bytes
    from forensics.sources._quote import split_prefix, strip_prefix

    # a soft break's next line carries the part of the prefix added after the encoding (a quote): taken off
    # before decoding, or the decoded line reads it inside ("16 =" / ">  17" -> "16 >  17"); a part the text had
    # before it was encoded (an indent) is on no soft break's next line: taken off decoded
    read, head, quote = data, data[:SNIFF_BYTES], split_prefix(prefix)[0]
    # (a quote's soft-broken lines are longer than an encoder writes them: weighed without it too)
    encoded = bool(prefix) and (mail_qp.looks_encoded(head) or bool(quote)
                                and mail_qp.looks_encoded(strip_prefix(head, quote)))
    first = _carried(head, prefix) if encoded else prefix
    later = prefix[len(first):]
    if first.rstrip() != first and encoded:
        # a quoted blank line whose quote's trailing space the encoding wrote out ("> " -> ">=20"): the bare quote
        bare = first.rstrip()
        read = re.sub(rb"(?m)^" + re.escape(bare) + rb"=(?:20|09)(\r?)$", lambda m: bare + m.group(1), data)
    read = strip_prefix(read, first) if first else read
    qp = mail_qp.looks_encoded(read[:SNIFF_BYTES])
    if qp and joined:
        read, qp = mail_qp.decode_joined(read)
    elif qp:
        read = mail_qp.decode(read)
    read = strip_prefix(read, later) if later else read
    breaks = hard_breaks(read[:SNIFF_BYTES])
    if not (prefix or qp or breaks):
        return data, prefix, False, 0
    if breaks:  # Markdown hard line breaks (" \\" ending most lines): read without them
        read, breaks = strip_hard_breaks_bytes(read)
    return read, prefix, qp, breaks


QP_WIDTH = 76  # RFC 2045 6.7 (5): an encoded line is at most 76 characters long, its soft break's "=" included


def _carried(head: bytes, prefix: bytes) -> bytes:
    """The part of `prefix` a quoted-printable `head`'s soft breaks' next lines carry (it was put before every line
    after the encoding: taken off before decoding), all of it where no line breaks softly. A quote level counts
    where 8 in 10 of those lines carry it; the blanks after the quote only where they do too and the lines that
    break softly are longer than `QP_WIDTH` with the quote alone taken off: an indent the text had before it was
    encoded is on a soft break's next line wherever the encoder's cut fell before blanks (columns of a table)."""
    from forensics.sources._quote import split_prefix

    lines = [ln.rstrip(b"\r") for ln in head.split(b"\n")]
    soft = [i for i in range(len(lines) - 1) if lines[i].endswith(b"=")]
    if not soft:
        return prefix
    after = [lines[i + 1] for i in soft]

    def carried(part: bytes) -> bool:
        return sum(line.startswith(part) for line in after) * 10 >= 8 * len(after)

    quote = split_prefix(prefix)[0]  # its levels, outermost first: "> > " -> "> ", "> > "
    levels = [quote[:m.end()] for m in re.finditer(rb"> ?", quote)]
    first = next((q for q in reversed(levels) if carried(q)), b"")
    if first == quote and prefix != quote and carried(prefix):
        if max(len(lines[i]) for i in soft) > QP_WIDTH + len(quote):
            return prefix
    return first


# a line a quoted-printable encoder ended, then such a line quoted (cheap first looks: each one linear scan)
_ENCODED_END = re.compile(rb"(?m)=(?:20|09|0A)?\r?$")
_QUOTED_ENCODED_END = re.compile(rb"(?m)^[ \t]*>[^\n]*=(?:20|09|0A)?\r?$")


def _quoted_after_encoding(head: bytes) -> bytes:
    """The quote prefix of a quoted-printable `head` that its soft breaks' next lines carry too (it was added after
    the encoding: taken off before decoding), or b"". (Its soft-broken lines are longer than an encoder writes
    them: the encoding is looked for without the quote too.)"""
    from forensics.sources import _mail_qp as mail_qp
    from forensics.sources._quote import block_parts, strip_prefix

    if b"=" not in head or not _ENCODED_END.search(head) or not _QUOTED_ENCODED_END.search(head):
        return b""
    quote = block_parts(head)[0]
    if not quote or not (mail_qp.looks_encoded(head) or mail_qp.looks_encoded(strip_prefix(head, quote))):
        return b""
    return quote if _carried(head, quote) == quote else b""


def paste_meta(prefix: bytes) -> dict:
    """What a parse result's meta says of the paste prefix its input was read without:
    ``{"quoted": "> "}``, ``{"indented": "  "}`` (``{"bulleted": " * "}`` for a list mark, ``{"commented": "% "}``
    for a comment mark), or both."""
    from forensics.sources._quote import is_bullet, is_comment, split_prefix

    quote, indent = split_prefix(prefix)
    out = {}
    if quote:
        out["quoted"] = quote.decode("ascii")
    if indent:
        kind = "commented" if is_comment(indent) else ("bulleted" if is_bullet(indent) else "indented")
        out[kind] = indent.decode("ascii")
    return out
