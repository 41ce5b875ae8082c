"""`redact_bundle`: a bundle in, a redacted bundle out (atomically), the key and mapping kept apart.

Steps: open the bundle safely; collect the shapeless identifiers (:mod:`.discover`); rewrite every
member except ``tables/`` -- raw outputs, host.json, commands.jsonl, truth/, compressed members
inside (decompressed, rewritten, recompressed) -- and every member *name* (``hosts/<host>/...``,
``nccl.<host>.<pid>.log``) with one :class:`~forensics.redact.rewrite.Rewriter`; write the manifest
with its ``redaction`` record; parse the redacted raw files again into ``tables/``
(:func:`forensics.ingest.run.ingest_bundle`), so every table is consistent with them by
construction; if the new tables name a host or serial that was not caught (a format only a parser
knows), add it and rewrite again; check that no original value is left anywhere
(:mod:`.verify`) and only then write the output. The original-to-pseudonym map goes to
``mapping_out`` (mode 0600), never into the bundle.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from forensics.atomic import atomic_path
from forensics.bundle.errors import BundleError
from forensics.bundle.trust import claimed_current
from forensics.bundle.read import open_bundle
from forensics.bundle.write import check_out_path, created_by, write_tree
from forensics.ingest.run import ingest_bundle, parser_versions
from forensics.layout import MANIFEST, TABLES_DIR
from forensics.redact import discover as D
from forensics.redact import patterns as P
from forensics.redact.mapper import CLASSES, CollisionError, Mapper
from forensics.redact.jobs import Runner, workers_for
from forensics.redact.rewrite import Rewriter, _guid_spellings
from forensics.redact.tables import table_jobs, unreadable
from forensics.redact.verify import find_leaks

MAX_ROUNDS = 3


def parse_keep(values) -> set[str]:
    """Classes named by --keep (repeatable, comma-separated); BundleError for an unknown one."""
    out: set[str] = set()
    for v in values or ():
        for part in str(v).split(","):
            part = part.strip().lower()
            if not part:
                continue
            if part not in CLASSES:
                raise BundleError(f"--keep: unknown class {part!r} (classes: {', '.join(CLASSES)})")
            out.add(part)
    return out


# ------------------------------------------------------------------ members


def _members(root: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        if rel_dir == ".":
            dirnames[:] = sorted(d for d in dirnames if d != TABLES_DIR and not d.startswith("."))
        else:
            dirnames.sort()
        for fn in sorted(filenames):
            rel = fn if rel_dir == "." else f"{rel_dir}/{fn}"
            if rel == MANIFEST or (rel_dir == "." and fn.startswith(".")):
                continue
            p = Path(dirpath) / fn
            if p.is_file() and not p.is_symlink():
                out.append(rel)
    return out


def _rewrite_jobs(src: Path, stage: Path, rw: Rewriter) -> list[tuple[str, str, str]]:
    """(kind, source, target) for every member but tables/ and the manifest, targets renamed."""
    members = _members(src)
    targets = rw.strings(members)
    seen: dict[str, str] = {}
    jobs = []
    for rel, new in zip(members, targets):
        if new in seen:
            raise BundleError(f"redaction maps two members to one name: {seen[new]!r} and {rel!r}")
        seen[new] = rel
        jobs.append(("raw", str(src / rel), str(stage / new)))
    return jobs


def _manifest(src_manifest: dict, rw: Rewriter, record: dict) -> bytes:
    text = rw.text(json.dumps(src_manifest))
    man = json.loads(text)
    hosts = man.get("hosts") or []
    if len(set(hosts)) != len(hosts):
        raise BundleError("redaction maps two hosts to one pseudonym")
    man["hosts"] = sorted(hosts)
    man["redaction"] = record
    return (json.dumps(man, indent=1) + "\n").encode()


# ------------------------------------------------------------------ discovery


def _discover(root: Path, manifest: dict, runner: Runner, progress=None) -> D.Known:
    """The shapeless identifiers of the bundle at `root` (see :mod:`.discover`)."""
    known = D.Known()
    D.from_metadata(root, manifest, known)
    D.from_tables(root / TABLES_DIR, known)
    members = _members(root)

    def names() -> list[str]:
        return sorted(known.domains | {h for h in known.hosts if "." not in h})

    first = names()
    # structure, and names written under the domains / after the hosts known so far
    runner.discover(root, members, known, first, False)
    if names() != first:  # the raw files named more hosts or domains: look for those once more
        runner.discover(root, members, known, sorted(set(names()) - set(first)), True)
    if progress:
        progress(f"found {len(known.hosts)} host name(s), {len(known.domains)} domain(s), {len(known.serials)} serial(s), "
                 f"{len(known.guids)} GUID(s), {len(known.users)} user(s)")
    return known


def _missed(tables: Path, mapper: Mapper, classes: set[str]) -> D.Known:
    """Hosts and serials in freshly built tables that are not pseudonyms (a parser found them)."""
    found = D.Known()
    D.from_tables(tables, found)
    if "hostnames" not in classes:
        found.hosts.clear()
        found.domains.clear()
    pseudo_serials = set(mapper.record["serials"].values())
    found.serials = {s for s in found.serials if s not in pseudo_serials} if "serials" in classes else set()
    return found


# ------------------------------------------------------------------ originals for the leak check


def layout_words(root: Path) -> set[str]:
    """Words of the bundle's own layout at `root` (top folders, host files, table and source folder
    names): a host called like one of them is renamed only in its own places (rewrite._host_place),
    so the word itself stays in the redacted bundle and is no leak."""
    words = set(P.LAYOUT_WORDS)
    for sub in (root / TABLES_DIR).glob("*"):
        words.add(sub.name.lower())
    for sub in (root / "hosts").glob("*/raw/*"):
        words.add(sub.name.lower())
    return words


def originals(mapper: Mapper, known: D.Known, classes: set[str], layout: set[str] = frozenset()) -> dict[str, set[str]]:
    rec = mapper.record
    out: dict[str, set[str]] = {"name": set(), "domain": set(), "ipv4": set(), "hex": set(), "serial": set(), "user": set()}
    if "hostnames" in classes:
        out["name"] |= set(known.hosts) | {k.lower() for k in rec["hostnames"]}
        for d in set(known.domains) | set(rec["domains"]):
            out["name" if "." in d else "domain"].add(d)
    if "ips" in classes or "gids" in classes:
        for k in set(rec["ips"]) | set(rec["gids"]):
            (out["ipv4"] if "." in k and ":" not in k else out["hex"]).add(k.split("%")[0].lower())
    for cls in ("macs", "uuids"):
        if cls in classes:
            out["hex"] |= {k.lower() for k in rec[cls]}
    if "gids" in classes:
        for g in known.guids:
            out["hex"] |= {old for old, _ in _guid_spellings(g, g)}
    if "serials" in classes:
        out["serial"] |= set(known.serials) | set(rec["serials"])
    if "users" in classes:
        out["user"] |= {u for u in set(known.users) | set(rec["users"]) if mapper.user(u) != u}
    # the words of the pseudonyms themselves (a host named "host" is in every "host-1a2b3c4d")
    out["name"] -= {"host", "dom", "user"} | set(layout)
    pseudo = {v.lower() for d in rec.values() for v in d.values()}
    pseudo |= {v.split(".", 1)[0] for v in pseudo}
    for kind in out:
        out[kind] = {v for v in out[kind] if v and v.lower() not in pseudo}
    return out


# ------------------------------------------------------------------ the whole job


def _record(mapper: Mapper, classes: set[str], done: set[str], prev: dict) -> dict:
    """The manifest's ``redaction`` object."""
    record = {
        "redacted": True,
        "classes": sorted(classes | done),
        "kept": sorted(set(CLASSES) - classes - done),
        "tool": created_by(),
        "key_id": mapper.key_id(),
        "redacted_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "counts": {c: len(v) for c, v in mapper.record.items() if v},
    }
    if prev.get("redacted"):
        record["previous"] = prev
    return record


