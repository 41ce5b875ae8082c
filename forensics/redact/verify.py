"""The leak check: does any original value still appear anywhere in a (redacted) bundle tree?

Every member is read (compressed members decompressed, Parquet tables read column by column: the
distinct values of every string and list-of-string column) and so is every member *name*; each is
matched against all original values that were replaced, with the same boundaries the replacer
uses. A value that is an original and also, by chance, the pseudonym of another value (two
addresses of one private range can swap places under a permutation) is left out: its presence is
the pseudonym, not a leak.

A vectorised Aho-Corasick pass (polars ``contains_any``, linear in the bytes read however many the
originals are) over every text picks the few that hold some original's ASCII part, in any case, and
only those meet the regexes, built from the originals found there (:class:`Rules`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from forensics.redact import patterns as P
from forensics.redact.codec import line_blocks, member_kind, reader


@dataclass
class Leak:
    file: str
    kind: str
    text: str

    def __str__(self) -> str:
        return f"{self.file}: {self.kind} {self.text[:120]!r}"


def _alt(values) -> str:
    return P.rust_literal_alt(values)[len("(?i:"):-1]


REGEX_VALUES = 1000  # values per regex: an alternation of ~8,000 took 500 times as long per byte as one of 6,000


def checks(originals: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(kind, Rust regex) pairs: per kind of boundary, one per REGEX_VALUES of its values."""
    n = P.NAME_CH
    shapes = {
        "name": (rf"(?i)(?:^|[^{n}])(?:{{}})(?:$|[^{n}])", True),
        "domain": (rf"(?i)\.(?:{{}})(?:$|[^{n}])", True),
        "ipv4": (r"(?:^|[^0-9.])(?:{})(?:$|[^0-9.]|\.(?:$|[^0-9]))", False),
        "hex": (r"(?i)(?:^|[^0-9A-Fa-f:])(?:{})(?:$|[^0-9A-Fa-f:])", True),
        "serial": (r"(?:^|[^A-Za-z0-9])(?:{})(?:$|[^A-Za-z0-9])", False),
        "user": (r"(?:(?:[/~]|[Uu][Ss][Ee][Rr]=)(?:{})(?:$|[^A-Za-z0-9_.-])|(?:^|[^A-Za-z0-9_.-])(?:{})@)", False),
    }
    out = []
    for kind, values in originals.items():
        shape, _ = shapes[kind]
        values = sorted(values)
        for k in range(0, len(values), REGEX_VALUES):
            some = values[k:k + REGEX_VALUES]
            body = _alt(some) if kind in ("name", "domain", "hex") else "|".join(
                P._rust_escape(v) for v in sorted(some, key=lambda s: (-len(s), s)))
            out.append((kind, shape.replace("{}", body)))
    return out


# The characters outside ASCII that a case-insensitive Rust regex matches to an ASCII letter (KELVIN
# SIGN for k, LONG S for s): every code point tried (tests/test_redact_verify.py).
ASCII_FOLDS = "\u017f\u212a"


def ascii_part(value: str) -> str:
    """The longest run of ASCII characters of `value`: any text that a case-insensitive (Unicode) regex
    of `value` matches holds it, in some ASCII case or with an ASCII_FOLDS character in it."""
    runs = "".join(c if c.isascii() else "\n" for c in value).split("\n")
    return max(runs, key=len)


