"""A mail body stored quoted-printable (``=20`` trailing blanks, ``=3D``, soft breaks ``=`` at 76
columns) is recognised and parsed decoded, its line count unchanged (forensics.sources._mail_qp)."""
from __future__ import annotations

import quopri

import pytest
from pathlib import Path

from fixture_cases import cases, context_for
from forensics.ingest.files import parse_file
from forensics.sources import QP_JOINED, parse_bytes, recognise
from forensics.sources._mail_qp import decode, looks_encoded
from forensics.sources.dmesg.parser import CUT_LOST

FIX = Path(__file__).parent / "fixtures"
QP_OOPS = FIX / "dmesg" / "dmesg--linux-mm-mail-quoted-printable-kmem-cache-alloc-oops.txt"
QP_JOURNAL = FIX / "dmesg" / "dmesg--linux-wireless-mail-qp-journal-cut-before-host-prog-pid.txt"
QP_NEWLINES = FIX / "numactl" / "numactl--lkml-smba-v4-qp-0A-soft-breaks-cxl-node-joined-size-free.txt"
STORED_QP = {QP_OOPS.name, QP_JOURNAL.name, QP_NEWLINES.name}  # fixtures kept as the archive stores them: encoded already
SEVEN = ("dmesg", "ethtool", "iostat", "sar", "numactl", "nvidia_smi", "nccl")


def test_quoted_printable_oops_is_read_decoded():
    # a linux-mm mail's kernel oops as the archive keeps it: every line ends in "=20", the module list
    # and the register lines are cut at 76 columns by soft breaks. Before, 8 of its 72 lines were
    # unparsed and the module list read "ppp_generi=c slhc ... ip_table=s"
    summary, tables = parse_file(QP_OOPS)
    assert summary["source"] == "dmesg" and summary["decoded"] == "quoted-printable"
    assert "quoted-printable" in summary["recognition"]
    assert (summary["lines"], summary["unparsed"], summary["rows"]["kernel_log"]) == (72, 0, 41)
    log = tables["kernel_log"]
    mods = log.filter(log["message"].str.starts_with("Modules linked in:"))["message"][0]
    assert "ppp_generic slhc" in mods and "ip_tables btrfs" in mods and mods.rstrip().endswith("[last unloaded: ipt_REJECT]")
    assert "=" not in mods
    first = log.row(0, named=True)
    assert first["message"].startswith("BUG: unable to handle kernel paging request at 00000000fffffff7")
    assert first["line_no"] == 1 and log["line_no"][1] == 3  # the soft break's next line left blank
    rcx = log.filter(log["message"].str.starts_with("RAX:"))["message"][0]
    assert rcx.rstrip().endswith("RCX: 0000000000000000")


def test_decode_keeps_lines_and_unparsed_text_is_the_files():
    data = QP_OOPS.read_bytes()
    assert decode(data).count(b"\n") == data.count(b"\n")
    _, res = parse_bytes(data + b"not a kernel line =20\n", "dmesg")
    assert res.meta["decoded"] == "quoted-printable"
    assert res.unparsed["text"].to_list() == ["not a kernel line =20"]


def test_evidence_needed():
    assert not looks_encoded(b"[    1.0] key=\n[    2.0] a=20 b\n[    3.0] x=3D\n")
    line = b"[    1.000000] " + b"x" * 60 + b"=\n"  # 76 columns and a soft break, three times
    assert looks_encoded(line * 3) and not looks_encoded(line * 2)
    assert not looks_encoded(b"a=20\nb=20\nc=20\n" + b"plain line\n" * 40)  # under a tenth of the lines
    name, verdict = recognise(b"[    1.000000] foo=20\n[    2.000000] bar=20\n[    3.000000] baz=20\n")
    assert name == "dmesg" and "decoded" in verdict.reason


# fixtures kept encoded already (a line joined by soft breaks was followed by blank lines until mail_qp 3: a
# module list cut at a terminal's width, a word-wrapped syslog paste, an iostat row and numactl cpus lists a
# terminal wrapped, a `column -t` table of nvidia-smi csv rows were read otherwise encoded; they are not now)
BLANK_SENSITIVE = {*STORED_QP}


