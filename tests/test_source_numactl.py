"""numactl -H parser: node CPUs/memory and distances of real outputs (1, 2, 4 and 8 nodes,
CPU-less HBM nodes), prompts, the no-NUMA case, numactl's other printing forms, bad input."""
from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from forensics.layout import format_marker
from forensics.sources import ParseContext, detect, numactl
from forensics.sources._base import split_lines

FIX = Path(__file__).parent / "fixtures" / "numactl"
OTHERS = Path(__file__).parent / "fixtures"  # other tools' real outputs (origins in fixtures/README.md)


def parse(name_or_bytes):
    data = name_or_bytes if isinstance(name_or_bytes, bytes) else (FIX / name_or_bytes).read_bytes()
    res = numactl.parse(data, ParseContext(host="n1", file="numactl-H.txt"))
    assert res.lines == split_lines(data).height
    nos = res.unparsed["line_no"].to_list()
    assert len(nos) == len(set(nos))
    used = set(res.tables["numa_nodes"]["line_no"]) | set(res.tables["numa_distances"]["line_no"])
    assert not used & set(nos)
    return res


def node(res, n):
    t = res.tables["numa_nodes"].filter(pl.col("node") == n)
    assert t.height == 1
    return t.row(0, named=True)


def matrix(res):
    return {(r["node"], r["to_node"]): r["distance"] for r in res.tables["numa_distances"].iter_rows(named=True)}


def test_two_nodes_interleaved_cpus_and_prompt_line():
    res = parse("numactl--princeton-della-2node-spr8468-prompt.txt")
    # the command line is a fact (meta), not an unparsed line
    assert res.unparsed.height == 0 and res.meta["commands"] == [{"line_no": 1, "command": "$ numactl -H"}]
    n0, n1 = node(res, 0), node(res, 1)
    assert n0["cpus"] == list(range(0, 96, 2)) and n1["cpus"] == list(range(1, 96, 2))
    assert (n0["cpu_count"], n0["mem_total_mb"], n0["mem_free_mb"], n0["line_no"]) == (48, 515020, 509047, 3)
    assert (n1["mem_total_mb"], n1["mem_free_mb"]) == (516037, 489964)
    assert matrix(res) == {(0, 0): 10, (0, 1): 21, (1, 0): 21, (1, 1): 10}
    assert res.tables["numa_distances"].filter(pl.col("node") == 1)["line_no"].to_list() == [12, 12]


def test_mail_double_quote_prefix_and_the_next_command_echoed_after():
    # '>> >> ' quoted twice in a review thread; `numactl -show` and its output follow the -H output
    res = parse("numactl--arm64-numa-mail-double-quote-show-echo.txt")
    n0, n1 = node(res, 0), node(res, 1)
    assert (n0["cpus"], n0["mem_total_mb"], n0["mem_free_mb"], n0["line_no"]) == ([0, 1, 2, 3], 486, 470, 3)
    assert (n1["cpus"], n1["mem_total_mb"], n1["mem_free_mb"]) == ([4, 5, 6, 7], 424, 408)
    assert matrix(res) == {(0, 0): 10, (0, 1): 20, (1, 0): 20, (1, 1): 10}
    up = res.unparsed.select("line_no", "text", "reason").rows()
    # both command lines (-H above, -show below) are facts; -show's output stays unparsed
    assert [u[0] for u in up] == [14, 15, 16, 17, 18, 19]
    assert [c["line_no"] for c in res.meta["commands"]] == [1, 13]
    assert res.meta["commands"][1]["command"] == ">> >> # numactl -show"
    assert {u[2] for u in up} == {"not numactl -H output"}  # policy:, cpubind:, ... of -show
    assert detect((FIX / "numactl--arm64-numa-mail-double-quote-show-echo.txt").read_bytes()) == "numactl"


def test_mail_reflowed_line_with_size_and_free_and_a_cpuless_cxl_node():
    res = parse("numactl--amd-smba-cxl-mail-reflowed-size-free.txt")
    n0, n1 = node(res, 0), node(res, 1)
    assert (n0["cpu_count"], n0["mem_total_mb"], n0["mem_free_mb"]) == (17, 63678, 59542)  # line 4 holds both
    assert (n1["cpus"], n1["mem_total_mb"], n1["mem_free_mb"]) == ([], 16122, 15627)
    assert matrix(res)[(0, 1)] == 50
    assert res.unparsed.height == 0 and [c["line_no"] for c in res.meta["commands"]] == [1]  # ">> $numactl -H"


