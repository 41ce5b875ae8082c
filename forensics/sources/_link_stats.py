"""Interface counters that `ifconfig` and `ip -s link` print, read out of a paste of another tool's
output (people paste them with ``ethtool -S``: "ifconfig shows drops, here is ethtool -S").

Three block shapes, each starting at an unindented header line that names the interface:

* net-tools 1.60 ``ifconfig`` (``eth0      Link encap:Ethernet  HWaddr ...``): indented
  ``RX packets:N errors:N dropped:N overruns:N frame:N``, ``TX packets:N ... carrier:N``,
  ``collisions:N txqueuelen:N``, ``RX bytes:N (3.4 TB)  TX bytes:N (4.6 TB)``;
* net-tools 2.10 ``ifconfig`` (``eth0: flags=4163<UP,...>  mtu 1500``): ``RX packets N  bytes N (..)``,
  ``RX errors 0  dropped 0  overruns 0  frame 0``, ``TX errors 0  dropped 0 overruns 0  carrier 0
  collisions 0``;
* iproute2 ``ip -s [-s] link`` (``6: eth4: <BROADCAST,...> mtu 1500 ...``): a ``RX: bytes packets
  errors dropped overrun mcast`` title line, its values on the next line; ``RX errors: length crc
  ...`` and ``TX ...`` pairs alike (``ip -s -s``).

Counters are named as the kernel's ``struct rtnl_link_stats64`` fields the tools print (net-tools
``lib/interface.c`` ``ife_print_long``: ifconfig's RX/TX ``overruns`` is ``rx/tx_fifo_errors``,
``frame`` ``rx_frame_errors``, ``carrier`` ``tx_carrier_errors``; iproute2 ``print_link_stats``:
``overrun`` is ``rx_over_errors``, ``missed`` ``rx_missed_errors``, ``collsns`` ``collisions``,
``transns`` ``carrier_changes``); a column this table does not know keeps ``rx_``/``tx_`` + its
printed name. ``raw_name`` is what was printed (``RX overruns``).

Lines of a block that hold no counter (addresses, flags, ``link/ether``, ``Interrupt:``, a header
wrapped by the paste) are skipped, each with its reason: they are not unparsed (they are the other
tool's output, recognised) and not data.

>>> rows, used, skipped = read([(1, "lo: flags=73<UP,LOOPBACK,RUNNING>  mtu 65536"),
...     (2, "        inet 127.0.0.1  netmask 255.0.0.0"),
...     (3, "        RX packets 2  bytes 100 (100.0 B)"),
...     (4, "        RX errors 0  dropped 1  overruns 0  frame 0")])
>>> [(r["line_no"], r["iface"], r["counter"], r["value"]) for r in rows][:3]
[(3, 'lo', 'rx_packets', 2), (3, 'lo', 'rx_bytes', 100), (4, 'lo', 'rx_errors', 0)]
>>> sorted(used), skipped
([1, 3, 4], [(2, 'ifconfig line without counters (address, flags, hardware)')])
"""
from __future__ import annotations

import re

from forensics.sources._bounded import int_or_none

IFCONFIG = "ifconfig"
IP_LINK = "ip -s link"

# what a head of input must hold for the (Python) block reader to be worth running
SIGNS = (b"Link encap:", b"RX packets", b"RX: bytes", b"RX:  bytes", b"RX:    bytes")

_OLD_HEAD = re.compile(r"^([^\s:]+(?::[0-9]+)?)\s+Link encap:")
_NEW_HEAD = re.compile(r"^([^\s:]+): flags=[0-9]+<[^>]*>")
_IP_HEAD = re.compile(r"^[0-9]+: ([^\s:@]+)(?:@[^\s:]+)?: <[^>]*>")
_IP_TITLE = re.compile(r"^\s+([RT]X)(?: errors)?:((?:\s+[A-Za-z_]+)+)\s*$")
_IP_VALUES = re.compile(r"^\s+[0-9]+(?:\s+[0-9]+)*\s*$")
_OLD_KV = re.compile(r"([A-Za-z]+(?: [a-z]+)?):([0-9]+)")
_NEW_KV = re.compile(r"(packets|bytes|errors|dropped|overruns|frame|carrier|collisions) ([0-9]+)")