def _has_raw(root: Path) -> bool:
    """Whether the bundle at `root` has a raw file of some host (``hosts/<host>/raw/...``)."""
    return any(p.is_file() for p in (root / "hosts").glob("*/raw/**/*"))


def _tree_bytes(root: Path) -> int:
    total = 0
    for dirpath, _, filenames in os.walk(root):
        for fn in filenames:
            try:
                total += os.path.getsize(os.path.join(dirpath, fn))
            except OSError:
                pass
    return total


def redact_bundle(src: Path | str, out: Path | str, key: bytes, keep=(), mapping_out: Path | str | None = None,
                  progress=None, reparse: bool = False, workers: int | None = None, warn=None) -> dict:
    """Write the redacted copy of bundle `src` to `out`; returns a summary (never the key).

    Tables built by the current parsers are rewritten value by value (:mod:`.tables`); otherwise,
    or with `reparse`, or when a shipped table is not readable Parquet (said through `warn`), the
    redacted raw files are parsed into new tables.
    """
    t0 = time.monotonic()
    out = check_out_path(out)
    kept = parse_keep(keep)
    if mapping_out is not None:
        mapping_out = Path(mapping_out)
        if mapping_out.resolve() == out.resolve() or mapping_out.resolve() == Path(src).resolve():
            raise BundleError("--mapping-out must be a file of its own, not the bundle")
        if not mapping_out.parent.is_dir():
            raise BundleError(f"{mapping_out.parent}: no such directory")
    mapper = Mapper(key)
    work = Path(tempfile.mkdtemp(prefix=".forensics-redact-", dir=out.parent))
    try:
        src_path = Path(src)
        b = open_bundle(src_path, workdir=None if src_path.is_dir() else work / "src")
        prev = b.manifest.get("redaction") if isinstance(b.manifest.get("redaction"), dict) else {}
        done = set(prev.get("classes") or []) if prev.get("redacted") else set()
        classes = set(CLASSES) - kept - done
        if not classes:
            raise BundleError("nothing to redact: every class is kept or already redacted"
                              + (f" (bundle redacted before: {', '.join(sorted(done))})" if done else ""))
        if progress:
            progress(f"redacting {', '.join(c for c in CLASSES if c in classes)}"
                     + (f"; keeping {', '.join(c for c in CLASSES if c in kept)}" if kept else ""))
        workers = workers_for(_tree_bytes(b.root)) if workers is None else workers
        runner = Runner(key, workers)
        try:
            known = _discover(b.root, b.manifest, runner, progress)
            stage = work / "stage"
            rounds = 0
            while True:
                rounds += 1
                rw = Rewriter(mapper, classes, known)
                if stage.exists():
                    shutil.rmtree(stage)
                stage.mkdir()
                jobs = _rewrite_jobs(b.root, stage, rw)
                files = len(jobs)
                tables_mode = "rewritten" if not reparse and claimed_current(b.root, parser_versions()) else "reparsed"
                if tables_mode == "rewritten" and rounds == 1:
                    bad = unreadable(b.root / TABLES_DIR)
                    if bad is not None:
                        if not _has_raw(b.root):
                            raise BundleError(f"{bad[0]}: not a readable Parquet table ({bad[1]}); nothing written "
                                              "(the bundle has no raw files to parse the tables from)")
                        reparse = True
                        tables_mode = "reparsed"
                        if warn:
                            warn(f"{bad[0]}: not a readable Parquet table ({bad[1]}); "
                                 "the tables are parsed again from the redacted raw files")
                if tables_mode == "rewritten":
                    jobs += table_jobs(b.root / TABLES_DIR, stage / TABLES_DIR, rw)
                if progress:
                    progress(f"rewriting {files} member(s)" + (" and the tables" if tables_mode == "rewritten" else "")
                             + (f" in {workers} processes" if workers > 1 else ""))
                runner.rewrite(rw, known, jobs)
                (stage / MANIFEST).write_bytes(_manifest(b.manifest, rw, _record(mapper, classes, done, prev)))
                if tables_mode == "rewritten":
                    break
                if progress:
                    progress("parsing the redacted raw files into tables")
                ingest_bundle(stage)
                missed = _missed(stage / TABLES_DIR, mapper, classes)
                if not known.update(missed) or rounds >= MAX_ROUNDS:
                    break
                if progress:
                    progress("the parsers found more identifiers: rewriting again")
            record = _record(mapper, classes, done, prev)
            (stage / MANIFEST).write_bytes(_manifest(b.manifest, rw, record))
            if progress:
                progress("checking that no original value is left")
            leaks = find_leaks(stage, originals(mapper, known, classes, layout_words(stage)), runner=runner)
        finally:
            runner.close()
        if leaks:
            raise BundleError(f"redaction incomplete, nothing written: {leaks[0]}"
                              + (f" (and {len(leaks) - 1} more)" if len(leaks) > 1 else ""))
        if progress:
            progress(f"writing {out}")
        write_tree(stage, out, like=[Path(src)])
        if mapping_out is not None:
            write_mapping(mapping_out, mapper, out)
        hosts = json.loads((stage / MANIFEST).read_text())["hosts"]
    except CollisionError as exc:
        raise BundleError(str(exc)) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"out": str(out), "hosts": hosts, "files": files, "classes": record["classes"], "kept": record["kept"],
            "key_id": record["key_id"], "counts": record["counts"], "rounds": rounds,
            "tables": tables_mode,
            "seconds": round(time.monotonic() - t0, 2)}


def write_mapping(path: Path, mapper: Mapper, out: Path) -> None:
    """original -> pseudonym per class, as JSON, mode 0600, atomically."""
    doc = {"key_id": mapper.key_id(), "bundle": str(out),
           "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "mappings": {c: dict(sorted(v.items())) for c, v in mapper.record.items() if v}}
    with atomic_path(path, prefix=".forensics-map-", suffix="", mode=0o600) as tmp, open(tmp, "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
