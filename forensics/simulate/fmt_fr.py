"""PyTorch Flight Recorder dumps of a job that stopped in a collective: one JSON dump per rank that
dumped before the copy.

With ``TORCH_NCCL_DUMP_ON_TIMEOUT=1`` ("dump on watchdog timeout or exception") every rank whose
watchdog fired, every rank whose watchdog caught an NCCL error (a link flap, a wedged NIC, a dead
peer: the torchrun log's ``Exception (either an error or timeout) detected by watchdog`` lines,
:mod:`forensics.simulate.fmt_nccl`), and every rank a timed-out rank signalled (the hang log's
``preparing to dump debug info`` lines, :mod:`forensics.simulate.fmt_torch`), writes
its Flight Recorder ring to ``TORCH_FR_DUMP_TEMP_FILE`` + rank (default ``/tmp/nccl_trace_rank_``),
which ``collect --nccl-log '/tmp/nccl_trace_rank_*'`` copies into raw/nccl. The shape is exactly that
of the real JSON dumps of tests/fixtures/flight_recorder/ (``_dump_fr_trace_json``, format 2.10: sorted
keys, ``pg_status`` numbers as strings, 0 for times not discovered); only the values are the job's:
``nccl:all_reduce`` of one 25 MiB bf16 bucket per entry in the default process group, the ring holding
the last :data:`RING` entries (the job's ``TORCH_FR_BUFFER_SIZE``). A rank that reached the collective
the stuck rank never entered has the step's buckets enqueued and none completed (last enqueued
S + BUCKETS - 1, last completed S - 1); the stuck rank's entries stop at S - 1, all completed.
A rank that died (the GPU of an Xid 79 or a contained ECC error) and the ranks torchrun then ended on
its node, or on the node of a rank whose NCCL error took its process down, write none: their process
is gone before any watchdog fires. The dumps are in the one format of the real fixtures (2.10, PyTorch
2.13's); the crash scenarios' watchdog lines keep the wording of their real PyTorch 2.4 sample.
"""
from __future__ import annotations

import json

from forensics.simulate.config import NCCL_SHORT
from forensics.simulate.fmt_nccl import copied_at
from forensics.simulate.job import BUCKETS, COMM0, NUMEL

RING = 64                  # TORCH_FR_BUFFER_SIZE of the simulated job
FORMAT = "2.10"            # the dump format version of the real fixtures
PREFIX = "/tmp/nccl_trace_rank_"
DUMP_AFTER_S = 0.0006      # a rank's dump after its "preparing to dump debug info" line


def _entry(seq: int, created: float, completed: float | None, timeout_ms: int, tid: int) -> dict:
    return {"collective_seq_id": seq, "input_dtypes": ["BFloat16"], "input_sizes": [[NUMEL]], "is_p2p": False,
            "op_id": seq, "output_dtypes": ["BFloat16"], "output_sizes": [[NUMEL]], "p2p_seq_id": 0, "pg_id": 0,
            "process_group": ["0", "default_pg"], "profiling_name": "nccl:all_reduce", "record_id": seq - 1,
            "retired": completed is not None, "state": "scheduled" if completed is None else "completed",
            "thread_id": str(tid), "thread_name": "python", "time_created_ns": int(round(created * 1e9)),
            "time_discovered_completed_ns": 0 if completed is None else int(round(completed * 1e9)),
            "time_discovered_started_ns": 0, "timeout_ms": timeout_ms}


def dumps(cluster, plan, model, h: int) -> list[tuple[int, bytes]]:
    """(rank, JSON dump) of every rank on host h that dumped before the collector copied the files."""
    crash = plan.crash
    if crash is None or model.crash_step is None:
        return []
    host = cluster.hosts[h]
    S = model.crash_seq
    T = int(round(crash.timeout_s * 1000))
    stuck = cluster.rank(*crash.stuck) if crash.stuck is not None else None
    first = min((st + ran for st, ran in model.watchdog.values()), default=None)
    world = cluster.cfg.nodes * cluster.cfg.gpus_per_node
    config = {"0": {"desc": "default_pg", "name": "0", "ranks": str(list(range(world)))}}
    per = COMM0 / BUCKETS   # one bucket's all-reduce
    out = []
    for g in range(cluster.cfg.gpus_per_node):
        R = cluster.rank(h, g)
        tid = host.pid(g) * 4096 + 0x7F0000000000   # a pthread id, not the pid
        if R in model.watchdog or R in crash.errors:
            if R in model.watchdog:
                start, ran = model.watchdog[R]
                at = start + ran + 0.0005 + DUMP_AFTER_S
            else:  # its watchdog caught the NCCL error (fmt_nccl.watchdog_log: 0.35 s after it) and dumped
                start = model.arrive_crash[h, g]
                at = crash.errors[R] + 0.35 + 0.0002 + DUMP_AFTER_S
            seqs = range(S + BUCKETS - RING, S + BUCKETS)
            entries = [_entry(q, host.wall(start + (q - S) * per * 0.5), None, T, tid) for q in seqs]
            enq, comp = S + BUCKETS - 1, S - 1
        elif R == stuck and first is not None:
            at = first + 0.0051 + 0.0001 + DUMP_AFTER_S
            t_last = crash.t_fail
            entries = [_entry(q, host.wall(t_last - (S - q) * per), host.wall(t_last - (S - q - 1) * per), T, tid)
                       for q in range(S - RING, S)]
            enq, comp = S - 1, S - 1
        else:
            continue
        if at > copied_at(cluster, host):
            continue
        status = {"0": {"last_completed_collective": str(comp), "last_enqueued_collective": str(enq),
                        "last_started_collective": "-1"}}
        dump = {"comm_lib_version": NCCL_SHORT, "entries": entries, "nccl_comm_state": {}, "pg_config": config,
                "pg_status": status, "version": FORMAT}
        out.append((R, json.dumps(dump, separators=(",", ":"), sort_keys=True).encode()))
    return out