class Rules:
    """The leak check for a set of originals: the regexes of each kind (:func:`checks`), run only on the
    texts that hold a value's ASCII part (:func:`ascii_part`, any ASCII case), which Aho-Corasick
    finds in one pass however many the values are; the regexes then hold only the values found.

    So the regexes are the same as before but small, run on a few texts, and never hold more than
    REGEX_VALUES values: one alternation of 8,000 values took 70 CPU s for 7 MB of lines, of 6,000
    0.55 s (benchmarks/leak_check_scale.py, leak_check_worst.py)."""

    def __init__(self, originals: dict[str, set[str]]):
        self.originals = {k: set(v) for k, v in originals.items() if v}
        self.regex = checks(self.originals)
        self.kinds = list(dict.fromkeys(kind for kind, _ in self.regex))
        self.by_part: dict[str, list[tuple[str, str]]] = {}
        self.bare = False  # a value with no ASCII character: any text with a non-ASCII one is checked
        for kind, values in self.originals.items():
            for v in values:
                part = ascii_part(v).lower()
                if part:
                    self.by_part.setdefault(part, []).append((kind, v))
                else:
                    self.bare = True
        self.parts = sorted(self.by_part) + list(ASCII_FOLDS)
        self.longest = max((len(v) for vs in self.originals.values() for v in vs), default=0)
        self._narrow: dict[frozenset, list[tuple[str, str]]] = {}

    def __len__(self) -> int:
        return len(self.regex)

    def candidates(self, ser: pl.Series) -> tuple[pl.Series, list[tuple[str, str]]]:
        """Which texts of `ser` may hold an original (a boolean mask), and the regexes of the
        originals they may hold."""
        hit = ser.str.contains_any(self.parts, ascii_case_insensitive=True)
        if self.bare:
            hit = hit | (ser.str.len_bytes() != ser.str.len_chars())
        hit = hit.fill_null(False)
        if not hit.any():
            return hit, []
        if self.bare:
            return hit, self.regex
        got = ser.filter(hit).str.extract_many(self.parts, ascii_case_insensitive=True, overlapping=True)
        got = got.explode().drop_nulls()
        if got.is_in(list(ASCII_FOLDS)).any():
            return hit, self.regex
        key = frozenset(got.str.to_lowercase().unique().to_list())
        if key not in self._narrow:
            if len(self._narrow) > 64:
                self._narrow.clear()
            some: dict[str, set[str]] = {}
            for part in key:
                for kind, v in self.by_part.get(part, ()):
                    some.setdefault(kind, set()).add(v)
            self._narrow[key] = checks(some)
        return hit, self._narrow[key]


def _scan(ser: pl.Series, rules: Rules, where: str, leaks: list[Leak]) -> None:
    batch = _Batch(rules)
    batch.add(0, ser)
    batch.flush()
    leaks.extend(batch.leaks([where]))


FLUSH_BYTES = 64 << 20  # texts of many members are checked together, up to this much at a time


class _Batch:
    """Texts of many members (member i's texts under the number i), checked together: one Aho-Corasick
    pass and one regex per kind for thousands of small tables instead of one per table."""

    def __init__(self, rules: Rules):
        self.rules = rules
        self.parts: list[pl.DataFrame] = []
        self.size = 0
        self.found: dict[tuple[int, str], str] = {}  # (member number, kind) -> first text found

    def add(self, i: int, ser: pl.Series) -> None:
        if ser.len():
            self.parts.append(pl.DataFrame({"t": ser.cast(pl.String)}).with_columns(i=pl.lit(i, pl.UInt32)))
            self.size += ser.estimated_size()
            if self.size >= FLUSH_BYTES:
                self.flush()

    def flush(self) -> None:
        if not self.parts:
            return
        df = pl.concat(self.parts).with_row_index("r")
        self.parts, self.size = [], 0
        hit, regex = self.rules.candidates(df["t"])
        df = df.filter(hit)
        now: dict[tuple[int, str], tuple[int, str]] = {}  # (member, kind) -> (row, text): the first of a kind's regexes
        for kind, rx in regex:
            first = df.filter(df["t"].str.contains(rx).fill_null(False)).group_by("i", maintain_order=True).first()
            for i, r, text in zip(first["i"].to_list(), first["r"].to_list(), first["t"].str.extract(rx, 0).to_list()):
                if (i, kind) not in now or r < now[(i, kind)][0]:
                    now[(i, kind)] = (r, text)
        for ik, (_, text) in now.items():
            self.found.setdefault(ik, text)

    def leaks(self, where: list[str]) -> list[Leak]:
        order = {kind: k for k, kind in enumerate(self.rules.kinds)}
        return [Leak(where[i], kind, self.found[(i, kind)])
                for i, kind in sorted(self.found, key=lambda ik: (ik[0], order[ik[1]]))]


OVERLAP_CHARS = 4096  # at least this much of a line cut in pieces is scanned again across the cut


def _text_lines(src, overlap: int):
    """The lines of `src` (a path or a binary stream), a Series a block at a time (never the member
    whole); a line cut in pieces repeats the last `overlap` characters before each cut."""
    tail = ""
    for piece in line_blocks(src):
        text = tail + piece.decode("latin-1")
        tail = "" if piece.endswith(b"\n") else text[-overlap:]
        yield pl.Series([text], dtype=pl.String).str.split("\n").explode()


