"""Writing the collector's bundle: host.json, commands.jsonl, manifest, tables, then the archive.

Standard library only, Python 3.8 syntax (tables only through the caller's `parse_tables`).
"""
from __future__ import annotations

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
    with open(os.path.join(c.stage, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
        fh.write("\n")
    tables(c)
    tar = AtomicTar(c.out, mode=0o600)  # the bundle holds command lines of the node's processes
    try:
        tar.add_file("manifest.json", os.path.join(c.stage, "manifest.json"))
        for top in ("hosts", "tables"):
            base = os.path.join(c.stage, top)
            for dirpath, dirnames, filenames in os.walk(base):
                dirnames.sort()
                for name in sorted(filenames):
                    p = os.path.join(dirpath, name)
                    tar.add_file(os.path.relpath(p, c.stage).replace(os.sep, "/"), p)
    except BaseException:
        tar.abort()
        raise
    tar.close()


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
