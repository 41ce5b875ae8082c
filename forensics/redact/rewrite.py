"""Rewriting text: every identifier of a redacted class replaced by its pseudonym.

Two kinds of rule, applied together in one left-to-right pass (so a pseudonym is never
rewritten again):

- *literals* found beforehand by :mod:`forensics.redact.discover` (host names and FQDNs, domains,
  serial numbers, GUID spellings, user names), matched whole (see the boundaries in
  :mod:`forensics.redact.patterns`) and case-insensitively where the value is;
- *patterns* that recognise a value by its shape wherever it is (IPv4, IPv6, MAC/EUI-64/IPoIB
  addresses, UUIDs, ``ip-10-1-2-3`` host names, home directories and ``user=`` fields).

Speed: a batch of strings (the lines of a file, the distinct values of a column) goes through a
vectorised Rust-regex prefilter in polars first; only the strings it flags (a small share of a
bundle's bytes: ethtool, sar and iostat lines hold no identifier) reach the Python replacer,
which is compiled with just the literals present in the batch.

>>> from forensics.redact.mapper import Mapper
>>> from forensics.redact.discover import Known
>>> k = Known(); k.add_host("node07.cluster")
>>> rw = Rewriter(Mapper(b"0" * 32), {"hostnames", "ips"}, k)
>>> out = rw.text("node07:1:2 [0] NCCL WARN peer node07.cluster<4711> 10.1.2.3<43122>")
>>> out.startswith("host-"), "node07" in out, "<4711>" in out, "<43122>" in out
(True, False, True, True)
"""
from __future__ import annotations

import bisect
import ipaddress
import re
from functools import lru_cache

import polars as pl

from forensics.redact import patterns as P
from forensics.redact.mapper import Mapper

SMALL_BATCH = 1000
MAX_VECTORISED = 256
_GROUPS = ("lit_name", "lit_dom", "lit_serial", "lit_guid", "lit_user")


