"""Finding the identifiers that have no fixed shape: host names, domains, serials, GUIDs, users.

Addresses, MACs and UUIDs are recognised by their shape wherever they are (see
:mod:`forensics.redact.rewrite`); a host name or a serial number is just a word, so it is collected
*structurally* first and then replaced as a literal everywhere, including free text (``node07``
inside a kernel message, a FQDN in NCCL's "Connection closed by remote peer
a100-st-22.cluster<47861>"). Sources, in this order:

1. the manifest's hosts, host.json (``host``, ``hostname``), the hosts partitions, ``hosts.hostname``
   and ``gpus.serial`` of the bundle's tables when it has them (what the parsers understood);
2. every raw file, with vectorised extractions: NCCL ``host:pid:tid [dev]`` prefixes, sysstat
   headers ``Linux ... (host)``, syslog/journalctl host fields, ``hostname: x`` lines, NCCL peers
   printed by name (``name<port>``), shell prompts and ``user@host`` (host and user),
   ``Serial Number : x`` and ``<serial>x</serial>``, the ``serial``
   column of an nvidia-smi CSV, ``... GUID: 0x...`` (ibstat, ibv_devinfo), home directories and
   ``user=`` fields;
3. names written as ``<label>.<known domain>`` and domains written after a known host
   (``node07.corp.example``, a last label that is a file extension excepted: ``node07.log``).
"""
from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from forensics.redact import patterns as P
from forensics.redact.codec import line_blocks, member_kind, reader
from forensics.redact.mapper import PSEUDO_HOST, PSEUDO_USER, _KEEP_HOSTS, _SYSTEM_USERS

_NAME = re.compile(r"^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$")


@dataclass
class Known:
    hosts: set[str] = field(default_factory=set)     # lower case: short names and FQDNs
    domains: set[str] = field(default_factory=set)
    serials: set[str] = field(default_factory=set)
    guids: set[int] = field(default_factory=set)
    users: set[str] = field(default_factory=set)

    def add_host(self, name: object) -> None:
        if not isinstance(name, str):
            return
        low = name.strip().strip(".").lower()
        if len(low) < 2 or low in _KEEP_HOSTS or low.isdigit() or not _NAME.match(low) or low == "_":
            return
        try:
            ipaddress.ip_address(low)
            return  # an address: the address rules map it
        except ValueError:
            pass
        short, _, domain = low.partition(".")
        if len(short) < 2 or PSEUDO_HOST.match(low) or PSEUDO_HOST.match(short):  # "x.x.x.x": a placeholder
            return
        self.hosts.add(low)
        if domain:
            self.hosts.add(short)
            self.add_domain(domain)

    def add_domain(self, domain: str) -> None:
        low = domain.strip(".").lower()
        if low and low not in _KEEP_HOSTS and not re.match(r"^dom-[0-9a-f]{8}$", low) and _NAME.match(low):
            self.domains.add(low)

    def add_serial(self, value: object) -> None:
        if isinstance(value, str) and P.valid_serial(value):
            self.serials.add(value.strip())

    def add_guid(self, text: str) -> None:
        h = text.lower().replace("0x", "").replace(":", "")
        if len(h) == 16:
            v = int(h, 16)
            if v not in (0, (1 << 64) - 1):
                self.guids.add(v)

    def add_user(self, name: str) -> None:
        if name and name.lower() not in _SYSTEM_USERS and not PSEUDO_USER.match(name) and len(name) >= 2:
            self.users.add(name)

    def update(self, other: "Known") -> bool:
        """Merge `other` in; True when something was new."""
        before = self.size()
        self.hosts |= other.hosts
        self.domains |= other.domains
        self.serials |= other.serials
        self.guids |= other.guids
        self.users |= other.users
        return self.size() != before

    def fingerprint(self) -> tuple:
        return (tuple(sorted(self.hosts)), tuple(sorted(self.domains)), tuple(sorted(self.serials)),
                tuple(sorted(self.guids)), tuple(sorted(self.users)))

    def size(self) -> int:
        return len(self.hosts) + len(self.domains) + len(self.serials) + len(self.guids) + len(self.users)


# ------------------------------------------------------------------ bundle metadata and tables


def from_metadata(root: Path, manifest: dict, known: Known) -> None:
    for h in manifest.get("hosts") or []:
        known.add_host(h)
    hosts_dir = root / "hosts"
    for h in manifest.get("hosts") or []:
        try:
            info = json.loads((hosts_dir / h / "host.json").read_bytes().decode("utf-8", "replace"))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(info, dict):
            known.add_host(info.get("host"))
            known.add_host(info.get("hostname"))


def from_tables(tables: Path, known: Known) -> None:
    """Host partitions of every table, ``hosts.hostname``, ``gpus.serial`` (when tables exist)."""
    if not tables.is_dir():
        return
    for tdir in tables.iterdir():
        if not tdir.is_dir():
            continue
        for part in tdir.glob("host=*"):
            known.add_host(part.name[len("host="):])
    for table, col, add in (("hosts", "hostname", known.add_host), ("gpus", "serial", known.add_serial)):
        for f in sorted((tables / table).glob("host=*/*.parquet")):
            try:
                vals = pl.read_parquet(f, columns=[col])[col].drop_nulls().unique().to_list()
            except Exception:  # noqa: BLE001 - an unreadable table is regenerated anyway
                continue
            for v in vals:
                add(v)


