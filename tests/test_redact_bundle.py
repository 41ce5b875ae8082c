"""Redacting whole bundles: nothing original left anywhere, the same findings, consistent across bundles."""
from __future__ import annotations

import gzip
import io
import json
import os
import re
import shutil
import stat
import tarfile
from pathlib import Path

import polars as pl
import pytest

from forensics.analysis import analyze_paths
from forensics.importers.build import build_bundle
from forensics.bundle.errors import BundleError
from forensics.bundle.read import open_bundle
from forensics.redact import redact
from forensics.redact.keys import load_key
from forensics.redact.verify import find_leaks
from forensics.simulate import SimConfig, write_bundle

FIX = Path(__file__).parent / "fixtures"
# real outputs with identifiers of every kind: NCCL peers by FQDN and IPv6 GIDs, a journalctl FQDN,
# nvidia-smi serials and UUIDs (text and XML), a sar header FQDN, ethtool markers
LOOSE = ["nccl/nccl--nccl-issue795-aws-p4d-broken-pipe-remote-peer-closed-nccl2.14.3.txt",
         "nccl/nccl--issue1405-ib-status12-vendor129-ipv6-gids.txt",
         "dmesg/dmesg--gpud-journalctl-short-iso-peermem.txt", "dmesg/dmesg--gpud-decode-iso-xid13-xid43.txt",
         "nvidia_smi/nvidia_smi--q-a10-535-remap-pending.txt", "nvidia_smi/nvidia_smi--qx-t4-515-v11-throttle.xml.txt",
         "sar/sar--centos79-n-DEV-average.txt", "ethtool/ethtool--mlx5_core-series-2snapshots-markers.txt"]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("redact")
    key_file = d / "key"
    sim = d / "sim.tar.gz"
    write_bundle(SimConfig(scenario="packet_drops", nodes=2, gpus_per_node=2, duration_s=60, interval_s=2, seed=0), sim)
    red = d / "sim-red.tar.zst"
    summary = redact(sim, red, key_file=key_file, mapping_out=d / "sim-map.json")
    loose_dir = d / "loose" / "gpu-node-a"
    loose_dir.mkdir(parents=True)
    for rel in LOOSE:
        shutil.copy(FIX / rel, loose_dir)
    loose = d / "loose.tar"
    build_bundle([loose_dir], loose)
    loose_red = d / "loose-red.tar"
    loose_summary = redact(loose, loose_red, key_file=key_file, mapping_out=d / "loose-map.json")
    return {"dir": d, "key": key_file, "sim": sim, "red": red, "summary": summary, "loose": loose,
            "map": json.loads((d / "sim-map.json").read_text())["mappings"],
            "loose_red": loose_red, "loose_summary": loose_summary,
            "loose_map": json.loads((d / "loose-map.json").read_text())["mappings"]}


# ------------------------------------------------------------------ reading everything in a bundle


def member_texts(path: Path) -> dict[str, str]:
    """Every member as text (decompressed; Parquet: every string value of every column, one per line)."""
    out = {}
    with tarfile.open(path) as tar:  # (zstd bundles: decompressed by the reader below)
        for m in tar.getmembers():
            if m.isfile():
                out[m.name] = _text(m.name, tar.extractfile(m).read())
    return out


def _text(name: str, data: bytes) -> str:
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if name.endswith(".parquet"):
        df = pl.read_parquet(io.BytesIO(data))
        vals = [name, data.decode("latin-1")]
        for c, t in df.schema.items():
            col = df[c].explode() if isinstance(t, pl.List) else df[c]
            if col.dtype == pl.String:
                vals += sorted(col.drop_nulls().unique().to_list())
        return "\n".join(vals)
    return name + "\n" + data.decode("latin-1")


def tar_of(path: Path, tmp: Path) -> Path:
    """A plain tar copy of a (possibly zstd) bundle, so tarfile can read it."""
    if str(path).endswith(".zst"):
        import zstandard

        plain = tmp / (path.name + ".tar")
        with open(path, "rb") as fi, open(plain, "wb") as fo:
            zstandard.ZstdDecompressor().copy_stream(fi, fo)
        return plain
    return path