class Rewriter:
    def __init__(self, mapper: Mapper, classes: set[str], known):
        self.m = mapper
        self.classes = set(classes)
        self.names: dict[str, str] = {}   # lower host/FQDN/multi-label domain -> pseudonym
        self.dom1: dict[str, str] = {}    # single-label domains (matched after a dot only)
        self.serials: dict[str, str] = {}
        self.guids: dict[str, str] = {}   # lower spelling -> pseudonym spelling (lower)
        self.users: dict[str, str] = {}
        if "hostnames" in self.classes:
            for h in known.hosts:
                self.names[h] = mapper.hostname(h)
            for d in known.domains:
                (self.names if "." in d else self.dom1)[d] = mapper.domain(d)
        if "serials" in self.classes:
            for s in known.serials:
                self.serials[s] = mapper.serial(s)
        if "gids" in self.classes:
            for g in known.guids:
                new = mapper.guid(g)
                for fmt in _guid_spellings(g, new):
                    self.guids[fmt[0]] = fmt[1]
        if "users" in self.classes:
            for u in known.users:
                pseudo = mapper.user(u)
                if pseudo != u:
                    self.users[u] = pseudo
        self._lower: dict[str, tuple[str, str]] = {}  # lower literal -> (group, key)
        for grp, d in (("lit_name", self.names), ("lit_dom", self.dom1), ("lit_guid", self.guids)):
            for k in d:
                self._lower.setdefault(k, (grp, k))
        for grp, d in (("lit_serial", self.serials), ("lit_user", self.users)):
            for k in d:
                self._lower.setdefault(k.lower(), (grp, k))
        self._rust_lits = P.rust_literal_alt(self._lower) if self._lower else None
        self._all = frozenset(self._lower)
        self._rust_all = P.RUST_GENERIC + ("|" + self._rust_lits if self._rust_lits else "")
        self._compiled = lru_cache(maxsize=256)(self._compile)

    # ------------------------------------------------------------------ regex building

    def _compile(self, present: frozenset, skip: frozenset = frozenset()) -> re.Pattern:
        by: dict[str, list[str]] = {g: [] for g in _GROUPS}
        for low in present:
            grp, key = self._lower[low]
            by[grp].append(key)
        alts = []
        n = P.NAME_CH
        if by["lit_name"]:
            alts.append(("lit_name", rf"(?<![{n}]){P.literal_alt(by['lit_name'], 'i')}(?![{n}])"))
        if by["lit_dom"]:
            alts.append(("lit_dom", rf"(?<=\.){P.literal_alt(by['lit_dom'], 'i')}(?![{n}]|\.[A-Za-z0-9])"))
        if by["lit_serial"]:
            s = P.SERIAL_CH
            alts.append(("lit_serial", rf"(?<![{s}]){P.literal_alt(by['lit_serial'])}(?![{s}])"))
        if by["lit_guid"]:
            g = P.GUID_CH
            alts.append(("lit_guid", rf"(?<![{g}]){P.literal_alt(by['lit_guid'], 'i')}(?![{g}])"))
        if by["lit_user"]:
            u = P.literal_alt(by["lit_user"])
            alts.append(("lit_user", rf"(?:(?<=[/~])|(?<=[Uu][Ss][Ee][Rr]=)){u}(?![A-Za-z0-9_.-])"
                                     rf"|(?<![A-Za-z0-9_.-]){u}(?=@)"))
        alts.extend((k, p) for k, p in P.GENERIC if k not in skip)
        return re.compile("|".join(f"(?P<{name}>{pat})" for name, pat in alts))

    def _present(self, ser: pl.Series) -> frozenset:
        if self._rust_lits is None:
            return frozenset()
        found = ser.str.extract_all(self._rust_lits).explode().drop_nulls().str.to_lowercase().unique().to_list()
        present = set(found)
        if present:  # a literal inside a longer one (a short name inside its FQDN) is needed too
            for low in self._lower:
                if low not in present and any(low in p for p in present):
                    present.add(low)
        return frozenset(p for p in present if p in self._lower)

    # ------------------------------------------------------------------ replacing

    def _sub(self, m: re.Match) -> str:
        kind = m.lastgroup
        t = m.group()
        c = self.classes
        try:
            if kind == "lit_name":
                return self.names.get(t.lower(), t) if _host_place(m) else t
            if kind == "lit_dom":
                return self.dom1.get(t.lower(), t)
            if kind == "lit_serial":
                return self.serials.get(t, t)
            if kind == "lit_guid":
                new = self.guids.get(t.lower(), t)
                return new.upper().replace("0X", "0x") if any(ch in "ABCDEF" for ch in t) else new
            if kind == "lit_user":
                return self.users.get(t, t)
            if kind == "v4":
                return self.m.ipv4(t) if "ips" in c else t
            if kind == "v6":
                core = t.split("%", 1)[0]
                cls = self.m.v6_class(int(ipaddress.IPv6Address(core)))
                return self.m.ipv6(t) if cls in c else t
            if kind == "hw":
                n = (len(t) + 1) // 3
                return self.m.mac(t) if ("macs" if n == 6 else "gids") in c else t
            if kind == "uuid":
                return self.m.uuid(t) if "uuids" in c else t
            if kind == "iphost":
                return self.m.hostname(t) if "hostnames" in c else t
            if kind in ("home", "userkv"):
                return self.m.user(t) if "users" in c else t
            if kind == "refid" and "ips" in c:
                ip = m.group("refip")
                new = self.m.ipv4(ip)
                hexa = "%08X" % int(ipaddress.IPv4Address(new))
                s0 = m.start()
                return (t[: m.start("refhex") - s0] + hexa + t[m.end("refhex") - s0: m.start("refip") - s0]
                        + new + t[m.end("refip") - s0:])
        except ValueError:  # not a valid address after all (e.g. 1:2:3:4:5:6:7:99999)
            return t
        return t

    def strings(self, values: list[str]) -> list[str]:
        """Each string of `values` rewritten (same order, same count)."""
        if not values:
            return []
        ser = pl.Series(values, dtype=pl.String)
        skip: frozenset = frozenset()
        if len(values) < SMALL_BATCH:  # not worth finding which literals are present
            present = self._all
            pat = self._rust_all
        else:
            present = self._present(ser)
            ser = self._names_vectorised(ser, present)
            ser, skip = self._uuids_vectorised(ser)
            pat = P.RUST_OTHER if "uuid" in skip else P.RUST_GENERIC
            if present:
                pat += "|" + P.rust_literal_alt(present)
        hits = ser.str.contains(pat).fill_null(False).arg_true().to_list()
        out = ser.to_list() if len(values) >= SMALL_BATCH else list(values)
        if not hits:
            return out
        rx = self._compiled(present, skip)
        for i in hits:
            out[i] = rx.sub(self._sub, out[i])
        return out

    def _uuids_vectorised(self, ser: pl.Series) -> tuple[pl.Series, frozenset]:
        """UUIDs (one per GPU on every line of a --query-gpu CSV) replaced in Rust, one distinct value
        at a time, with the boundaries of the Python pattern; the Python pass then skips UUIDs (it
        would take a pseudonym for an original). Many distinct values: left to the Python pass."""
        if "uuids" not in self.classes:
            return ser, frozenset()
        cands = ser.str.extract_all(P.RUST_UUID_BARE).explode().drop_nulls().unique().to_list()
        if len(cands) > MAX_VECTORISED:
            return ser, frozenset()
        for u in cands:
            pseudo = self.m.uuid(u)
            if pseudo != u:
                pat = rf"(^|[^0-9A-Fa-f]){u}($|[^0-9A-Fa-f])"
                for _ in range(2):  # the same value twice around one separator
                    ser = ser.str.replace_all(pat, "${1}" + pseudo + "${2}")
        return ser, frozenset({"uuid"})

    def _names_vectorised(self, ser: pl.Series, present: frozenset) -> pl.Series:
        """Host names and FQDNs replaced in Rust (the host prefix of every NCCL line), longest first.

        Exactly what the Python pass would do for them: same boundaries, and a name that could be
        part of an address (pure hex of 4 characters or less: "a100") is left to the Python pass,
        where addresses win, and so is a name made of letters only ("host", "raw"), which may be a
        word of the bundle's layout or a JSON key there (see _host_place). A name missed here (two in a row sharing one separator) is still an
        original literal, so the line stays flagged and the Python pass replaces it."""
        names = [k for k in present if self._lower[k][0] == "lit_name" and not re.fullmatch(r"[0-9a-f]{1,4}", k)
                 and not _WORD.fullmatch(k)]
        n = P.NAME_CH
        for low in sorted(names, key=lambda s: (-len(s), s)):
            pseudo = self.names[low]
            ser = ser.str.replace_all(rf"(?i)(^|[^{n}]){P._rust_escape(low)}($|[^{n}])", "${1}" + pseudo + "${2}")
        return ser

    def text(self, value: str) -> str:
        return self.strings([value])[0]

    def data(self, data: bytes) -> bytes:
        """Raw bytes rewritten line by line (bytes are read as Latin-1: any byte round-trips)."""
        text = data.decode("latin-1")
        whole = pl.Series([text], dtype=pl.String)
        if not whole.str.contains(P.RUST_GENERIC).item() and not self._present(whole):
            return data
        return "\n".join(self.strings(text.split("\n"))).encode("latin-1")