def _mailed_differ(mail) -> tuple[int, list[str]]:
    """How many fixtures of the seven tools, encoded as a mail client does (Python's quopri: RFC 2045 with soft
    breaks at 76 columns) where the encoding shows (the evidence rule), and then given to `mail`, were read; and
    those whose rows or unparsed count differ from the unencoded file's."""
    differ, read = [], 0
    for source, f in cases():
        data = f.read_bytes()
        if source not in SEVEN or f.name in BLANK_SENSITIVE or not data.strip():
            continue
        enc = quopri.encodestring(data)
        if enc == data or not looks_encoded(enc[:65536]):
            continue
        read += 1
        _, a = parse_bytes(data, source, context_for(f))
        _, b = parse_bytes(mail(enc), source, context_for(f))
        if a.rows() != b.rows() or a.unparsed.height != b.unparsed.height:
            differ.append(f"{f.name}: {a.rows()} {a.unparsed.height} -> {b.rows()} {b.unparsed.height}")
    return read, differ


def test_every_real_fixture_mailed_quoted_printable_parses_the_same():
    # each fixture of the seven tools encoded as a mail client does: rows and unparsed counts are the unencoded file's
    read, differ = _mailed_differ(lambda enc: enc)
    assert read > 100 and not differ, "\n".join(differ)


def test_no_real_fixture_is_taken_for_quoted_printable():
    assert [f.name for _, f in cases() if f.name not in STORED_QP and looks_encoded(f.read_bytes()[:65536])] == []


def test_journal_lines_cut_before_the_host_in_a_qp_mail():
    # a linux-wireless mail (kept quoted-printable) with a journal trace pasted from "kernel: [  10.88] ..."
    # on: the time and host were cut off, and one record of another program ("wpa_supplicant[580]: ...")
    # was cut the same way. Before: 13 of 86 lines unparsed, the Xid-less WARNING cut at "nl80211.c:=",
    # the inner boot time left in the messages, the wpa_supplicant record unparsed
    summary, tables = parse_file(QP_JOURNAL)
    assert summary["source"] == "dmesg" and summary["decoded"] == "quoted-printable"
    # the module-list pieces the terminal cut: the paste was taken as a block of columns that left out each line's
    # time and host, and the same columns of the lines the list was wrapped onto (text lost: "snd_hda_codec" /
    # "m btintel"); so they are not joined (joined, they read "snd_hda_codecm"): unparsed, and said why
    assert (summary["lines"], summary["unparsed"]) == (86, 7)
    _, res = parse_bytes(QP_JOURNAL.read_bytes(), "dmesg", context_for(QP_JOURNAL))
    assert res.unparsed["reason"].to_list().count(CUT_LOST) == 5
    assert summary["skipped_reasons"] == {QP_JOINED: 30}  # the encoded lines soft breaks joined to the line before
    assert tables["syslog"].select("line_no", "program", "pid", "message").rows() == [
        (1, "wpa_supplicant", 580, "rfkill: WLAN soft blocked")]
    log = tables["kernel_log"]
    warn = log.row(0, named=True)
    assert warn["message"].startswith("WARNING: CPU: 0 PID: 580 at net/wireless/nl80211.c:6714 nl80211_get_reg_do")
    assert (warn["boot_s"], warn["ts_quality"]) == (10.881037, "none")
    assert log["message"][1] == ("Modules linked in: arc4 snd_hda_codec_hdmi iwlmvm mac80211 snd_hda_codec_realtek "
                                 "snd_hda_codec")
    rax = log.filter(log["message"].str.starts_with("RAX:")).row(0, named=True)
    assert rax["message"].endswith("RCX: 0000000000000000") and rax["boot_s"] == 10.881085


