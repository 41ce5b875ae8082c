"""The job's stderr when one rank hangs: PyTorch 2.7 ProcessGroupNCCL lines of every local rank.

The wording and the source line numbers are those of a real PyTorch 2.7-era hang (OpenRLHF issue
1126, tests/fixtures/nccl/nccl--openrlhf-issue1126-*.txt): each rank waiting in the collective
the stuck rank never entered times out (``Watchdog caught collective operation timeout``), prints
its ``PG status`` (last enqueued work = the whole step's buckets, last completed = the one before
the stuck collective), its dump signal ``from this local rank`` and the teardown lines; the stuck
rank, whose watchdog has no work pending, only receives the dump signal ``from  rank X`` (two
spaces, as printed) with its own numbers: last enqueued = last completed = the collective before.
glog stamps print the month without a leading zero (``E901`` is 1 September), as in the real log.
torchrun's agent then reports the node's first failed worker (its ``ChildFailedError`` summary): the
rank, its local rank and pid on this host, which the ``rank_hosts`` table reads.
"""
from __future__ import annotations

import numpy as np

from forensics.simulate import textfmt as tf
from forensics.simulate.fmt_nccl import copied_at
from forensics.simulate.job import BUCKETS, NUMEL

_WHY = ("This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order "
        "of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. "
        "Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the "
        "communications library (e.g. NCCL), etc. ")


def _signal(pg: str, source: str, enq: int, comp: int) -> str:
    return (f"{pg} Received a dump signal due to a collective timeout from {source} and we will try our best to dump "
            f"the debug info. Last enqueued NCCL work: {enq}, last completed NCCL work: {comp}.{_WHY}")


def hang_log(cluster, plan, model, h: int) -> bytes | None:
    """torchrun's log on host h for a job whose rank `plan.crash.stuck` hung: every local rank's lines."""
    crash = plan.crash
    if crash is None or crash.stuck is None or model.crash_step is None:
        return None
    host = cluster.hosts[h]
    S = model.crash_seq
    T = int(round(crash.timeout_s * 1000))
    stuck_rank = cluster.rank(*crash.stuck)
    fired = [st + ran for st, ran in model.watchdog.values()]
    first = min(fired) if fired else None
    first_rank = min(model.watchdog, key=lambda q: sum(model.watchdog[q])) if fired else None
    ev: list[tuple[float, int, int, str]] = []
    for g in range(cluster.cfg.gpus_per_node):
        R = cluster.rank(h, g)
        pg = f"[PG ID 0 PG GUID 0(default_pg) Rank {R}]"
        if R in model.watchdog:
            start, ran = model.watchdog[R]
            t0 = start + ran
            msg = (f"[Rank {R}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={S}, OpType=ALLREDUCE, "
                   f"NumelIn={NUMEL}, NumelOut={NUMEL}, Timeout(ms)={T}) ran for {int(round(ran * 1000))} milliseconds "
                   "before timing out.")
            enq = S + BUCKETS - 1
            ev += [(t0, R, 632, msg),
                   (t0 + 0.00008, R, 2271, f"{pg}  failure detected by watchdog at work sequence id: {S} PG status: "
                                           f"last enqueued work: {enq}, last completed work: {S - 1}"),
                   (t0 + 0.0004, R, 1746, _signal(pg, "this local rank", enq, S - 1)),
                   (t0 + 0.0005, R, 1536, f"{pg} ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1"),
                   (t0 + 0.49, R, 684, f"[Rank {R}] Some NCCL operations have failed or timed out. Due to the "
                                       "asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
                                       "corrupted/incomplete data."),
                   (t0 + 0.4901, R, 698, f"[Rank {R}] To avoid data inconsistency, we are taking the entire process down."),
                   (t0 + 0.4915, R, 1899, f"{pg} Process group watchdog thread terminated with exception: {msg}")]
        elif R == stuck_rank and first is not None:
            t0 = first + 0.0051
            ev += [(t0, R, 1746, _signal(pg, f" rank {first_rank}", S - 1, S - 1)),
                   (t0 + 0.0001, R, 1536, f"{pg} ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1")]
    ev = [e for e in ev if e[0] <= copied_at(cluster, host)]
    if not ev:
        return None
    ev.sort(key=lambda e: (e[0], e[1]))
    ts = host.wall(np.array([e[0] for e in ev]))
    stamp = tf.times(ts, host.tz, "%m%d %H:%M:%S%.9f", unit="ns").str.strip_chars_start("0").to_list()
    lines = [f"[rank{R}]:[E{s} ProcessGroupNCCL.cpp:{ln}] {m}" for s, (_, R, ln, m) in zip(stamp, ev)]
    return tf.lines_bytes(lines + _agent_summary(cluster, host, h, ev))


AGENT_EXIT_S = 1.6  # a worker's abort after "taking the entire process down" until torchrun's agent reports it


def _agent_summary(cluster, host, h: int, ev: list) -> list[str]:
    """torchrun's report of the node's first failed worker (SIGABRT after its watchdog took it down):
    its ``ChildFailedError`` summary with the one record (the agent stops the other workers itself:
    ``<NO_OTHER_FAILURES>``), in the wording of the real summaries of tests/fixtures/train_log/ (SLRT
    issue 66, ms-swift PR 8307) and of the held-out ones. The agent's own glog lines before it (``failed
    (exitcode: -6) local_rank: ...``) are not written. Nothing when the log was copied before."""
    downs = [(t, R) for t, R, ln, _ in ev if ln == 698]  # "taking the entire process down"
    if not downs:
        return []
    t_down, R = min(downs)
    t = t_down + AGENT_EXIT_S
    if t > copied_at(cluster, host):
        return []
    g = R - cluster.rank(h, 0)
    pid = host.pid(g)
    wall = host.wall(np.array([t]))
    when = tf.times(wall, host.tz, "%Y-%m-%d_%H:%M:%S").to_list()[0]
    rule, dash = "=" * 60, "-" * 60
    return ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", rule, "train.py FAILED", dash,
            "Failures:", "  <NO_OTHER_FAILURES>", dash, "Root Cause (first observed failure):", "[0]:",
            f"  time      : {when}", f"  host      : {host.name}", f"  rank      : {R} (local_rank: {g})",
            f"  exitcode  : -6 (pid: {pid})", "  error_file: <N/A>", f"  traceback : Signal 6 (SIGABRT) received by PID {pid}",
            rule]