def test_a_reflowed_line_is_read_whole_or_not_at_all():
    # the reflowed line of the mail above with its second field unreadable: the line goes to unparsed whole,
    # no size from its first field (a row from the line and the line in unparsed: accounting not exact)
    data = (FIX / "numactl--amd-smba-cxl-mail-reflowed-size-free.txt").read_bytes()
    data = data.replace(b"node 0 free: 59542 MB", b"node 0 free: 59542 kB")
    res = parse(data)  # asserts no line both in a table and in unparsed
    n0 = node(res, 0)
    assert (n0["cpu_count"], n0["mem_total_mb"], n0["mem_free_mb"]) == (17, None, None)
    assert res.unparsed["line_no"].to_list() == [4]
    assert res.unparsed["reason"].to_list() == ["node size does not convert (expected 'N MB')"]


def test_user_prompt_with_trailing_spaces_and_memoryless_nodes():
    res = parse("numactl--threadripper-nps4-user-prompt-memless.txt")
    assert res.unparsed.height == 0 and res.meta["commands"][0]["command"] == "tavianator@tachyon $ numactl -H"
    assert [node(res, n)["mem_total_mb"] for n in range(4)] == [0, 64307, 64472, 0]
    assert node(res, 3)["cpus"] == [18, 19, 20, 21, 22, 23, 42, 43, 44, 45, 46, 47]
    d = matrix(res)
    assert len(d) == 16 and d[(2, 1)] == 12 and all(d[(i, i)] == 10 for i in range(4))


def test_eight_nodes_snc4_trailing_spaces():
    res = parse("numactl--leonardo-dcgp-8node-snc4-trailing-space.txt")
    assert res.tables["numa_nodes"].height == 8 and res.tables["numa_distances"].height == 64
    assert node(res, 7)["cpus"] == list(range(98, 112)) and node(res, 7)["mem_free_mb"] == 63087
    d = matrix(res)
    assert d[(0, 1)] == 12 and d[(0, 4)] == 21 and d[(5, 4)] == 12 and all(d[(i, i)] == 10 for i in range(8))
    assert res.unparsed.height == 0 and [c["line_no"] for c in res.meta["commands"]] == [1]


def test_eight_nodes_amd_epyc_naples_without_prompt():
    res = parse("numactl--rrze-naples-epyc7451-8node.txt")
    assert res.unparsed.height == 0
    assert node(res, 0)["cpus"] == [0, 1, 2, 3, 4, 5, 48, 49, 50, 51, 52, 53]
    assert (node(res, 5)["mem_total_mb"], node(res, 5)["mem_free_mb"]) == (16124, 15775)
    d = matrix(res)
    assert d[(0, 3)] == 16 and d[(3, 4)] == 32 and d[(7, 0)] == 32 and d[(6, 7)] == 16


def test_cpuless_hbm_nodes_of_xeon_max():
    res = parse("numactl--alcf-aurora-xeonmax-hbm-cpuless-nodes.txt")
    assert node(res, 0)["cpu_count"] == 104 and node(res, 1)["cpus"][-1] == 207
    for n in (2, 3):
        r = node(res, n)
        assert r["cpus"] == [] and r["cpu_count"] == 0 and r["mem_total_mb"] == 65536
    assert node(res, 3)["mem_free_mb"] == 64146
    d = matrix(res)
    assert d[(0, 2)] == 13 and d[(0, 3)] == 23 and d[(1, 3)] == 13  # each socket's HBM is nearest
    assert res.unparsed.height == 0 and len(res.meta["commands"]) == 1


def test_single_node():
    res = parse("numactl--sigma-ibo-1node-prompt.txt")
    assert res.tables["numa_nodes"].select("node", "cpu_count", "mem_total_mb", "mem_free_mb").rows() == [(0, 14, 31772, 10107)]
    assert matrix(res) == {(0, 0): 10}


