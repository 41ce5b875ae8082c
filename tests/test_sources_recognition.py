"""Recognition states its confidence: every sniffer's verdict is a Sniff (or a bool read as one),
`recognise` names the source with its confidence or says what came closest, and `forensics parse
--source S` on a file that is clearly not S says so."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fixture_cases import cases
from forensics.sources import SNIFF_ACCEPT, Sniff, recognise, registry, sniff_as

FIX = Path(__file__).parent / "fixtures"
FORENSICS = str(Path(sys.executable).parent / "forensics")
STATING = ("dmesg", "numactl")  # sources whose sniffer states a confidence (the others still answer a bool)


def test_sniff_truth_is_the_acceptance_threshold():
    assert Sniff(SNIFF_ACCEPT, "")
    assert not Sniff(SNIFF_ACCEPT - 0.001, "")
    assert Sniff.of(True).confidence == 1.0 and Sniff.of(False).confidence == 0.0
    assert Sniff.of(Sniff(0.3, "x")) == Sniff(0.3, "x")
    got = Sniff.ratio(3, 4, "carry a prefix")
    assert got.confidence == 0.75 and got.reason == "3 of 4 lines carry a prefix"
    assert Sniff.ratio(0, 4, "x").confidence == 0.0 and Sniff.ratio(1, 0, "x").confidence == 0.0


@pytest.mark.parametrize("source,fixture", [c for c in cases() if c[0] in STATING],
                         ids=[c[1].name for c in cases() if c[0] in STATING])
def test_real_fixtures_recognised_with_a_stated_confidence(source, fixture):
    side = fixture.with_name(fixture.name + ".ctx.json")
    if side.is_file() and '"sniff": false' in side.read_text():
        pytest.skip("fixture documented as not sniffable alone")
    name, verdict = recognise(fixture.read_bytes())
    assert name == source
    assert SNIFF_ACCEPT <= verdict.confidence <= 1.0
    assert " of " in verdict.reason  # "N of M lines ..."


def test_not_recognised_names_the_closest_source():
    # one kernel line among prose: dmesg sees it, but not enough of the input to take it as dmesg
    text = b"[   12.345678] mlx5_core 0000:18:00.0: Port module event: module 0, Cable plugged\n" + b"some prose\n" * 5
    name, verdict = recognise(text)
    assert name is None
    assert verdict.confidence == pytest.approx(1 / 6, abs=0.001)
    assert "closest: dmesg" in verdict.reason and "1 of 6 lines" in verdict.reason


def test_clearly_not_dmesg_and_not_numactl():
    numactl = next(f for s, f in cases() if s == "numactl").read_bytes()
    dmesg = next(f for s, f in cases() if s == "dmesg").read_bytes()
    assert sniff_as("dmesg", numactl).confidence == 0.0
    assert sniff_as("numactl", dmesg).confidence == 0.0


def test_parse_with_the_wrong_source_says_so(tmp_path):
    numactl = next(f for s, f in cases() if s == "numactl")
    out = subprocess.run([FORENSICS, "parse", "--source", "dmesg", "--format", "json", str(numactl)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    warning = [ln for ln in out.stderr.splitlines() if "warning" in ln]
    assert len(warning) == 1 and "does not look like dmesg output (confidence 0.00" in warning[0]
    summary = json.loads(out.stdout)
    assert summary["source"] == "dmesg" and summary["confidence"] == 0.0
    assert summary["unparsed"] == summary["lines"]  # nothing was taken for a kernel message


def test_parse_recognised_states_confidence(tmp_path):
    numactl = next(f for s, f in cases() if s == "numactl")
    out = subprocess.run([FORENSICS, "parse", "--format", "json", str(numactl)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and "warning" not in out.stderr
    summary = json.loads(out.stdout)
    assert summary["source"] == "numactl" and summary["confidence"] >= SNIFF_ACCEPT and summary["recognition"]


def test_unrecognised_file_is_one_line_exit_2(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("hello\nthis is not any tool's output\n")
    out = subprocess.run([FORENSICS, "parse", str(f)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "no source recognises it" in out.stderr
    # no sniffer saw anything of its own in it: no closest source to name, so it says so and lists what --source takes
    # (it said only "no source recognises it; use --source NAME", where the README promised the closest source)
    assert "no source's sniffer saw any line of its own in it" in out.stderr and "closest" not in out.stderr
    assert all(f"{name}," in out.stderr or f"{name})" in out.stderr for name in registry())
    assert out.stderr.rstrip().endswith("; use --source NAME")


def test_stated_source_is_weighed_through_the_paste_layer(tmp_path):
    # `forensics parse --source S` judges a pasted S as recognition does: without the quote prefix, decoded
    # where quoted-printable, without Markdown hard breaks (it weighed the raw text and warned before)
    import quopri

    from forensics.ingest.files import parse_file

    quoted = FIX / "nvidia_smi" / "nvidia_smi--l-8xh100-570-markdown-blockquote-fenced.txt"  # a real quoted paste
    summary, _ = parse_file(quoted, source="nvidia_smi")
    assert "warning" not in summary, summary.get("warning")
    assert summary["confidence"] >= SNIFF_ACCEPT and 'quoted "> "' in summary["recognition"]
    assert summary["confidence"] == recognise(quoted.read_bytes())[1].confidence

    raw = (FIX / "sar" / "sar--centos79-u-ALL-P-ALL.txt").read_bytes()
    mailed = quopri.encodestring(b"".join(b"> " + ln for ln in raw.splitlines(True)).replace(b"  ", b" \t"))
    path = tmp_path / "sar-mail.txt"
    path.write_bytes(mailed)
    summary, _ = parse_file(path, source="sar")
    assert "warning" not in summary and summary["confidence"] >= SNIFF_ACCEPT
    assert "quoted-printable" in summary["recognition"] and summary["decoded"] == "quoted-printable"
    hard = tmp_path / "sar-breaks.txt"
    hard.write_bytes(b"".join(ln.rstrip(b"\n") + b"  \\\n" for ln in raw.splitlines(True)))
    summary, _ = parse_file(hard, source="sar")
    assert "warning" not in summary and summary["hard_breaks"] > 0

    # a quoted file that is clearly not S still says so, in one line
    numactl = next(f for s, f in cases() if s == "numactl").read_bytes()
    path = tmp_path / "numactl-quoted.txt"
    path.write_bytes(b"".join(b"> " + ln for ln in numactl.splitlines(True)))
    summary, _ = parse_file(path, source="sar")
    assert summary["confidence"] == 0.0 and summary["warning"].startswith("does not look like sar output")
    assert "\n" not in summary["warning"]