def original_identifiers(path: Path) -> dict[str, set[str]]:
    """Identifiers of the original bundle, found independently of the redactor: from its tables
    (the parsers' reading) and an IPv4 regex over its raw files."""
    b = open_bundle(path)
    t = b.root / "tables"

    def col(table, c):
        files = list((t / table).glob("host=*/*.parquet"))
        if not files:
            return set()
        s = pl.read_parquet(files, hive_partitioning=False)[c]
        s = s.explode() if isinstance(s.dtype, pl.List) else s
        return {v for v in s.drop_nulls().to_list() if v and v not in ("N/A", "[N/A]")}

    hosts = set(b.manifest["hosts"]) | col("hosts", "hostname") | col("nccl_log", "host")
    ips = set()
    for p in (b.root / "hosts").rglob("*"):
        if p.is_file():
            for ip in re.findall(rb"(?<![0-9.])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?![0-9.])", p.read_bytes()):
                if not re.match(rb"^(?:127|0|255|22[4-9]|23[0-9])\.", ip):
                    ips.add(ip.decode())
    peers = {re.sub(r"<[0-9]+>$", "", p) for p in col("nccl_log", "peer_addr")}
    out = {
        "hostnames": {h for h in hosts if h != "localhost"},
        "ips": ips | {p for p in peers if re.match(r"^[0-9.]+$", p)},
        "macs": col("nics", "mac"),
        "uuids": col("gpus", "uuid") | col("gpu_samples", "uuid") | col("processes", "gpu_uuids"),
        "serials": col("gpus", "serial"),
    }
    if b.workdir:
        shutil.rmtree(b.workdir, ignore_errors=True)
    return out


def found(value: str, text: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])", text, re.I) is not None


# ------------------------------------------------------------------ the tests


def test_no_original_value_left_anywhere(work, tmp_path):
    originals = original_identifiers(work["sim"])
    assert len(originals["hostnames"]) == 2 and len(originals["ips"]) >= 4
    assert len(originals["macs"]) >= 6 and len(originals["uuids"]) >= 4 and len(originals["serials"]) >= 4
    before = "\n".join(member_texts(work["sim"]).values())
    assert all(found(v, before) for vals in originals.values() for v in vals)  # the check can fail
    texts = member_texts(tar_of(work["red"], tmp_path))
    assert any(n.endswith(".parquet") for n in texts) and any("/raw/nccl/" in n for n in texts)
    leaks = [(cls, v, name) for cls, vals in originals.items() for v in vals
             for name, text in texts.items() if found(v, text)]
    assert leaks == []
    m = work["map"]  # and each original went to its pseudonym
    for cls in ("hostnames", "ips", "macs", "serials"):
        assert originals[cls] <= set(m[cls]), cls
    assert {u.removeprefix("GPU-") for u in originals["uuids"]} <= set(m["uuids"])


def test_members_names_manifest_host_json(work, tmp_path):
    m = work["map"]["hostnames"]
    texts = member_texts(tar_of(work["red"], tmp_path))
    man = json.loads(texts["manifest.json"].split("\n", 1)[1])
    assert man["hosts"] == sorted(m[h] for h in ("node01", "node02"))
    red = man["redaction"]
    assert red["redacted"] is True and red["kept"] == [] and red["key_id"] == work["summary"]["key_id"]
    assert set(red["classes"]) == {"hostnames", "ips", "macs", "gids", "uuids", "serials", "users"}
    assert red["tool"].startswith("forensics ")
    h1 = m["node01"]
    assert f"hosts/{h1}/host.json" in texts and f"tables/nccl_log/host={h1}/part-0.parquet" in texts
    assert any(re.fullmatch(rf"hosts/{h1}/raw/nccl/nccl\.{h1}\.[0-9]+\.log", n) for n in texts)
    info = json.loads(texts[f"hosts/{h1}/host.json"].split("\n", 1)[1])
    assert info["host"] == h1 and all(n["mac"] in work["map"]["macs"].values() for n in info["nics"])
    cmds = [json.loads(x) for x in texts[f"hosts/{h1}/commands.jsonl"].split("\n")[1:] if x]
    assert all(c["raw_file"].startswith(f"hosts/{h1}/") for c in cmds)
    assert "truth/labels.json" in texts and "node01" not in texts["truth/labels.json"]