def test_no_numa_available():
    res = parse(b"No NUMA available on this system\n")
    assert res.unparsed.height == 0 and res.tables["numa_nodes"].height == 0
    assert res.meta["numa_available"] is False and res.meta["variant"] == "no-numa"


# numactl's own printing forms (numactl.c hardware(), print_node_cpus(), print_distances(), fmt_mem())

def test_sparse_nodes_new_header_width_and_cpu_compress():
    data = (b"available: 3 nodes (0,2-3)\n"
            b"node 0 cpus: 0-13, 56-69 (28)\n"
            b"node 0 size: 63565 MB\n"
            b"node 0 free: 61356 MB\n"
            b"node 2 cpus:\n"
            b"node 2 size: <not available>\n"
            b"node 2 free: <not available>\n"
            b"node 3 cpus: 14 15\n"
            b"node 3 size: 0 MB\n"
            b"node 3 free: 0 MB\n"
            b"node distances:\n"
            b"node     0    2    3 \n"
            b"   0:   10   20   40 \n"
            b"   2:   20   10  255 \n"
            b"   3:   40  255   10 \n")
    res = parse(data)
    assert res.unparsed.height == 0
    assert node(res, 0)["cpus"] == list(range(0, 14)) + list(range(56, 70)) and node(res, 0)["cpu_count"] == 28
    assert node(res, 2)["mem_total_mb"] is None and node(res, 2)["mem_free_mb"] is None
    assert node(res, 3)["mem_total_mb"] == 0
    assert matrix(res)[(2, 3)] == 255 and matrix(res)[(3, 0)] == 40
    no_dist = parse(b"available: 1 nodes (0)\nnode 0 cpus: 0 1\nnode 0 size: 100 MB\nnode 0 free: 50 MB\n"
                    b"No distance information available.\n")
    assert no_dist.unparsed.height == 0 and no_dist.tables["numa_distances"].height == 0


def test_values_that_do_not_convert_are_reported_not_zeroed():
    data = (b"available: 2 nodes (0-1)\n"
            b"node 0 cpus: 0 1 x\n"
            b"node 0 size: 12 GB\n"
            b"node 0 free: 10 MB\n"
            b"node 1 cpus: 0-3 (5)\n"
            b"node distances:\n"
            b"node   0   1 \n"
            b"  0:  10  21 \n"
            b"  1:  21 \n")
    res = parse(data)
    reasons = dict(zip(res.unparsed["line_no"], res.unparsed["reason"]))
    assert reasons == {2: "CPU list does not convert", 3: "node size does not convert (expected 'N MB')",
                       5: "CPU ranges add up to 4, not the (5) count numactl --cpu-compress prints after them",
                       9: "distance row has 1 values for 2 nodes"}
    r = node(res, 0)
    assert r["cpus"] is None and r["mem_total_mb"] is None and r["mem_free_mb"] == 10
    assert matrix(res) == {(0, 0): 10, (0, 1): 21}


def test_snapshots_with_markers_and_repeated_output():
    one = (FIX / "numactl--sigma-ibo-1node-prompt.txt").read_bytes().split(b"\n", 1)[1]
    import datetime as dt

    m1 = format_marker(dt.datetime(2026, 11, 30, 10, 0, tzinfo=dt.timezone.utc), "numactl -H").encode()
    m2 = format_marker(dt.datetime(2026, 11, 30, 10, 5, tzinfo=dt.timezone.utc), "numactl -H").encode()
    res = parse(m1 + b"\n" + one + m2 + b"\n" + one)
    assert res.unparsed.height == 0 and res.tables["numa_nodes"]["line_no"].to_list() == [3, 11]
    again = parse(one + one)  # pasted twice without markers: a new "available:" starts a new output
    assert again.unparsed.height == 0 and again.tables["numa_nodes"].height == 2


# --- sniffing and bad input -----------------------------------------------------------------------

@pytest.mark.parametrize("path", sorted(FIX.glob("numactl--*.txt")), ids=lambda p: p.name)
def test_sniff_fixtures(path):
    assert numactl.sniff(path.read_bytes()) and detect(path.read_bytes()) == "numactl"


