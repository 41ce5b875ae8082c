"""A paste quoted (``> ``, ``> > ``) or indented as a block is recognised and parsed without that prefix.

The prefix is found on the input's start (forensics.sources._quote), removed from every line that
carries it before the sniffers and the parser see the text (line numbers unchanged), and said in
the file's summary (``quoted`` / ``indented``)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from fixture_cases import cases, context_for
from forensics.ingest.files import parse_file, parse_path
from forensics.sources import ParseContext, parse_bytes, paste_prefix, recognise
from forensics.sources._quote import block_parts, block_prefix, describe, strip_prefix

FIX = Path(__file__).parent / "fixtures"
QUOTED_SMI = FIX / "nvidia_smi" / "nvidia_smi--l-8xh100-570-markdown-blockquote-fenced.txt"
SEVEN = ("dmesg", "ethtool", "iostat", "sar", "numactl", "nvidia_smi", "nccl")


def test_quoted_nvidia_smi_table_is_recognised_and_parsed(tmp_path):
    # a real `nvidia-smi -l` screen (8x H100, 570.133.20) in a markdown blockquote: every line "> ";
    # before, no source recognised it
    name, verdict = recognise(QUOTED_SMI.read_bytes())
    assert name == "nvidia_smi" and verdict
    assert 'quoted "> "' in verdict.reason
    summary, tables = parse_file(QUOTED_SMI)
    assert summary["source"] == "nvidia_smi" and summary["quoted"] == "> "
    assert summary["rows"]["gpus"] == 8 and summary["rows"]["processes"] == 15
    assert summary["unparsed"] == 0  # the two ``` fence lines of the blockquote: skipped, counted
    assert summary["skipped"] == 2 and list(summary["skipped_reasons"]) == [
        "code fence or comment delimiter around the paste: the paste's, not the tool's"]
    gpus = tables["gpu_samples"].sort("gpu")
    assert gpus["temp_c"].to_list()[6] == 86  # GPU 6 at 86C, as printed


def test_unparsed_lines_keep_the_text_the_file_has():
    data = QUOTED_SMI.read_bytes().replace(b"> ```", b"> (fence)")
    _, res = parse_bytes(data, "nvidia_smi", ParseContext(file="x"))
    assert res.meta["quoted"] == "> "
    assert res.unparsed["text"].to_list() == ["> (fence)", "> (fence)"]
    assert res.unparsed["line_no"].to_list() == [1, 64]


def _pasted(data: bytes, prefix: bytes) -> bytes:
    """`data` as a mail or markdown paste shows it: `prefix` before every line (a quote before blank
    lines too, without its trailing space, as mail clients write it)."""
    bare = prefix.rstrip()
    lines = data.split(b"\n")
    tail = lines.pop() if lines and lines[-1] == b"" else None
    out = [(prefix + ln) if ln.strip() else (bare if bare else ln) for ln in lines]
    return b"\n".join(out + ([tail] if tail is not None else []))


# outputs the tool itself indents throughout (a -q paste that starts inside a GPU record): a further
# indent is not told from the tool's own, so the paste is read as it is (and says so: nothing parsed)
TOOL_INDENTED = {"nvidia_smi--q-starts-mid-record-ecc-gtx1060-maxq.txt"}
SEVEN_CASES = [c for c in cases() if c[0] in SEVEN]
# already behind " * " or "% ": one list or comment mark is peeled, not two
LISTED = {"sar--scala-comment-bulleted-u-ALL-el7.txt", "nvidia_smi--q-2x-titan-z-369-wddm-matlab-percent-comments.txt",
          "sar--c-comment-el7-u-zone-word-long-banner-date.txt"}
# pastes of one line (kernel log records that ran together): a mark before one line proves nothing, the paste
# layer peels none (_quote.MIN_LINES lines at least), and a mark before a kernel log head hides it
ONE_LINE = {"dmesg--netlog-jp-syslog-records-run-together-usb3-toshiba-hdd.txt",
            "dmesg--chinaunix-proc-kmsg-records-run-together-usb-camera.txt"}


def _parses_differently(transform, skip=frozenset()) -> list[str]:
    """The real fixtures of the seven tools (but empty ones and those named in `skip`) whose rows, unparsed lines
    or line count change when the fixture's bytes are passed through `transform` (a paste's shape)."""
    differ = []
    for source, f in SEVEN_CASES:
        data = f.read_bytes()
        if not data.strip() or f.name in skip:
            continue
        _, a = parse_bytes(data, source, context_for(f))
        _, b = parse_bytes(transform(data), source, context_for(f))
        if a.rows() != b.rows() or a.unparsed.height != b.unparsed.height or a.lines != b.lines:
            differ.append(f"{f.name}: {a.rows()} {a.unparsed.height} -> {b.rows()} {b.unparsed.height}")
    return differ


@pytest.mark.parametrize("prefix", [b"> ", b"> > ", b"  ", b"\t"], ids=["quote", "quote2", "indent2", "tab"])
def test_every_real_fixture_pasted_with_a_prefix_parses_the_same(prefix):
    differ = _parses_differently(lambda data: _pasted(data, prefix), TOOL_INDENTED if not prefix.strip() else ())
    assert not differ, "\n".join(differ)


@pytest.mark.parametrize("mark", [b" * ", b"- ", b"| ", b"  + "], ids=["star", "dash", "bar", "plus"])
def test_every_real_fixture_pasted_as_a_list_parses_the_same(mark):
    # a forum's bulleted list, a wiki's or mail client's "| " quote: the mark before every non-blank line
    def listed(data):
        return b"\n".join((mark + ln) if ln.strip() else ln for ln in data.split(b"\n"))
    differ = _parses_differently(listed, TOOL_INDENTED | LISTED | ONE_LINE)
    assert not differ, "\n".join(differ)


@pytest.mark.parametrize("mark", [b"% ", b"# ", b"// ", b"-- ", b"; "], ids=["percent", "hash", "slashes", "dashes", "semi"])
def test_every_real_fixture_pasted_as_comments_parses_the_same(mark):
    # output kept as a source file's comments: the mark before every line, a blank line a bare mark (as an editor's
    # "comment out" writes it)
    def commented(data):
        lines = data.split(b"\n")
        tail = [lines.pop()] if lines[-1] == b"" else []  # (the end of the last line: no line of its own)
        return b"\n".join([(mark + ln) if ln.strip() else mark.rstrip() for ln in lines] + tail)
    differ = _parses_differently(commented, TOOL_INDENTED | LISTED | ONE_LINE)
    assert not differ, "\n".join(differ)


def test_nvidia_smi_q_in_matlab_comments_is_recognised_and_parsed():
    # real: `nvidia-smi -q` of two GeForce GTX TITAN Z (369.30, WDDM) kept in a MATLAB file's "% " comments, below
    # MATLAB's `!nvidia-smi -q` shell escape; before, no source recognised it
    f = FIX / "nvidia_smi" / "nvidia_smi--q-2x-titan-z-369-wddm-matlab-percent-comments.txt"
    name, verdict = recognise(f.read_bytes())
    assert name == "nvidia_smi" and 'comment mark "% "' in verdict.reason
    summary, tables = parse_file(f)
    assert summary["commented"] == "% " and "indented" not in summary and "bulleted" not in summary
    assert summary["lines"] == 157 and summary["unparsed"] == 2  # the `!nvidia-smi -q` line; the cut last section
    gpus = tables["gpu_samples"].sort("gpu")
    assert gpus["pci_bus_id"].to_list() == ["0000:06:00.0", "0000:07:00.0"]
    assert gpus["fan_pct"].to_list() == [48.0, 47.0] and gpus["mem_used_mib"].to_list() == [854.0, 854.0]
    # a tool's own "#" lines (nvidia-smi dmon's header) are not a comment block: too few of the lines
    assert block_parts(b"# gpu   pwr  gtemp\n# Idx     W      C\n    0    60     45\n    0    61     45\n") == (b"", b"")


def test_bulleted_sar_in_a_source_comment_is_recognised_and_parsed():
    # real: `sar -u ALL` (el7) kept in a Scala file's comment, every line behind " * ", the comment's "/*" "*/"
    f = FIX / "sar" / "sar--scala-comment-bulleted-u-ALL-el7.txt"
    name, verdict = recognise(f.read_bytes())
    assert name == "sar" and 'list mark " * "' in verdict.reason
    summary, tables = parse_file(f)
    assert summary["bulleted"] == " * " and summary["unparsed"] == 0 and summary["skipped"] == 2
    cpu = tables["cpu_util"]
    assert cpu.height == 1 and cpu["idle_pct"].to_list() == [94.9] and cpu["iowait_pct"].to_list() == [0.66]
    # nvidia-smi's own table lines start with "| ": never taken off (the sniffer is not surer without them)
    smi = QUOTED_SMI.read_bytes().replace(b"> ", b"")
    assert paste_prefix("nvidia_smi", smi) == b""


def test_tool_indented_output_keeps_its_indent():
    f = FIX / "nvidia_smi" / "nvidia_smi--q-starts-mid-record-ecc-gtx1060-maxq.txt"
    head = f.read_bytes()
    assert block_parts(head) == (b"", b"    ")  # every line indented, by nvidia-smi -q itself
    assert paste_prefix("nvidia_smi", head) == b""  # its sniffer is surer with the indent: kept
    summary, _ = parse_file(f)
    assert "indented" not in summary


def test_block_prefix_shapes():
    assert block_prefix(b"> > a\n> > b\n> >\n> > c\n") == b"> > "
    assert block_prefix(b">> a\n>> b\n>>\n") == b">> "
    assert block_prefix(b"    > a\n    > b\n    >\n") == b"    > "  # a quote inside a markdown list
    assert block_prefix(b"  a\n\n  b\n") == b"  "
    assert block_prefix(b"a\n  b\n  c\n") is None  # an indent must hold on every line
    assert block_prefix(b"> a\nb\nc\nd\n") is None  # a quote on nearly every line (90%)
    assert block_prefix(b"> only one line\n") is None
    assert describe(b"> > ") == 'quoted "> > "' and describe(b"\t") == "indented a tab"
    assert describe(b">   ") == 'quoted "> ", indented 2 spaces'


def test_strip_keeps_lines_and_other_text():
    data = b"> a\n>\n[...]\n>    \n> b"
    out = strip_prefix(data, b"> ")
    assert out == b"a\n\n[...]\n\nb"
    assert out.count(b"\n") == data.count(b"\n")


def test_streamed_chunks_are_read_without_the_prefix(monkeypatch):
    # the chunked path of a big log strips each chunk as the whole file is stripped
    import forensics.ingest.files as files

    f = next(p for s, p in SEVEN_CASES if s == "dmesg" and p.stat().st_size > 4000)
    data = _pasted(f.read_bytes(), b"> ")
    whole_name, whole = parse_path(data, None, ParseContext(file="x"))
    got: dict[str, int] = {}
    monkeypatch.setattr(files, "CHUNK_BYTES", 1024)
    monkeypatch.setattr(files.get("dmesg"), "CHUNK_BYTES", 1024, raising=False)
    name, res = parse_path(data, None, ParseContext(file="x"),
                           sink=lambda t, df: got.__setitem__(t, got.get(t, 0) + df.height))
    assert name == whole_name == "dmesg"
    assert res.meta["quoted"] == "> " and res.lines == whole.lines
    assert got.get("kernel_log", 0) == whole.rows()["kernel_log"] > 0
    assert re.fullmatch(r"> .*|>|", res.unparsed["text"].to_list()[0] if res.unparsed.height else "> x")


# --- Markdown hard line breaks (" \\" at the ends of the lines) for every source -------------------

def test_markdown_backslash_hard_breaks_are_read_without_them_for_any_source():
    # DERIVED: real fixtures with " \" appended to every non-blank line, as a Markdown editor keeps breaks
    from forensics.sources import ParseContext, parse_bytes, recognise
    fix = Path(__file__).parent / "fixtures"
    for source, name in (("dmesg", "dmesg--geerlingguy-cx5-raw-pci-domain-0004.txt"),
                         ("numactl", "numactl--sigma-ibo-1node-prompt.txt")):
        raw = (fix / source / name).read_bytes()
        data = b"\n".join(ln + b" \\" if ln.strip() else ln for ln in raw.split(b"\n"))
        got, verdict = recognise(data)
        assert got == source and "Markdown line breaks" in verdict.reason, (name, verdict)
        _, want = parse_bytes(raw, source, ParseContext(host="h"))
        _, res = parse_bytes(data, source, ParseContext(host="h"))
        assert res.meta["hard_breaks"] == sum(1 for ln in raw.split(b"\n") if ln.strip())
        assert res.rows() == want.rows() and res.unparsed.height == want.unparsed.height
        if res.unparsed.height:  # reported as the file has them
            assert all(t.endswith(" \\") for t in res.unparsed["text"].to_list())


@pytest.mark.parametrize("source, name", [
    ("nvidia_smi", "nvidia_smi--q-head-20-gtx1080-396-DERIVED-markdown-backslash-breaks.txt"),
    ("dmesg", "dmesg--linux-mm-mail-quoted-printable-kmem-cache-alloc-oops.txt"),
    ("numactl", "numactl--lkml-smba-v4-qp-0A-soft-breaks-cxl-node-joined-size-free.txt"),
])
def test_stated_source_is_weighed_as_the_paste_layer_reads_the_input(source, name):
    # `forensics parse --source X` (sniff_pasted) reports X's verdict on the input as the paste layer reads it, as
    # `forensics parse` (recognise) does, also where X's sniffer already accepts the raw input less surely (it
    # returned the raw verdict then: the dmesg mail body 0.886 raw, 1.0 decoded). The Markdown hard breaks are the
    # paste layer's alone: nvidia_smi's sniffer took them off itself too (a duplicate, removed)
    from forensics.sources import sniff_as, sniff_pasted
    data = (FIX / source / name).read_bytes()
    got, verdict = recognise(data)
    assert got == source
    assert sniff_pasted(source, data) == verdict
    assert "Markdown" not in sniff_as(source, data).reason and "decoded" not in sniff_as(source, data).reason


def test_unquoted_elision_mark_is_not_weighed_for_the_quote_prefix():
    # a linux-mm reply (fixtures README): the replier's "[...]" left unquoted above seven "> " kernel lines; 7 of 8
    # lines quoted was below SHARE, so the paste was not read as quoted (block_parts gave no prefix)
    data = (FIX / "dmesg" / "dmesg--linux-mm-mail-elision-unquoted-before-quoted-kasan-trace.txt").read_bytes()
    assert block_parts(data) == (b"> ", b"")
    _, res = parse_bytes(data)
    assert res.meta["quoted"] == "> " and res.unparsed.height == 0
    assert res.meta["skipped"] == {"elision mark: lines the paste's author left out": 1}
    assert res.tables["kernel_log"].height == 7
    # the mark is left out of the weighing only: prose among quoted lines still counts against the share (above the
    # first quoted line, up to PREAMBLE such lines are the author's and not weighed: _quote VERSION 11)
    lines = data.replace(b"[...]\n", b"").split(b"\n")
    assert block_parts(b"\n".join(lines[:3] + [b"On Sat 07-03-15 Sasha Levin wrote:"] + lines[3:])) == (b"", b"")
    assert block_parts(data.replace(b"[...]", b"On Sat 07-03-15 Sasha Levin wrote:")) == (b"> ", b"")


# --- a line of the author's own above a short quoted block ----------------------------------------------------------

def test_attribution_line_above_a_short_quoted_block_is_not_weighed():
    # real: a devicetree reply quoting an ethtool -S paste under its "On ..., X wrote:" line (fixtures README): 8 of 9
    # lines quoted, under SHARE; the quote was left on (read with it by ethtool's own leniency, meta without "quoted")
    data = (FIX / "ethtool" / "ethtool--devicetree-reply-attribution-above-short-quoted-stats.txt").read_bytes()
    assert block_parts(data) == (b"> ", b"")
    name, verdict = recognise(data)
    assert name == "ethtool" and 'quoted "> "' in verdict.reason
    _, res = parse_bytes(data)
    assert res.meta["quoted"] == "> " and res.tables["nic_counters"].height == 2
    assert res.unparsed["line_no"].to_list() == [1, 2, 3, 6]  # the author's line, the quoted prose, the kernel line
    # the author's lines above are not weighed only where the quoted lines after them are at least twice as many
    assert block_parts(b"a\nb\n> c\n> d\n> e\n") == (b"", b"")
    assert block_parts(b"a\nb\n> c\n> d\n> e\n> f\n") == (b"> ", b"")
    assert block_parts(b"a\nb\nc\nd\n> e\n> f\n> g\n> h\n> i\n> j\n> k\n> l\n") == (b"", b"")  # (more than PREAMBLE)


def test_every_short_real_fixture_quoted_under_a_line_of_prose_reads_as_unquoted():
    # DERIVED: each real fixture of the seven tools of at most 8 lines pasted under "Here is the output:" with its
    # lines quoted "> " (a forum's or a mail's blockquote) reads as the same fixture pasted under that line
    # unquoted: the same source, rows and unparsed lines, or more rows. Before, 42 of 69 read otherwise (the prose
    # line put the quoted share under SHARE: sar -n DEV, -d, -r and nvidia-smi CSV with a header not recognised)
    read, differ = 0, []
    for source, f in cases():
        data = f.read_bytes()
        lines = data.split(b"\n")
        if source not in SEVEN or not data.strip() or sum(1 for ln in lines if ln.strip()) > 8:
            continue
        read += 1
        plain = b"Here is the output:\n" + data
        quoted = b"Here is the output:\n" + b"\n".join(b"> " + ln if ln.strip() else b">" for ln in lines[:-1]) + \
            b"\n" + lines[-1]
        _, a = parse_bytes(plain, source, context_for(f))
        _, b = parse_bytes(quoted, source, context_for(f))
        same = (recognise(plain)[0], a.rows(), a.unparsed.height) == (recognise(quoted)[0], b.rows(), b.unparsed.height)
        more = all(b.rows().get(t, 0) >= n for t, n in a.rows().items()) and sum(b.rows().values()) > sum(
            a.rows().values()) and b.unparsed.height <= a.unparsed.height
        if not (same or more):
            differ.append(f"{f.name}: {a.rows()} {a.unparsed.height} -> {b.rows()} {b.unparsed.height}")
    assert read > 50 and not differ, "\n".join(differ)
