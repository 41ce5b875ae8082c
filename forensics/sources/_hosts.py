"""A paste whose every line carries the name of the node that printed it: ``node01: <line>``.

Parallel shells print each output line of each node behind its name and ": " (pdsh, clush, pssh -i's
``-P``: ``node01: [   12.3] mlx5_core ...``, ``gpu-3: 0, NVIDIA H100, 81559 MiB``), and so does
``talosctl -n A,B dmesg`` (``10.5.0.3: kern:    info: [2022-07-28T11:49:42.489473063Z]: ...``). No tool of
the project starts nearly all of its lines with a host-like word and ": ", so such a prefix is the
collector's, not the tool's: the paste layer reads the lines of each node as one input of that node
(its host the node's name, where the table has a host column: never dropped), in the order the paste
has them, and puts the line numbers back (forensics.sources.parse_pasted). The names are also looked for
behind a quote prefix on every line, and one level inside another (a shell run through another: ``login1:
gpu1: ...``; the inner node printed the line and is its host): :func:`nodes_view`. A line without the prefix
(a ``/dev/kmsg`` dictionary line ``talosctl`` prints as is, a blank line) goes with the node of the line
above it; lines above the first prefixed line are read on their own, with the file's host.

The prefix is taken off only where the source reads the input more surely without it than with it
(forensics.sources.host_split: ``ethtool -S`` of be2net prints ``rxq0: rx_bytes: 5``, read as well either way): a syslog line cut before its host (``kernel: [ 10.8] ...``) or a sar
``Average:`` line starts with a word and ": " too, but not a host-like one (a host name here has a digit,
a dot or a hyphen: ``node01``, ``gpu-a``, ``10.1.1.2``, ``mc-pt1-srv-1a``), and ``ethtool -S`` counter
names (``tx-0.packets: 5``) read worse without it.

>>> hosts_of(b"node1: a\\nnode2: b\\nnode1: c\\n")
[b'node1', b'node2']
>>> hosts_of(b"kernel: a\\nkernel: b\\n") is None  # not host-like: no digit, dot or hyphen
True
>>> strip_hosts(b"node1: a\\n SUBSYSTEM=pci\\nnode2: b")
(b'a\\n SUBSYSTEM=pci\\nb', [b'node1', b'node1', b'node2'])
"""
from __future__ import annotations

import re
from collections import Counter

from forensics.sources import HOST_LEVELS as LEVELS  # node names read one inside the other ("login1: gpu1: ...")
from forensics.sources._quote import PREAMBLE, _lines

# (versioned with the rest of the paste layer: forensics.sources._quote.VERSION 7, 9)
SHARE = 0.9      # share of the weighed lines (blank and indented lines aside) that must carry a host prefix
MIN_LINES = 2    # fewer prefixed lines: no host prefix
MAX_HOSTS = 256  # more distinct names: not read per node (each node's lines are one parse)

# a host name (RFC 1123 labels, no underscore) or an IPv4 address, then ": " (pdsh's "%s: %s")
_HOST = re.compile(rb"^((?:[0-9]{1,3}(?:\.[0-9]{1,3}){3})|[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
                   rb"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*):(?: |\r?$)")  # (an empty line: "node1:")
_HOSTLIKE = re.compile(rb"[0-9.-]")


def _host(line: bytes) -> bytes | None:
    m = _HOST.match(line)
    if m is None:
        return None
    name = m.group(1)
    if not _HOSTLIKE.search(name) or name.isdigit():  # ("kernel", "Average", "0": not node names)
        return None
    return name


