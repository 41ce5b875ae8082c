"""What the training job left on the node, captured by the collector: its GPU processes (command
line, affinity, the NCCL_/CUDA_/TORCH_NCCL_/OMP_NUM_THREADS and placing SLURM_JOB_ID/PROCID/LOCALID, RANK, LOCAL_RANK variables only) and copies of its NCCL
logs, and the log files sources declare (``Spec`` mode ``copy``: Fabric Manager's log), never through
a link (see :mod:`forensics.collect.files`).

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
            c.process_jobs.add((info.get("env") or {}).get("SLURM_JOB_ID"))
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
    _copy_into(c, NCCL_NAME, NCCL_SOURCE, [NCCL_COPY, src], fh, path, rel, NCCL_CAP)


def _copy_into(c, name, source, argv, fh, path, rel, cap, tail=False):
    """Copy the open file `fh` to the raw file `path` (at most `cap` bytes, the tail kept) and record it;
    `tail`: start reading at the last `cap` bytes (a long log's end) instead of reading it all, from the
    first line that starts in them (a cut first line is left out)."""
    res = proc.Result(argv)
    out = proc.CappedFile(path, cap, append=False)
    try:
        size = os.fstat(fh.fileno()).st_size
        at_line = True
        if tail and size > cap:
            fh.seek(size - cap - 1)
            at_line = fh.read(1) == b"\n"
            out.truncated = True
        for block in iter(lambda: fh.read(1 << 20), b""):
            if not at_line:
                cut = block.find(b"\n")
                if cut < 0:
                    continue
                block, at_line = block[cut + 1:], True
            out.write(block)
        res.exit_code = 0
    except OSError as exc:
        res.error = "cannot read: %s" % (exc.strerror or exc)
    res.bytes = out.close()
    res.truncated = out.truncated
    res.end = proc.utcnow()
    c.record(name, source, res, rel)

def copy_declared(c, spec):
    """Copy the file a ``copy`` spec names (``argv``: ["copy", <absolute path>]) to its raw file, never
    through a link (the folder as named, then O_NOFOLLOW; a regular file with one link owned by root or
    the collector's user). A file longer than the spec's cap: its last `cap` bytes (the copy starts at
    a line). Absent or refused: recorded as a failed copy with the reason. ``FORENSICS_FILES_ROOT``
    (tests only) is put before the path."""
    path = spec.argv[1]
    src = os.environ.get("FORENSICS_FILES_ROOT", "") + path
    argv = [NCCL_COPY, path]
    if c.stop.is_set():
        c.skipped(spec.name, spec.source, argv, "skipped (collection interrupted)")
        return
    try:
        fd = files.open_captured(src, os.path.dirname(src), files.job_uids(()))
    except files.Refused as exc:
        why = str(exc)
        c.skipped(spec.name, spec.source, argv, why if why.startswith("cannot read") else "refused: " + why)
        return
    except OSError as exc:
        c.skipped(spec.name, spec.source, argv, "cannot read: %s" % (exc.strerror or exc))
        return
    path_out, rel = c.raw(spec.source, spec.raw)
    with os.fdopen(fd, "rb") as fh:
        _copy_into(c, spec.name, spec.source, argv, fh, path_out, rel, spec.cap, tail=True)
