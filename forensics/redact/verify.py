"""The leak check: does any original value still appear anywhere in a (redacted) bundle tree?

Every member is read (compressed members decompressed, Parquet tables read column by column: the
distinct values of every string and list-of-string column) and so is every member *name*; each is
matched against all original values that were replaced, with the same boundaries the replacer
uses. A value that is an original and also, by chance, the pseudonym of another value (two
addresses of one private range can swap places under a permutation) is left out: its presence is
the pseudonym, not a leak.
"""
from __future__ import annotations

import bz2
import gzip
import lzma
import os
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from forensics.redact import patterns as P


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
    if ser.len() == 0 or not ser.str.contains(_any(rules)).fill_null(False).any():
        return
    for kind, rx in rules:
        hit = ser.str.contains(rx).fill_null(False)
        if hit.any():
            leaks.append(Leak(where, kind, ser.filter(hit).str.extract(rx, 0)[0]))


_ANY: dict[int, str] = {}


def _any(rules: list[tuple[str, str]]) -> str:
    key = id(rules)
    if key not in _ANY:
        _ANY.clear()
        _ANY[key] = "|".join(f"(?:{rx})" for _, rx in rules)
    return _ANY[key]


def _decompressed(data: bytes) -> bytes:
    try:
        if data[:2] == b"\x1f\x8b":
            return gzip.decompress(data)
        if data[:4] == b"\x28\xb5\x2f\xfd":
            import zstandard

            return zstandard.ZstdDecompressor().decompressobj().decompress(data)
        if data[:6] == b"\xfd7zXZ\x00":
            return lzma.decompress(data)
        if data[:3] == b"BZh":
            return bz2.decompress(data)
    except Exception:  # noqa: BLE001 - not really compressed: scanned as it is
        return data
    return data


def parquet_strings(path: Path) -> pl.Series:
    """The distinct values of every string (or list of strings) column of a Parquet file."""
    df = pl.read_parquet(path, hive_partitioning=False)
    parts = []
    for name, dtype in df.schema.items():
        col = df[name]
        if dtype == pl.String:
            parts.append(col.drop_nulls().unique())
        elif isinstance(dtype, pl.List) and dtype.inner == pl.String:
            parts.append(col.explode().drop_nulls().unique())
    if not parts:
        return pl.Series([], dtype=pl.String)
    return pl.concat(parts).unique()


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
            try:
                ser = parquet_strings(p)
            except Exception:  # noqa: BLE001 - not a readable Parquet file: scan its bytes
                ser = pl.Series(p.read_bytes().decode("latin-1").split("\n"), dtype=pl.String)
            _scan(pl.Series(parquet_metadata(p), dtype=pl.String), rules, rel + " (metadata)", leaks)
        else:
            ser = pl.Series(_decompressed(p.read_bytes()).decode("latin-1").split("\n"), dtype=pl.String)
        _scan(ser, rules, rel, leaks)
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
