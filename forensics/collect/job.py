"""What the training job left on the node, captured by the collector: its GPU processes (command
line, affinity, the NCCL_/CUDA_/TORCH_NCCL_/OMP_NUM_THREADS variables only) and copies of its NCCL
logs (never through a link: see :mod:`forensics.collect.files`).

Standard library only, Python 3.8 syntax. `c` is the running :class:`forensics.collect.main.Collector`.
"""
from __future__ import annotations

import glob
import json
import os
import time

from forensics.collect import files, node, proc
from forensics.collect.records import SKIPPED_TIME

NCCL_CAP = 512 << 20
NCCL_NAME = "nccl_log"
NCCL_SOURCE = "nccl"
NCCL_COPY = "copy"


def record_processes(c):
    """GPU processes (from nvidia-smi compute apps, plus --pid) -> raw/collector/processes.jsonl."""
    apps_path, _ = c.raw("collector", "compute-apps.csv")
    idx_path, _ = c.raw("collector", "gpu-index.csv")

    def text(p):
        try:
            with open(p, "rb") as fh:
                return fh.read().decode("utf-8", "replace")
        except OSError:
            return ""

    apps = node.parse_compute_apps(text(apps_path), text(idx_path))
    pids = sorted(set(apps) | set(c.pids))
    if not pids:
        return
    path, rel = c.raw("collector", "processes.jsonl")
    with open(path, "w") as fh:
        for pid in pids:
            info = node.process_info(pid)
            c.process_uids.add(info.get("uid"))
            info.update(apps.get(pid, {"gpus": [], "gpu_uuids": []}))
            if pid in c.pids:
                info["requested"] = True
            fh.write(json.dumps(info, sort_keys=True) + "\n")
    c.say("recorded %d GPU process(es)" % len(pids))

def copy_nccl_logs(c):
    """Copy the files of the --nccl-log globs, never through a link (see forensics.collect.files)."""
    seen = set()
    owners = files.job_uids(c.process_uids)
    for pattern in c.nccl_globs:
        pattern = os.path.expanduser(pattern)
        base = files.literal_base(pattern)
        matches = sorted(glob.glob(pattern))
        if not matches:
            c.skipped(NCCL_NAME, NCCL_SOURCE, [NCCL_COPY, pattern], "no file matches")
        for src in matches:
            if c.stop.is_set() or time.monotonic() > c.end:
                why = "skipped (collection interrupted)" if c.stop.is_set() else SKIPPED_TIME
                c.skipped(NCCL_NAME, NCCL_SOURCE, [NCCL_COPY, src], why)
                continue
            try:
                fd = files.open_captured(src, base, owners)
            except files.Refused as exc:
                c.skipped(NCCL_NAME, NCCL_SOURCE, [NCCL_COPY, src], "refused: %s" % exc)
                continue
            except OSError as exc:
                c.skipped(NCCL_NAME, NCCL_SOURCE, [NCCL_COPY, src], "cannot read: %s" % (exc.strerror or exc))
                continue
            with os.fdopen(fd, "rb") as fh:
                st = os.fstat(fh.fileno())
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                _copy_one(c, src, fh)

def _copy_one(c, src, fh):
    name = os.path.basename(src) or "nccl.log"
    path, rel = c.raw(NCCL_SOURCE, name)
    i = 1
    while os.path.exists(path):
        i += 1
        path, rel = c.raw(NCCL_SOURCE, "%s-%d" % (name, i))
    res = proc.Result([NCCL_COPY, src])
    out = proc.CappedFile(path, NCCL_CAP, append=False)
    try:
        for block in iter(lambda: fh.read(1 << 20), b""):
            out.write(block)
        res.exit_code = 0
    except OSError as exc:
        res.error = "cannot read: %s" % (exc.strerror or exc)
    res.bytes = out.close()
    res.truncated = out.truncated
    res.end = proc.utcnow()
    c.record(NCCL_NAME, NCCL_SOURCE, res, rel)