def _member_texts(path: Path, overlap: int):
    """The texts of a raw member (a compressed one decompressed as it is read)."""
    kind = member_kind(path)
    if kind is not None:
        try:
            with reader(path, kind) as fh:
                yield from _text_lines(fh, overlap)
            return
        except Exception:  # noqa: BLE001 - not really compressed (or damaged): scanned as it is
            pass
    yield from _text_lines(path, overlap)


PARQUET_BATCH_ROWS = 1 << 16  # rows of a table scanned at a time (1 << 18 took twice the memory)


def _strings(df: pl.DataFrame) -> pl.Series:
    """The distinct values of every string (or categorical, or list of those) column of `df`."""
    texts = (pl.String, pl.Categorical, pl.Enum)
    parts = []
    for name, dtype in df.schema.items():
        col = df[name]
        if isinstance(dtype, pl.List) and isinstance(dtype.inner, texts):
            col = col.explode()
        elif not isinstance(dtype, texts):
            continue
        parts.append(col.cast(pl.String).drop_nulls().unique())
    if not parts:
        return pl.Series([], dtype=pl.String)
    return pl.concat(parts).unique()


def parquet_strings(path: Path, batch_rows: int = PARQUET_BATCH_ROWS):
    """The distinct string values of a Parquet file, one Series per batch of `batch_rows` rows
    (every string, categorical or list-of-string column)."""
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    cols = [field.name for field in f.schema_arrow if _texty(field.type)]
    if not cols:
        return
    for batch in f.iter_batches(batch_size=batch_rows, columns=cols):
        yield _strings(pl.from_arrow(batch))


def _texty(t) -> bool:
    """An Arrow type that holds text: strings, dictionaries of them, lists of them."""
    import pyarrow as pa

    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return True
    if pa.types.is_dictionary(t):
        return _texty(t.value_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _texty(t.value_type)
    return False


def _parquet_texts(path: Path, overlap: int):
    try:
        yield from parquet_strings(path)
    except Exception:  # noqa: BLE001 - not a readable Parquet file: scan its bytes
        yield from _text_lines(path, overlap)


def parquet_metadata(path: Path) -> list[str]:
    try:
        import pyarrow.parquet as pq

        md = pq.read_metadata(path)
    except Exception:  # noqa: BLE001 - not a Parquet file: its bytes were scanned as text
        return []
    out = list(md.schema.names)
    for k, v in (md.metadata or {}).items():
        out += [k.decode("latin-1"), v.decode("latin-1")]
    return out


def _files(root: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            out.append((Path(dirpath) / fn).relative_to(root).as_posix())
    return out


def scan_files(root: Path, rels: list[str], originals: dict[str, set[str]], limit: int = 20) -> list[Leak]:
    """Leaks in the members `rels` of the tree `root` (contents only)."""
    rules = Rules(originals)
    if not len(rules):
        return []
    overlap = max(OVERLAP_CHARS, rules.longest + 8)  # a value and what bounds it ("user=" before, one after)
    batch = _Batch(rules)
    where: list[str] = []
    for rel in rels:
        p = root / rel
        if rel.endswith(".parquet"):
            where.append(rel + " (metadata)")
            batch.add(len(where) - 1, pl.Series(parquet_metadata(p), dtype=pl.String))
            texts = _parquet_texts(p, overlap)
        else:
            texts = _member_texts(p, overlap)
        where.append(rel)
        for ser in texts:
            batch.add(len(where) - 1, ser)
        if len(batch.found) >= limit:
            break
    batch.flush()
    return batch.leaks(where)[:limit]


def find_leaks(root: Path | str, originals: dict[str, set[str]], limit: int = 20, runner=None) -> list[Leak]:
    """Up to `limit` places in the tree `root` where an original value still appears (member names
    included); `runner` (a :class:`forensics.redact.jobs.Runner`) spreads the work over processes."""
    root = Path(root)
    rels = _files(root)
    leaks = runner.scan(root, rels, originals) if runner is not None else scan_files(root, rels, originals, limit)
    names: list[Leak] = []
    _scan(pl.Series(rels, dtype=pl.String), Rules(originals), "(member names)", names)
    return (leaks + names)[:limit]