@pytest.mark.parametrize("rel", ["dmesg/dmesg--gpud-xe9680-ctime-xid119-gsp.txt",
                                 "nvidia_smi/nvidia_smi--topo-8xh100-nic-legend-blank-affinity.txt",
                                 "sar/sar--centos79-r-old-columns.txt",
                                 "nccl/nccl--aws-2xa10g-nccl2.11.4-socket-nccltests-allreduce.txt"])
def test_sniff_rejects_other_tools(rel):
    path = OTHERS / rel
    assert not numactl.sniff(path.read_bytes())


@pytest.mark.parametrize("data", [
    b"", b"\n", b"available: 2 nodes (0-1)\nnode 0 cpus: 0 1 2", b"available: 1 nodes (0)\r\nnode 0 cpus: 0\r\n",
    bytes(range(256)) * 4, b"node 99999999999 cpus: 1\nnode 0 size: 99999999999999999999999 MB\n",
    b"node 0 cpus: 0-999999999999\n", b"node 0 cpus: " + b"123456 " * 750_000 + b"\n",
], ids=["empty", "blank", "truncated", "crlf", "garbage", "huge-numbers", "huge-range", "5mb-line"])
def test_bad_input_full_accounting(data):
    res = parse(data)
    assert res.tables["numa_nodes"].height <= res.lines


def test_crlf_parses_like_lf():
    lf = (FIX / "numactl--leonardo-dcgp-8node-snc4-trailing-space.txt").read_bytes()
    a, b = parse(lf), parse(lf.replace(b"\n", b"\r\n"))
    assert a.tables["numa_nodes"].equals(b.tables["numa_nodes"])
    assert a.tables["numa_distances"].equals(b.tables["numa_distances"])


def test_markdown_code_fence_is_structure_of_the_paste():
    # a CXL FPGA project's README: numactl -H of a CPU-less CXL node inside a fenced block
    data = (FIX / "numactl--cxl-fpga-readme-markdown-fence-cpuless-node.txt").read_bytes()
    res = numactl.parse(data, ParseContext(host="h"))
    assert res.lines == 13 and res.unparsed.height == 0
    assert res.tables["numa_nodes"].select("node", "cpu_count", "mem_total_mb").rows() == [(0, 32, 128604), (1, 0, 16062)]
    assert res.tables["numa_distances"].height == 4
    # a fence with an info string, and one of tildes, too; a line of backticks with text after them is no fence
    res = numactl.parse(b"```text\navailable: 1 nodes (0)\n~~~\n``` not a fence\n", ParseContext(host="h"))
    assert res.unparsed["line_no"].to_list() == [4]


def test_a_paste_indented_as_a_whole_is_recognised_and_read():
    # `$ sudo numactl -H` indented four spaces in an LKML commit message (tests/fixtures/README.md)
    from forensics.sources import recognise
    data = (FIX / "numactl--lkml-sched-topology-commit-indented-5node.txt").read_bytes()
    assert recognise(data)[0] == "numactl"
    res = numactl.parse(data, ParseContext(host="h"))
    nodes = res.tables["numa_nodes"].sort("node")
    assert nodes["node"].to_list() == [0, 1, 2, 3, 4]
    assert nodes.filter(pl.col("node") == 4).select("mem_total_mb", "mem_free_mb").rows() == [(3022, 2718)]
    d = res.tables["numa_distances"]
    assert d.filter((pl.col("node") == 0) & (pl.col("to_node") == 1))["distance"].to_list() == [39]
    assert res.unparsed.height == 0 and res.meta["commands"][0]["command"] == "$ sudo numactl -H"


def test_distance_matrix_pasted_alone_is_recognised_and_parsed():
    """numactl issue 224 pasted only the matrix of a 4x GH200 (36 nodes), without 'available:' or
    'node distances:': recognised by the local distance 10 on the diagonal, every row parsed."""
    name = "numactl--gh224-4xgh200-distances-only-36-nodes-truncated.txt"
    data = (FIX / name).read_bytes()
    assert b"available" not in data and b"node distances" not in data
    assert detect(data) == "numactl"
    assert numactl.sniff(data).confidence >= 0.9
    res = parse(name)
    assert res.unparsed.height == 0
    d = res.tables["numa_distances"]
    assert d.height == 6 * 36
    assert d.filter(pl.col("node") == pl.col("to_node"))["distance"].unique().to_list() == [10]
    assert d.filter((pl.col("node") == 4) & (pl.col("to_node") == 5))["distance"].item() == 255