def test_key_and_mapping_stay_out_of_the_bundle(work, tmp_path):
    key, _, _ = load_key(work["key"])
    assert stat.S_IMODE(os.stat(work["key"]).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(work["dir"] / "sim-map.json").st_mode) == 0o600
    blob = "\n".join(member_texts(tar_of(work["red"], tmp_path)).values())
    assert key.hex() not in blob and key.hex().upper() not in blob
    assert '"mappings"' not in blob and "node01" not in blob


def _mapped(text: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        text = re.sub(rf"(?<![A-Za-z0-9_.-]){re.escape(old)}(?![A-Za-z0-9_-]|\.[0-9])", new, text)
    return text


def test_same_findings_after_redaction(work):
    cache = work["dir"] / "cache"
    before = analyze_paths([work["sim"]], cache_dir=cache).to_json()
    after = analyze_paths([work["red"]], cache_dir=cache).to_json()
    m = work["map"]
    pairs = sorted(((o, p) for cls in ("hostnames", "ips") for o, p in m[cls].items()), key=lambda t: -len(t[0]))
    assert {f["kind"] for f in before["findings"]} >= {"packet_drops", "nccl_transport_error"}

    def key(f, mapped):
        conv = (lambda s: _mapped(s, pairs)) if mapped else (lambda s: s)
        peers = (f["evidence"] or {}).get("peers") if isinstance(f["evidence"], dict) else None
        return (f["kind"], tuple(sorted(conv(h) for h in f["hosts"])), f["start"], f["end"], conv(f["subject"] or ""),
                conv(f["summary"]), tuple(conv(p) for p in peers or ()), f["severity"], f["score"])

    assert sorted(key(f, True) for f in before["findings"]) == sorted(key(f, False) for f in after["findings"])
    # clock alignment: the same offsets per (mapped) host
    offs = {m["hostnames"][h["host"]]: (h["clock_offset_s"], h["clock_offset_confidence"]) for h in before["hosts"]}
    assert offs == {h["host"]: (h["clock_offset_s"], h["clock_offset_confidence"]) for h in after["hosts"]}


def test_same_key_same_pseudonyms_across_bundles(work, tmp_path):
    m = work["loose_map"]
    assert work["loose_summary"]["key_id"] == work["summary"]["key_id"]
    assert m["hostnames"]["node01"] == work["map"]["hostnames"]["node01"]  # sar fixture host = simulated host
    other = tmp_path / "other.key"
    redact(work["loose"], tmp_path / "o.tar.gz", key_file=other, mapping_out=tmp_path / "o.json")
    m2 = json.loads((tmp_path / "o.json").read_text())["mappings"]
    assert set(m2["hostnames"]) == set(m["hostnames"])
    assert all(m2["hostnames"][h] != m["hostnames"][h] for h in m["hostnames"])
    assert json.loads(member_texts(tmp_path / "o.tar.gz")["manifest.json"].split("\n", 1)[1])["redaction"]["key_id"] \
        != work["summary"]["key_id"]


def test_real_fixtures_bundle(work):
    assert work["loose_summary"]["tables"] == "rewritten"
    must_go = ["a100-st-p4d24xlarge-22", "luciodelelis-92732890-0458-4f76-8369-c4fee80b23e7", "10.200.84.247",
               "kp-ddp-worker-0", "fd00:1148:9000:5000:4:200:3:ff22", "10.216.210.236", "exp03-ft-896z-1-lan",
               "exp03-ft-896z-job-svc", "1324521052681", "73d12ef7-f589-f867-4259-c7090ab44736", "node01.example.com",
               "gpu-node-a"]
    before = "\n".join(member_texts(work["loose"]).values())
    assert all(found(v, before) for v in must_go)
    texts = member_texts(work["loose_red"])
    assert [v for v in must_go if any(found(v, t) for t in texts.values())] == []
    assert set(work["loose_map"]) >= {"hostnames", "ips", "uuids", "serials", "domains"}


def test_rewritten_tables_equal_reparsed_tables(work, tmp_path):
    a, b = work["loose_red"], tmp_path / "b.tar"
    assert redact(work["loose"], b, key_file=work["key"], reparse=True)["tables"] == "reparsed"
    ta, tb = open_bundle(a, workdir=tmp_path / "xa").root / "tables", open_bundle(b, workdir=tmp_path / "xb").root / "tables"
    files = sorted(p.relative_to(ta).as_posix() for p in ta.rglob("*.parquet"))
    assert files == sorted(p.relative_to(tb).as_posix() for p in tb.rglob("*.parquet")) and files
    for f in files:
        x, y = pl.read_parquet(ta / f, hive_partitioning=False), pl.read_parquet(tb / f, hive_partitioning=False)
        cols = [c for c, t in x.schema.items() if not isinstance(t, pl.List)]
        assert x.sort(cols, nulls_last=True).equals(y.sort(cols, nulls_last=True)), f


def test_keep_then_redact_the_rest(work, tmp_path):
    first = tmp_path / "1.tar"
    s1 = redact(work["loose"], first, key_file=work["key"], keep=["ips,gids", "serials"])
    assert s1["kept"] == ["gids", "ips", "serials"]
    t = "\n".join(member_texts(first).values())
    assert found("10.200.84.247", t) and found("1324521052681", t) and not found("kp-ddp-worker-0", t)
    second = tmp_path / "2.tar"
    s2 = redact(first, second, key_file=work["key"])
    assert s2["kept"] == [] and sorted(s2["classes"]) == sorted(["gids", "hostnames", "ips", "macs", "serials", "users", "uuids"])
    t2 = "\n".join(member_texts(second).values())
    assert not found("10.200.84.247", t2) and not found("1324521052681", t2)
    man = json.loads(member_texts(second)["manifest.json"].split("\n", 1)[1])
    assert man["redaction"]["previous"]["kept"] == ["gids", "ips", "serials"]
    with pytest.raises(BundleError, match="nothing to redact"):
        redact(second, tmp_path / "3.tar", key_file=work["key"])


def test_refusals(work, tmp_path):
    with pytest.raises(BundleError, match="unknown class 'hosts'"):
        redact(work["loose"], tmp_path / "x.tar", key_file=work["key"], keep=["hosts"])
    with pytest.raises(BundleError, match="--mapping-out"):
        redact(work["loose"], tmp_path / "x.tar", key_file=work["key"], mapping_out=tmp_path / "x.tar")
    with pytest.raises(BundleError, match="output name"):
        redact(work["loose"], tmp_path / "x.zip", key_file=work["key"])
    assert not list(tmp_path.glob("x.*")) and not list(tmp_path.glob(".forensics-*"))


def test_leak_check_finds_a_planted_value(tmp_path):
    root = tmp_path / "tree"
    (root / "hosts" / "h" / "raw").mkdir(parents=True)
    (root / "hosts" / "h" / "raw" / "a.txt.gz").write_bytes(gzip.compress(b"peer 10.1.2.3<4> ok\n"))
    pl.DataFrame({"host": ["h"], "peer": ["x"], "argv": [["--host", "node07"]]}).write_parquet(root / "t.parquet")
    (root / "hosts" / "h" / "raw" / "b.txt").write_text("10.1.2.30 node070 /home/node07x\n")
    leaks = find_leaks(root, {"ipv4": {"10.1.2.3"}, "name": {"node07"}})
    assert sorted((l.file, l.kind) for l in leaks) == [("hosts/h/raw/a.txt.gz", "ipv4"), ("t.parquet", "name")]


def test_worker_processes_give_the_same_bundle(work, tmp_path):
    from forensics.redact.bundle import redact_bundle

    key, _, _ = load_key(work["key"])
    one = redact_bundle(work["loose"], tmp_path / "1.tar", key, workers=1, mapping_out=tmp_path / "1.json")
    two = redact_bundle(work["loose"], tmp_path / "2.tar", key, workers=2, mapping_out=tmp_path / "2.json")
    a, b = member_texts(tmp_path / "1.tar"), member_texts(tmp_path / "2.tar")
    assert sorted(a) == sorted(b)
    strip = lambda t: re.sub(r'"redacted_at": "[^"]+"', "", t)  # noqa: E731
    assert [n for n in a if strip(a[n]) != strip(b[n])] == []
    assert one["counts"] == two["counts"]
    m1, m2 = (json.loads((tmp_path / f).read_text())["mappings"] for f in ("1.json", "2.json"))
    assert m1 == m2
