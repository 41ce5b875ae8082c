"""redact's leak check (forensics/redact/verify.py): an original value left anywhere is found, in a
table's string column, in a raw file however it is cut into blocks, in a member's name, in any case
that the regexes' Unicode case folding allows; and the Aho-Corasick prefilter drops nothing that the
regexes alone would find."""
from __future__ import annotations

import functools
import gzip
import random

import polars as pl
import pytest

from forensics.redact import verify as V
from forensics.redact.codec import line_blocks


def _tree(tmp_path):
    root = tmp_path / "tree"
    (root / "hosts" / "h" / "raw").mkdir(parents=True)
    (root / "tables").mkdir()
    return root


def test_ascii_folds_are_every_non_ascii_character_a_case_insensitive_regex_matches_to_ascii():
    chars = pl.Series([chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF])
    assert chars.filter(chars.str.contains(r"(?i)[\x00-\x7f]")).to_list() == list(V.ASCII_FOLDS)


def test_a_leak_in_a_later_batch_of_a_table_column(tmp_path):
    root = _tree(tmp_path)
    n = V.PARQUET_BATCH_ROWS + 5000
    msgs = [f"link {i} up" for i in range(n)]
    msgs[n - 10] = "peer NODE07:1234 reset"  # a name, in another case, in the second batch
    pl.DataFrame({"msg": msgs, "x": range(n)}).write_parquet(root / "tables" / "t.parquet")
    pl.DataFrame({"host": pl.Series(["a", "b", "node07"], dtype=pl.Categorical)}).write_parquet(root / "tables" / "c.parquet")
    pl.DataFrame({"serial": ["abc1234", "x"]}).write_parquet(root / "tables" / "s.parquet")  # serials keep their case
    leaks = V.find_leaks(root, {"name": {"node07"}, "serial": {"ABC1234"}})
    assert sorted((l.file, l.kind, l.text) for l in leaks) == [
        ("tables/c.parquet", "name", "node07"), ("tables/t.parquet", "name", " NODE07:")]


def test_a_leak_across_the_cut_of_a_long_line(tmp_path, monkeypatch):
    monkeypatch.setattr(V, "line_blocks", functools.partial(line_blocks, block=64, max_line=256))
    root = _tree(tmp_path)
    for name, at in (("a.txt", 250), ("b.txt", 252), ("c.txt", 256)):
        line = bytearray(b"x " * 1000)
        line[at:at + 10] = b" 10.1.2.3 "  # straddles the 256th byte, where the line is cut
        (root / "hosts" / "h" / "raw" / name).write_bytes(bytes(line) + b"\n")
    (root / "hosts" / "h" / "raw" / "d.txt.gz").write_bytes(gzip.compress(b"y " * 500 + b"10.1.2.3\n"))
    (root / "hosts" / "h" / "raw" / "e.txt").write_bytes(b"x " * 127 + b"10.1.2.30 " + b"x " * 500 + b"\n")
    leaks = V.find_leaks(root, {"ipv4": {"10.1.2.3"}})
    assert sorted(l.file for l in leaks) == [f"hosts/h/raw/{n}" for n in ("a.txt", "b.txt", "c.txt", "d.txt.gz")]


def test_a_leak_in_a_member_name(tmp_path):
    root = tmp_path / "tree"
    (root / "hosts" / "Node07" / "raw").mkdir(parents=True)
    (root / "hosts" / "Node07" / "raw" / "a.txt").write_text("nothing\n")
    (root / "hosts" / "node070" / "raw").mkdir(parents=True)
    (root / "hosts" / "node070" / "raw" / "a.txt").write_text("nothing\n")
    leaks = V.find_leaks(root, {"name": {"node07"}})
    assert [(l.file, l.kind, l.text) for l in leaks] == [("(member names)", "name", "/Node07/")]


def test_unicode_case_folding_is_kept(tmp_path):
    """Rust's (?i) is Unicode: KELVIN SIGN is a k, and a non-ASCII value matches in either case."""
    root = _tree(tmp_path)
    pl.DataFrame({"a": ["\u212aube01 up", "kube010"]}).write_parquet(root / "tables" / "k.parquet")
    pl.DataFrame({"a": ["at NÖDE07", "nöde070"]}).write_parquet(root / "tables" / "o.parquet")
    pl.DataFrame({"a": ["at \u00e9\u00e9 x"]}).write_parquet(root / "tables" / "e.parquet")
    leaks = V.find_leaks(root, {"name": {"kube01", "nöde07", "\u00c9\u00c9"}})
    assert sorted((l.file, l.text) for l in leaks) == [
        ("tables/e.parquet", " \u00e9\u00e9 "), ("tables/k.parquet", "\u212aube01 "), ("tables/o.parquet", " NÖDE07")]


def _reference(ser: pl.Series, originals) -> dict[str, str]:
    """The check without the prefilter: every kind's regex of all originals on every text."""
    out = {}
    for kind, rx in V.checks(originals):
        hit = ser.str.contains(rx).fill_null(False)
        if hit.any():
            out[kind] = ser.filter(hit).str.extract(rx, 0)[0]
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_prefilter_drops_nothing_the_regexes_find(seed, monkeypatch):
    rnd = random.Random(seed)
    originals = {
        "name": {f"gpu-node{i:02d}" for i in rnd.sample(range(100), 20)} | {"dgx", "a100-st-22.cluster"},
        "domain": {"corp.example"},
        "ipv4": {f"10.0.{rnd.randrange(4)}.{rnd.randrange(40)}" for _ in range(30)},
        "hex": {"0c:42:a1:00:11:22", "fe80::0202:c9ff:fe00:0001"},
        "serial": {"1324521052681", "PQ0123"},
        "user": {"alice", "bob.k"},
    }
    pool = [v for vs in originals.values() for v in vs]
    noise = ["node", "10.0.1.", "x", " ", "-", ".", "@", "/home/", "user=", "~", ":", "_", "DGX", "gpu-Node", "9",
             "\u212a", "\u00e9", "ALICE", "corp.example.org", "0C:42:A1:00:11:22"]
    texts = []
    for _ in range(3000):
        parts = [rnd.choice(noise) for _ in range(rnd.randrange(1, 8))]
        if rnd.random() < 0.05:
            v = rnd.choice(pool)
            parts.insert(rnd.randrange(len(parts) + 1), v.upper() if rnd.random() < 0.3 else v)
        texts.append("".join(parts))
    sers = [pl.Series(texts[i:i + 300], dtype=pl.String) for i in range(0, 3000, 300)]
    want = [_reference(ser, originals) for ser in sers]  # one regex per kind
    if seed % 2:
        monkeypatch.setattr(V, "REGEX_VALUES", 4)  # a kind's values in several regexes
        assert len(V.checks(originals)) > len(originals)
    rules = V.Rules(originals)
    for ser, ref in zip(sers, want):
        leaks: list = []
        V._scan(ser, rules, "here", leaks)
        assert {l.kind: l.text for l in leaks} == ref, ser.to_list()


def test_values_alike_but_for_case_or_kind_are_each_checked():
    originals = {"name": {"node07"}, "serial": {"PQ0123", "pq0123"}, "user": {"node07"}}
    ser = pl.Series(["ssh node07@x", "sn pq0123 ok", "/home/node07 ls"])
    leaks: list = []
    V._scan(ser, V.Rules(originals), "here", leaks)
    assert [(l.kind, l.text) for l in leaks] == [("name", " node07@"), ("serial", " pq0123 "), ("user", " node07@")]
    assert {l.kind: l.text for l in leaks} == _reference(ser, originals)