def test_matrix_without_local_distance_10_is_not_numactl():
    """A 'node 0 1' table whose diagonal is not 10 is nothing numactl printed."""
    fake = b"node   0   1 \n  0:  11  20 \n  1:  20  11 \n"
    assert numactl.sniff(fake).confidence == 0.0
    assert numactl.sniff(b"node   0   1 \n  0:  10  20 \n  1:  20  10 \n").confidence >= 0.75


def test_cpus_list_wrapped_by_a_mail_is_joined_back():
    # a real linux-scsi reply (megaraid_sas, two-socket Skylake) quoting `numactl --hardware` twice
    # ("> > "), its client having wrapped each cpus list over three lines and run "node 1 size:" and
    # "node distances:" onto the ends of lines. Before: 5 of 13 lines unparsed, 22 and 19 CPUs, node 1
    # without size or free.
    from forensics.ingest.files import parse_file

    f = Path(__file__).parent / "fixtures" / "numactl" / "numactl--megaraid-skylake-2node-mail-wrapped-cpus-quoted.txt"
    summary, tables = parse_file(f)
    assert summary["source"] == "numactl" and summary["quoted"] == "> > " and summary["unparsed"] == 0
    nodes = tables["numa_nodes"].sort("node")
    assert nodes["cpu_count"].to_list() == [36, 36]
    assert nodes["cpus"].to_list()[0] == list(range(0, 18)) + list(range(36, 54))
    assert nodes["cpus"].to_list()[1] == list(range(18, 36)) + list(range(54, 72))
    assert nodes["mem_total_mb"].to_list() == [31820, 32247] and nodes["mem_free_mb"].to_list() == [21958, 21068]
    assert tables["numa_distances"].height == 4


def test_bare_numbers_are_a_cpus_tail_only_right_after_a_cpus_line():
    text = (b"available: 1 nodes (0)\nnode 0 cpus: 0 1\nnode 0 size: 100 MB\n2 3\n"
            b"node 0 free: 50 MB\nnode distances:\nnode   0\n  0:  10\n")
    res = numactl.parse(text, ParseContext())
    assert res.tables["numa_nodes"]["cpus"].to_list() == [[0, 1]]
    assert res.unparsed["line_no"].to_list() == [4]  # after a size line, "2 3" is nobody's


def test_output_indented_unevenly_is_read():
    # a real OpenStack spec (RST code block): the command one space in, a blank line, the output two spaces
    # in. Before: recognised only as "a distance matrix pasted alone" and 2 of 13 lines read, no node.
    from forensics.ingest.files import parse_file

    f = Path(__file__).parent / "fixtures" / "numactl" / "numactl--openstack-spec-rst-uneven-indent-hash-cmd.txt"
    summary, tables = parse_file(f)
    assert summary["source"] == "numactl" and "11 of 12 lines are numactl -H lines" in summary["recognition"]
    nodes = tables["numa_nodes"].sort("node")
    assert nodes["cpu_count"].to_list() == [12, 12] and nodes["mem_free_mb"].to_list() == [669, 4014]
    assert tables["numa_distances"].height == 4
    assert summary["unparsed"] == 0  # the command line is a fact in meta


def test_bracket_prompt_command_is_a_fact_other_prompts_stay_unparsed():
    # a blog post (josevnz): `[josevnz@dmaf5 ~]$ numactl --hardware`, then a comment and `lscpu |rg NUMA` with
    # its output in the same block. Before: the numactl command line was unparsed too (5 of 12 lines)
    res = parse("numactl--blog-josevnz-bracket-prompt-hardware-then-lscpu.txt")
    assert node(res, 0)["cpus"] == list(range(8)) and node(res, 0)["mem_free_mb"] == 5083
    assert res.meta["commands"] == [{"line_no": 1, "command": "[josevnz@dmaf5 ~]$ numactl --hardware"}]
    assert res.unparsed["line_no"].to_list() == [9, 10, 11, 12]  # the comment, lscpu's prompt and its output


