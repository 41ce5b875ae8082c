"""The regular expressions of redaction: what an identifier looks like in text.

Two dialects of the same rules: Python ``re`` patterns (with look-around) do the replacing, on the
lines that a cheaper Rust-regex prefilter (polars, vectorised) flagged; the prefilter is a
superset of every replacing pattern, so a line it does not flag holds nothing to replace.

Boundaries (the characters an identifier may not touch) are defined once here and shared by the
replacer and the leak check, so both agree on what "the value appears" means.
"""
from __future__ import annotations

import re

HEX = "[0-9A-Fa-f]"
OCT = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
V4 = rf"{OCT}(?:\.{OCT}){{3}}"
H4 = f"{HEX}{{1,4}}"

# Characters that may not touch each kind of value (look-behind, look-ahead).
NAME_CH = "A-Za-z0-9_"  # "-" is no boundary: torchrun-node01.log, node01-ib hold the host
SERIAL_CH = "A-Za-z0-9"
GUID_CH = "0-9A-Za-z:"

P_V4 = rf"(?<![0-9.]){V4}(?![0-9]|\.[0-9])"
P_HW = (rf"(?<![0-9A-Fa-f:-]){HEX}{{2}}(?P<hwsep>[:-]){HEX}{{2}}(?:(?P=hwsep){HEX}{{2}}){{4}}"
        rf"(?:(?:(?P=hwsep){HEX}{{2}}){{2}}(?:(?:(?P=hwsep){HEX}{{2}}){{12}})?)?(?![0-9A-Fa-f:-])")
P_UUID = rf"(?<![0-9A-Fa-f]){HEX}{{8}}-{HEX}{{4}}-{HEX}{{4}}-{HEX}{{4}}-{HEX}{{12}}(?![0-9A-Fa-f])"
_V6_TAIL = rf"(?:(?:{H4}:){{0,5}}{V4}|{H4}(?::{H4}){{0,6}})"
P_V6 = (
    r"(?:"
    # 8 groups (GIDs as sysfs and NCCL print them), also right after the index of a GID table entry
    # as `grep -H . /sys/class/infiniband/<dev>/ports/<port>/gids/*` prints it (".../gids/3:0000:...")
    rf"(?:(?<![0-9A-Fa-f:.])|(?<=/gids/[0-9]:)|(?<=/gids/[0-9]{{2}}:)|(?<=/gids/[0-9]{{3}}:))(?:{H4}:){{7}}{H4}"
    rf"|(?<![0-9A-Fa-f:.])(?:{H4}:){{6}}{V4}"
    rf"|(?<![0-9A-Fa-f:.]){H4}(?::{H4}){{0,6}}::{_V6_TAIL}?"
    rf"|(?<![A-Za-z0-9_:.])::{_V6_TAIL}?"
    rf"|(?<=[A-Za-z_])::(?:{H4}:){{0,5}}{V4}"  # NCCL's "remoteGids::ffff:10.1.2.3"
    r")(?:%[0-9A-Za-z_.-]+)?(?![0-9A-Za-z_:]|\.[0-9])"
)
P_IPHOST = rf"(?<![{NAME_CH}])ip-{OCT}-{OCT}-{OCT}-{OCT}(?![{NAME_CH}])"
P_HOME = (r"(?:(?<=/home/)|(?<=/Users/)|(?<=\\Users\\)|(?<=/export/home/))"
          r"(?!user-[0-9a-f]{8}(?![A-Za-z0-9_.-]))[A-Za-z_][A-Za-z0-9_.-]*")
P_USERKV = r"(?:(?<=[Uu][Ss][Ee][Rr]=)|(?<=[Uu][Ss][Ee][Rr][Nn][Aa][Mm][Ee]=))[A-Za-z_][A-Za-z0-9_.-]*"
P_REFID = rf"Reference ID\s*:\s*(?P<refhex>[0-9A-F]{{8}}) \((?P<refip>{V4})\)"  # chronyc tracking

