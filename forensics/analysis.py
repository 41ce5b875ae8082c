"""`forensics analyze` as a library call: open, align, detect, and gather what the report shows."""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field

import polars as pl

from forensics.errors import UserError
from forensics.frames import frame_to_json_rows


@dataclass
class Analysis:
    findings: pl.DataFrame
    hosts: pl.DataFrame
    coverage: pl.DataFrame
    failed_commands: pl.DataFrame
    errors: list[str] = field(default_factory=list)
    bundle_paths: list[str] = field(default_factory=list)
    bundle: object = field(default=None, repr=False, compare=False)  # the open bundle (reports read its views)
    coverage_by_host: pl.DataFrame = field(default_factory=pl.DataFrame)  # queries/coverage.sql: per host x source

    def to_json(self) -> dict:
        findings = frame_to_json_rows(self.findings)
        for f in findings:
            try:
                f["evidence"] = json.loads(f["evidence"]) if f["evidence"] else {}
            except (TypeError, ValueError):
                pass
        return {
            "bundles": self.bundle_paths,
            "findings": findings,
            "hosts": frame_to_json_rows(self.hosts),
            "coverage": frame_to_json_rows(self.coverage),
            "failed_commands": frame_to_json_rows(self.failed_commands),
            "errors": self.errors,
        }


