"""The leak check: does any original value still appear anywhere in a (redacted) bundle tree?

Every member is read (compressed members decompressed, Parquet tables read column by column: the
distinct values of every string and list-of-string column) and so is every member *name*; each is
matched against all original values that were replaced, with the same boundaries the replacer
uses. A value that is an original and also, by chance, the pseudonym of another value (two
addresses of one private range can swap places under a permutation) is left out: its presence is
the pseudonym, not a leak.
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


def checks(originals: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(kind, Rust regex) pairs: one per kind of boundary, for the non-empty value sets."""
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
        if not values:
            continue
        shape, _ = shapes[kind]
        body = _alt(values) if kind in ("name", "domain", "hex") else "|".join(
            P._rust_escape(v) for v in sorted(values, key=lambda s: (-len(s), s)))
        out.append((kind, shape.replace("{}", body)))
    return out


def _scan(ser: pl.Series, rules: list[tuple[str, str]], where: str, leaks: list[Leak]) -> None:
    found: dict[str, str] = {}
    _first_hits(ser, rules, found)
    leaks.extend(Leak(where, kind, found[kind]) for kind, _ in rules if kind in found)


def _first_hits(ser: pl.Series, rules: list[tuple[str, str]], found: dict[str, str]) -> None:
    """Into `found`: kind -> the first text of `ser` matching that kind's rule, for kinds not yet found."""
    todo = [(kind, rx) for kind, rx in rules if kind not in found]
    if not todo or ser.len() == 0 or not ser.str.contains(_any(rules)).fill_null(False).any():
        return
    for kind, rx in todo:
        hit = ser.str.contains(rx).fill_null(False)
        if hit.any():
            found[kind] = ser.filter(hit).str.extract(rx, 0)[0]


_ANY: dict[int, str] = {}


def _any(rules: list[tuple[str, str]]) -> str:
    key = id(rules)
    if key not in _ANY:
        _ANY.clear()
        _ANY[key] = "|".join(f"(?:{rx})" for _, rx in rules)
    return _ANY[key]


OVERLAP_CHARS = 4096  # longer than any original value: a line cut in pieces is scanned across the cut


def _text_hits(src, rules: list[tuple[str, str]], found: dict[str, str]) -> None:
    """The lines of `src` (a path or a binary stream), a block at a time (never the member whole)."""
    tail = ""
    for piece in line_blocks(src):
        text = tail + piece.decode("latin-1")
        tail = "" if piece.endswith(b"\n") else text[-OVERLAP_CHARS:]
        _first_hits(pl.Series([text], dtype=pl.String).str.split("\n").explode(), rules, found)
        if len(found) == len(rules):
            return


def _member_hits(path: Path, rules: list[tuple[str, str]]) -> dict[str, str]:
    """kind -> first leak in a raw member (a compressed one decompressed as it is read)."""
    found: dict[str, str] = {}
    kind = member_kind(path)
    if kind is not None:
        try:
            with reader(path, kind) as fh:
                _text_hits(fh, rules, found)
            return found
        except Exception:  # noqa: BLE001 - not really compressed (or damaged): scanned as it is
            pass
    _text_hits(path, rules, found)
    return found


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


def _parquet_hits(path: Path, rules: list[tuple[str, str]]) -> dict[str, str]:
    found: dict[str, str] = {}
    try:
        for ser in parquet_strings(path):
            _first_hits(ser, rules, found)
            if len(found) == len(rules):
                break
    except Exception:  # noqa: BLE001 - not a readable Parquet file: scan its bytes
        _text_hits(path, rules, found)
    return found


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
    rules = checks(originals)
    leaks: list[Leak] = []
    if not rules:
        return leaks
    for rel in rels:
        p = root / rel
        if rel.endswith(".parquet"):
            _scan(pl.Series(parquet_metadata(p), dtype=pl.String), rules, rel + " (metadata)", leaks)
            found = _parquet_hits(p, rules)
        else:
            found = _member_hits(p, rules)
        leaks.extend(Leak(rel, kind, found[kind]) for kind, _ in rules if kind in found)
        if len(leaks) >= limit:
            break
    return leaks


def find_leaks(root: Path | str, originals: dict[str, set[str]], limit: int = 20, runner=None) -> list[Leak]:
    """Up to `limit` places in the tree `root` where an original value still appears (member names
    included); `runner` (a :class:`forensics.redact.jobs.Runner`) spreads the work over processes."""
    root = Path(root)
    rels = _files(root)
    leaks = runner.scan(root, rels, originals) if runner is not None else scan_files(root, rels, originals, limit)
    names: list[Leak] = []
    _scan(pl.Series(rels, dtype=pl.String), checks(originals), "(member names)", names)
    return (leaks + names)[:limit]
