"""Does an input look like NCCL debug output, PyTorch NCCL watchdog text or nccl-tests output?"""
from __future__ import annotations

import re

from forensics.sources._base import Sniff, head_text
from forensics.sources.nccl.patterns import _SNIFF_MARKERS

# complete lines of each kind, anywhere after a launcher prefix (Python re on the first lines). The header's
# host is tried only where a run of host characters starts (the lookbehind): a match starting inside a run also
# matches from its start, so what is found is the same, but a line of long runs (a hostile line of 5,000-digit
# numbers) is searched in linear time, not in time quadratic in each run's length
_LINE = re.compile(
    r"(?<![^\s:\[\]])[^\s:\[\]]+(?::[0-9]+:[0-9]+)? ?\[[0-9]+\] .*?NCCL (?:INFO|WARN|TRACE|ABORT|ATTN|CALL) "  # NCCL header
    r"|(?:^|\s)NCCL version [0-9]+\.[0-9]+"  # VERSION level
    r"|ProcessGroupNCCL\.cpp:[0-9]+\]|WorkNCCL\(SeqNum=|NCCL watchdog"  # PyTorch c10d
    r"|Detected mismatch between collectives on ranks\. Rank [0-9]+ is running"  # TORCH_DISTRIBUTED_DEBUG=DETAIL
    r"|^\s*(?:\S+\s+)?#?\s*(?:nThread [0-9]+ nGpus [0-9]+ |Avg bus bandwidth\s*:"
    r"|Rank\s+[0-9]+\s+(?:Group\s+[0-9]+\s+)?Pid|size\s+count\s+type\s+(?:redop|time))"  # nccl-tests header, summary
    r"|(?:^|\s)[0-9]+\s+[0-9]+\s+(?:u?int(?:8|32|64)|half|float|double|bfloat16|fp8_e[45]m[23])"
    r"\s+(?:(?:sum|prod|max|min|avg|none|premulsum)\s+-?[0-9]"  # nccl-tests result line
    r"|[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+e[+-][0-9]{2}\s)"  # ... of old all_gather_perf (no redop)
    r"|(?:^|\s)Test (?:NCCL |CUDA )?failure [^\s:]+\.cu:[0-9]+"  # nccl-tests' own error report
)


def sniff(head: bytes) -> Sniff:
    """How many of the first lines are complete NCCL debug, PyTorch NCCL or nccl-tests lines; an NCCL marker
    without such a line (a line cut by the terminal, prose quoting "NCCL WARN") is recognised with less
    confidence; nothing of NCCL: not recognised."""
    text = head_text(head)
    lines = text.splitlines()[:400]
    if lines and len(head) >= 65536:
        lines = lines[:-1]  # may be cut mid-line
    considered = sum(1 for ln in lines if ln.strip())
    hits = sum(1 for ln in lines if _LINE.search(ln))
    if hits:
        return Sniff(round(min(1.0, 0.8 + 0.05 * hits), 3),
                     f"{hits} of {considered} lines are NCCL debug, PyTorch NCCL watchdog or nccl-tests lines")
    h = b"\n" + head
    found = [m.decode().strip() for m in _SNIFF_MARKERS if m in h]
    if found:
        return Sniff(0.6, f"NCCL text ({', '.join(found[:3])}) but no complete NCCL, PyTorch NCCL or nccl-tests line"
                          f" in {considered} lines")
    return Sniff(0.0, f"no NCCL debug header, PyTorch NCCL watchdog line or nccl-tests line in {considered} lines")
