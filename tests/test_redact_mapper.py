"""Pseudonyms: keyed, deterministic, collision-free, and keeping the shape analysis needs."""
from __future__ import annotations

import ipaddress
import os
import re
import stat

import pytest

from forensics.bundle.errors import BundleError
from forensics.redact.keys import load_key
from forensics.redact.mapper import Mapper

KEY = bytes(range(32))


@pytest.fixture
def m():
    return Mapper(KEY)


def test_same_key_same_pseudonyms_other_key_others(m):
    other = Mapper(KEY)
    third = Mapper(b"another key of 32 bytes........")
    for f, v in ((Mapper.hostname, "node07"), (Mapper.ipv4, "10.105.0.13"), (Mapper.mac, "94:6d:ae:2d:71:0a"),
                 (Mapper.uuid, "6238ca75-8134-38dc-20e3-61e8ecd8d089"), (Mapper.serial, "1654511904895"),
                 (Mapper.ipv6, "fe80::9a6d:aeff:fe2d:710a")):
        assert f(m, v) == f(other, v) != v
        assert f(third, v) != f(m, v)
    assert m.key_id() == other.key_id() != third.key_id()
    assert re.fullmatch(r"[0-9a-f]{8}", m.key_id())


def test_hostnames(m):
    assert re.fullmatch(r"host-[0-9a-f]{8}", m.hostname("node07"))
    assert m.hostname("NODE07") == m.hostname("node07")
    fq = m.hostname("a100-st-p4d24xlarge-22.cluster")
    assert fq.startswith(m.hostname("a100-st-p4d24xlarge-22") + ".dom-")
    assert m.hostname("localhost") == "localhost"
    assert m.hostname(m.hostname("node07")) == m.hostname("node07")  # a pseudonym is not redacted again
    assert m.hostname("10.1.2.3") == m.ipv4("10.1.2.3")


def test_ipv4_is_a_prefix_preserving_bijection_of_each_range(m):
    # a whole /16 of 10/8 and a /20 of 192.168/16: all distinct, all in range, /24 structure kept
    originals = [f"10.105.{a}.{b}" for a in range(0, 256, 17) for b in range(256)]
    originals += [f"192.168.{a}.{b}" for a in range(16) for b in range(256)]
    mapped = {o: m.ipv4(o) for o in originals}
    assert len(set(mapped.values())) == len(originals)
    for o, p in mapped.items():
        addr = ipaddress.IPv4Address(p)
        net = "10.0.0.0/8" if o.startswith("10.") else "192.168.0.0/16"
        assert addr in ipaddress.ip_network(net), (o, p)
    by24 = {}
    for o, p in mapped.items():
        by24.setdefault(o.rsplit(".", 1)[0], set()).add(p.rsplit(".", 1)[0])
    assert all(len(v) == 1 for v in by24.values())  # one original /24 -> one pseudonym /24
    assert len({next(iter(v)) for v in by24.values()}) == len(by24)


def test_ipv4_other_ranges(m):
    assert ipaddress.IPv4Address(m.ipv4("172.20.1.9")) in ipaddress.ip_network("172.16.0.0/12")
    assert ipaddress.IPv4Address(m.ipv4("100.100.3.4")) in ipaddress.ip_network("100.64.0.0/10")
    pub = ipaddress.IPv4Address(m.ipv4("29.87.4.221"))
    assert pub.is_global and pub != ipaddress.IPv4Address("29.87.4.221")
    for kept in ("127.0.0.1", "0.0.0.0", "255.255.255.0", "255.255.255.255", "224.0.0.251"):
        assert m.ipv4(kept) == kept