def _read(bundle, errors: list[str], what: str, run) -> pl.DataFrame:
    """`run()`'s frame; a failure is one line in `errors` (shown with the findings), never silent."""
    try:
        return run()
    except Exception as exc:  # a broken view must not hide the findings, but it is said
        errors.append(f"{what}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
        return pl.DataFrame()


def coverage_per_source(per_host: pl.DataFrame) -> pl.DataFrame:
    """The named query `coverage` (per host x source) summed per source."""
    if per_host.height == 0:
        return pl.DataFrame()
    return (per_host.group_by("source")
            .agg(pl.col("files").sum(), pl.col("lines").sum(), pl.col("unparsed").sum(),
                 *([pl.col("skipped").sum()] if "skipped" in per_host.columns else []), pl.col("failed_files").sum())
            .sort("source"))


def analyze_bundle(bundle, only: set[str] | None = None, since: dt.datetime | None = None,
                   until: dt.datetime | None = None, progress=None, paths: list[str] | None = None,
                   engine=None, params: dict | None = None) -> Analysis:
    """`engine`: None (every detector here, :func:`forensics.detect.engine.run_all`) or a
    :class:`forensics.engine.MapReduce` (host-local detectors in its map, the rest here).
    `params` overrides detector parameters by name (``{"expect_tokens_per_s": 3200}``: the rate the
    job is expected to reach), on either engine."""
    from forensics.db.window import restrict
    from forensics.detect.engine import run_all

    restrict(bundle.con, since, until)  # detection, and the reports reading this bundle, see the window only
    try:
        if engine is not None:
            findings, errors = engine.detect(bundle, only=only, since=since, until=until, params=params)
        else:
            findings, errors = run_all(bundle, only=only, overrides=params, progress=progress)
    except Exception:
        if hasattr(bundle, "check_intact"):
            bundle.check_intact()  # a file removed under the run is said as such
        raise
    if hasattr(bundle, "check_intact"):
        bundle.check_intact()  # detectors that failed on vanished files must not read as "no finding"
    hosts = _read(bundle, errors, "hosts", lambda: bundle.sql(
        "SELECT host, kernel, driver_version, nccl_version, gpu_count, clock_offset_s, "
        "clock_offset_confidence FROM hosts ORDER BY host"))
    per_host = _read(bundle, errors, "queries/coverage.sql", lambda: bundle.query("coverage"))
    failed = _read(bundle, errors, "queries/failed_commands.sql", lambda: bundle.query("failed_commands"))
    return Analysis(findings, hosts, coverage_per_source(per_host), failed, errors, paths or [], bundle,
                    coverage_by_host=per_host)


def analyze_paths(paths, only=None, since=None, until=None, cache_dir=None, progress=None,
                  host: str | None = None, tz: str | None = None, derive: str = "lazy",
                  hints: dict | None = None, merge: bool = False, warn=None, engine=None,
                  params: dict | None = None) -> Analysis:
    """Open (merging several bundles into one when more than one is given) and analyse.

    `progress`: None, or an object with ``parse(message)``, ``detect(rule_name)``,
    ``start_detection(total)`` and ``close()`` (the CLI's terminal bars are one:
    :mod:`forensics.cli._progress`). Loose inputs (a single dmesg or NCCL log, a folder of saved
    outputs, a sosreport) are first built into a bundle as `forensics bundle` does, with `host` and
    `tz` for what their content does not say and `hints` for their parsers; `merge` combines inputs
    that bring the same host (as `forensics bundle --merge`); `warn(message)` hears what building
    them had to assume (a host named after its folder). `derive`: see :func:`forensics.db.open_bundle`
    ("lazy": the NIC counter classes no detector reads are cached by a later open). `engine`: None
    (this machine) or a :class:`forensics.engine.MapReduce` that parses and detects per host group
    on its executor (the same findings)."""
    from forensics.db import open_bundle

    paths = [str(p) for p in paths]
    ui = progress if progress not in (None, False) else None
    try:
        try:
            target = paths[0] if len(paths) == 1 and not is_loose_input(paths[0]) else \
                merged_bundle(paths, cache_dir=cache_dir, host=host, tz=tz, hints=hints, merge=merge, warn=warn)
            if engine is not None:
                target = engine.parse(target, cache_dir=cache_dir, progress=ui.parse if ui is not None else None)
                derive = "never"  # the map's catalogs derive (and cache) their own hosts' relations; here, only the reduce reads
            bundle = open_bundle(target, cache_dir=cache_dir, derive=derive,
                                 progress=ui.parse if ui is not None else None)
        except (OSError, ValueError) as exc:
            raise UserError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
        if ui is not None and engine is None:
            from forensics.detect.rules import rules

            ui.start_detection(sum(1 for r in rules() if not only or r.kind in only))
        return analyze_bundle(bundle, only=only, since=since, until=until, paths=paths,
                              progress=ui.detect if ui is not None else None, engine=engine, params=params)
    finally:
        if ui is not None:
            ui.close()


def is_loose_input(path) -> bool:
    """Whether `path` is not a bundle but something `forensics bundle` turns into one: a plain file
    (a dmesg, an NCCL log, a bug report; not a tar, compressed or not) or a directory without a
    manifest (saved outputs, a sosreport tree). Archives, even broken or hostile ones, are not
    loose: they go to the bundle reader, which refuses them with its own message."""
    from pathlib import Path

    from forensics.bundle.read import MANIFEST, find_root

    p = Path(path)
    if p.is_dir():
        root = find_root(p)
        return not (root / MANIFEST).exists() and not (root / "tables").is_dir()
    if not p.is_file():
        return False
    try:
        with open(p, "rb") as fh:
            head = fh.read(512)
    except OSError:
        return False
    if p.name.endswith(".log.gz") and head.startswith(b"\x1f\x8b"):  # nvidia-bug-report.log.gz
        return True
    if head.startswith((b"\x1f\x8b", b"\x28\xb5\x2f\xfd", b"BZh", b"\xfd7zXZ\x00")) or \
            (len(head) >= 262 and head[257:262] == b"ustar"):
        from forensics.importers.recognise import looks_like_tar, tar_named

        if not tar_named(p) and not looks_like_tar(p):
            return True  # one compressed output (dmesg.gz, nccl.log.zst), as `forensics bundle` reads it
        return _sosreport_archive(p)
    return True


def _sosreport_archive(p) -> bool:
    """An archive whose first 256 MB of members show a sosreport (sos_commands/) and no bundle manifest."""
    from forensics.bundle.errors import BundleError
    from forensics.bundle.read import archive_kind

    try:
        return archive_kind(p, scan_bytes=256 << 20) == "sosreport"
    except (BundleError, OSError, EOFError, ValueError):
        return False


def merged_bundle(paths: list[str], cache_dir=None, host: str | None = None, tz: str | None = None,
                  hints: dict | None = None, merge: bool = False, warn=None):
    """One bundle merging several (node bundles, loose files), built once and kept in the cache.

    Node bundles of different hosts merge; the same host given twice is an error, as with
    `forensics bundle` without --merge."""
    import hashlib
    from pathlib import Path

    from forensics.importers.build import build_bundle
    from forensics.bundle.cache import cache_root, file_sha256, hold
    from forensics.bundle.trust import tree_digest

    from forensics import __version__

    key = hashlib.sha256(f"{host}|{tz}|{merge}|{__version__}|3".encode())  # (3: loose files' modification times)
    if hints:
        key.update(json.dumps(hints, sort_keys=True, default=str).encode())
    for p in paths:
        q = Path(p)
        key.update(str(q.resolve()).encode())
        # a folder by what is inside it (its own mtime misses a file rewritten in place)
        key.update(file_sha256(q).encode() if q.is_file() else tree_digest(q).encode())
    root = cache_root(cache_dir)
    root.mkdir(parents=True, exist_ok=True)
    out = root / f"merged-{key.hexdigest()[:20]}.tar"
    if not out.exists():
        build_bundle([Path(p) for p in paths], out, host=host, tz=tz, hints=hints, merge=merge, warn=warn)
    hold(out)
    return out