# The bundle's own layout (ARCHITECTURE.md "Bundle format"): paths of members, of the ``file`` column
# of every table and of ``raw_file`` in commands.jsonl. A host may be named like any of these words
# (one real capture's host is literally "host"); only the host's own places in a path are renamed.
BUNDLE_TOPS = ("hosts", "tables", "truth")
HOST_FILES = frozenset(("host.json", "commands.jsonl", "raw"))  # hosts/<host>/<this>
TOP_FILES = frozenset(("manifest.json", ".archive-members.json"))
# words of the layout itself, left in every redacted bundle whatever its hosts are called
LAYOUT_WORDS = frozenset(BUNDLE_TOPS) | {"host", "commands", "manifest", "raw", "part"}
PATH_DELIMS = " \t\"',;()[]{}<>|"  # what ends a path written inside a line (JSON value, argv)
JSON_KEY = r'"\s*:'  # after a name: it is a JSON object key
# the keys of the layout's own JSON (host.json, commands.jsonl, manifest.json and its redaction
# record): a host called like one of them keeps them ("host": ...); any other key is data and renamed
LAYOUT_JSON_KEYS = frozenset((
    "host hostname kernel boot_time boot_time_btime timezone utc_offset_s clock wall monotonic_s ntp_offset_s "
    "ntp_source collector version python argv interrupted signal duration_s interval_s started ended nics iface "
    "pci_addr numa_node driver rdma_dev mac mtu speed_mbps operstate "
    "name source start end exit_code bytes truncated timed_out error stderr_tail raw_file sample "
    "format_version created_by created_at hosts redaction kind redacted classes kept tool key_id redacted_at "
    "counts previous").split())

# Generic alternatives in priority order (at one position the first that matches wins).
GENERIC = (("refid", P_REFID), ("hw", P_HW), ("uuid", P_UUID), ("v6", P_V6), ("v4", P_V4),
           ("iphost", P_IPHOST), ("home", P_HOME), ("userkv", P_USERKV))

# Rust (polars) prefilter: a line that matches none of these holds no generic identifier.
RUST_UUID = r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-"
RUST_OTHER = "|".join((
    r"[0-9]\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]",
    r"::",
    r"[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:",
    r"[0-9A-Fa-f]{2}-[0-9A-Fa-f]{2}-[0-9A-Fa-f]{2}-[0-9A-Fa-f]{2}-[0-9A-Fa-f]{2}-",
    r"/home/|/Users/|\\Users\\|(?i:user(?:name)?=)",
    r"ip-[0-9]{1,3}-[0-9]{1,3}-",
    r"Reference ID",
))
RUST_GENERIC = RUST_UUID + "|" + RUST_OTHER
RUST_UUID_BARE = r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"

# ------------------------------------------------------------------ structural discovery (Rust)
# Each has one capture group: the value. Used with polars str.extract / extract_all on lines.
DISCOVER_HOSTS = (
    # NCCL "host:pid:tid [dev]" after an optional launcher prefix
    r"(?:^|[ >:\]])([A-Za-z0-9][A-Za-z0-9._-]*):[0-9]+:[0-9]+ \[[0-9]+\] ",
    # NCCL without pid (some containers): "host [dev] NCCL"
    r"(?:^|[ >:\]])([A-Za-z][A-Za-z0-9._-]*) \[[0-9]+\] NCCL ",
    # sysstat header "Linux 5.15.0-112-generic (node01) 	11/30/2026 ..."
    r"^Linux [^ ]+ \(([^)\s]+)\)",
    # syslog / journalctl short: "Nov 30 10:00:00 host program[pid]: "
    r"^[A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} ([A-Za-z0-9][A-Za-z0-9._-]*) "
    r"[A-Za-z_][A-Za-z0-9_./-]*(?:\[[0-9]+\])?: ",
    # journalctl short-iso / RFC 3339 syslog: "<time> host kernel: " or "<time> host prog[pid]: "
    # (not dmesg --time-format iso, whose second word is a driver: "<time> nvme nvme0: ...")
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.,+-]+Z? ([A-Za-z0-9][A-Za-z0-9._-]*) "
    r"(?:kernel|[A-Za-z_][A-Za-z0-9_./-]*\[[0-9]+\]): ",
    # hostnamectl, key: value and JSON forms
    r"(?i)\bhost ?name\"?\s*[:=]\s*\"?([A-Za-z0-9][A-Za-z0-9._-]*)",
    # shell prompts pasted with an output: "[alice@node07 ~]$ ", "alice@node07:~$ ", "root@node01:/# "
    r"\[[A-Za-z_][A-Za-z0-9_.-]*@([A-Za-z0-9][A-Za-z0-9._-]*)[ :][^\]]*\][$#]",
    r"(?:^|[\s>])[A-Za-z_][A-Za-z0-9_.-]*@([A-Za-z0-9][A-Za-z0-9._-]*):[~/][^\s]*[$#](?:\s|$)",
    # user@host elsewhere (ssh targets, scp sources, mail addresses): a host of 3+ characters
    r"(?:^|[\s\"'(<=,])" + "[a-z_][a-z0-9_.-]{0,31}" + r"@([A-Za-z][A-Za-z0-9-]{2,}(?:\.[A-Za-z][A-Za-z0-9-]*)*)(?:$|[\s\"'):>,\]])",
)
# the user of a prompt or of user@host (capture group 1)
DISCOVER_USER_AT = (
    r"\[([A-Za-z_][A-Za-z0-9_.-]*)@[A-Za-z0-9][A-Za-z0-9._-]*[ :][^\]]*\][$#]",
    r"(?:^|[\s>])([A-Za-z_][A-Za-z0-9_.-]*)@[A-Za-z0-9][A-Za-z0-9._-]*:[~/][^\s]*[$#](?:\s|$)",
    r"(?:^|[\s\"'(<=,])([a-z_][a-z0-9_.-]{0,31})@[A-Za-z][A-Za-z0-9-]{2,}(?:\.[A-Za-z][A-Za-z0-9-]*)*(?:$|[\s\"'):>,\]])",
)
# NCCL peers printed by name: "remote peer a100-st-22.cluster<47861>" (all matches of a line)
# (not an interface after an IPv6 zone: "fe80::1%ib0<33397>"); the match starts with the character before
DISCOVER_PEERS = r"(?:^|[^A-Za-z0-9_.%-])[A-Za-z][A-Za-z0-9._-]*[A-Za-z0-9]<[0-9]+>"
DISCOVER_SERIAL = (
    r"(?i)serial(?:[ _-]?(?:number|num|no\.?))?\s*[:=]\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*$",
    r"(?i)<[a-z_]*serial[a-z_]*>\s*([^<\s]+)\s*</",
    # the GPU's Per-Device Identifier (nvidia-smi -q from driver 575 on: "GPU PDI : 0x8ae21ce04abcb64b"),
    # as unique to one board as its serial number, and redacted with the serials
    r"(?i)\bGPU PDI\s*:\s*(0x[0-9a-f]{8,16})\s*$",
    r"(?i)<(?:gpu_)?pdi>\s*(0x[0-9a-f]{8,16})\s*</",
)
DISCOVER_GUID = r"(?i)guid[^:=\n]{0,24}[:=]\s*(0x[0-9a-f]{16}|[0-9a-f]{4}(?::[0-9a-f]{4}){3}|[0-9a-f]{16})\b"
DISCOVER_USERS = r"(?:/home/|/Users/|/export/home/|\\Users\\|(?i:\buser(?:name)?=))[A-Za-z_][A-Za-z0-9_.-]*"