def test_cpus_list_wrapped_inside_numbers_by_a_terminal_is_joined_to_the_real_list():
    # the real Aurora fixture as an 80-column terminal copies it: each cpus line cut every 80 columns,
    # four times inside a number ("... 50 51 1" / "04 105 ...", "... 73 7" / "4 75 ..."). Before: 104 read
    # as CPUs 1 and 4 (node 0: 107 CPUs, node 1: 105), silently.
    from forensics.ingest.files import parse_file

    d = Path(__file__).parent / "fixtures" / "numactl"
    summary, tables = parse_file(d / "numactl--alcf-aurora-DERIVED-terminal-wrapped-80-cols-mid-number.txt")
    _, whole = parse_file(d / "numactl--alcf-aurora-xeonmax-hbm-cpuless-nodes.txt")
    assert summary["source"] == "numactl" and summary["unparsed"] == 0
    cols = ["node", "cpus", "cpu_count", "mem_total_mb", "mem_free_mb"]
    assert tables["numa_nodes"].select(cols).rows() == whole["numa_nodes"].select(cols).rows()
    assert tables["numa_nodes"]["cpu_count"].to_list() == [104, 104, 0, 0]


def test_wrapped_cpus_list_with_two_readings_is_unparsed_not_guessed():
    # "... 12 13" / "14": CPUs 13 14 (broken at a blank) or 1314 (broken inside 1314): both ascend, and the cpus
    # line is the paste's longest (a terminal's width may have cut there)
    text = b"available: 1 nodes (0)\nnode 0 cpus: 10 11 12 13\n14\nnode 0 size: 10 MB\nnode 0 free: 5 MB\n"
    res = numactl.parse(text, ParseContext())
    assert res.tables["numa_nodes"].select("node", "cpus", "cpu_count", "mem_total_mb").rows() == [(0, None, None, 10)]
    assert res.unparsed["line_no"].to_list() == [2, 3]
    assert res.unparsed["reason"].str.contains("may have been cut").all()
    # a longer line in the paste: no terminal cut at the cpus line's width (it would have cut that line too), so
    # the break is a mail client's, at a blank; before, unparsed too
    longer = numactl.parse(text.replace(b"size: 10 MB", b"size: 1000000000 MB"), ParseContext())
    assert longer.tables["numa_nodes"]["cpus"].to_list() == [[10, 11, 12, 13, 14]] and longer.unparsed.height == 0
    # the cut shows its blank (the tail starts with one): at a blank too
    blank = numactl.parse(text.replace(b"\n14\n", b"\n 14\n"), ParseContext())
    assert blank.tables["numa_nodes"]["cpus"].to_list() == [[10, 11, 12, 13, 14]] and blank.unparsed.height == 0
    # one reading only: "... 12 13" / "14 1" (10 11 12 1314 1 does not ascend)
    one = numactl.parse(text.replace(b"\n14\n", b"\n14 15\n"), ParseContext())
    assert one.tables["numa_nodes"]["cpus"].to_list() == [[10, 11, 12, 13, 14, 15]] and one.unparsed.height == 0


def test_field_run_onto_an_untrusted_tail_goes_with_it():
    # a mail client ran "node 0 size:" onto the tail: the line is read whole or not at all (the cpus line the
    # longest: the break may be inside a number, "13" / "14" or "1314")
    text = b"node 0 cpus: 10 11 12 13\n14 node 0 size: 100 MB\nnode 0 free: 50 MB\n"
    res = numactl.parse(text, ParseContext())
    assert res.tables["numa_nodes"].select("line_no", "cpus", "mem_total_mb", "mem_free_mb").rows() == [(3, None, None, 50)]
    assert res.unparsed["line_no"].to_list() == [1, 2]


def test_cpus_list_not_ascending_is_unparsed():
    # "... 56 5" with its tail lost (or garbled): numactl never prints a CPU below the one before it
    text = b"node 0 cpus: 0 1 2 56 5\nnode 0 size: 100 MB\n"
    res = numactl.parse(text, ParseContext())
    assert res.tables["numa_nodes"].select("line_no", "cpus", "mem_total_mb").rows() == [(2, None, 100)]
    assert res.unparsed["line_no"].to_list() == [1] and "ascending" in res.unparsed["reason"][0]


