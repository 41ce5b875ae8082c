"""A paste whose every line starts with the name of the node that printed it (pdsh, clush, ``talosctl -n``) is read
per node without the names, each node's rows stamped with its name as their host (forensics.sources._hosts)."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from fixture_cases import cases, context_for
from forensics.ingest.files import parse_file
from forensics.sources import parse_bytes, recognise
from forensics.sources._hosts import hosts_of
from forensics.sources._mail_qp import looks_encoded

FIX = Path(__file__).parent / "fixtures"
SEVEN = ("dmesg", "ethtool", "iostat", "sar", "numactl", "nvidia_smi", "nccl")
SEVEN_CASES = [c for c in cases() if c[0] in SEVEN]
TALOS_README = FIX / "dmesg" / "dmesg--talosctl-thunderbolt-extension-node-prefix-kmsg-dict.txt"
TALOS_3 = FIX / "dmesg" / "dmesg--talosctl-3-nodes-thunderbolt-blank-between-nodes.txt"


def test_talosctl_dmesg_of_three_nodes_is_read_per_node():
    # real: `talosctl dmesg` of three nodes, two records each, a blank line between the nodes; before, not recognised
    name, verdict = recognise(TALOS_3.read_bytes())
    assert name == "dmesg" and "3 nodes, 10.131.181.83, 10.131.181.86, 10.131.181.87" in verdict.reason
    summary, tables = parse_file(TALOS_3)
    assert summary["unparsed"] == 0 and summary["lines"] == 9
    assert summary["host_prefix"] == {"nodes": ["10.131.181.83", "10.131.181.86", "10.131.181.87"], "lines": 6}
    k = tables["kernel_log"]
    assert k["line_no"].to_list() == [1, 2, 4, 5, 7, 8]
    assert k["host"].to_list() == ["10.131.181.83"] * 2 + ["10.131.181.86"] * 2 + ["10.131.181.87"] * 2
    assert k["ts"].dt.to_string("%Y-%m-%dT%H:%M:%S%.6f").to_list()[0] == "2025-06-17T01:16:05.269765"
    assert k["message"].to_list()[0] == "thunderbolt 0-1: Intel Corp. sentinel-01"
    assert set(k["facility"].to_list()) == {"kern"} and set(k["level"].to_list()) == {"info"}


def test_talosctl_dmesg_with_kmsg_dictionary_lines_and_the_prompt_above():
    # real: the thunderbolt extension's README: the prompt and a comment above, /dev/kmsg dictionary lines
    # (" SUBSYSTEM=thunderbolt") that talosctl prints without the node name: they go with the record above
    summary, tables = parse_file(TALOS_README)
    assert summary["source"] == "dmesg" and summary["lines"] == 21
    assert summary["unparsed"] == 2  # the prompt and the "# look for lines like these:" line, read with no node
    k = tables["kernel_log"]
    assert k.height == 19 and set(k["host"].to_list()) == {"10.100.52.1"}
    first = k.filter(pl.col("line_no") == 4).row(0, named=True)
    assert first["level"] == "info" and first["subsystem"] == "thunderbolt"
    assert first["message"].startswith("thunderbolt 0-0:1.1: new retimer found")


def test_node_names_behind_a_quote_are_read_per_node():
    # DERIVED: the real three-node talosctl paste quoted as a mail reply quotes it ("> " before every line, ">" on the
    # blank ones); before, not recognised (the names were looked for before the quote only)
    data = b"\n".join(b"> " + ln if ln.strip() else b">" for ln in TALOS_3.read_bytes().split(b"\n"))
    name, verdict = recognise(data)
    assert name == "dmesg" and "3 nodes" in verdict.reason and 'quoted "> "' in verdict.reason
    _, res = parse_bytes(data)
    assert res.meta["quoted"] == "> " and res.unparsed.height == 0
    assert res.tables["kernel_log"]["host"].to_list() == ["10.131.181.83"] * 2 + ["10.131.181.86"] * 2 + [
        "10.131.181.87"] * 2


def test_node_names_of_a_shell_run_through_another_are_read_per_inner_node():
    # DERIVED: the real three-node talosctl paste run through a login node's parallel shell ("login1: " before each
    # line: pdsh -w login1 talosctl -n ...); before, read per "login1" only, none of its lines recognised
    data = b"\n".join(b"login1: " + ln if ln.strip() else ln for ln in TALOS_3.read_bytes().split(b"\n"))
    name, verdict = recognise(data)
    assert name == "dmesg" and "3 nodes, 10.131.181.83" in verdict.reason
    _, res = parse_bytes(data)
    assert res.unparsed.height == 0 and res.lines == 9
    assert res.meta["host_prefix"] == {"nodes": ["login1"], "lines": 6,
                                       "inner_nodes": ["10.131.181.83", "10.131.181.86", "10.131.181.87"]}
    k = res.tables["kernel_log"]
    assert k["line_no"].to_list() == [1, 2, 4, 5, 7, 8]
    assert k["host"].to_list() == ["10.131.181.83"] * 2 + ["10.131.181.86"] * 2 + ["10.131.181.87"] * 2


@pytest.mark.parametrize("levels, hosts", [
    (2, ["10.131.181.83"] * 2 + ["10.131.181.86"] * 2 + ["10.131.181.87"] * 2),  # per inner node
    (1, []),  # the outer names only: login1's lines are read with their inner names, which dmesg does not read
    (0, None),  # not read per node
])
def test_host_split_reads_as_many_levels_of_node_names_as_asked(monkeypatch, levels, hosts):
    # host_split(levels) / parse_pasted(levels): an int, how many names one inside the other are read (was a bool or an
    # int, `_split`); the head's names are looked for once (it ran hosts_of on the whole head twice: once itself, once
    # in nodes_view)
    from forensics.sources import ParseContext, get, host_split, parse_pasted
    from forensics.sources import _hosts

    data = b"\n".join(b"login1: " + ln if ln.strip() else ln for ln in TALOS_3.read_bytes().split(b"\n"))
    heads = []
    real = _hosts.hosts_of
    monkeypatch.setattr(_hosts, "hosts_of", lambda head: heads.append(head) or real(head))
    got = host_split(get("dmesg"), data, ParseContext(), levels) if levels else None
    if levels:
        assert heads.count(data) == 1
        assert got.tables["kernel_log"]["host"].to_list() == hosts
        assert got.meta["host_prefix"]["nodes"] == ["login1"] and got.unparsed.height == 6 - len(hosts)
    else:
        assert got is None
    res = parse_pasted(get("dmesg"), data, ParseContext(), b"", levels=levels)
    assert (res.meta.get("host_prefix") is not None) == bool(levels)


def test_words_that_are_not_node_names_are_no_host_prefix():
    assert hosts_of(b"kernel: [ 10.1] a\nkernel: [ 10.2] b\n") is None  # a journal line cut before its host
    assert hosts_of(b"Average:  all  1.0\nAverage:  0  2.0\n") is None  # sar's summary label
    assert hosts_of(b"0: a\n1: b\n") is None  # numbers
    assert hosts_of(b"node1: a\nprose line\nprose line\nnode1: b\n") is None  # too few lines carry one
    assert hosts_of(b"$ pdsh -w gpu[1-2] dmesg\ngpu1: a\ngpu2: b\n") == [b"gpu1", b"gpu2"]  # the prompt above aside


def _prefixed(data: bytes, node: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return [node + b": " + ln for ln in lines]


@pytest.mark.parametrize("nodes", [1, 2], ids=["one-node", "two-nodes-interleaved"])
def test_every_real_fixture_behind_node_names_parses_the_same_per_node(nodes):
    # pdsh/clush put "node: " before every line of every node's output, the nodes' lines interleaved as they come
    differ = []
    for source, f in SEVEN_CASES:
        data = f.read_bytes()
        if data.count(b"\n") < 2:
            continue
        if nodes > 1 and looks_encoded(data[:65536]):  # a mail body stored encoded: its soft breaks split lines that
            continue  # a node printed whole, and two nodes' lines interleaved cut across them (no real paste does)
        _, a = parse_bytes(data, source, context_for(f))
        names = [b"gpu-node%02d" % i for i in range(1, nodes + 1)]
        per = [_prefixed(data, n) for n in names]
        lines = [ln for group in zip(*per) for ln in group]
        _, b = parse_bytes(b"\n".join(lines) + b"\n", source, context_for(f))
        rows_a = {t: n * nodes for t, n in a.rows().items()}
        if (rows_a != b.rows() or a.unparsed.height * nodes != b.unparsed.height or a.lines * nodes != b.lines):
            differ.append(f"{f.name}: {a.rows()} {a.unparsed.height} -> {b.rows()} {b.unparsed.height}")
            continue
        for t, df in b.tables.items():  # rows without a host of their own carry their node's
            if df.height and "host" in df.columns and t in a.tables and "host" in a.tables[t].columns:
                own = a.tables[t]["host"].drop_nulls().n_unique() if a.tables[t].height else 0
                ctx_host = context_for(f).host
                if not own or (a.tables[t]["host"] == ctx_host).all():
                    if not set(df["host"].to_list()) <= {n.decode() for n in names}:
                        differ.append(f"{f.name}: {t} hosts {sorted(set(df['host'].to_list()))[:3]}")
    assert not differ, "\n".join(differ)