# A line none of the DISCOVER_* patterns can match fails this cheap test.
DISCOVER_PREFILTER = "|".join((
    r":[0-9]+:[0-9]+ \[", r" \[[0-9]+\] NCCL ", r"^Linux ", r"^[A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:",
    r"kernel: ", r"\]: ", r"(?i:host ?name)", r"[A-Za-z0-9]<[0-9]+>", r"(?i:serial)", r"(?i:pdi)", r"(?i:guid)",
    r"/home/|/Users/|/export/home/|\\Users\\", r"(?i:user(?:name)?=)", r"[A-Za-z0-9_]@[A-Za-z0-9]",
))

SERIAL_IGNORE = frozenset(s.lower() for s in (
    "N/A", "[N/A]", "NA", "None", "Unknown", "Not Specified", "Not Available", "To Be Filled By O.E.M.",
    "Default string", "System Serial Number", "0", "00000000", "0000000000000", "123456789", "0123456789",
    "[Not Supported]", "Not Supported", "Empty", "unknown",
))
FILE_EXTS = frozenset("log txt json jsonl out err gz zst xz bz2 tar tgz csv xml html md py sh cc cpp c h so "
                      "yaml yml conf cfg ini pid lock sock tmp bak old 1 2 3".split())


def valid_serial(value: str) -> bool:
    v = value.strip()
    if len(v) < 4 or v.lower() in SERIAL_IGNORE or not any(c.isdigit() for c in v):
        return False
    return bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", v)) and len(set(v)) > 1


def literal_alt(values, flags: str = "") -> str:
    """Alternation of escaped literals, longest first (so a FQDN wins over its short name)."""
    body = "|".join(re.escape(v) for v in sorted(set(values), key=lambda s: (-len(s), s)))
    return f"(?{flags}:{body})" if flags else f"(?:{body})"


def rust_literal_alt(values) -> str:
    """The same for the Rust regex dialect (polars): case-insensitive."""
    return "(?i:" + "|".join(_rust_escape(v) for v in sorted(set(values), key=lambda s: (-len(s), s))) + ")"


def _rust_escape(text: str) -> str:
    return "".join("\\" + c if c in r"\.+*?()|[]{}^$#&-~" else c for c in text)