# ------------------------------------------------------------------ raw text


def from_lines(lines: pl.Series, known: Known) -> None:
    """Structural extraction over the lines of one raw file (vectorised)."""
    _csv_serials(lines, known)
    lines = lines.filter(lines.str.contains(P.DISCOVER_PREFILTER).fill_null(False))
    if lines.len() == 0:
        return
    for pat in P.DISCOVER_HOSTS:
        for v in lines.str.extract(pat, 1).drop_nulls().unique().to_list():
            known.add_host(v)
    for v in _all(lines, P.DISCOVER_PEERS):
        known.add_host(re.sub(r"^[^A-Za-z]", "", v[: v.rfind("<")]))
    for pat in P.DISCOVER_SERIAL:
        for v in lines.str.extract(pat, 1).drop_nulls().unique().to_list():
            known.add_serial(v)
    for v in lines.str.extract(P.DISCOVER_GUID, 1).drop_nulls().unique().to_list():
        known.add_guid(v)
    for pat in P.DISCOVER_USER_AT:  # shell prompts and user@host
        for v in lines.str.extract(pat, 1).drop_nulls().unique().to_list():
            known.add_user(v)
    for v in _all(lines, P.DISCOVER_USERS):
        m = re.search(r"(?:/home/|/Users/|/export/home/|\\Users\\|[Uu][Ss][Ee][Rr](?:[Nn][Aa][Mm][Ee])?=)(.*)$", v)
        if m:
            known.add_user(m.group(1).rstrip("."))


def _all(lines: pl.Series, pat: str) -> list[str]:
    return lines.str.extract_all(pat).explode().drop_nulls().unique().to_list()


def _csv_serials(lines: pl.Series, known: Known) -> None:
    """The ``serial`` column of an nvidia-smi --query-gpu CSV (header line names it)."""
    if lines.len() == 0:
        return
    head = lines.head(50).to_list()
    for i, line in enumerate(head):
        cols = [c.strip().lower() for c in line.split(",")]
        if "serial" in cols and ("index" in cols or "uuid" in cols or "name" in cols):
            idx = cols.index("serial")
            body = lines.slice(i + 1).str.split(",").list.get(idx, null_on_oob=True).str.strip_chars()
            for v in body.drop_nulls().unique().to_list():
                known.add_serial(v)
            return


def domain_pass(lines: pl.Series, known: Known) -> None:
    """Names under known domains, and domains written after known hosts."""
    lits = sorted(known.domains | {h for h in known.hosts if "." not in h})
    if not lits:
        return
    lines = lines.filter(lines.str.contains_any(lits, ascii_case_insensitive=True).fill_null(False))
    if lines.len() == 0:
        return
    if known.domains:
        pat = (r"(?:^|[^A-Za-z0-9_.-])(?:[A-Za-z0-9][A-Za-z0-9-]*\.)*[A-Za-z0-9][A-Za-z0-9-]*\."
               + P.rust_literal_alt(known.domains) + r"\b")
        for v in _all(lines, pat):
            known.add_host(re.sub(r"^[^A-Za-z0-9]", "", v))
    shorts = [h for h in known.hosts if "." not in h]
    if shorts:
        pat = r"(?:^|[^A-Za-z0-9_.-])" + P.rust_literal_alt(shorts) + r"(?:\.[A-Za-z][A-Za-z0-9-]*)+"
        for v in _all(lines, pat):
            m = re.search(r"((?:\.[A-Za-z][A-Za-z0-9-]*)+)$", v)
            if not m:
                continue
            labels = m.group(1).strip(".").lower().split(".")
            if any(lab in P.FILE_EXTS for lab in labels):
                continue
            known.add_domain(".".join(labels))


def scan_member(root: Path, rel: str, known: Known, names: list[str], names_only: bool) -> None:
    """Discovery over one member of the bundle at `root` (decompressed as it is read when
    compressed), a block of whole lines at a time: the structural extractions, and the domain pass
    when it names one of `names`."""
    path = root / rel
    kind = member_kind(path)
    if kind is not None:
        try:
            with reader(path, kind) as fh:
                _scan_blocks(fh, known, names, names_only)
            return
        except Exception:  # noqa: BLE001 - not really compressed (or damaged): scanned as it is
            pass
    _scan_blocks(path, known, names, names_only)


def _scan_blocks(src, known: Known, names: list[str], names_only: bool) -> None:
    header: list[str] = []
    for i, piece in enumerate(line_blocks(src)):  # whole lines, a block at a time
        text = piece.decode("latin-1")
        if i == 0:
            # a CSV header (serial column) for the later blocks; never a giant unterminated line
            header = [h for h in text.split("\n", 50)[:50] if len(h) < 65536]
        else:
            text = "\n".join(header) + "\n" + text
        _scan_text(text, known, names, names_only)


def _scan_text(text: str, known: Known, names: list[str], names_only: bool) -> None:
    whole = pl.Series([text], dtype=pl.String)
    structural = not names_only and whole.str.contains("(?m)" + P.DISCOVER_PREFILTER).item()
    named = bool(names) and whole.str.contains_any(names, ascii_case_insensitive=True).item()
    if not structural and not named:
        return
    lines = pl.Series(text.split("\n"), dtype=pl.String)
    if structural:
        from_lines(lines, known)
    if named:
        domain_pass(lines, known)