# --cpu-compress lists wrapped onto the next line(s). No real --cpu-compress output is in tests/fixtures or
# the search index (the index's "0-15 32-47"/"0-31,64-95" examples lack numactl's ", " and count: not its
# print), so the real Aurora fixture's plain lists are re-printed as numactl.c print_node_cpus prints them
# with --cpu-compress (numactl/numactl @93c1fe5, v2.0.17 on), by _compress below.

def _compress(cpus: list[int]) -> str:
    """numactl.c print_node_cpus with cpu_compress: maximal runs ascending, ',' before each run but the
    first, ' %d' or ' %d-%d', then ' (%d)' with the count."""
    runs: list[list[int]] = []
    for c in cpus:
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    out = ",".join(f" {a}" if a == b else f" {a}-{b}" for a, b in runs)
    return f"{out} ({len(cpus)})"


def _aurora_compressed() -> tuple[bytes, list[int]]:
    """The real Aurora fixture with its cpus lines in the --cpu-compress form, and those lines' indexes."""
    lines = (FIX / "numactl--alcf-aurora-xeonmax-hbm-cpuless-nodes.txt").read_bytes().decode().split("\n")
    at = []
    for i, ln in enumerate(lines):
        head, sep, tail = ln.partition(" cpus:")
        if sep:
            lines[i] = head + sep + (_compress([int(x) for x in tail.split()]) if tail.split() else "")
            at.append(i)
    return "\n".join(lines).encode(), at


def _wrap(data: bytes, i: int, cut: int, blank_kept: bool = True) -> bytes:
    """Line i of data cut after `cut` characters onto the next line (a terminal's width); blank_kept=False
    drops a blank at the cut as a mail client's wrap does."""
    lines = data.split(b"\n")
    a, b = lines[i][:cut], lines[i][cut:]
    if not blank_kept:
        a, b = a.rstrip(b" "), b.lstrip(b" ")
    lines[i: i + 1] = [a, b]
    return b"\n".join(lines)


def test_cpu_compress_list_wrapped_anywhere_joins_to_the_real_list():
    # before: "node 0 cpus: 0-51," kept 52 of 104 CPUs and its tail "104-155 (104)" went to unparsed
    whole = parse("numactl--alcf-aurora-xeonmax-hbm-cpuless-nodes.txt")
    data, at = _aurora_compressed()
    cols = ["node", "cpus", "cpu_count", "mem_total_mb", "mem_free_mb"]
    assert data.split(b"\n")[at[0]] == b"node 0 cpus: 0-51, 104-155 (104)"  # numactl's form, as printed
    compressed = parse(data)
    assert compressed.unparsed.height == 0
    assert compressed.tables["numa_nodes"].select(cols).rows() == whole.tables["numa_nodes"].select(cols).rows()
    i = at[0]
    start = len(b"node 0 cpus:") + 1
    for cut in range(start, len(data.split(b"\n")[i])):  # every column inside the list
        for blank_kept in (True, False):
            res = parse(_wrap(data, i, cut, blank_kept))
            assert res.unparsed.height == 0, (cut, res.unparsed.rows())
            assert res.tables["numa_nodes"].select(cols).rows() == whole.tables["numa_nodes"].select(cols).rows()
            assert res.meta["cpus_wrapped_lines"] == 1
    # wrapped twice ("node 0 cpus: 0-5" / "1, 104-15" / "5 (104)")
    twice = parse(_wrap(_wrap(data, i, start + 3), i + 1, 6))
    assert twice.unparsed.height == 0 and node(twice, 0)["cpus"] == node(whole, 0)["cpus"]


