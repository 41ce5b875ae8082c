"""Keyed, deterministic pseudonyms for each class of identifier.

Every pseudonym is derived from HMAC-SHA256 with the local key, so the same value maps to the same
pseudonym in every file, table and bundle redacted with that key, and nobody without the key can
recompute or reverse it. The mappings are bijective where the format is a fixed-size space
(addresses, MACs, GUIDs: keyed permutations, never two originals on one pseudonym) and keep the
shape analysis relies on:

- host names -> ``host-<8 hex>``, a domain -> ``dom-<8 hex>`` (``node07.corp.example`` ->
  ``host-1a2b3c4d.dom-5e6f7a8b``), lower case (DNS names are case-insensitive);
- IPv4 -> an address of the same kind (10/8 stays in 10/8, 172.16/12, 192.168/16, 100.64/10,
  169.254/16 in theirs, public stays public) through a prefix-preserving permutation of the octets
  (two addresses of one /16 or /24 stay in one /16 or /24: rails and subnets survive); loopback,
  0/8, multicast and 240/4 (netmasks) are not identifying and kept;
- IPv6 -> IPv4-mapped and NAT64 forms carry the mapped IPv4 (``::ffff:10.1.2.3`` stays the same
  address as ``10.1.2.3``); link-local and site-local (RoCE/IB GIDs) keep their prefix and get the
  interface id mapped like a GUID (an EUI-64 id built from a MAC is rebuilt from the mapped MAC);
  other addresses keep their first byte and get a nibble-wise prefix-preserving permutation;
  the text keeps its style (compressed, full 8 groups, zero-padded, case);
- MAC -> the vendor OUI kept, the device part permuted; 20-byte IPoIB hardware addresses carry a
  mapped GID; 8-byte EUI-64 forms are GUIDs;
- GUIDs (64-bit node/port/system-image GUIDs) -> OUI kept, low 40 bits permuted;
- UUIDs (``GPU-<uuid>``, ``MIG-<uuid>``, file system UUIDs) -> keyed UUID in the same case;
- serial numbers -> same length, each character replaced by one of its kind (digit, upper, lower);
  hexadecimal identifiers (``0x...``: the GPU PDI) -> keyed hex of the same length;
- user names -> ``user-<8 hex>``.

>>> m = Mapper(b"k" * 32)
>>> m.hostname("node07") == m.hostname("NODE07"), m.hostname("node07")[:5]
(True, 'host-')
>>> a, b = m.ipv4("10.1.2.3"), m.ipv4("10.1.2.4")
>>> a.startswith("10.") and a.rsplit(".", 1)[0] == b.rsplit(".", 1)[0] and a != b
True
>>> m.ipv6("::ffff:10.1.2.3") == "::ffff:" + a
True
>>> m.mac("94:6d:ae:2d:71:0a")[:9], len(m.mac("94:6D:AE:2D:71:0A"))
('94:6d:ae:', 17)
>>> m.uuid("GPU-6238ca75-8134-38dc-20e3-61e8ecd8d089"[4:]).count("-")
4
"""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re

CLASSES = ("hostnames", "ips", "macs", "gids", "uuids", "serials", "users")

_HEX = "0123456789abcdef"
_V4_KEEP = [ipaddress.ip_network(n) for n in ("0.0.0.0/8", "127.0.0.0/8", "224.0.0.0/4", "240.0.0.0/4")]
# (network, number of leading octets kept, allowed values of the next octet or None)
_V4_PRIVATE = [
    (ipaddress.ip_network("10.0.0.0/8"), 1, None),
    (ipaddress.ip_network("172.16.0.0/12"), 1, range(16, 32)),
    (ipaddress.ip_network("192.168.0.0/16"), 2, None),
    (ipaddress.ip_network("100.64.0.0/10"), 1, range(64, 128)),
    (ipaddress.ip_network("169.254.0.0/16"), 2, None),
    (ipaddress.ip_network("198.18.0.0/15"), 1, range(18, 20)),
]
_PUBLIC_FIRST = [o for o in range(1, 224) if o not in (10, 127)]
_SYSTEM_USERS = frozenset(
    "root nobody daemon bin sys sync games man lp mail news uucp proxy www-data backup list irc gnats "
    "syslog messagebus sshd ubuntu ec2-user centos cloud-user debian admin user users shared public "
    "common data home local opt tmp".split()
)
_KEEP_HOSTS = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", "localdomain"})
PSEUDO_HOST = re.compile(r"^host-[0-9a-f]{8}(?:\.dom-[0-9a-f]{8})?$")
PSEUDO_USER = re.compile(r"^user-[0-9a-f]{8}$")


