"""The lake's layout, its catalogue of incidents, and adding bundles to it (see :mod:`forensics.archive`).

Adding is idempotent and crash-safe: an incident's tables are copied into a hidden folder of the
lake, renamed into ``date=<d>/incident=<id>/`` when complete, and its catalogue row is written
last (temporary file, then rename). A folder without a catalogue row (an add that was killed) is
replaced by the next add of the same bundle; queries read only incidents the catalogue lists.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from forensics.atomic import atomic_path
from forensics.bundle.errors import BundleError
from forensics.errors import UserError
from forensics.layout import TABLES_DIR

LAKE_MARK = "lake.json"
LAKE_FORMAT = {"format": "forensics-lake", "version": 1}
CATALOGUE_DIR = "incidents"
FINDINGS_DIR = "findings"
PART = "part-0.parquet"
ID_CHARS = 16  # hex digits of the bundle's SHA-256 that name an incident (64 bits)

# names taken from a bundle's tables/ tree into paths and SQL identifiers: plain ones only
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
_HOST_DIR = re.compile(r"^host=([A-Za-z0-9][A-Za-z0-9._-]{0,252})$")

CATALOGUE_SCHEMA = {
    "incident": pl.String, "name": pl.String, "sha256": pl.String, "date": pl.Date, "date_basis": pl.String,
    "added_at": pl.Datetime("us", "UTC"), "added_by": pl.String, "hosts": pl.List(pl.String),
    "tables": pl.List(pl.String), "analyzed_by": pl.String, "findings": pl.Int64, "errors": pl.List(pl.String),
}


@dataclass
class AddResult:
    path: str
    incident: str
    status: str  # "added" | "present"
    hosts: list[str] = field(default_factory=list)
    date: dt.date | None = None


def tool_version() -> str:
    from forensics import __version__

    return f"forensics {__version__}"


def check_lake(lake: Path | str, create: bool = False) -> Path:
    """`lake` as a lake folder (made when `create` and absent or empty); UserError when it is not one."""
    lake = Path(lake)
    mark = lake / LAKE_MARK
    if lake.is_symlink():
        raise UserError(f"{lake}: is a link; give the lake's real folder")
    if create and (not lake.exists() or (lake.is_dir() and not any(lake.iterdir()))):
        try:
            lake.mkdir(parents=True, exist_ok=True)
            with atomic_path(mark, prefix=f".{mark.name}-", suffix="") as tmp:
                Path(tmp).write_text(json.dumps(LAKE_FORMAT) + "\n")
        except OSError as exc:
            raise UserError(f"{lake}: cannot create the lake ({exc.strerror})") from None
    if not lake.is_dir():
        raise UserError(f"{lake}: no such lake folder" + ("" if create else " (forensics archive add makes one)"))
    try:
        meta = json.loads(mark.read_text())
    except (OSError, ValueError):
        raise UserError(f"{lake}: not a forensics lake (no readable {LAKE_MARK}; refusing to write into another folder)") from None
    if not isinstance(meta, dict) or meta.get("format") != LAKE_FORMAT["format"]:
        raise UserError(f"{lake}: {LAKE_MARK} does not describe a forensics lake")
    if meta.get("version") != LAKE_FORMAT["version"]:
        raise UserError(f"{lake}: lake format version {meta.get('version')!r}; this tool reads version {LAKE_FORMAT['version']}")
    return lake


def incident_id(path: Path) -> str:
    """SHA-256 of the bundle's bytes (an archive) or of its regular files' names and contents in
    name order (a folder; a link inside is refused, not followed)."""
    h = hashlib.sha256()
    if path.is_file():
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()
    for sub in sorted(p for p in path.rglob("*")):
        if sub.is_symlink():
            raise BundleError(f"{path}: {sub.relative_to(path)} is a link; a bundle folder to archive holds none")
        if sub.is_file():
            rel = sub.relative_to(path).as_posix().encode()
            h.update(len(rel).to_bytes(4, "big") + rel)
            with sub.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
    return h.hexdigest()


def incident_dir(lake: Path, day: dt.date, incident: str) -> Path:
    return lake / f"date={day.isoformat()}" / f"incident={incident}"


def catalogue(lake: Path | str) -> pl.DataFrame:
    """One row per incident of the lake (schema :data:`CATALOGUE_SCHEMA`), by date and incident."""
    files = sorted(Path(lake, CATALOGUE_DIR).glob(f"incident=*/{PART}"))
    if not files:
        return pl.DataFrame(schema=CATALOGUE_SCHEMA)
    frames = [pl.read_parquet(f).select(list(CATALOGUE_SCHEMA)).cast(CATALOGUE_SCHEMA) for f in files]
    return pl.concat(frames).sort("date", "incident")


def write_frame_atomic(df: pl.DataFrame, path: Path) -> None:
    """Write `df` as the Parquet file `path`: a temporary file beside it, renamed over it, so a
    reader sees the old file or the whole new one and a killed write leaves no partial file."""
    with atomic_path(path, prefix=f".{path.stem}-", suffix=".parquet") as tmp:
        df.write_parquet(tmp)


def write_row(lake: Path, row: dict) -> None:
    """Write (or replace) the catalogue row of ``row["incident"]``, atomically."""
    folder = lake / CATALOGUE_DIR / f"incident={row['incident']}"
    folder.mkdir(parents=True, exist_ok=True)
    write_frame_atomic(pl.DataFrame([row], schema=CATALOGUE_SCHEMA), folder / PART)


def _incident_date(bundle) -> tuple[dt.date, str]:
    """The incident's date: the bundle manifest's ``created_at``, else its earliest event's, else none."""
    try:
        created = json.loads((bundle.root / "manifest.json").read_text()).get("created_at")
        return dt.datetime.fromisoformat(str(created)).astimezone(dt.timezone.utc).date(), "manifest created_at"
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    try:
        first = bundle.sql("SELECT min(ts) AS t FROM events").item()
    except Exception:  # no events view (a bundle of tables only): the date is said to be unknown
        first = None
    if isinstance(first, dt.datetime):
        return first.astimezone(dt.timezone.utc).date(), "earliest event"
    return dt.date(1970, 1, 1), "none (no manifest date and no timed event)"