# (direction, printed name) -> rtnl_link_stats64 field
IFCONFIG_NAMES = {
    ("RX", "packets"): "rx_packets", ("RX", "errors"): "rx_errors", ("RX", "dropped"): "rx_dropped",
    ("RX", "overruns"): "rx_fifo_errors", ("RX", "frame"): "rx_frame_errors", ("RX", "bytes"): "rx_bytes",
    ("TX", "packets"): "tx_packets", ("TX", "errors"): "tx_errors", ("TX", "dropped"): "tx_dropped",
    ("TX", "overruns"): "tx_fifo_errors", ("TX", "carrier"): "tx_carrier_errors", ("TX", "bytes"): "tx_bytes",
    ("TX", "collisions"): "collisions", ("", "collisions"): "collisions",
    ("RX", "compressed"): "rx_compressed", ("TX", "compressed"): "tx_compressed",
}
IP_NAMES = {
    ("RX", "bytes"): "rx_bytes", ("RX", "packets"): "rx_packets", ("RX", "errors"): "rx_errors",
    ("RX", "dropped"): "rx_dropped", ("RX", "overrun"): "rx_over_errors", ("RX", "missed"): "rx_missed_errors",
    ("RX", "mcast"): "multicast", ("RX", "length"): "rx_length_errors", ("RX", "crc"): "rx_crc_errors",
    ("RX", "frame"): "rx_frame_errors", ("RX", "fifo"): "rx_fifo_errors", ("RX", "nohandler"): "rx_nohandler",
    ("RX", "otherhost"): "rx_otherhost_dropped",
    ("TX", "bytes"): "tx_bytes", ("TX", "packets"): "tx_packets", ("TX", "errors"): "tx_errors",
    ("TX", "dropped"): "tx_dropped", ("TX", "carrier"): "tx_carrier_errors", ("TX", "collsns"): "collisions",
    ("TX", "aborted"): "tx_aborted_errors", ("TX", "fifo"): "tx_fifo_errors", ("TX", "window"): "tx_window_errors",
    ("TX", "heartbeat"): "tx_heartbeat_errors", ("TX", "heartbt"): "tx_heartbeat_errors",  # (iproute2 6.x: heartbt)
    ("TX", "transns"): "carrier_changes",
}
NO_COUNTERS = {IFCONFIG: "ifconfig line without counters (address, flags, hardware)",
               IP_LINK: "ip -s link line without counters (address, altname, wrapped header)"}
INT64_MAX = (1 << 63) - 1


def looks_present(data: bytes) -> bool:
    """Whether `data` may hold an ifconfig or ip -s link block (a few substring searches)."""
    return any(s in data for s in SIGNS)


_COMMAND = re.compile(r"(?:^|[\s$#>;|])(?:/s?bin/)?(?:ifconfig|ip\s+(?:-[a-z0-9]+\s+)*(?:link|l|addr|a)\b)")
_WRAPPED = ("state ", "mode ", "group ", "qlen ")


def is_command(s: str) -> bool:
    """Whether stripped line `s` is a shell command line (or prompt) running ifconfig or ip link."""
    return len(s) < 200 and bool(_COMMAND.search(s))


def is_wrapped_head(line: str) -> bool:
    """An ip -s link header's tail that the paste put on a line of its own ("state UP qlen 1000")."""
    return line.startswith(_WRAPPED)