def _memo(fn):
    """Cache a pseudonym method per instance (the mapping is a function; the first call records it)."""
    name = fn.__name__

    def wrapper(self, value):
        key = (name, value)
        try:
            return self._cache[key]
        except KeyError:
            out = self._cache[key] = fn(self, value)
            return out

    wrapper.__name__ = name
    wrapper.__doc__ = fn.__doc__
    return wrapper


class CollisionError(ValueError):
    """Two different originals received the same pseudonym (a key change resolves it)."""


class Mapper:
    """Pseudonyms for one key; records every (class, original) -> pseudonym it hands out."""

    def __init__(self, key: bytes):
        if len(key) < 16:
            raise ValueError("redaction key too short (16 bytes at least)")
        self._key = key
        self._perms: dict[tuple, list[int]] = {}
        self.record: dict[str, dict[str, str]] = {c: {} for c in CLASSES}
        self.record["domains"] = {}
        self._seen: dict[tuple[str, str], str] = {}  # (class, pseudonym) -> canonical original
        self._cache: dict[tuple[str, object], object] = {}

    # ------------------------------------------------------------------ primitives

    def _mac(self, *parts: str | bytes) -> bytes:
        msg = b"\x1f".join(p.encode() if isinstance(p, str) else p for p in parts)
        return hmac.new(self._key, msg, hashlib.sha256).digest()

    def key_id(self) -> str:
        return self._mac("key-id").hex()[:8]

    def _hex(self, tag: str, value: str, n: int = 8) -> str:
        return self._mac(tag, value).hex()[:n]

    def _perm(self, tag: str, prefix: tuple, n: int) -> list[int]:
        """A keyed permutation of range(n), one per (tag, prefix): sort by keyed pseudo-random keys."""
        ck = (tag, prefix, n)
        p = self._perms.get(ck)
        if p is None:
            seed = self._mac("perm", tag, ",".join(map(str, prefix)), str(n))
            stream = hashlib.shake_256(seed).digest(4 * n)
            order = sorted(range(n), key=lambda i: (stream[4 * i: 4 * i + 4], i))
            p = [0] * n
            for rank, i in enumerate(order):
                p[i] = rank
            self._perms[ck] = p
        return p

    def _permute_digits(self, tag: str, digits: list[int], keep: int, sizes: list[int],
                        allowed: dict[int, range] | None = None) -> list[int]:
        """Prefix-preserving permutation: digit i is permuted by a permutation chosen by digits < i."""
        out = list(digits[:keep])
        for i in range(keep, len(digits)):
            choices = (allowed or {}).get(i)
            if choices is not None:
                pos = digits[i] - choices.start
                out.append(choices.start + self._perm(tag, tuple(digits[:i]), len(choices))[pos])
            else:
                out.append(self._perm(tag, tuple(digits[:i]), sizes[i])[digits[i]])
        return out

    def _note(self, cls: str, original: str, pseudo: str) -> str:
        canonical = _canon(original)
        prev = self._seen.setdefault((cls, pseudo), canonical)
        if prev != canonical:
            raise CollisionError(f"two {cls} map to one pseudonym {pseudo}: redact with another key")
        self.record[cls].setdefault(original, pseudo)
        return pseudo

    def merge(self, record: dict[str, dict[str, str]]) -> None:
        """Take in what another Mapper with the same key recorded (a worker process)."""
        for cls, pairs in record.items():
            for original, pseudo in pairs.items():
                if cls == "hostnames" and "." in original:
                    self.record[cls].setdefault(original, pseudo)  # a FQDN: its parts were noted
                else:
                    self._note(cls, original, pseudo)

    # ------------------------------------------------------------------ names

    @_memo
    def hostname(self, name: str) -> str:
        """host-<hex> for a short name; host-<hex>.dom-<hex> for a FQDN; IP literals as addresses."""
        low = name.lower().rstrip(".")
        if low in _KEEP_HOSTS or PSEUDO_HOST.match(low):
            return name
        if _is_v4(low):
            return self.ipv4(low)
        short, _, domain = low.partition(".")
        pseudo = "host-" + self._hex("host", short)
        self._note("hostnames", short, pseudo)
        if domain:
            pseudo += "." + self.domain(domain)
            self.record["hostnames"].setdefault(low, pseudo)
        return pseudo

    def domain(self, domain: str) -> str:
        low = domain.lower().strip(".")
        if low in _KEEP_HOSTS or re.match(r"^dom-[0-9a-f]{8}$", low):
            return domain
        pseudo = "dom-" + self._hex("domain", low)
        self._note("domains", low, pseudo)
        return pseudo

    def user(self, name: str) -> str:
        if name.lower() in _SYSTEM_USERS or PSEUDO_USER.match(name):
            return name
        return self._note("users", name, "user-" + self._hex("user", name))

    @_memo
    def serial(self, value: str) -> str:
        if re.fullmatch(r"0x[0-9a-fA-F]+", value):  # a hexadecimal identifier (GPU PDI): stays one
            h = self._mac("serial", value).hex()[: len(value) - 2]
            pseudo = "0x" + (h.upper() if value[2:].isupper() else h)
            return self._note("serials", value, pseudo if pseudo != value else "0x" + h[::-1])
        stream = hashlib.shake_256(self._mac("serial", value)).digest(2 * len(value) + 8)
        out = []
        for i, ch in enumerate(value):
            r = stream[i]
            if ch.isdigit():
                out.append(str(r % 10))
            elif "A" <= ch <= "Z":
                out.append(chr(65 + r % 26))
            elif "a" <= ch <= "z":
                out.append(chr(97 + r % 26))
            else:
                out.append(ch)
        pseudo = "".join(out)
        if pseudo == value:  # keep it distinct from the original
            pseudo = value[:-1] + ("1" if value[-1:] != "1" else "2")
        return self._note("serials", value, pseudo)

    # ------------------------------------------------------------------ UUIDs

    @_memo
    def uuid(self, text: str) -> str:
        """A keyed UUID (8-4-4-4-12, same case) for the bare UUID `text`."""
        low = text.lower()
        if set(low) <= set("0-") or set(low) <= set("f-"):
            return text
        h = self._mac("uuid", low).hex()[:32]
        pseudo = "-".join((h[:8], h[8:12], h[12:16], h[16:20], h[20:32]))
        if text != low:
            pseudo = pseudo.upper()
        return self._note("uuids", text, pseudo)

    # ------------------------------------------------------------------ IPv4

    def v4_int(self, value: int) -> int:
        addr = ipaddress.IPv4Address(value)
        if any(addr in n for n in _V4_KEEP):
            return value
        octets = list(addr.packed)
        for net, keep, second in _V4_PRIVATE:
            if addr in net:
                allowed = {keep: second} if second is not None else None
                new = self._permute_digits("v4:" + str(net), octets, keep, [256] * 4, allowed)
                return int.from_bytes(bytes(new), "big")
        # public: first octet among public first octets, the rest permuted; cycle-walk out of the
        # special ranges (keeps the map a bijection of the public addresses onto themselves)
        cur = octets
        for _ in range(64):
            first = _PUBLIC_FIRST[self._perm("v4pub", (), len(_PUBLIC_FIRST))[_PUBLIC_FIRST.index(cur[0])]]
            cur = [first] + self._permute_digits("v4pub", cur, 1, [256] * 4)[1:]
            cand = ipaddress.IPv4Address(bytes(cur))
            if not any(cand in n for n in _V4_KEEP) and not any(cand in n for n, _, _ in _V4_PRIVATE):
                return int(cand)
        return value  # pragma: no cover - practically unreachable

    @_memo
    def ipv4(self, text: str) -> str:
        addr = ipaddress.IPv4Address(text)
        new = str(ipaddress.IPv4Address(self.v4_int(int(addr))))
        if new == str(addr):
            return text
        return self._note("ips", text, new)

    # ------------------------------------------------------------------ GUIDs and MACs

    def guid_int(self, value: int) -> int:
        if value in (0, (1 << 64) - 1):
            return value
        b = list(value.to_bytes(8, "big"))
        new = self._permute_digits("guid", b, 3, [256] * 8)
        return int.from_bytes(bytes(new), "big")

    def guid(self, value: int) -> int:
        new = self.guid_int(value)
        if new != value:
            self._note("gids", "0x%016x" % value, "0x%016x" % new)
        return new

    def mac_bytes(self, b: bytes) -> bytes:
        if b in (b"\x00" * 6, b"\xff" * 6) or b[0] & 1:  # null, broadcast, multicast: not a device
            return b
        return bytes(self._permute_digits("mac", list(b), 3, [256] * 6))

    @_memo
    def mac(self, text: str) -> str:
        """Colon/dash MAC (6 octets), EUI-64 GUID (8 octets) or IPoIB address (20 octets)."""
        sep = text[2]
        parts = text.split(sep)
        raw = bytes(int(p, 16) for p in parts)
        if len(raw) == 6:
            new = self.mac_bytes(raw)
            cls = "macs"
        elif len(raw) == 8:
            new = self.guid(int.from_bytes(raw, "big")).to_bytes(8, "big")
            cls = "gids"
        elif len(raw) == 20:
            gid = self.v6_int(int.from_bytes(raw[4:], "big"))
            new = raw[:4] + gid.to_bytes(16, "big")
            cls = "gids"
        else:
            return text
        if new == raw:
            return text
        out = sep.join("%02x" % x for x in new)
        if any(c in "ABCDEF" for c in text):
            out = out.upper()
        return self._note(cls, text, out)

    # ------------------------------------------------------------------ IPv6

    def v6_class(self, value: int) -> str:
        if _embeds_v4(value):
            return "ips"
        if value >> 118 in (0x3FA, 0x3FB):  # fe80::/10, fec0::/10
            return "gids"
        return "ips"

    def v6_int(self, value: int) -> int:
        addr = ipaddress.IPv6Address(value)
        if value in (0, 1) or addr.is_multicast:
            return value
        if _embeds_v4(value):
            return (value >> 32 << 32) | self.v4_int(value & 0xFFFFFFFF)
        if value >> 118 in (0x3FA, 0x3FB):  # link-local / site-local: keep the prefix, map the interface id
            return (value >> 64 << 64) | self._iid(value & ((1 << 64) - 1))
        nib = [(value >> (4 * (31 - i))) & 0xF for i in range(32)]
        new = self._permute_digits("v6", nib, 2, [16] * 32)
        return int("".join(_HEX[x] for x in new), 16)

    def _iid(self, iid: int) -> int:
        b = iid.to_bytes(8, "big")
        if b[3:5] == b"\xff\xfe":  # EUI-64 from a MAC (U/L bit flipped)
            mac = bytes([b[0] ^ 2]) + b[1:3] + b[5:]
            m = self.mac_bytes(mac)
            return int.from_bytes(bytes([m[0] ^ 2]) + m[1:3] + b"\xff\xfe" + m[3:], "big")
        return self.guid_int(iid)

    @_memo
    def ipv6(self, text: str) -> str:
        core, zone = (text.split("%", 1) + [""])[:2]
        addr = ipaddress.IPv6Address(core)
        value = int(addr)
        new = self.v6_int(value)
        if new == value:
            return text
        out = _render_v6(core, new)
        if zone:
            out += "%" + zone
        cls = self.v6_class(value)
        if _embeds_v4(value):  # an IPv4 inside: its dotted form is an original too
            v4, v4new = (str(ipaddress.IPv4Address(x & 0xFFFFFFFF)) for x in (value, new))
            self._note("ips", v4, v4new)
        return self._note(cls, text, out)