def test_ipv6_forms(m):
    v4 = m.ipv4("10.105.0.13")
    assert m.ipv6("::ffff:10.105.0.13") == "::ffff:" + v4  # NCCL GIDs match the peer address
    full = m.ipv6("0000:0000:0000:0000:0000:ffff:0a69:000d")  # the same address as sysfs prints it
    assert full == "0000:0000:0000:0000:0000:ffff:" + "%04x:%04x" % divmod(int(ipaddress.IPv4Address(v4)), 1 << 16)
    gid = m.ipv6("fe80:0000:0000:0000:0c42:a103:006d:e52c")
    assert gid.startswith("fe80:0000:0000:0000:0c42:a1") and len(gid) == 39 and gid != "fe80:0000:0000:0000:0c42:a103:006d:e52c"
    # link-local EUI-64 from a MAC is rebuilt from the mapped MAC
    mac = m.mac("94:6d:ae:2d:71:0a")
    b = bytes(int(x, 16) for x in mac.split(":"))
    eui = "fe80::%02x%02x:%02xff:fe%02x:%02x%02x" % (b[0] ^ 2, b[1], b[2], b[3], b[4], b[5])
    assert m.ipv6("fe80::966d:aeff:fe2d:710a") == str(ipaddress.IPv6Address(eui))
    ula = m.ipv6("fd00:1148:9000:5000:4:200:3:ff22")
    assert ula.startswith("fd") and ula.count(":") == 7 and "::" not in ula
    zoned = m.ipv6("FE80::1%ib0")
    assert zoned.endswith("%ib0") and zoned.startswith("FE80::") and zoned[:-4].upper() == zoned[:-4]
    for kept in ("::1", "::", "ff02::1"):
        assert m.ipv6(kept) == kept


def test_macs_guids(m):
    p = m.mac("94:6D:AE:2D:71:0A")
    assert re.fullmatch(r"94:6D:AE(:[0-9A-F]{2}){3}", p) and p != "94:6D:AE:2D:71:0A"
    assert m.mac("94-6d-ae-2d-71-0a") == m.mac("94:6d:ae:2d:71:0a").replace(":", "-")
    for kept in ("ff:ff:ff:ff:ff:ff", "00:00:00:00:00:00", "01:00:5e:00:00:fb"):
        assert m.mac(kept) == kept
    g = m.guid(0x1070FD0300A41F36)
    assert g >> 40 == 0x1070FD and g != 0x1070FD0300A41F36
    assert m.mac("10:70:fd:03:00:a4:1f:36") == ":".join("%02x" % x for x in g.to_bytes(8, "big"))
    ipoib = "80:00:02:08:fe:80:00:00:00:00:00:00:0c:42:a1:03:00:6d:e5:2c"
    new = m.mac(ipoib)
    assert new[:36] == ipoib[:36] and new != ipoib and len(new) == len(ipoib)


def test_uuid_serial_user(m):
    u = m.uuid("6238CA75-8134-38DC-20E3-61E8ECD8D089")
    assert re.fullmatch(r"[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}", u)
    assert m.uuid("6238ca75-8134-38dc-20e3-61e8ecd8d089") == u.lower()
    assert m.uuid("00000000-0000-0000-0000-000000000000") == "00000000-0000-0000-0000-000000000000"
    s = m.serial("MT2147X12345")
    assert re.fullmatch(r"[A-Z]{2}[0-9]{4}[A-Z][0-9]{5}", s) and s != "MT2147X12345"
    assert re.fullmatch(r"user-[0-9a-f]{8}", m.user("jdoe")) and m.user("root") == "root"


def test_record_holds_what_was_mapped(m):
    m.hostname("node07.corp")
    m.ipv4("10.1.2.3")
    m.ipv6("::ffff:10.9.9.9")
    assert "node07" in m.record["hostnames"] and "node07.corp" in m.record["hostnames"]
    assert m.record["domains"] == {"corp": m.domain("corp")}
    assert set(m.record["ips"]) == {"10.1.2.3", "10.9.9.9", "::ffff:10.9.9.9"}


def test_key_file_created_0600_and_read_back(tmp_path):
    p = tmp_path / "k"
    key, path, created = load_key(p)
    assert created and path == p and len(key) == 32
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
    assert load_key(p) == (key, p, False)
    (tmp_path / "short").write_bytes(b"abc")
    with pytest.raises(BundleError, match="fewer than 16 bytes"):
        load_key(tmp_path / "short")
    with pytest.raises(BundleError, match="no such directory"):
        load_key(tmp_path / "missing" / "k")
    (tmp_path / "pass").write_text("a long passphrase of many bytes\n")
    warned = []
    os.chmod(tmp_path / "pass", 0o644)
    assert load_key(tmp_path / "pass", warn=warned.append)[0] == b"a long passphrase of many bytes\n"
    assert warned and "readable by others" in warned[0]


def test_docstring_examples():
    import doctest

    import forensics.redact.mapper as mapper
    import forensics.redact.rewrite as rewrite

    for mod in (mapper, rewrite):
        res = doctest.testmod(mod)
        assert res.attempted > 0 and res.failed == 0, mod.__name__
