"""Reading bundles never trusts them: every hostile bundle is refused with one clear line."""
from __future__ import annotations

import gzip
import io
import json
import os
import tarfile

import pytest

from forensics.bundle.errors import BundleError
from forensics.bundle.read import Limits, archive_kind, extract, open_bundle, scan_dir
from forensics.bundle.write import new_manifest, write_items, write_tree

MANIFEST = new_manifest(["node01"], "node")
HOST_JSON = b'{"host": "node01"}'


def member(name, data=b"", type_=tarfile.REGTYPE, linkname="", size=None):
    info = tarfile.TarInfo(name)
    info.type = type_
    info.linkname = linkname
    info.size = len(data) if size is None else size
    return info, data


def build(path, members, mode="w"):
    with tarfile.open(path, mode, format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def good_members():
    return [member("manifest.json", MANIFEST), member("hosts/node01/host.json", HOST_JSON)]


def refused(path, limits=Limits(), match=None, tmp_path=None):
    dest = path.parent / "work"
    with pytest.raises(BundleError) as exc:
        open_bundle(path, workdir=dest, limits=limits)
    msg = str(exc.value)
    assert "\n" not in msg and msg
    if match:
        assert match in msg, msg
    assert not dest.exists() or not any(dest.iterdir()), "refusal left files behind"
    return msg


HOSTILE = {
    "absolute": ([member("/tmp/evil", b"x")], "absolute member path"),
    "dotdot": ([member("../evil", b"x")], "'..'"),
    "dotdot-inner": ([member("hosts/../../evil", b"x")], "'..'"),
    "symlink-abs": ([member("hosts/node01/raw/dmesg/dmesg.txt", type_=tarfile.SYMTYPE, linkname="/etc/passwd")], "leaves the bundle"),
    "symlink-up": ([member("hosts/link", type_=tarfile.SYMTYPE, linkname="../../etc/passwd")], "leaves the bundle"),
    "hardlink-abs": ([member("hosts/hl", type_=tarfile.LNKTYPE, linkname="/etc/passwd")], "absolute member path"),
    "hardlink-up": ([member("hosts/hl", type_=tarfile.LNKTYPE, linkname="../x")], "'..'"),
    "chardev": ([member("hosts/null", type_=tarfile.CHRTYPE)], "device file"),
    "blockdev": ([member("hosts/sda", type_=tarfile.BLKTYPE)], "device file"),
    "fifo": ([member("hosts/pipe", type_=tarfile.FIFOTYPE)], "FIFO"),
    "duplicate": ([member("hosts/node01/x.txt", b"a"), member("hosts/node01/x.txt", b"b")], "duplicate member"),
    "file-then-dir": ([member("hosts/node01/x", b"a"), member("hosts/node01/x/y", b"b")], "both a file and a directory"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_members_refused(tmp_path, case):
    extra, match = HOSTILE[case]
    path = build(tmp_path / "b.tar", good_members() + extra)
    refused(path, match=match)
    assert not (tmp_path / "evil").exists() and not (tmp_path.parent / "evil").exists()


def test_too_many_members(tmp_path):
    path = build(tmp_path / "b.tar", good_members() + [member(f"hosts/node01/f{i}", b"x") for i in range(20)])
    refused(path, Limits(max_members=10), "more than 10 members")


def test_member_over_size(tmp_path):
    path = build(tmp_path / "b.tar", good_members() + [member("hosts/node01/big", b"x" * 5000)])
    refused(path, Limits(max_member_bytes=4096), "limit 4096")


def test_gzip_bomb_refused_before_writing(tmp_path):
    # 32 MB of zeros compress to ~32 kB: the total limit refuses it from the header, before writing
    path = tmp_path / "bomb.tar.gz"
    with gzip.open(path, "wb", compresslevel=9) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        info, data = member("manifest.json", MANIFEST)
        tar.addfile(info, io.BytesIO(data))
        for i in range(4):
            info = tarfile.TarInfo(f"hosts/node01/zero{i}")
            info.size = 8 << 20
            tar.addfile(info, io.BytesIO(bytes(8 << 20)))
    assert path.stat().st_size < 1 << 20
    refused(path, Limits(max_total_bytes=12 << 20, max_member_bytes=32 << 20), "decompression bomb")
    assert not (path.parent / "work").exists()


def test_truncated_archives(tmp_path):
    full = build(tmp_path / "full.tar", good_members() + [member("hosts/node01/raw/dmesg/dmesg.txt", b"line\n" * 4000)])
    data = full.read_bytes()
    cut = tmp_path / "cut.tar"
    cut.write_bytes(data[: len(data) // 2])
    msg = refused(cut)
    assert "truncated" in msg or "ends early" in msg
    gz = tmp_path / "cut.tar.gz"
    gz.write_bytes(gzip.compress(data)[:-100])
    assert "truncated" in refused(gz)


@pytest.mark.parametrize("content", [b"", b"hello, this is not a tar\n" * 50, bytes(range(256)) * 4, b"\x1f\x8b garbage"])
def test_not_a_tar(tmp_path, content):
    p = tmp_path / "x.tar"
    p.write_bytes(content)
    msg = refused(p)
    assert "tar" in msg or "archive" in msg


BAD_MANIFESTS = {
    "not-json": (b"{format_version: 1", "not valid JSON"),
    "list": (b"[1, 2]", "not a JSON object"),
    "no-version": (b'{"hosts": ["node01"]}', "no format_version"),
    "string-version": (b'{"format_version": "1", "hosts": ["node01"]}', "must be an integer"),
    "future-version": (b'{"format_version": 2, "hosts": ["node01"]}', "unsupported bundle format version 2"),
    "hosts-not-list": (b'{"format_version": 1, "hosts": "node01"}', "hosts must be a list"),
    "host-traversal": (b'{"format_version": 1, "hosts": ["../etc"]}', "unsafe or invalid host name"),
    "missing-host-dir": (b'{"format_version": 1, "hosts": ["node01", "node02"]}', "no hosts/node02/"),
    "bad-kind": (b'{"format_version": 1, "hosts": ["node01"], "kind": 7}', "kind must be one of"),
    "bad-time": (b'{"format_version": 1, "hosts": ["node01"], "created_at": "yesterday"}', "not an ISO-8601 time"),
}


@pytest.mark.parametrize("case", sorted(BAD_MANIFESTS))
def test_bad_manifest(tmp_path, case):
    body, match = BAD_MANIFESTS[case]
    path = build(tmp_path / "b.tar", [member("manifest.json", body), member("hosts/node01/host.json", HOST_JSON)])
    refused(path, match=match)


def test_no_manifest(tmp_path):
    path = build(tmp_path / "b.tar", [member("hosts/node01/host.json", HOST_JSON)])
    refused(path, match="no manifest.json")


@pytest.mark.parametrize("suffix", [".tar", ".tar.gz", ".tar.zst"])
def test_round_trip_and_wrapped_top_folder(tmp_path, suffix):
    out = write_items(tmp_path / f"b{suffix}", [("manifest.json", MANIFEST), ("hosts/node01/host.json", HOST_JSON)])
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    b = open_bundle(out, workdir=tmp_path / "w")
    assert b.hosts == ["node01"] and b.format_version == 1
    assert (b.root / "hosts/node01/host.json").read_bytes() == HOST_JSON
    assert archive_kind(out) == "bundle"
    # a bundle tarred with its folder around it: `tar czf x.tgz node01-bundle/`
    wrapped = build(tmp_path / "wrapped.tar", [member("node01-bundle/manifest.json", MANIFEST),
                                               member("node01-bundle/hosts/node01/host.json", HOST_JSON)])
    b2 = open_bundle(wrapped, workdir=tmp_path / "w2")
    assert b2.root.name == "node01-bundle" and b2.hosts == ["node01"]


def test_links_inside_are_copied_not_created(tmp_path):
    path = build(tmp_path / "b.tar", good_members() + [
        member("hosts/node01/raw/dmesg/dmesg.txt", b"[    1.0] hello\n"),
        member("hosts/node01/dmesg", type_=tarfile.SYMTYPE, linkname="raw/dmesg/dmesg.txt"),
        member("hosts/node01/hard", type_=tarfile.LNKTYPE, linkname="hosts/node01/raw/dmesg/dmesg.txt"),
        member("hosts/node01/dirlink", type_=tarfile.SYMTYPE, linkname="raw"),
    ])
    b = open_bundle(path, workdir=tmp_path / "w")
    for name in ("dmesg", "hard"):
        p = b.root / "hosts/node01" / name
        assert not p.is_symlink() and p.read_bytes() == b"[    1.0] hello\n"
    assert not (b.root / "hosts/node01/dirlink").exists()


def test_directory_bundle_checks(tmp_path):
    d = tmp_path / "bundle"
    (d / "hosts/node01").mkdir(parents=True)
    (d / "manifest.json").write_bytes(MANIFEST)
    (d / "hosts/node01/host.json").write_bytes(HOST_JSON)
    assert open_bundle(d).root == d
    os.symlink("/etc/passwd", d / "hosts/node01/evil")
    with pytest.raises(BundleError, match="leaves the bundle"):
        open_bundle(d)
    os.unlink(d / "hosts/node01/evil")
    os.mkfifo(d / "hosts/node01/pipe")
    with pytest.raises(BundleError, match="FIFO"):
        scan_dir(d)


def test_select_skips_unwanted_members(tmp_path):
    path = build(tmp_path / "sos.tar", [member("sos/sos_commands/kernel/dmesg", b"x\n"),
                                         member("sos/etc/mtab", type_=tarfile.SYMTYPE, linkname="/proc/self/mounts")])
    assert archive_kind(path) == "sosreport"
    dest = extract(path, tmp_path / "w", select=lambda rel: "/sos_commands/" in rel)
    assert (dest / "sos/sos_commands/kernel/dmesg").read_bytes() == b"x\n"
    assert not (dest / "sos/etc/mtab").exists()


def test_write_tree_is_atomic_and_manifest_first(tmp_path):
    src = tmp_path / "stage"
    (src / "hosts/node01/raw/dmesg").mkdir(parents=True)
    (src / "hosts/node01/raw/dmesg/dmesg.txt").write_text("x\n")
    (src / "manifest.json").write_bytes(MANIFEST)
    out = write_tree(src, tmp_path / "o.tar.gz")
    with tarfile.open(out) as tar:
        assert tar.getnames()[0] == "manifest.json"
    with pytest.raises(BundleError, match="must end with"):
        write_tree(src, tmp_path / "o.zip")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.tar.gz", "stage"]
    assert json.loads((src / "manifest.json").read_text())["format_version"] == 1
