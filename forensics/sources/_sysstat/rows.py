"""Row collection: batches of tokens per section, converted to typed table frames at once."""
from __future__ import annotations

import contextlib
import datetime as dt
import gc
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import polars as pl

from forensics import schema
from forensics.sources._base import NULL_TOKENS, local_to_utc
from forensics.sources._sysstat.tokens import BadValue, value
from forensics.sources._sysstat.columns import TEXT_COLS


# ---------------------------------------------------------------- row collection (vectorised conversion)
# Python only sorts lines into batches (one per section layout: same header, same target table);
# numbers are converted, checked and unpivoted per batch with polars.

EXTRA = ("host", "_lus", "_xus", "_q", "_key", "sample_no", "since_boot")
_EXTRA_TYPES = {"host": pl.String, "_lus": pl.Int64, "_xus": pl.Int64, "_q": pl.String, "_key": pl.Int64,
                "sample_no": pl.Int64, "since_boot": pl.Boolean}
_NUM_RX = r"^[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)$"
_HUMAN_RX = r"^[0-9]+(?:[.,][0-9]+)?[kKMGTPE]B?$"
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


@contextlib.contextmanager
def no_gc():
    """Pause the cyclic garbage collector while a parser builds its many small lists and tuples.

    They hold no cycles; without this, repeated full collections over the growing batches cost
    more than the parsing itself (3x on a 60k-line iostat file).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def local_us(d: dt.datetime) -> int:
    """Microseconds since the epoch of a naive local datetime (read as if it were UTC)."""
    return (d - _EPOCH) // dt.timedelta(microseconds=1)


def exact_us(d: dt.datetime) -> int:
    return (d - _EPOCH_UTC) // dt.timedelta(microseconds=1)


@dataclass
class Batch:
    """Data lines of one layout: `hdr` names each token; `table` is the target ("sar_generic" for none).

    item_hdrs: headers whose text names the row (CPU/DEV/IFACE..., JSON string keys); for a typed
    table the first of them fills `item_col`. cmap maps the other headers to table columns.
    """

    table: str
    hdr: tuple[str, ...]
    cmap: dict | None
    item_hdrs: tuple[str, ...]
    item_col: str | None
    section: str
    line_no: list[int] = field(default_factory=list)
    toks: list[list[str]] = field(default_factory=list)
    extra: list[tuple] = field(default_factory=list)
    # rows given whole by a vectorised reader: line_no, EXTRA and one String column t<j> per header
    frame: pl.DataFrame | None = None
    clean: bool = False  # the tokens are whitespace-split words: none blank, none to strip

    def add(self, line_no: int, toks: list[str], extra: tuple) -> None:
        self.line_no.append(line_no)
        self.toks.append(toks)
        self.extra.append(extra)

    def rows(self) -> int:
        return self.frame.height if self.frame is not None else len(self.line_no)

    def to_frame(self) -> pl.DataFrame:
        """The rows added one by one, in the layout of `frame`."""
        cols = list(zip(*self.toks))
        ex = list(zip(*self.extra))
        data = [pl.Series("line_no", self.line_no, dtype=pl.Int64)]
        data += [pl.Series(name, ex[k], dtype=_EXTRA_TYPES[name]) for k, name in enumerate(EXTRA)]
        data += [pl.Series(f"t{j}", cols[j], dtype=pl.String) for j in range(len(self.hdr))]
        return pl.DataFrame(data)


class Collector:
    def __init__(self) -> None:
        self.batches: dict[tuple, Batch] = {}
        self.fixed: dict[str, list[dict[str, Any]]] = {}  # rows built whole (restart markers)

    def batch(self, key: tuple, make: Callable[[], Batch]) -> Batch:
        b = self.batches.get(key)
        if b is None:
            b = self.batches[key] = make()
        return b

    def add_fixed(self, table: str, row: dict[str, Any]) -> None:
        self.fixed.setdefault(table, []).append(row)

    def mark(self) -> tuple:
        return ({k: len(b.line_no) for k, b in self.batches.items()}, {t: len(r) for t, r in self.fixed.items()})

    def rollback(self, mark: tuple) -> None:
        """Drop what was added since `mark` (a line failing half-way must not be both used and unparsed)."""
        nb, nf = mark
        for k, b in self.batches.items():
            n = nb.get(k, 0)
            del b.line_no[n:], b.toks[n:], b.extra[n:]
        for t, rows in self.fixed.items():
            del rows[nf.get(t, 0):]

    def unmapped(self) -> set[str]:
        """Headers of typed batches that no table column holds (they go to sar_generic when there is one)."""
        return {h for b in self.batches.values() if b.cmap is not None and b.rows()
                for h in b.hdr if h not in b.cmap and h not in b.item_hdrs}

    def frames(self, tables: tuple[str, ...], tz: str | None, rank_samples: bool
               ) -> tuple[dict[str, pl.DataFrame], list[tuple[int, str]]]:
        """Tables (conformable to their schemas) and (line_no, reason) of rows whose values do not convert."""
        parts: dict[str, list[pl.DataFrame]] = {t: [] for t in tables}
        bad: list[tuple[int, str]] = []
        for b in self.batches.values():
            if not b.rows():
                continue
            typed, generic, rejected = _convert(b)
            bad.extend(rejected)
            if typed is not None and typed.height:
                parts[b.table].append(typed)
            if generic is not None and generic.height and "sar_generic" in parts:
                parts["sar_generic"].append(generic)
        for t, rows in self.fixed.items():
            if rows and t in parts:
                types = {**schema.polars_schema(t), **_EXTRA_TYPES}
                parts[t].append(pl.DataFrame(rows, schema={c: types[c] for c in rows[0]}))
        frames = {t: pl.concat(p, how="diagonal_relaxed") if p else None for t, p in parts.items()}
        if bad:  # a line with one bad value is unparsed as a whole: none of its rows stay
            lines = pl.Series([ln for ln, _ in bad], dtype=pl.Int64)
            frames = {t: None if f is None else f.filter(~pl.col("line_no").is_in(lines.implode())) for t, f in frames.items()}
        if rank_samples:
            keys = [f["_key"] for f in frames.values() if f is not None and "_key" in f.columns]
            if keys:
                uniq = pl.concat(keys).drop_nulls().unique().sort()
                rank = pl.DataFrame({"_key": uniq, "sample_no": pl.int_range(0, uniq.len(), eager=True, dtype=pl.Int64)})
                for t, f in frames.items():
                    if f is not None:
                        frames[t] = f.drop("sample_no", strict=False).join(rank, on="_key", how="left")
        out = {}
        for t in tables:
            f = frames[t]
            out[t] = empty(t) if f is None else _finish_frame(t, f, tz)
        return out, bad


_EMPTY: dict[str, pl.DataFrame] = {}


def empty(table: str) -> pl.DataFrame:
    """schema.empty(table), built once (a fresh frame costs a Series per column on every file)."""
    df = _EMPTY.get(table)
    if df is None:
        df = _EMPTY[table] = schema.empty(table)
    return df.clone()


def _finish_frame(table: str, df: pl.DataFrame, tz: str | None) -> pl.DataFrame:
    sch = schema.polars_schema(table)
    for c in ("_lus", "_xus", "_q"):
        if c not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=_EXTRA_TYPES[c]).alias(c))
    exact = pl.from_epoch(pl.col("_xus"), time_unit="us").dt.replace_time_zone("UTC")
    local = local_to_utc(pl.from_epoch(pl.col("_lus"), time_unit="us"), tz)
    df = df.with_columns(pl.coalesce(exact, local).alias("ts")).with_columns(
        pl.when(pl.col("ts").is_null()).then(pl.lit("none")).otherwise(pl.col("_q")).alias("ts_quality"))
    ints = [c for c, t in sch.items() if t == pl.Int64 and c in df.columns and df.schema[c] == pl.Float64]
    if ints:
        df = df.with_columns(pl.col(c).round(0) for c in ints)
    keep = [c for c in df.columns if c in sch]
    return df.select(keep).sort("line_no", maintain_order=True)


def _reason(hdr: tuple[str, ...], toks: list[str], idx: list[int]) -> str:
    """Why a row was rejected (computed in Python for the few bad rows only)."""
    for j in idx:
        try:
            v = value(toks[j])
            if v is not None and (v != v or v in (float("inf"), float("-inf"))):
                raise BadValue(f"not a number: {toks[j][:40]!r}")
        except BadValue as e:
            return f"{e} in column {hdr[j]}"
    return "value out of range"


# sysstat's --human units (common.c: units[] = "sBkMGTP", cprintf_unit divides by 1024 per step up from the
# column's unit): in a kB column "1.2M" is 1.2 * 1024 kB; "B" is bytes. "%" ends the values of % columns.
_HUMAN_UNIT = {"B": 1 / 1024, "k": 1.0, "M": 1024.0, "G": 1024.0 ** 2, "T": 1024.0 ** 3, "P": 1024.0 ** 4, "%": 1.0}
_HUMAN_VALUE = r"^([0-9]+(?:[.,][0-9]+)?)([BkMGTP%])$"


def _human(flat: pl.Series, num: pl.Series, hdrs: list[str], n: int) -> pl.Series:
    """`num` with the --human values of kB columns (header with "kB", starting "kb", or the request sizes
    areq-sz/rareq-sz/wareq-sz/dareq-sz that sysstat's manual gives in kilobytes) converted to kB and
    the "%"-suffixed values of % columns to their number; other suffixed values stay null (reported)."""
    kb = np.repeat(np.array([("kB" in h or h.startswith("kb") or h.endswith("req-sz")) for h in hdrs]), n)
    pc = np.repeat(np.array([h.startswith("%") for h in hdrs]), n)
    g = flat.str.extract_groups(_HUMAN_VALUE)
    unit = g.struct.field("2")
    val = g.struct.field("1").str.replace(",", ".", literal=True).cast(pl.Float64, strict=False)
    fits = pl.Series(np.where(unit.eq("%").fill_null(False).to_numpy(), pc, kb))
    conv = (val * unit.replace_strict(_HUMAN_UNIT, default=None, return_dtype=pl.Float64)).zip_with(
        fits, pl.Series([None], dtype=pl.Float64).new_from_index(0, len(flat)))
    return num.fill_null(conv) if num.null_count() else num


def _beyond_int64(b: Batch, num: pl.Series, val_idx: list[int], n: int) -> pl.Series | None:
    """Per row, the first header whose value goes to an Int64 column of the table and does not fit it
    (a counter of more digits than 2^63, e.g. 1e20 kB; the cast in schema.conform would raise); null
    where all fit; None when none is out of range (the usual case: one vectorised test per column)."""
    ints = {c for c, t in schema.polars_schema(b.table).items() if t == pl.Int64}
    out = None
    for k, j in enumerate(val_idx):
        m = b.cmap.get(b.hdr[j])
        if m is None or m[0] not in ints:
            continue
        v = num.slice(k * n, n)
        over = ((v * m[1]).abs().round(0) >= 2.0 ** 63).fill_null(False)
        if over.any():
            hdr = pl.Series([b.hdr[j]], dtype=pl.String).new_from_index(0, n)
            mine = hdr.zip_with(over, pl.Series([None], dtype=pl.String).new_from_index(0, n))
            out = mine if out is None else out.fill_null(mine)
    return out


def _convert(b: Batch) -> tuple[pl.DataFrame | None, pl.DataFrame | None, list[tuple[int, str]]]:
    """Typed rows, generic long rows and rejected (line_no, reason) of one batch.

    All value tokens of the batch are converted in one pass (column-major, so the generic long form
    is the converted series itself): a handful of polars operations per batch, whatever its width.
    """
    f = b.frame if b.frame is not None else b.to_frame()
    n = f.height
    item_idx = [j for j, h in enumerate(b.hdr) if h in b.item_hdrs]
    text_idx = [j for j, h in enumerate(b.hdr) if h in TEXT_COLS and j not in item_idx]
    tok = [f.get_column(f"t{j}") for j in range(len(b.hdr))]
    # a column no table maps whose every value is a word (no number, no N/A token): a label put beside sysstat's
    # columns ("zone", "name"): text, kept as sar_generic rows (metric its header, item its word, value null)
    labels = [j for j, h in enumerate(b.hdr) if j not in item_idx and j not in text_idx
              and (b.cmap is None or h not in b.cmap) and _words(tok[j])]
    text_idx += labels
    val_idx = [j for j in range(len(b.hdr)) if j not in item_idx and j not in text_idx]
    flat = (pl.concat([tok[j] for j in val_idx], rechunk=True) if val_idx else pl.Series([], dtype=pl.String)
            ).rename("v")
    if not b.clean:  # whitespace-split words need no stripping
        flat = flat.str.strip_chars()
    if not b.clean:
        num = flat.str.replace(",", ".", literal=True).cast(pl.Float64, strict=False)
    else:  # a word with a decimal comma does not cast (null): only then are the commas looked for
        num = flat.cast(pl.Float64, strict=False)
        if num.null_count() and flat.str.contains(",", literal=True).any():
            num = flat.str.replace(",", ".", literal=True).cast(pl.Float64, strict=False)
    bad_rows = np.zeros(n, dtype=bool)
    notnum = ~num.is_finite().fill_null(False)  # null, NaN or infinite: bad unless a N/A token
    if len(val_idx) and notnum.any():  # --human / -h values of kB and % columns
        num = _human(flat, num, [b.hdr[j] for j in val_idx], n)
        notnum = ~num.is_finite().fill_null(False)
    if len(val_idx) and notnum.any():
        badv = (notnum & ~flat.is_in(list(NULL_TOKENS))).fill_null(True)
        if badv.any():
            bad_rows |= badv.to_numpy().reshape(len(val_idx), n).any(axis=0)
    wide = _beyond_int64(b, num, val_idx, n) if b.cmap is not None and len(val_idx) else None
    if wide is not None:
        bad_rows |= wide.is_not_null().to_numpy()
    item_s = tok[item_idx[0]] if item_idx else None
    if b.item_col and item_s is not None and not b.clean:
        bad_rows |= np.array([not str(v).strip() for v in item_s.to_list()], dtype=bool)
    bad = []
    for k in np.flatnonzero(bad_rows).tolist():
        ln = f["line_no"][k]
        toks = [t[k] for t in tok]
        if wide is not None and wide[k] is not None:
            bad.append((ln, f"value beyond a 64-bit integer in column {wide[k]}"))
            continue
        bad.append((ln, _reason(b.hdr, toks, val_idx) if val_idx else f"no {b.hdr[item_idx[0]]} value"))
    keep = pl.Series(~bad_rows) if bad else None
    base = f.select("line_no", *EXTRA)
    col_of = {j: num.slice(k * n, n) for k, j in enumerate(val_idx)}
    typed = None
    rest_idx = val_idx
    if b.cmap is not None:
        targets: dict[str, pl.Series] = {}
        rest_idx = []
        for j in val_idx:
            m = b.cmap.get(b.hdr[j])
            if m is None:
                rest_idx.append(j)
                continue
            v = col_of[j] if m[1] == 1 else col_of[j] * m[1]
            targets[m[0]] = v if m[0] not in targets else targets[m[0]].fill_null(v)
        data = [*base.get_columns(), *(v.alias(c) for c, v in targets.items())]
        if b.item_col:
            if item_s is None:
                item = pl.Series(b.item_col, ["all"], dtype=pl.String).new_from_index(0, n)
            elif b.table == "cpu_util":
                item = item_s.replace("-1", "all")
            else:
                item = item_s
            data.append(item.alias(b.item_col))
        typed = pl.DataFrame(data)
        if keep is not None:
            typed = typed.filter(keep)
    generic = None
    if rest_idx:
        k = len(rest_idx)
        parts = [pl.lit(tok[j]) for j in item_idx] + [pl.lit(f"{b.hdr[j]}=") + pl.lit(tok[j]) for j in text_idx]
        if parts:
            items = pl.select(pl.concat_str(parts, separator=" ")).to_series()
        else:
            items = pl.Series([None], dtype=pl.String).new_from_index(0, n)
        values = pl.concat([col_of[j] for j in rest_idx]) if rest_idx != val_idx else num
        rep = pl.concat([base] * k) if k > 1 else base
        metric = pl.Series("metric", [b.hdr[j] for j in rest_idx], dtype=pl.String).gather(np.repeat(np.arange(k), n))
        generic = rep.with_columns(
            (pl.concat([items] * k) if k > 1 else items).alias("item").cast(pl.String),
            metric, values.alias("value"),
            pl.lit(b.section, dtype=pl.String).alias("section"))
        if keep is not None:
            generic = generic.filter(pl.Series(np.tile(~bad_rows, k)))
    if labels:
        own = pl.concat([base.with_columns(
            (pl.concat_str([tok[i] for i in item_idx] + [tok[j]], separator=" ") if item_idx else tok[j])
            .alias("item").cast(pl.String), pl.lit(b.hdr[j], dtype=pl.String).alias("metric"),
            pl.lit(None, dtype=pl.Float64).alias("value"), pl.lit(b.section, dtype=pl.String).alias("section"))
            for j in labels])
        if keep is not None:
            own = own.filter(pl.Series(np.tile(~bad_rows, len(labels))))
        generic = own if generic is None else pl.concat([generic, own.select(generic.columns)], how="vertical_relaxed")
    return typed, generic, bad


_WORD = r"^[A-Za-z_][A-Za-z0-9_.:/-]*$"
_FLOAT_WORDS = ["nan", "inf", "infinity", "-nan"]  # words a float prints: bad values of a number column, no label


def _words(col: pl.Series) -> bool:
    """Whether every value of a token column is a word (starts with a letter; no number, no N/A token)."""
    if not col.len() or not (str(col[0] or "").strip()[:1].isalpha()):  # (a number column: one look, no scan)
        return False
    s = col.str.strip_chars()
    return (bool(col.len()) and bool(s.str.contains(_WORD).all()) and not bool(s.is_in(list(NULL_TOKENS)).any())
            and not bool(s.str.to_lowercase().is_in(_FLOAT_WORDS).any()))
