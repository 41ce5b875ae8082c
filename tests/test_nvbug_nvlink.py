"""nvidia-bug-report.sh (2025 drivers) runs ``nvidia-smi nvlink --errorcounters``, ``--remotelinkinfo`` and
``--status`` in its nvidia-smi block after ``--query`` (``append_command "$nvidia_smi nvlink --status"``;
MIT-licensed copy in bottlerocket-os/bottlerocket-admin-container @a226b19). The block is split per command;
``--query`` goes to nvidia_smi, ``--status`` and ``--errorcounters`` to nvlink. The bodies here are real
outputs (tests/fixtures/nvlink, provenance in tests/fixtures/README.md); the block's layout is the script's."""
from __future__ import annotations

import gzip
from pathlib import Path

from forensics.importers import nvbug
from forensics.sources import ParseContext, registry

NVLINK = Path(__file__).parent / "fixtures" / "nvlink"
STATUS = (NVLINK / "nvlink--status-gpud-a100-sxm4-8gpu-12links.txt").read_text()
ERRORS = (NVLINK / "nvlink--errors-mlengineering-h100-elided-prompt.txt").read_text()
SEP = nvbug.SEPARATOR + "\n\n"


def _report() -> bytes:
    blocks = [
        SEP + "Start of NVIDIA bug report log file.\n\nuname: Linux hgx-a100-3 5.15.0-112-generic #122-Ubuntu SMP x86_64 GNU/Linux\n\n",
        SEP + "/usr/bin/nvidia-smi --query\n\nTimestamp                                 : Sun Feb 23 16:31:05 2025\n\n"
        "/usr/bin/nvidia-smi --query --unit\n\nTimestamp                                 : Sun Feb 23 16:31:06 2025\n\n"
        "/usr/bin/nvidia-smi nvlink --errorcounters\n\n" + ERRORS + "\n"
        "/usr/bin/nvidia-smi nvlink --status\n\n" + STATUS + "\n",
        SEP + "\nEnd of NVIDIA bug report log file.\n",
    ]
    return b"".join(gzip.compress(b.encode()) for b in blocks)


def test_the_nvlink_commands_of_the_nvidia_smi_block_go_to_nvlink():
    rep = nvbug.split_report(nvbug.read_maybe_gzip(_report(), 1 << 26))
    by_name = {(s.source, s.name): s for s in rep.sections}
    assert set(by_name) == {("nvidia_smi", "nvidia-bug-report-q.txt"), ("nvlink", "nvidia-bug-report-nvlink-s.txt"),
                            ("nvlink", "nvidia-bug-report-nvlink-e.txt")}
    assert by_name["nvlink", "nvidia-bug-report-nvlink-s.txt"].data.decode().strip() == STATUS.strip()
    assert by_name["nvlink", "nvidia-bug-report-nvlink-e.txt"].data.decode().strip() == ERRORS.strip()
    q = by_name["nvidia_smi", "nvidia-bug-report-q.txt"].data.decode()
    assert q.startswith("Timestamp") and "nvlink" not in q and "--unit" not in q
    parse = registry()["nvlink"].parse
    links = parse(by_name["nvlink", "nvidia-bug-report-nvlink-s.txt"].data, ParseContext(host="hgx-a100-3")).tables["nvlink_links"]
    assert links.height == 8 * 12 and links["active"].all()
    errors = parse(by_name["nvlink", "nvidia-bug-report-nvlink-e.txt"].data, ParseContext(host="hgx-a100-3")).tables["nvlink_errors"]
    assert errors.height > 0