def _copy_tables(root: Path, into: Path) -> list[str]:
    """Copy ``tables/<table>/host=<h>/*.parquet`` of the parsed tree `root` into `into`; returns the
    tables copied. Folders or files of other names (caches, metadata) are not copied."""
    copied = []
    for tdir in sorted((root / TABLES_DIR).iterdir()):
        if tdir.is_symlink() or not tdir.is_dir() or not _NAME.match(tdir.name):
            continue
        for hdir in sorted(tdir.iterdir()):
            if hdir.is_symlink() or not hdir.is_dir() or not _HOST_DIR.match(hdir.name):
                continue
            for part in sorted(hdir.glob("*.parquet")):
                if part.is_symlink() or not part.is_file():
                    continue
                dest = into / TABLES_DIR / tdir.name / hdir.name / part.name
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(part, dest)
                if tdir.name not in copied:
                    copied.append(tdir.name)
    return copied


def add(paths, lake: Path | str, cache_dir: Path | str | None = None, progress=None) -> list[AddResult]:
    """Add the bundles at `paths` to `lake` (made if absent); an incident already there is left as is.
    `progress(message)` hears each bundle's step."""
    from forensics.db import open_bundle

    lake = check_lake(lake, create=True)
    have = set(catalogue(lake).get_column("incident").to_list())
    results: list[AddResult] = []
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise UserError(f"{path}: no such file or directory")
        sha = incident_id(path)
        inc = sha[:ID_CHARS]
        if inc in have:
            results.append(AddResult(str(path), inc, "present"))
            continue
        if progress:
            progress(f"{path.name}: parsing")
        with open_bundle(path, cache_dir=cache_dir) as bundle:
            day, basis = _incident_date(bundle)
            hosts = list(bundle.hosts)
            target = incident_dir(lake, day, inc)
            tmp = Path(tempfile.mkdtemp(prefix=f".adding-{inc}-", dir=lake))
            try:
                tables = _copy_tables(bundle.root, tmp)
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.exists():  # an earlier add was killed before its catalogue row: replaced
                    shutil.rmtree(target)
                os.rename(tmp, target)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        write_row(lake, {"incident": inc, "name": path.name, "sha256": sha, "date": day, "date_basis": basis,
                         "added_at": dt.datetime.now(dt.timezone.utc), "added_by": tool_version(),
                         "hosts": hosts, "tables": tables, "analyzed_by": None, "findings": None, "errors": []})
        have.add(inc)
        results.append(AddResult(str(path), inc, "added", hosts, day))
    return results
