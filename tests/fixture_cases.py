"""Discovery of real fixtures: tests/fixtures/<source>/<source>--<case>.<ext> (+ .expected.json)."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def cases(source: str | None = None) -> list[tuple[str, Path]]:
    out = []
    for d in sorted(FIXTURES.iterdir()) if FIXTURES.is_dir() else []:
        if not d.is_dir() or (source and d.name != source):
            continue
        for f in sorted(d.iterdir()):
            if f.name.startswith(d.name + "--") and not f.name.endswith((".expected.json", ".ctx.json")) and f.is_file():
                out.append((d.name, f))
    return out


def expected_path(fixture: Path) -> Path:
    return fixture.with_name(fixture.name + ".expected.json")


def jsonable(v):
    if isinstance(v, (dt.datetime, dt.date)):
        return v.isoformat()
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    if isinstance(v, float) and v != v:
        return "NaN"
    return v


def table_digest(df) -> str:
    """sha256 of a table's whole content: its column names, then every row as canonical JSON (keys
    sorted, times ISO, NaN as "NaN"), the rows sorted (so a parser's row order, which may follow a
    set's, does not matter; every value does)."""
    rows = sorted(json.dumps({k: jsonable(v) for k, v in r.items()}, sort_keys=True, default=str)
                  for r in df.iter_rows(named=True))
    h = hashlib.sha256(("\t".join(df.columns) + "\n").encode())
    for r in rows:
        h.update(r.encode() + b"\n")
    return h.hexdigest()


def summarize(result) -> dict:
    """What a fixture's .expected.json pins: line and row counts, the sha256 of every table (and of
    the unparsed lines) in full, and the first three rows of each table to read."""
    return {
        "lines": result.lines,
        "unparsed": result.unparsed.height,
        "rows": {t: df.height for t, df in sorted(result.tables.items())},
        "sha256": {**{t: table_digest(df) for t, df in sorted(result.tables.items())},
                   "unparsed": table_digest(result.unparsed)},
        "sample": {
            t: [{k: jsonable(v) for k, v in r.items()} for r in df.head(3).iter_rows(named=True)]
            for t, df in sorted(result.tables.items())
        },
    }


def context_for(fixture: Path):
    """ParseContext for a fixture; a `<fixture>.ctx.json` beside it may set tz/boot_time/capture_time/hints/host/year."""
    from forensics.sources import ParseContext

    ctx = ParseContext(host="fixture-host", file=fixture.name)
    side = fixture.with_name(fixture.name + ".ctx.json")
    if side.is_file():
        d = json.loads(side.read_text())
        for k in ("boot_time", "capture_time"):
            if d.get(k):
                d[k] = dt.datetime.fromisoformat(d[k])
        for k, v in d.items():
            setattr(ctx, k, v)
    return ctx


def load_expected(fixture: Path) -> dict | None:
    p = expected_path(fixture)
    return json.loads(p.read_text()) if p.is_file() else None