def hosts_of(head: bytes) -> list[bytes] | None:
    """The node names (in order of first appearance) that `SHARE` of the weighed lines of `head` start with, or
    None. Lines that start with a blank (a record's continuation the tool printed without the prefix) are not
    weighed, nor are the (at most PREAMBLE) lines above the first prefixed one (the prompt, a caption), but the
    prefixed lines must still be at least half of all the lines that start with no blank."""
    lines = [ln for ln in _lines(head) if ln[:1] not in (b" ", b"\t")]
    first = next((i for i, ln in enumerate(lines) if _host(ln) is not None), len(lines))
    if first > PREAMBLE:
        return None
    weighed = lines[first:]
    names = [h for ln in weighed if (h := _host(ln)) is not None]
    if len(names) < MIN_LINES or len(names) < SHARE * len(weighed) or 2 * len(names) < len(lines):
        return None
    seen = list(Counter(names))
    return seen if len(seen) <= MAX_HOSTS else None


def strip_hosts(data: bytes) -> tuple[bytes, list[bytes | None]]:
    """`data` with the node name and ": " taken off every line that starts with one, and the node of each line
    (that of the line above for a line without the prefix; None above the first prefixed line)."""
    out, owner, cur = [], [], None
    for ln in data.split(b"\n"):
        h = _host(ln)
        if h is not None:
            cur = h
            ln = ln[len(h) + 2:] if ln[len(h) + 1:len(h) + 2] == b" " else ln[len(h) + 1:]
        out.append(ln)
        owner.append(cur)
    if data.endswith(b"\n"):
        owner.pop()  # (the empty piece after the last newline is no line)
    return b"\n".join(out), owner


def groups(data: bytes) -> tuple[list[tuple[bytes | None, bytes, list[int]]], int]:
    """The lines of `data` by node, each node's lines in the paste's order without the prefix: (node, text, the
    1-based line numbers in `data` of its lines), nodes in order of first appearance (None first: the lines above
    the first prefixed one), and how many lines carried the prefix."""
    text, owner = strip_hosts(data)
    lines = text.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    by: dict[bytes | None, list[int]] = {}
    for i, h in enumerate(owner):
        by.setdefault(h, []).append(i)
    out = [(h, b"".join(lines[i] + b"\n" for i in idx), [i + 1 for i in idx]) for h, idx in by.items()]
    prefixed = sum(1 for ln in data.split(b"\n") if _host(ln) is not None)
    return out, prefixed


def nodes_view(head: bytes) -> tuple[list[bytes] | None, bytes, bytes, list[bytes] | None]:
    """(the node names before the lines of `head`, `head` as the sniffers weigh it without them, the quote prefix
    read through to find them, the outermost names): the names of up to LEVELS parallel shells one inside the other
    ("login1: gpu1: ..." is read per inner node: the node that printed the line; the outermost names are login1's),
    looked for also behind a quote prefix that stands before them on every line ("> node01: ...");
    (None, `head`, b"", None) where no line carries one."""
    from forensics.sources._quote import block_parts, strip_prefix

    nodes, view, quote = hosts_of(head), head, b""
    if not nodes:
        quote = block_parts(head)[0]
        if not quote:
            return None, head, b"", None
        view = strip_prefix(head, quote)
        nodes = hosts_of(view)
        if not nodes:
            return None, head, b"", None
    outer = nodes
    parts = [(node, text) for node, text, _ in groups(view)[0]]
    for _ in range(LEVELS - 1):  # the names inside, each outer node's lines weighed on their own
        inner = [hosts_of(text) for node, text in parts if node is not None]  # (not the lines above the first name)
        if not all(inner):
            break
        nodes = list(dict.fromkeys(n for names in inner for n in names))
        parts = [(n, t) for node, text in parts
                 for n, t, _ in (groups(text)[0] if node is not None else [(None, text, [])])]
    return nodes, b"".join(text for _, text in parts), quote, outer


def grouped(head: bytes) -> bytes:
    """`head` as the sniffers weigh it: each node's lines together without the prefix, nodes in order of first
    appearance (what ``dshbak`` shows; a record a node printed over several lines stays whole)."""
    return b"".join(text for _, text, _ in groups(head)[0])