def test_every_line_ending_in_an_encoded_newline_and_a_soft_break():
    # an x86/resctrl SMBA patch (v4 03/13) relayed by Exchange: every line ends "=0A=" (its newline encoded,
    # then a soft break), the prose cut at 76 columns with plain soft breaks too. Before, the first "=0A="
    # took every following line onto it: 0 rows (numactl 9.1% on H's file of the same series)
    data = QP_NEWLINES.read_bytes()
    assert looks_encoded(data) and decode(data).count(b"\n") == data.count(b"\n")
    name, sn = recognise(data)
    assert name == "numactl" and sn.confidence >= 0.9
    _, r = parse_bytes(data, None, context_for(QP_NEWLINES))
    assert r.meta["decoded"] == "quoted-printable" and r.lines == 16
    nodes = r.tables["numa_nodes"].sort("node")
    # "node 0 size: 63678 MB node 0 free: 59542 MB" as the author's mail has it: one line, both fields
    assert nodes.select("node", "line_no", "cpu_count", "mem_total_mb", "mem_free_mb").rows() == \
        [(0, 5, 17, 63678, 59542), (1, 7, 0, 16122, 15627)]
    assert sorted(r.tables["numa_distances"]["distance"].to_list()) == [10, 10, 50, 50]
    assert r.meta["commands"] == [{"line_no": 3, "command": "$numactl -H"}]
    # the two prose lines (the second ends in a soft break: its "=0A=" is on line 16) are unparsed, as stored
    assert r.unparsed["line_no"].to_list() == [1, 15]
    assert r.unparsed["text"].to_list()[1].endswith("is greater=")


def test_a_newline_encoded_inside_a_line_keeps_the_line_count():
    # the form of a linux-mm reply whose quoted lines all sit on encoded lines ("=0A> node 0 size: 70=")
    data = b"> $ numactl --hardware=0A> avail=\nable: 1 nodes (0)=0A> node 0 cpus: 0 1 2 3 4 5 6 7=0A> node 0 size: 70=\n007 MB=0A\n"
    assert decode(data).count(b"\n") == data.count(b"\n")


def test_soft_breaks_join_lines_without_a_blank_after_them():
    # RFC 2045 6.7 rule 5: a soft break is no line break. A numactl cpus list a terminal wrapped, then mailed
    # quoted-printable (quopri cuts at 76 columns): the tail lines must follow their cpus line (a blank
    # after each joined line ended the list: node 0 unparsed)
    f = FIX / "numactl" / "numactl--alcf-aurora-DERIVED-terminal-wrapped-80-cols-mid-number.txt"
    plain, enc = f.read_bytes(), quopri.encodestring(f.read_bytes())
    _, a = parse_bytes(plain, "numactl")
    _, b = parse_bytes(enc, "numactl")
    assert b.meta["decoded"] == "quoted-printable" and b.unparsed.height == 0 and b.lines == enc.count(b"\n")
    cols = ["node", "cpus", "cpu_count", "mem_total_mb", "mem_free_mb"]
    assert b.tables["numa_nodes"].select(cols).rows() == a.tables["numa_nodes"].select(cols).rows()
    lines = enc.split(b"\n")
    for no in b.tables["numa_nodes"]["line_no"].to_list():  # the encoded line each row's text starts on
        assert lines[no - 1].startswith(b"node ")
    assert sum(b.meta["skipped"].values()) == b.lines - a.lines


