"""Split an ``nvidia-bug-report.log(.gz)`` into the raw outputs our parsers read.

nvidia-bug-report.sh appends blocks to its log (each through ``gzip -c >>``, so the .gz holds many
gzip members). Every block starts with a separator line of 44 underscores, a blank line and a
heading: ``*** /proc/...`` for files, the command line for commands (``/usr/bin/nvidia-smi --query``,
``/usr/bin/numactl -H``), ``dmesg:`` for the kernel ring buffer, ``Scanning kernel log files for
NVIDIA kernel messages:`` for grepped syslog/journal lines. The nvidia-smi block holds several
commands one after another (``--query``, ``--query --unit``, ``nvlink ...``), each heading followed
by a blank line.

Each source declares the sections it reads (``bug_report`` in ``forensics/sources/<name>_spec.py``):
dmesg (-> dmesg), the NVIDIA kernel messages (-> dmesg; syslog/journal lines), ``nvidia-smi --query``
(-> nvidia_smi), ``nvidia-smi nvlink --status`` and ``--errorcounters`` (-> nvlink), ``numactl -H`` (-> numactl),
and more (each source's spec says); the prologue gives the host (``uname: Linux <host>
<release> ...``) and kernel release.

>>> text = ("____________________________________________\\n\\nStart of NVIDIA bug report log file.\\n\\n"
...         "uname: Linux gpu-node-7 5.15.0-112-generic #122-Ubuntu SMP x86_64 GNU/Linux\\n\\n"
...         "____________________________________________\\n\\ndmesg:\\n\\n[    0.000000] Linux version 5.15.0\\n"
...         "____________________________________________\\n\\n/usr/bin/nvidia-smi --query\\n\\n"
...         "==============NVSMI LOG==============\\n\\n"
...         "/usr/bin/nvidia-smi --query --unit\\n\\n==============NVSMI LOG==============\\n")
>>> rep = split_report(text.encode())
>>> rep.host, rep.kernel
('gpu-node-7', '5.15.0-112-generic')
>>> [(s.source, s.name, s.data.decode().splitlines()[0]) for s in rep.sections]
[('dmesg', 'nvidia-bug-report-dmesg.txt', '[    0.000000] Linux version 5.15.0'), ('nvidia_smi', 'nvidia-bug-report-q.txt', '==============NVSMI LOG==============')]
"""
from __future__ import annotations

import gzip
import re
from dataclasses import dataclass, field

from forensics.sources import descriptors

SEPARATOR = "_" * 44
START = "Start of NVIDIA bug report log file"
_SEP = re.compile(r"^_{40,}\s*$")
_UNAME = re.compile(r"^uname:\s+\S+\s+(\S+)\s+(\S+)")


@dataclass
class Section:
    source: str
    name: str
    data: bytes
    heading: str


@dataclass
class Report:
    host: str | None = None
    kernel: str | None = None
    sections: list[Section] = field(default_factory=list)


def is_bug_report(head: bytes) -> bool:
    """True for the (decompressed) start of an nvidia-bug-report log."""
    return START.encode() in head[:4096]


def read_maybe_gzip(data: bytes, limit: int) -> bytes:
    """Decompress a (multi-member) gzip up to `limit` bytes; plain data is returned as is."""
    if not data.startswith(b"\x1f\x8b"):
        return data
    import io

    out = bytearray()
    with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
        while True:
            block = gz.read(1 << 20)
            if not block:
                break
            out += block
            if len(out) > limit:
                raise ValueError(f"decompresses to more than {limit} bytes")
    return bytes(out)


def _blocks(lines: list[str]) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for ln in lines:
        if _SEP.match(ln):
            blocks.append([])
        else:
            blocks[-1].append(ln)
    return blocks


def _strip_heading(block: list[str]) -> tuple[str, list[str]]:
    i = 0
    while i < len(block) and not block[i].strip():
        i += 1
    if i >= len(block):
        return "", []
    heading, body = block[i].strip(), block[i + 1:]
    if body and not body[0].strip():
        body = body[1:]
    return heading, body


def _trim(body: list[str]) -> bytes:
    while body and not body[-1].strip():
        body = body[:-1]
    return ("\n".join(body) + "\n").encode() if body else b""


def _sections() -> list:
    """(source, BugSection) for every section a source declares, sources by name."""
    return [(name, sec) for name, d in descriptors().items() for sec in d.bug_report]


def _commands(rx: re.Pattern, heading: str, body: list[str]) -> list[tuple[str, str, list[str]]]:
    """(arguments, command line, output lines) of each command in a block holding several, each
    opened by a line matching `rx` (its first group: the arguments) between blank lines."""
    cur_args, cur_cmd, cur = rx.match(heading).group(1) or "", heading, []
    parts: list[tuple[str, str, list[str]]] = []
    for i, ln in enumerate(body):
        m = rx.match(ln)
        prev_blank = i == 0 or not body[i - 1].strip()
        next_blank = i + 1 >= len(body) or not body[i + 1].strip()
        if m and prev_blank and next_blank:
            parts.append((cur_args, cur_cmd, cur))
            cur_args, cur_cmd, cur = m.group(1) or "", ln.strip(), []
            continue
        cur.append(ln)
    parts.append((cur_args, cur_cmd, cur))
    return [(a, c, lines[1:] if lines and not lines[0].strip() else lines) for a, c, lines in parts]


def split_report(data: bytes) -> Report:
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    rep = Report()
    counts: dict[str, int] = {}

    def add(source: str, base: str, body: list[str], heading: str) -> None:
        payload = _trim(body)
        if not payload:
            return
        n = counts.get(base, 0)
        counts[base] = n + 1
        name = base if n == 0 else base.replace(".txt", f"-{n + 1}.txt")
        rep.sections.append(Section(source, name, payload, heading))

    for block in _blocks(text.split("\n")):
        heading, body = _strip_heading(block)
        if heading.startswith(START):
            for ln in body:
                m = _UNAME.match(ln)
                if m:
                    rep.host = m.group(1).split(".")[0] or None
                    rep.kernel = m.group(2)
            continue
        for source, sec in _sections():
            if sec.rx.match(heading):
                if sec.args:  # a block of several commands: every source's section takes its own commands
                    for args, cmd, lines in _commands(sec.rx, heading, body):
                        if args.strip() in sec.args:
                            add(source, sec.name, lines, cmd)
                    continue
                add(source, sec.name, [heading] + body if sec.keep_heading else body, heading)
                break
    return rep