_WORD = re.compile(r"[a-z_]+")
_D = re.escape(P.PATH_DELIMS)
_BUNDLE_PATH = re.compile(rf"(?:^|(?<=[{_D}]))(?:{'|'.join(P.BUNDLE_TOPS)})/[^{_D}]{{0,4096}}")
_SPANS: list = [None, [], []]  # the last string looked at: its bundle-path spans (starts, ends)


def _path_spans(s: str) -> tuple[list[int], list[int]]:
    """Where bundle paths (``hosts/...``, ``tables/...``, ``truth/...`` tokens) are in `s`: one regex
    pass per string, remembered for the string's other matches (linear time on long lines)."""
    if _SPANS[0] is not s:
        spans = [(m.start(), m.end()) for m in _BUNDLE_PATH.finditer(s)] if "/" in s else []
        _SPANS[0], _SPANS[1], _SPANS[2] = s, [a for a, _ in spans], [e for _, e in spans]
    return _SPANS[1], _SPANS[2]


def _host_place(m: re.Match) -> bool:
    """Is this match of a host literal the host, or a word of the bundle's own layout?

    Not a host: a key of the layout's JSON (``"host": ...`` in host.json, commands.jsonl, the manifest),
    a top-level layout file (``manifest.json``), and in a bundle path (a member name, a table's
    ``file`` value, ``raw_file`` in commands.jsonl) every place but the host's own:
    ``hosts/<host>/...``, ``host=<host>`` and names of captured files (``nccl.<host>.123.log``) are
    renamed; ``hosts/``, ``tables/<table>/``, ``host.json``, ``commands.jsonl``, ``raw/<source>/``
    and ``part-0.parquet`` never are, whatever the host is called.
    """
    s, i, j = m.string, m.start(), m.end()
    word = s[i:j].lower()
    if (i > 0 and s[i - 1] == '"' and word in P.LAYOUT_JSON_KEYS and re.match(P.JSON_KEY, s[j:j + 16])
            and s.lstrip()[:1] in ('{', '"')):
        return False
    if (word + s[j:j + 5].lower() in P.TOP_FILES or word + s[j:j + 6].lower() in P.TOP_FILES) \
            and (i == 0 or s[i - 1] in P.PATH_DELIMS):
        return False
    starts, ends = _path_spans(s)
    n = bisect.bisect_right(starts, i) - 1
    if n < 0 or ends[n] < j:
        return True  # not inside a bundle path
    token = s[starts[n]:ends[n]]
    top = token.split("/", 1)[0]
    before = s[starts[n]:i].split("/")
    idx = len(before) - 1
    comps = token.split("/")
    if idx == 0:
        return False  # the top folder itself
    if top == "hosts":
        if idx == 2:
            return comps[2] not in P.HOST_FILES
        return not (idx == 3 and comps[2] == "raw")  # the source folder
    if top == "tables":
        return idx == 2 and before[-1].startswith("host=")  # not the table, "host=" or the file
    return True


def _guid_spellings(old: int, new: int) -> list[tuple[str, str]]:
    """(original spelling, pseudonym spelling) for the ways tools print a 64-bit GUID."""
    def spell(v: int) -> list[str]:
        h = "%016x" % v
        return ["0x" + h, ":".join(h[i:i + 4] for i in range(0, 16, 4)), h]

    return list(zip(spell(old), spell(new)))