def _canon(text: str) -> str:
    """One spelling per value (addresses in any notation, MACs with '-' or ':', any case)."""
    low = text.lower()
    core = low.split("%", 1)[0]
    if ":" in core and len(core) <= 45:
        try:
            return ipaddress.IPv6Address(core).exploded
        except ValueError:
            return core.replace("-", ":")
    return low.replace("-", ":") if re.fullmatch(r"[0-9a-f]{2}(-[0-9a-f]{2}){5}", low) else low


def _embeds_v4(value: int) -> bool:
    """IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) or NAT64 (64:ff9b::a.b.c.d)."""
    top = value >> 32
    return top == 0xFFFF or top == 0x0064FF9B << 64 or (top == 0 and value > 0xFFFF)


def _is_v4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
        return True
    except ValueError:
        return False


def _render_v6(original: str, value: int) -> str:
    """`value` written in the style of `original` (dotted tail, full/zero-padded groups, case)."""
    upper = any(c in "ABCDEF" for c in original)
    if "." in original:  # keep the text before the IPv4 tail (::ffff:, 0:0:0:0:0:ffff:, 64:ff9b::)
        head = original[: original.rfind(":") + 1]
        out = head + str(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    else:
        groups = ["%x" % ((value >> (16 * (7 - i))) & 0xFFFF) for i in range(8)]
        if "::" not in original:
            padded = all(len(g) == 4 for g in original.split(":"))
            out = ":".join(g.zfill(4) if padded else g for g in groups)
        else:
            out = ipaddress.IPv6Address(value).compressed
    return out.upper() if upper else out
