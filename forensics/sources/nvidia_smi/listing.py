"""``nvidia-smi -L`` (``--list-gpus``): one line per GPU, and under a GPU in MIG mode one line per MIG device.

Layout, as printed by the drivers seen (470 ... 570)::

    GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-513536b6-7d19-9063-b049-1e69664bb298)
      MIG 1g.20gb     Device  0: (UUID: MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a)
    GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-d8594bd4-0fc3-8595-e355-7c98138f3b95)

(drivers of the 450/460 era name a MIG device ``MIG-GPU-<uuid>/<gi>/<ci>``). Each GPU line is one gpus row
(gpu = the index printed, name, uuid); a MIG device line says its GPU is in MIG mode (``mig_mode`` "Enabled"
on the GPU's row) and is counted as read. Blank lines are structure; anything else goes to unparsed.
"""
from __future__ import annotations

import re

from forensics.layout import MARKER_PREFIX
from forensics.sources.nvidia_smi.common import Parts
from forensics.sources.nvidia_smi.nvlink import GPU_LINE

MIG_LINE = re.compile(r"^\s+MIG [0-9A-Za-z.+]{1,24} +Device +([0-9]{1,3}): \(UUID: (MIG-[^()\s]{1,80})\)\s*$")
_UUID = re.compile(r"\(UUID: GPU-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-")


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
        out.unparsed.append((ln, line, "not a line of nvidia-smi -L (GPU n: name (UUID: ...))"))
    out.meta = {"variant": "list", "gpus": len(out.gpus), "mig_devices": migs}
    return out