def test_cpu_compress_list_not_certain_is_unparsed_and_the_node_keeps_no_cpus():
    data, at = _aurora_compressed()
    i = at[0]
    lines = _wrap(data, i, len(b"node 0 cpus: 0-51,")).split(b"\n")
    # the tail lost: "node 0 cpus: 0-51," then "node 0 size:" (before: 52 CPUs, silently)
    res = parse(b"\n".join(lines[: i + 1] + lines[i + 2:]))
    assert node(res, 0)["cpus"] is None and node(res, 0)["cpu_count"] is None
    assert node(res, 0)["mem_total_mb"] == 515489  # its other fields stay
    assert res.unparsed["line_no"].to_list() == [i + 1] and "cut short" in res.unparsed["reason"][0]
    # the joined ranges do not add up to the count (part of the list lost between the lines)
    lost = parse(b"\n".join(lines[: i + 1] + [b"130-155 (104)"] + lines[i + 2:]))
    assert node(lost, 0)["cpus"] is None
    assert lost.unparsed["line_no"].to_list() == [i + 1, i + 2]
    assert lost.unparsed["reason"].str.contains("not the \\(104\\) count").all()
    # the tail has no count (cut again, the rest lost): "0-51," / "104-155"
    nocount = parse(b"\n".join(lines[: i + 1] + [b"104-155"] + lines[i + 2:]))
    assert node(nocount, 0)["cpus"] is None and nocount.unparsed["line_no"].to_list() == [i + 1, i + 2]
    # once the count is printed the list is whole: bare numbers after it are nobody's
    after = parse(b"\n".join(lines[: i + 2] + [b"5"] + lines[i + 2:]))
    assert node(after, 0)["cpu_count"] == 104 and after.unparsed["line_no"].to_list() == [i + 3]


def test_cpu_compress_one_line_not_numactls_print_is_unparsed():
    base = b"node 0 cpus: %s\nnode 0 size: 100 MB\n"
    for value in (b"0-13, 56-69", b"0-13, 14-69 (70)", b"56-69, 0-13 (28)", b"0-13,56-69 (28)", b"00-13 (14)",
                  b"0-0 (1)"):
        res = parse(base % value)
        assert res.tables["numa_nodes"].select("cpus", "mem_total_mb").rows() == [(None, 100)], value
        assert res.unparsed["line_no"].to_list() == [1] and "numactl's print" in res.unparsed["reason"][0]
    ok = parse(base % b"0-13, 56-69 (28)")
    assert node(ok, 0)["cpu_count"] == 28 and ok.unparsed.height == 0
    assert parse(base % b"5 (1)").tables["numa_nodes"]["cpus"].to_list() == [[5]]
    assert parse(base % b"(0)").tables["numa_nodes"]["cpus"].to_list() == [[]]  # a CPU-less node: " (0)"


def test_compress_ranges_past_any_nodes_cpus_are_refused_before_expansion_on_every_path():
    """An 18 KB line of 2,000 ranges of 65,536 CPUs each expanded to 131 M ints (MemoryError) where a mail client's
    reflowed line is checked field by field; the list's total is bounded, not each range."""
    ranges = ", ".join(["0-65535"] * 2000)
    for text in (f"node 0 cpus: {ranges} (131072000)\nnode 0 size: 100 MB\n",
                 f"available: 1 nodes (0)\nnode 0 size: 100 MB node 0 cpus: {ranges}\nnode 0 free: 50 MB\n"):
        res = parse(text.encode())
        assert res.lines == text.count("\n")
        assert not any(cpus for cpus in res.tables["numa_nodes"]["cpus"].to_list() if cpus)
        assert res.unparsed.height >= 1
    assert numactl._cpus("0-65535 (65536)") == list(range(65536))
    assert numactl._cpus("0-65535, 65537 (65537)") is None


def test_cpus_line_after_size_and_free_keeps_the_node_when_its_list_is_unparsed():
    # DERIVED from the real della fixture: node 1's cpus line moved after its size and free lines, its list garbled
    # (two CPUs swapped). Before, the cpus line reset the node's record of its lines, so dropping the list dropped the
    # node with its size and free (read from lines neither in a row nor unparsed)
    lines = (FIX / "numactl--princeton-della-2node-spr8468-prompt.txt").read_bytes().split(b"\n")
    i = next(k for k, ln in enumerate(lines) if ln.startswith(b"node 1 cpus:"))
    cpus = lines.pop(i).replace(b" 3 5 ", b" 5 3 ")
    lines.insert(i + 2, cpus)
    res = numactl.parse(b"\n".join(lines), ParseContext())
    n1 = res.tables["numa_nodes"].filter(pl.col("node") == 1)
    assert n1.select("line_no", "cpus", "mem_total_mb", "mem_free_mb").rows() == [(i + 1, None, 516037, 489964)]
    assert res.unparsed["line_no"].to_list() == [i + 3] and "ascending" in res.unparsed["reason"][0]
