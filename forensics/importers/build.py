"""`forensics bundle`: merge node bundles and turn loose inputs into one bundle.

Inputs, recognised in this order:

- a bundle (archive or directory with manifest.json): its hosts are copied (raw files, host.json,
  commands.jsonl; its parsed tables are rebuilt);
- a sosreport (directory or tarball holding ``sos_commands/``): see :mod:`forensics.importers.sos`;
- an ``nvidia-bug-report.log[.gz]``: see :mod:`forensics.importers.nvbug`;
- any other tarball, directory or file: every file is recognised by content
  (:func:`forensics.sources.detect`), gzip-compressed files are decompressed first; files no source
  recognises are skipped (and said so).

The host of a loose file is ``--host``, else the single host its content names (parser
``meta["hosts"]``), else the name of the directory it was found in; a loose file given on its own
whose host cannot be told is an error. Two inputs bringing the same host is an error unless
``merge=True``, which combines them (raw files of the same name are renamed, identical ones kept once).
The result is parsed (tables/) and written atomically.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from forensics.importers import nvbug, sos
from forensics.bundle.errors import BundleError
from forensics.bundle.manifest import check_host_name
from forensics.bundle.read import DEFAULT_LIMITS, Limits, archive_kind, extract, open_bundle, find_root
from forensics.bundle.write import check_out_path, new_manifest, write_tree
from forensics.importers.recognise import (
    content_host,
    head_bytes,
    host_from_dirname,
    looks_like_tar,
    safe_name,
    tar_named,
    tar_stem,
)
from forensics.layout import HOSTS_DIR, MANIFEST, TRUTH_DIR
from forensics.sources import descriptors, file_hints

@dataclass
class HostStage:
    host: str
    dir: Path
    info: dict = field(default_factory=dict)
    commands: list[dict] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    digests: dict[str, str] = field(default_factory=dict)  # rel -> sha256 of content


def _sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Builder:
    """Collects inputs into a staging tree, then ingests and writes the bundle."""

    def __init__(self, stage: Path, host: str | None = None, tz: str | None = None, merge: bool = False,
                 limits: Limits = DEFAULT_LIMITS, warn: Callable[[str], None] | None = None,
                 hints: dict | None = None):
        self.stage = stage
        self.hints = dict(hints or {})  # stated by the user for loose inputs (e.g. --fields, --interval)
        self.host = check_host_name(host, "--host") if host else None
        self.tz = tz
        self.merge = merge
        self.limits = limits
        self.warn = warn or (lambda msg: None)
        self.hosts: dict[str, HostStage] = {}
        self.kinds: list[str] = []
        self.redaction: dict | None = None
        self.truth_from: str | None = None
        self.inputs: list[Path] = []  # the files given (the output's mode follows theirs)
        self.taken: list[dict] = []  # each loose file: what it was taken to be (file, source, host, confidence, reason)
        self.work = Path(tempfile.mkdtemp(prefix="inputs-", dir=stage.parent))

    # ------------------------------------------------------------------ hosts and files

    def _host(self, host: str, origin: str, new_input: bool) -> HostStage:
        host = check_host_name(host, origin)
        hs = self.hosts.get(host)
        if hs is None:
            hs = HostStage(host=host, dir=self.stage / HOSTS_DIR / host)
            hs.dir.mkdir(parents=True)
            self.hosts[host] = hs
        elif new_input and origin not in hs.origins and not self.merge:
            raise BundleError(f"host {host!r} comes from both {hs.origins[0]} and {origin} (use --merge to combine them)")
        if origin not in hs.origins:
            hs.origins.append(origin)
        return hs

    def _place(self, hs: HostStage, source: str, name: str, src: Path | bytes) -> str | None:
        """Copy a raw file into the host; returns its bundle path, or None when identical content is there."""
        raw_dir = hs.dir / "raw" / source
        raw_dir.mkdir(parents=True, exist_ok=True)
        name = safe_name(name) if name not in ("", ".", "..") else "file"
        digest = hashlib.sha256(src).hexdigest() if isinstance(src, bytes) else _sha(src)
        stem, dot, ext = name.rpartition(".") if "." in name else (name, "", "")
        n = 1
        cand = name
        while (raw_dir / cand).exists():
            rel = f"{HOSTS_DIR}/{hs.host}/raw/{source}/{cand}"
            if hs.digests.get(rel) == digest:
                return None
            n += 1
            cand = f"{stem}-{n}{dot}{ext}" if dot else f"{name}-{n}"
        target = raw_dir / cand
        if isinstance(src, bytes):
            target.write_bytes(src)
        else:
            shutil.copyfile(src, target)
        rel = f"{HOSTS_DIR}/{hs.host}/raw/{source}/{cand}"
        hs.digests[rel] = digest
        return rel

    def _note_file(self, hs: HostStage, rel: str, origin: str, original: str, hints: dict | None = None) -> None:
        hs.info.setdefault("files", {})[rel] = {"origin": origin, "original": original, "hints": hints or {}}

    def _base_info(self, hs: HostStage, **facts) -> None:
        hs.info.setdefault("host", hs.host)
        for k, v in facts.items():
            if v and not hs.info.get(k):
                hs.info[k] = v
        if self.tz and not hs.info.get("timezone"):
            hs.info["timezone"] = self.tz

    # ------------------------------------------------------------------ inputs

    def add(self, path: Path) -> None:
        path = Path(path)
        self.inputs.append(path)
        if not path.exists():
            raise BundleError(f"{path}: no such file or directory")
        if path.is_dir():
            if (find_root(path) / MANIFEST).exists():
                return self._add_bundle(path)
            root = sos.find_root(path)
            if root is not None:
                return self._add_sos(root, str(path))
            return self._add_loose_dir(path, str(path), host_from_dirname(path.resolve().name))
        if not path.is_file():
            raise BundleError(f"{path}: not a regular file or directory")
        if tar_named(path) and not looks_like_tar(path):
            archive_kind(path, self.limits)  # the reader's own "not a tar bundle (...)" line
            raise BundleError(f"{path}: not a tar bundle (named like one, but damaged or truncated)")
        if looks_like_tar(path):
            kind = archive_kind(path, self.limits)
            if kind == "bundle":
                return self._add_bundle(path)
            dest = Path(tempfile.mkdtemp(prefix="x-", dir=self.work))
            if kind == "sosreport":
                extract(path, dest, self.limits, select=sos.wanted)
                root = sos.find_root(dest)
                if root is None:
                    raise BundleError(f"{path}: sosreport without sos_commands/")
                return self._add_sos(root, str(path))
            extract(path, dest, self.limits, select=lambda rel: True)
            top = [p for p in dest.iterdir()]
            inner = top[0] if len(top) == 1 and top[0].is_dir() else dest
            return self._add_loose_dir(inner, str(path), host_from_dirname(inner.name if inner != dest else tar_stem(path)))
        data_head = head_bytes(path, self.limits)
        if nvbug.is_bug_report(data_head):
            return self._add_nvbug(path)
        self._add_loose_files([(path, path.name)], str(path), None, alone=True)

    def _add_bundle(self, path: Path) -> None:
        b = open_bundle(path, workdir=Path(tempfile.mkdtemp(prefix="b-", dir=self.work)) if path.is_file() else None,
                        limits=self.limits)
        self.kinds.append(b.manifest.get("kind") or "node")
        if b.manifest.get("redaction") is not None:
            if self.redaction is not None and self.redaction != b.manifest["redaction"]:
                self.warn(f"{path}: redacted differently from an earlier input (pseudonyms may not match)")
            self.redaction = self.redaction or b.manifest["redaction"]
        truth = b.root / TRUTH_DIR
        if truth.is_dir():
            if self.truth_from is None:
                shutil.copytree(truth, self.stage / TRUTH_DIR)
                self.truth_from = str(path)
            else:
                self.warn(f"{path}: ground truth ignored (already taken from {self.truth_from})")
        for host in b.hosts:
            hs = self._host(host, str(path), new_input=True)
            src = b.root / HOSTS_DIR / host
            info = _load_json(src / "host.json")
            renames: dict[str, str] = {}
            raw = src / "raw"
            for p in sorted(raw.rglob("*")) if raw.is_dir() else []:
                if not p.is_file() or p.is_symlink():
                    continue
                relp = p.relative_to(raw)
                source = relp.parts[0]
                name = "/".join(relp.parts[1:]).replace("/", "_") if len(relp.parts) > 1 else relp.name
                old = f"{HOSTS_DIR}/{host}/raw/{relp.as_posix()}"
                new = self._place(hs, source, name, p)
                if new is None:
                    renames[old] = ""
                    continue
                renames[old] = new
                meta = (info.get("files") or {}).get(old) if isinstance(info.get("files"), dict) else None
                if isinstance(meta, dict):
                    hs.info.setdefault("files", {})[new] = meta
                elif new != old and file_hints(source, relp.name):  # keep what the file name said (its interface)
                    self._note_file(hs, new, "collector", old, file_hints(source, relp.name))
            for k, v in info.items():
                if k == "files":
                    continue
                if k == "nics" and isinstance(v, list) and isinstance(hs.info.get("nics"), list):
                    have = {n.get("iface") for n in hs.info["nics"] if isinstance(n, dict)}
                    hs.info["nics"].extend(n for n in v if isinstance(n, dict) and n.get("iface") not in have)
                elif k not in hs.info:
                    hs.info[k] = v
            cmd_path = src / "commands.jsonl"
            if cmd_path.is_file():
                for ln in cmd_path.read_text(errors="replace").splitlines():
                    if not ln.strip():
                        continue
                    try:
                        entry = json.loads(ln)
                    except (ValueError, RecursionError):
                        self.warn(f"{path}: {host}: skipping a bad commands.jsonl line")
                        continue
                    if isinstance(entry, dict) and entry.get("raw_file") in renames:
                        entry["raw_file"] = renames[entry["raw_file"]] or entry["raw_file"]
                    hs.commands.append(entry)
            self._base_info(hs)
        if b.workdir is not None:
            shutil.rmtree(b.workdir, ignore_errors=True)

    def _add_sos(self, root: Path, origin: str) -> None:
        self.kinds.append("loose")
        f = sos.facts(root)
        host = self.host or (f.get("hostname") or "").split(".")[0] or host_from_dirname(root.name)
        if not host:
            raise BundleError(f"{origin}: cannot tell the host of this sosreport (use --host)")
        hs = self._host(host, origin, new_input=True)
        files = sos.raw_files(root)
        if not files:
            self.warn(f"{origin}: no {_titles('sosreport')} output found in this sosreport")
        for p, source, name, hints in files:
            rel = self._place(hs, source, name, p)
            if rel:
                self._note_file(hs, rel, "sosreport", p.relative_to(root).as_posix(), hints)
        self._base_info(hs, hostname=f.get("hostname"), kernel=f.get("kernel"), timezone=self.tz or f.get("timezone"))

    def _add_nvbug(self, path: Path, origin: str | None = None) -> None:
        self.kinds.append("loose")
        origin = origin or str(path)
        try:
            data = nvbug.read_maybe_gzip(path.read_bytes(), self.limits.for_archive(path).max_member_bytes)
        except (OSError, EOFError, ValueError) as exc:
            raise BundleError(f"{path}: unreadable nvidia-bug-report ({exc})") from None
        rep = nvbug.split_report(data)
        host = self.host or rep.host or host_from_dirname(path.resolve().parent.name)
        if not host:
            raise BundleError(f"{path}: cannot tell the host of this bug report (use --host)")
        hs = self._host(host, origin, new_input=host not in self._hosts_of(origin))
        if not rep.sections:
            self.warn(f"{path}: no {_titles('bug_report')} section found")
        for sec in rep.sections:
            rel = self._place(hs, sec.source, sec.name, sec.data)
            if rel:
                self._note_file(hs, rel, "nvidia-bug-report", f"{path.name}: {sec.heading}")
        self._base_info(hs, hostname=rep.host, kernel=rep.kernel)

    def _add_loose_dir(self, d: Path, origin: str, dir_host: str | None) -> None:
        """A folder of saved outputs; node bundles and other archives in it (a folder of the
        ``.tar.gz`` files `forensics collect` wrote, or those beside loose files) are each added
        as the archive they are, never read as text."""
        items, archives = [], []
        for p in sorted(d.rglob("*")):
            if p.is_symlink() or not p.is_file():
                continue
            if looks_like_tar(p) or tar_named(p):
                archives.append(p)
            else:
                items.append((p, p.relative_to(d).as_posix()))
        if not items and not archives:
            raise BundleError(f"{origin}: no files")
        sub = sos.find_root(d)
        if sub is not None and sub != d:
            return self._add_sos(sub, origin)
        for p in archives:
            self.add(p)
        if items:
            self._add_loose_files(items, origin, dir_host, alone=False, required=not archives)

    def _add_loose_files(self, items: list[tuple[Path, str]], origin: str, dir_host: str | None, alone: bool,
                         required: bool = True) -> None:
        from forensics.sources import SNIFF_BYTES, recognise

        self.kinds.append("loose")
        taken = 0
        for p, shown in items:
            head = head_bytes(p, self.limits)
            src: Path | bytes = p
            name = p.name
            if head.startswith(b"\x1f\x8b"):  # a gzip-compressed output (dmesg.gz, nccl.log.gz)
                inner = head[2:]  # (_head decompressed its start) nothing recognised: not inflated at all
                if not nvbug.is_bug_report(inner) and recognise(inner[:SNIFF_BYTES], self.hints)[0] is None:
                    self.warn(f"skipping {shown}: no source recognises it")
                    continue
                try:  # at most 1000 times its size (at least 1 GiB), as for archives
                    data = nvbug.read_maybe_gzip(p.read_bytes(), self.limits.for_archive(p).max_member_bytes)
                except (OSError, EOFError, ValueError) as exc:
                    self.warn(f"skipping {shown}: unreadable gzip ({exc})")
                    continue
                src, head, name = data, data[:SNIFF_BYTES], name[:-3] if name.endswith(".gz") else name
            if nvbug.is_bug_report(head):
                self._add_nvbug(p, origin)
                taken += 1
                continue
            source, verdict = recognise(head[:SNIFF_BYTES], self.hints)
            if source is None:
                self.warn(f"skipping {shown}: no source recognises it")
                continue
            host = self.host or content_host(source, src, p, name) or dir_host
            if not host and alone:  # README: else the directory name
                host = host_from_dirname(p.resolve().parent.name)
                if not host:
                    raise BundleError(f"{shown}: cannot tell which host this {source} output is from (use --host)")
                self.warn(f"{shown}: names no host; using its folder's name {host!r} (use --host NAME to say which)")
            if not host:
                host = "unknown"
            # the outputs the user said are one host's (--host) are one host, whatever their number
            stated = self.host is not None and host == self.host
            hs = self._host(host, origin, new_input=host not in self._hosts_of(origin) and not stated)
            rel = self._place(hs, source, name, src)
            if rel:
                hints = {**self.hints, "host_stated": True} if stated else dict(self.hints)
                try:  # the year of times printed without one, failing --year (as `parse` takes it)
                    hints["file_time"] = dt.datetime.fromtimestamp(p.stat().st_mtime, dt.timezone.utc).isoformat()
                except (OSError, ValueError, OverflowError):
                    pass
                self._note_file(hs, rel, "loose", shown, hints)
                self.taken.append({"file": str(shown), "source": source, "host": host,
                                   "confidence": verdict.confidence, "reason": verdict.reason})
            self._base_info(hs)
            taken += 1
        if not taken and required:
            raise BundleError(f"{origin}: no file recognised as {_titles()} output")

    def _hosts_of(self, origin: str) -> set[str]:
        return {h for h, hs in self.hosts.items() if origin in hs.origins}

    # ------------------------------------------------------------------ output

    def kind(self) -> str:
        kinds = set(self.kinds)
        if kinds == {"simulated"}:
            return "simulated"
        if kinds == {"loose"}:
            return "loose"
        if len(self.kinds) == 1 and len(self.hosts) == 1 and kinds <= {"node"}:
            return "node"
        return "cluster"

    def finish(self, out: Path, progress=None) -> dict:
        from forensics.ingest.run import ingest_bundle

        if not self.hosts:
            raise BundleError("no host found in the inputs")
        for hs in self.hosts.values():
            hs.info["host"] = hs.host
            (hs.dir / "host.json").write_text(json.dumps(hs.info, indent=1, sort_keys=True) + "\n")
            (hs.dir / "commands.jsonl").write_text("".join(json.dumps(c, sort_keys=True) + "\n" for c in hs.commands))
        (self.stage / MANIFEST).write_bytes(new_manifest(sorted(self.hosts), self.kind(), self.redaction))
        summary = ingest_bundle(self.stage, progress=progress)
        write_tree(self.stage, out, like=self.inputs)
        return summary

    def cleanup(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)


def _titles(part: str | None = None) -> str:
    """"dmesg, ethtool or sar": the tools whose descriptors declare `part` (all of them: None)."""
    names = [d.title for d in descriptors().values() if part is None or getattr(d, part)]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


def build_bundle(inputs: list[Path], out: Path, host: str | None = None, tz: str | None = None, merge: bool = False,
                 limits: Limits = DEFAULT_LIMITS, warn=None, progress=None, hints: dict | None = None) -> dict:
    """Build one bundle at `out` from `inputs`; returns the ingest summary plus hosts and kind.
    `hints`: parser hints for the loose inputs (stored with each file, e.g. nvidia-smi query_fields)."""
    out = check_out_path(out)
    if tz:
        from forensics.timeutil import check_zone

        try:
            check_zone(tz)
        except ValueError as exc:
            raise BundleError(str(exc)) from None
    tmp = Path(tempfile.mkdtemp(prefix=".forensics-bundle-", dir=out.parent))
    try:
        stage = tmp / "stage"
        stage.mkdir()
        b = Builder(stage, host=host, tz=tz, merge=merge, limits=limits, warn=warn, hints=hints)
        seen: set[Path] = set()
        for p in inputs:
            real = Path(p).resolve()
            if real in seen:
                (warn or (lambda m: None))(f"{p}: given twice, read once")
                continue
            seen.add(real)
            b.add(Path(p))
        summary = b.finish(out, progress=progress)
        summary["kind"] = b.kind()
        summary["inputs"] = b.taken
        return summary
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _load_json(path: Path) -> dict:
    """host.json of an input bundle ({} when absent or not an object: ingest records what is wrong)."""
    try:
        obj = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return {}
    return obj if isinstance(obj, dict) else {}