def head_iface(line: str) -> tuple[str, str] | None:
    """(tool, interface) when `line` opens an ifconfig or ip -s link block, else None."""
    for tool, pat in ((IFCONFIG, _OLD_HEAD), (IFCONFIG, _NEW_HEAD), (IP_LINK, _IP_HEAD)):
        m = pat.match(line)
        if m:
            return tool, m.group(1)
    return None


def _value(digits: str) -> int | None:
    """A counter's digits as a number, None past int64 (any run of digits: int() refuses over 4,300)."""
    return int_or_none(digits, 0, INT64_MAX)


def _ifconfig_counters(s: str) -> list[tuple[str, str, int]] | None:
    """(counter, raw name, value) of one indented ifconfig line; None for a line without counters."""
    body = s.strip()
    direction = body[:2] if body[:3] in ("RX ", "TX ") else ""
    if ":" in body and _OLD_KV.search(body) and ("packets:" in body or "bytes:" in body or "collisions:" in body):
        out = []
        for part in re.split(r"\s{2,}", body) if "bytes:" in body else [body]:
            d = part[:2] if part[:3] in ("RX ", "TX ") else direction
            for name, v in _OLD_KV.findall(part[3:] if d and part.startswith(d) else part):
                name = name.split()[-1]
                if name == "txqueuelen":
                    continue
                counter = IFCONFIG_NAMES.get((d, name), f"{d.lower()}_{name}" if d else name)
                out.append((counter, f"{d} {name}".strip(), _value(v)))
        return out or None
    if direction or body.startswith("collisions"):
        pairs = _NEW_KV.findall(body)
        if pairs:
            return [(IFCONFIG_NAMES.get((direction, n), f"{direction.lower()}_{n}"), f"{direction} {n}".strip(), _value(v))
                    for n, v in pairs]
    return None


def read(lines: list[tuple[int, str]]) -> tuple[list[dict], set[int], list[tuple[int, str]]]:
    """Rows (line_no, iface, tool, counter, raw_name, value) of the ifconfig / ip -s link blocks
    among `lines` ((line_no, text) in order), the line numbers used (headers, counter lines) and the
    skipped lines (line_no, reason) of those blocks. Lines outside a block are left alone."""
    rows: list[dict] = []
    used: set[int] = set()
    skipped: list[tuple[int, str]] = []
    tool = iface = None
    title: tuple[str, list[str]] | None = None  # an ip title line waiting for its values
    prev = None
    for ln, text in lines:
        contiguous = prev is not None and ln == prev + 1
        prev = ln
        if not text.strip():  # a blank line ends a block
            tool = iface = title = None
            continue
        head = head_iface(text)
        if head:
            tool, iface = head
            title = None
            used.add(ln)
            continue
        if tool is None or not contiguous:
            tool = iface = title = None
            continue
        if not text[:1].isspace():
            if tool == IP_LINK and is_wrapped_head(text):
                skipped.append((ln, NO_COUNTERS[tool]))  # the header line wrapped by the paste
                continue
            tool = iface = title = None
            continue
        if tool == IFCONFIG:
            got = _ifconfig_counters(text)
        else:
            got = None
            t = _IP_TITLE.match(text)
            if t:
                title = (t.group(1), t.group(2).split())
                used.add(ln)
                continue
            if title and _IP_VALUES.match(text):
                vals = text.split()
                if len(vals) <= len(title[1]):
                    got = [(IP_NAMES.get((title[0], n), f"{title[0].lower()}_{n}"), f"{title[0]} {n}", _value(v))
                           for n, v in zip(title[1], vals)]
                title = None
        if got is None:
            skipped.append((ln, NO_COUNTERS[tool]))
            continue
        good = [g for g in got if g[2] is not None]
        if len(good) < len(got):  # a value past int64: the line is not read (the caller keeps it unparsed)
            continue
        used.add(ln)
        rows.extend({"line_no": ln, "iface": iface, "tool": tool, "counter": c, "raw_name": r, "value": v}
                    for c, r, v in got)
    return rows, used, skipped
