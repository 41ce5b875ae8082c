"""NCCL debug output (``NCCL_DEBUG=VERSION|WARN|INFO|TRACE``) and PyTorch's NCCL watchdog lines.

Reads what NCCL's ``ncclDebugLog`` prints in every version from 2.4 to 2.30, as job stdout, an
``NCCL_DEBUG_FILE`` or a container log:

- ``host:pid:tid [dev] NCCL INFO msg``; WARN as ``host:pid:tid [dev] file.cc:123 NCCL WARN msg``
  (2.24+ may add `` (func)`` after the line number); TRACE as ``host:pid:tid [dev] 12.345 func:67
  NCCL TRACE msg``; ``host:pid:tid NCCL CALL ...``; old ``... file:line NCCL ABORT``; the bare
  ``NCCL version 2.11.4+cuda11.4`` (VERSION level, no host) and ``... NCCL INFO NCCL version ...``;
- NCCL's own time stamp ``[%F %T] `` (NCCL_DEBUG_TIMESTAMP_FORMAT, sub-seconds allowed; recent
  versions stamp WARN lines by default) before the host: local time, converted with ``ctx.tz``;
- launcher and collector prefixes, stacked in any order: RFC 3339 container stamps
  (``2025-11-24T03:20:21.001125857Z``, exact), Open MPI ``[1,3]<stdout>:``, ``srun -l`` ``0: `` /
  `` 0: ``, ``[155] ``, Ray ``(Actor pid=..)`` and anything else before the NCCL header;
  headers whose host was cut (`` [0] NCCL INFO``) or that lack ``pid:tid`` (``host [5] NCCL INFO``);
- PyTorch c10d lines: ``[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation
  timeout: WorkNCCL(SeqNum=.., OpType=.., Timeout(ms)=..) ran for .. milliseconds``, the newer
  ``[rank3]:[E1130 10:15:02.123456 1234 ProcessGroupNCCL.cpp:616] ...`` (also ``[E626 06:24:44.9``
  nanosecond form without thread id), ``[PG ID 0 PG GUID 0(default_pg) Rank 1] Exception ...
  last enqueued NCCL work: N, last completed NCCL work: M``, ``terminate called after throwing``,
  ``what():`` and ``Exception raised from ...`` lines.

Each NCCL or PyTorch line becomes one ``nccl_log`` row with its ``kind`` and the fields it carries
(peer address, IB completion status and vendor error, communicator id, ranks, SeqNum/OpType,
timeouts, ``-> N`` return codes). Configuration lines also yield ``nccl_config`` rows: version,
net, net_plugin, ib_hca (one per HCA), oob_if, socket_if, bootstrap_if, gdr.<hca>
(enabled/disabled), gdr (from "use ring PXN x GDR y"), env.<VAR>, channel_transport (one per
Channel/Ring ... via ... line), nchannels, nranks, nnodes, local_ranks, comm_id, cuda_driver,
cpu_affinity. nccl-tests output (its header, device lines, result table and the ``Avg bus
bandwidth`` / ``Out of bounds values`` summaries, see :mod:`.perf_tests`) becomes ``nccl_tests`` rows.
Everything else (stack frames, program output) is kept in ``unparsed`` with a reason; blank lines and prefix-only lines (NCCL writes a blank line before
each WARN) count as structure. ``rank`` is the launcher rank when a prefix gives one, else the
rank the line itself names. NCCL never prints its subsystem, so ``subsys`` stays null.

Rows come NCCL lines first, then PyTorch lines, each in line order. Hot path: lines are read with
polars' CSV reader (one column, no quoting); the common header is split with byte offsets of literal
finds (`` NCCL ``, the first space, ``] ``) and plain string splits; launcher prefixes are stripped with
one anchored regex before the same fast split (other shapes fall back to a regex on the part before
`` NCCL ``); kinds come from one anchored alternation of message prefixes plus one alternation of
literals, and message fields and configuration come from rules declared once (_make_rules) that read
the message only. Big inputs classify and apply the rules once per distinct message (a log repeats its
messages across ranks and steps) on the rows of each kind; small ones (a rank's init log in a bundle)
apply all rules at once, gated by kind, in a handful of polars calls. Eager polars calls share no common
subexpressions, so a value used twice is computed once into a scratch column. ingest parses chunks of
CHUNK_BYTES on worker threads.

>>> from forensics.sources import ParseContext
>>> data = (b"hostname-test:984:1357 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer"
...         b" 172.36.143.59<44206> with status=12 opcode=129 len=65536 vendor err 129 (Recv) localGid"
...         b" ::ffff:29.87.88.182 remoteGids::ffff:29.87.4.221\\n"
...         b"hostname-test:984:1357 [4] NCCL INFO transport/net.cc:1298 -> 6\\n")
>>> res = parse(data, ParseContext(host="node01"))
>>> res.tables["nccl_log"].select("host", "pid", "cuda_dev", "src_file", "kind", "peer_addr",
...                               "ib_status", "vendor_err", "retcode").rows()
[('hostname-test', 984, 4, 'ib_plugin.c', 'ib_completion_error', '172.36.143.59<44206>', 12, 129, None), ('hostname-test', 984, 4, 'transport/net.cc', 'error_chain', None, None, None, 6)]
>>> res.meta["hosts"], res.unparsed.height
(['hostname-test'], 0)
"""
from __future__ import annotations

from forensics.sources.nccl.lines import read_lines
from forensics.sources.nccl.parser import parse
from forensics.sources.nccl.sniffing import sniff
from forensics.sources.nccl import patterns
from forensics.sources.nccl.patterns import (
    CHUNK_BYTES, CHUNKABLE, DESCRIPTION, NAME, SNIFF_PRIORITY, TABLES, VERSION,
)

__all__ = ["CHUNK_BYTES", "CHUNKABLE", "DESCRIPTION", "NAME", "SNIFF_PRIORITY", "TABLES", "VERSION",
           "parse", "patterns", "read_lines", "sniff"]