def test_newline_encoded_inside_a_line_ends_a_line():
    # a reply sent whole on few encoded lines: two lines of numactl -H on each, "=0A" between them (read as a
    # blank before, they ran into one line: "available: 2 nodes (0-1) node 0 cpus: ..." was unparsed)
    plain = (FIX / "numactl" / "numactl--princeton-della-2node-spr8468-prompt.txt").read_bytes()
    rows = plain.rstrip(b"\n").split(b"\n")
    enc = b"".join(b"=0A".join(rows[i:i + 2]) + b"=0A=\n" for i in range(0, len(rows), 2))
    _, a = parse_bytes(plain, "numactl")
    _, b = parse_bytes(enc, "numactl")
    assert b.meta["decoded"] == "quoted-printable" and b.lines == len(rows) // 2
    assert b.unparsed.height == 0 and b.meta["commands"] == [{"line_no": 1, "command": "$ numactl -H"}]
    for t in ("numa_nodes", "numa_distances"):
        assert b.tables[t].drop("line_no").equals(a.tables[t].drop("line_no"))
        assert b.tables[t]["line_no"].to_list() == [(n + 1) // 2 for n in a.tables[t]["line_no"].to_list()]


@pytest.mark.parametrize("chunk", [512, 1024])
def test_soft_break_at_a_chunk_boundary_still_joins(monkeypatch, chunk):
    # the real linux-mm oops stored quoted-printable, streamed in chunks so small that chunk ends fall on lines ending
    # in a soft break "=": the chunk is cut before such a line, so the next line still joins it. Before, the pieces
    # either side were read apart (1 to 10 lines unparsed, messages cut at the boundary)
    import polars as pl

    import forensics.ingest.files as files
    from forensics.sources import ParseContext

    f = FIX / "dmesg" / "dmesg--linux-mm-mail-quoted-printable-kmem-cache-alloc-oops.txt"
    data = f.read_bytes()
    _, whole = files.parse_path(data, None, ParseContext(file="x"))
    monkeypatch.setattr(files, "CHUNK_BYTES", chunk)
    monkeypatch.setattr(files.get("dmesg"), "CHUNK_BYTES", chunk, raising=False)
    got: list = []
    _, res = files.parse_path(data, None, ParseContext(file="x"),
                              sink=lambda t, df: got.append(df) if t == "kernel_log" else None)
    streamed = pl.concat(got).sort("line_no")
    assert res.unparsed.height == whole.unparsed.height == 0 and res.lines == whole.lines
    assert streamed.select("line_no", "message").rows() == whole.tables["kernel_log"].select("line_no", "message").rows()


def _quoted_after(enc: bytes) -> bytes:
    """`enc` (a mail body encoded quoted-printable) quoted in a reply as the archive keeps it: "> " before every
    encoded line, a soft break's next line included ("> " alone on a blank one)."""
    return b"\n".join(b"> " + ln if ln else b">" for ln in enc.split(b"\n"))


def test_quoted_after_encoding_the_quote_is_taken_off_before_decoding():
    # DERIVED: the real 36-node GH200 distance matrix indented 2 (as a mail's text), mailed quoted-printable
    # (quopri cuts its rows at 76 columns), then quoted "> " on every encoded line: prefix ">   ", the quote on
    # each soft break's next line too. Before, the quote was taken off after decoding with the indent, and read
    # inside the joined rows ("...  16 >  17  18", "120  1> 20  120"): recognised as no source, and read as numactl
    # 0 distances of 216, 7 lines unparsed
    f = FIX / "numactl" / "numactl--gh224-4xgh200-distances-only-36-nodes-truncated.txt"
    plain = f.read_bytes()
    indented = b"\n".join(b"  " + ln if ln.strip() else ln for ln in plain.split(b"\n"))
    data = _quoted_after(quopri.encodestring(indented))
    assert b"=\n>  17" in data and b"1=\n> 20" in data  # cut before blanks and inside a number
    name, verdict = recognise(data)
    assert name == "numactl" and verdict.confidence >= 0.9 and "decoded" in verdict.reason
    _, a = parse_bytes(plain, "numactl", context_for(f))
    _, b = parse_bytes(data, None, context_for(f))
    assert (b.meta["quoted"], b.meta["indented"], b.meta["decoded"]) == ("> ", "  ", "quoted-printable")
    assert b.unparsed.height == 0 and b.rows() == a.rows() and b.rows()["numa_distances"] == 216
    cols = ["node", "to_node", "distance"]
    assert b.tables["numa_distances"].select(cols).rows() == a.tables["numa_distances"].select(cols).rows()


def test_every_real_fixture_mailed_quoted_printable_then_quoted_parses_the_same():
    # each fixture of the seven tools encoded as a mail client does, then quoted "> " in a reply (the quote on
    # every encoded line): rows and unparsed counts are the unencoded file's. Before, 8 of 159 differed: tables cut
    # before blanks lost them or read the quote inside a joined line (0 rows of 12, 3, 8 GPUs' samples ...)
    read, differ = _mailed_differ(_quoted_after)
    assert read > 100 and not differ, "\n".join(differ)
