"""Writing the collector's bundle: host.json, commands.jsonl, manifest, tables, then the archive.

Standard library only, Python 3.8 syntax (tables only through the caller's `parse_tables`).
"""
from __future__ import annotations

import hashlib
import json
import os
import platform

from forensics.collect import node, proc
from forensics.collect.records import commands_text, host_json_text, host_record, version
from forensics.collect.tarball import AtomicTar
from forensics.layout import FORMAT_VERSION


def _text(c, source, name):
    p = os.path.join(c.hdir, "raw", source, name)
    try:
        with open(p, "rb") as fh:
            return fh.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return None


def write_bundle(c, inventory):
    """host.json, commands.jsonl, the manifest and the tables of collector `c`, then the archive (atomically)."""
    wall, mono = node.clock_reference()
    boot, btime = node.boot_time(wall, mono)
    offset, ntp_source = node.ntp_offset(_text(c, "collector", "chronyc-tracking.txt"),
                                         _text(c, "collector", "timedatectl.txt"))
    host_json = host_record(
        c.host, c.hostname, platform.release(), node.utc_iso(boot), node.utc_iso(btime) if btime else None,
        node.timezone_name(), node.utc_offset_s(), node.utc_iso(wall), mono, offset, ntp_source,
        version(), platform.python_version(), c.argv, c.interrupted, c.duration, c.interval,
        proc.iso(c.started), proc.iso(proc.utcnow()), inventory)
    with open(os.path.join(c.hdir, "host.json"), "w") as fh:
        fh.write(host_json_text(host_json))
    with open(os.path.join(c.hdir, "commands.jsonl"), "w") as fh:
        fh.write(commands_text(c.entries))
    manifest = {"format_version": FORMAT_VERSION, "created_by": "forensics %s (collect)" % version(),
                "created_at": proc.iso(proc.utcnow()), "hosts": [c.host], "redaction": None, "kind": "node"}
    _write_manifest(c.stage, manifest)
    tables(c)  # (parsing reads the manifest's hosts)
    files = _files(c.stage)
    manifest["members"] = dict((rel, {"size": os.path.getsize(p), "sha256": _sha256(p)}) for rel, p in files)
    _write_manifest(c.stage, manifest)  # every member with its size and SHA-256, checked by readers
    tar = AtomicTar(c.out, mode=0o600)  # the bundle holds command lines of the node's processes
    try:
        tar.add_file("manifest.json", os.path.join(c.stage, "manifest.json"))
        for rel, p in files:
            tar.add_file(rel, p)
    except BaseException:
        tar.abort()
        raise
    tar.close()


def _write_manifest(stage, manifest):
    with open(os.path.join(stage, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
        fh.write("\n")


def _files(stage):
    """(member name, path) of every file under the stage's hosts/ and tables/, in archive order."""
    out = []
    for top in ("hosts", "tables"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(stage, top)):
            dirnames.sort()
            for name in sorted(filenames):
                p = os.path.join(dirpath, name)
                out.append((os.path.relpath(p, stage).replace(os.sep, "/"), p))
    return out


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tables(c):
    """Parse the raw outputs into tables/ with the `parse_tables(stage_dir)` the caller gave (the
    collector itself parses nothing: on a node it runs without the parsing libraries)."""
    if c.raw_only:
        return
    if c.parse_tables is None:
        c.say("not parsed here: tables will be built by `forensics bundle`/`analyze`")
        return
    try:
        summary = c.parse_tables(c.stage)
        c.say("parsed %d raw file(s) into tables" % summary["files"])
    except Exception as exc:  # noqa: BLE001 - raw outputs are the product; tables can be rebuilt later
        c.say("parsing failed (%s); the bundle holds the raw outputs only" % exc)
