"""What a source declares about itself besides its parser (standard library only, Python 3.8 syntax:
the collector reads these declarations on nodes without the parsing libraries).

Each source has, beside its parser (``forensics/sources/<name>.py`` or ``<name>/``), a module
``forensics/sources/<name>_spec.py`` holding one :class:`Descriptor`:

- ``collect``: the :class:`Spec` of every command the collector runs for it (:mod:`forensics.collect`);
- ``sosreport``: the :class:`SosPath` of every file of a sosreport it reads (:mod:`forensics.importers.sos`);
- ``bug_report``: the :class:`BugSection` of every nvidia-bug-report section it reads
  (:mod:`forensics.importers.nvbug`);
- ``file_hints``: the :class:`FileHint` a raw file's name gives its parser in the collector's layout
  (``raw/ethtool/<iface>.txt``: the interface);
- ``events``: the kinds of the ``events`` view (``queries/views/70_events.sql``) its tables feed;
- ``title``: how users name the tool in messages ("nvidia-smi", "NCCL").

``tests/test_sources_descriptors.py`` walks every source and checks each part.
"""
from __future__ import annotations

import re

MB = 1 << 20


class Spec(object):
    """One command to collect.

    Its argv (with ``{iface}``, ``{interval}``, ``{count}``, ``{interval_ms}`` placeholders), how it
    expands (once; ``iface``: per network interface; ``ibport``: per RDMA port; ``ibport_ib``: per
    InfiniBand link-layer port), how it runs (``once``; ``snapshot``: run every
    sampling interval, each output preceded by a marker line; ``stream``: one long-running command
    sampling by itself for the whole duration; ``copy``: argv ``("copy", <absolute path>)``, a log file
    copied at the end, never through a link, its last `cap` bytes when longer), its timeout and byte cap, the parser source that
    reads it and the raw file it writes. ``fallbacks`` are tried in order when the command is
    missing or fails (older tools without an option). ``when`` places one-shot commands: ``start``
    (before sampling) or ``end`` (after it: dmesg then holds what happened during the collection).
    """

    __slots__ = ("name", "argv", "source", "raw", "mode", "expand", "timeout", "cap", "fallbacks", "when",
                 "min_interval", "until_stopped", "argv_once")

    def __init__(self, name, argv, source, raw, mode="once", expand=None, timeout=30.0, cap=16 * MB,
                 fallbacks=(), when="start", min_interval=0.0, until_stopped=False, argv_once=None):
        self.name = name
        self.argv = tuple(argv)
        self.source = source
        self.raw = raw
        self.mode = mode
        self.expand = expand
        self.timeout = float(timeout)
        self.cap = int(cap)
        self.fallbacks = tuple(tuple(f) for f in fallbacks)
        self.when = when
        self.min_interval = float(min_interval)
        self.until_stopped = until_stopped
        self.argv_once = tuple(argv_once) if argv_once else None  # streams with --duration 0

    def __repr__(self):
        return "Spec(%r)" % self.name


class SosPath(object):
    """A file of a sosreport: `pattern` matches its path in the report; its named groups become
    parser hints; the raw file is named `name` (``str.format`` with the groups), else the path's
    last component + ``.txt``. `example`: a path it must match (checked by the conformance test)."""

    __slots__ = ("pattern", "name", "example", "rx")

    def __init__(self, pattern, example, name=None):
        self.pattern = pattern
        self.name = name
        self.example = example
        self.rx = re.compile(pattern)

    def match(self, rel):
        """(raw file name, hints) for the path `rel` inside the sosreport, or None."""
        m = self.rx.match(rel)
        if m is None:
            return None
        hints = dict((k, v) for k, v in m.groupdict().items() if v is not None)
        name = self.name.format(**hints) if self.name else rel.rsplit("/", 1)[-1] + ".txt"
        return name, hints


class BugSection(object):
    """A section of an ``nvidia-bug-report.log``: `heading` (a regex) matches the line that opens
    it; the body becomes the raw file `name`. With `args`, the block holds several commands one
    after another, each opened by a line matching `heading` whose first group is the command's
    arguments; only the commands whose arguments are in `args` are kept. `example`: a heading line
    it must match (checked by the conformance test). `keep_heading`: the heading line stays as the
    body's first line (a command line that names the device the output is of)."""

    __slots__ = ("heading", "name", "example", "args", "rx", "keep_heading")

    def __init__(self, heading, name, example, args=(), keep_heading=False):
        self.heading = heading
        self.name = name
        self.example = example
        self.args = tuple(args)
        self.rx = re.compile(heading)
        self.keep_heading = keep_heading


class FileHint(object):
    """A parser hint taken from a raw file's name in the collector's layout
    (``hosts/<h>/raw/<source>/<name>``): the `key` is the first group of `pattern` on the name.
    `example`: (file name, the value it gives), checked by the conformance test."""

    __slots__ = ("key", "pattern", "example", "rx")

    def __init__(self, key, pattern, example):
        self.key = key
        self.pattern = pattern
        self.example = tuple(example)
        self.rx = re.compile(pattern)

    def value(self, name):
        m = self.rx.match(name)
        return m.group(1) if m else None


class Descriptor(object):
    """Everything a source declares besides its parser (see the module's docstring)."""

    __slots__ = ("source", "title", "collect", "sosreport", "bug_report", "file_hints", "events")

    def __init__(self, source, title, collect=(), sosreport=(), bug_report=(), file_hints=(), events=()):
        self.source = source
        self.title = title
        self.collect = tuple(collect)
        self.sosreport = tuple(sosreport)
        self.bug_report = tuple(bug_report)
        self.file_hints = tuple(file_hints)
        self.events = tuple(events)

    def hints_for(self, name):
        """Parser hints the collector-layout file name `name` gives."""
        out = {}
        for h in self.file_hints:
            v = h.value(name)
            if v is not None:
                out[h.key] = v
        return out

    def __repr__(self):
        return "Descriptor(%r)" % self.source
