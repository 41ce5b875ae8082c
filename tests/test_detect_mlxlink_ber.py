"""ib_link_degraded reading mlxlink (issue 18): a BER after FEC above the InfiniBand specification's
1e-12 is a finding, mlxlink's "15E-255" (none counted) is not. Input: the real BlueField-3 output of
tests/fixtures/mlxlink, as given and with one port's effective BER raised."""
from __future__ import annotations

from pathlib import Path

from forensics.analysis import analyze_paths

FIXTURE = (Path(__file__).resolve().parent / "fixtures" / "mlxlink"
           / "mlxlink--bluefield3-100g-dac-two-ports-m-c-prompts.txt")
LINE = "Effective Physical BER             : 15E-255"


def _findings(tmp_path: Path, text: str) -> list[dict]:
    p = tmp_path / "mlxlink.txt"
    p.write_text(text)
    res = analyze_paths([p], cache_dir=tmp_path / "cache")
    return [f for f in res.findings.to_dicts() if f["kind"] == "ib_link_degraded"]


def test_clean_link_gives_nothing(tmp_path):
    assert _findings(tmp_path, FIXTURE.read_text()) == []


def test_ber_after_fec_above_spec(tmp_path):
    text = FIXTURE.read_text()
    assert text.count(LINE) == 2
    at = text.rindex(LINE)  # the second port (/dev/mst/mt41692_pciconf0.1)
    found = _findings(tmp_path, text[:at] + LINE.replace("15E-255", "3E-11") + text[at + len(LINE):])
    assert len(found) == 1, found
    f = found[0]
    assert "mt41692_pciconf0.1" in f["subject"] and "3.0e-11" in f["summary"], f
