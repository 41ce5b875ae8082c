"""``nvidia-smi -L`` (``--list-gpus``): one line per GPU, and under a GPU in MIG mode one line per MIG device.

Layout, as printed by the drivers seen (470 ... 570)::

    GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-513536b6-7d19-9063-b049-1e69664bb298)
      MIG 1g.20gb     Device  0: (UUID: MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a)
    GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-d8594bd4-0fc3-8595-e355-7c98138f3b95)

(drivers of the 450/460 era name a MIG device ``MIG-GPU-<uuid>/<gi>/<ci>``). Each GPU line is one gpus row
(gpu = the index printed, name, uuid); a MIG device line says its GPU is in MIG mode (``mig_mode`` "Enabled"
on the GPU's row) and is counted as read. Blank lines are structure; anything else goes to unparsed.

A paste cut short loses the end of its last line (``GPU 3: NVIDIA GeForce RTX 3090 (UUID: GPU-2639988f-...-faee38effce2``,
no closing parenthesis): where that line is the input's last one with text, it is still the GPU's row, its uuid
kept only where all of it is there (else null), and the cut is said in meta["cut_last_line"].
"""
from __future__ import annotations

import re

from forensics.layout import MARKER_PREFIX
from forensics.sources._quote import RE_ELISION, RE_FENCE
from forensics.sources.nvidia_smi.common import Parts
from forensics.sources.nvidia_smi.nvlink import GPU_LINE

MIG_LINE = re.compile(r"^\s+MIG [0-9A-Za-z.+]{1,24} +Device +([0-9]{1,3}): \(UUID: (MIG-[^()\s]{1,80})\)\s*$")
_UUID = re.compile(r"\(UUID: GPU-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-")
# the last line of a paste cut short: the GPU line without its closing parenthesis (the UUID whole or cut too)
_CUT_GPU = re.compile(r"^GPU (?P<gpu_s>[0-9]{1,4}): (?P<name>.{0,200}?) \(UUID: (?P<uuid>GPU-[0-9a-fA-F-]{0,40})\s*$")
_WHOLE_UUID = re.compile(r"^GPU-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def is_gpu_line(line: str) -> bool:
    """A ``GPU n: name (UUID: GPU-xxxxxxxx-xxxx-...)`` line (the UUID's shape is what makes it nvidia-smi's)."""
    return len(line) <= 512 and bool(GPU_LINE.match(line)) and bool(_UUID.search(line))


def starts_here(texts: list[str], i: int) -> bool:
    """texts[i] is a GPU line of ``-L``: the next line that is not blank is another GPU or MIG line, or none follows
    (an NVLink counter or link status line below it makes it ``nvidia-smi nvlink`` output instead)."""
    if not is_gpu_line(texts[i]):
        return False
    nxt = next((x for x in texts[i + 1:i + 4] if x.strip() and not x.startswith(MARKER_PREFIX)), None)
    return nxt is None or is_gpu_line(nxt) or bool(MIG_LINE.match(nxt)) or not nxt[:1].isspace()


def parse(texts: list[str], ctx) -> Parts:
    out = Parts()
    gpu: dict | None = None
    migs = 0
    cut_line: dict | None = None
    for ln, line in enumerate(texts, start=1):
        if not line.strip() or line.startswith(MARKER_PREFIX):
            continue
        m = GPU_LINE.match(line) if is_gpu_line(line) else None
        if m:
            gpu = {"line_no": ln, "gpu": int(m.group("gpu_s")), "name": m.group("name").strip() or None,
                   "uuid": m.group("uuid")}
            out.gpus.append(gpu)
            continue
        if MIG_LINE.match(line):
            if gpu is None:
                out.unparsed.append((ln, line, "MIG device line before any 'GPU n: ... (UUID: ...)' line"))
            else:
                gpu["mig_mode"] = "Enabled"
                migs += 1
            continue
        cut = _CUT_GPU.match(line) if len(line) <= 512 and _last_with_text(texts, ln) else None
        if cut:
            whole = bool(_WHOLE_UUID.match(cut.group("uuid")))
            out.gpus.append({"line_no": ln, "gpu": int(cut.group("gpu_s")), "name": cut.group("name").strip() or None,
                             "uuid": cut.group("uuid") if whole else None})
            cut_line = {"line_no": ln, "uuid_whole": whole}
            continue
        out.unparsed.append((ln, line, "not a line of nvidia-smi -L (GPU n: name (UUID: ...))"))
    out.meta = {"variant": "list", "gpus": len(out.gpus), "mig_devices": migs}
    if cut_line:
        out.meta["cut_last_line"] = {**cut_line, "note": "the input's last line is a GPU line cut short (no closing "
                                     "parenthesis): read as that GPU's row" + ("" if cut_line["uuid_whole"] else
                                                                               ", its uuid, cut too, left null")}
    return out


_AROUND = (re.compile(RE_FENCE), re.compile(RE_ELISION))


def _last_with_text(texts: list[str], ln: int) -> bool:
    """Whether line `ln` (1-based) is the last of `texts` with text: markers, blank lines and the paste's own
    lines after it (a closing code fence, an elision mark, which the paste layer skips) do not count."""
    return not any(x.strip() and not x.startswith(MARKER_PREFIX) and not (len(x) <= 256 and any(p.match(x) for p in _AROUND))
                   for x in texts[ln:])
