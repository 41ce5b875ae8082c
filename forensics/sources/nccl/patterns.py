"""Patterns and small helpers every part of the NCCL parser shares: the source's name and tables, the
header, prefix and glog regexes (only [0-9], bounded digit runs so every cast fits its column), integer
column types, and how a lazy query is collected."""
from __future__ import annotations

import polars as pl


NAME = "nccl"
VERSION = 12  # 12: PyTorch watchdog reports as launchers, runners and people pass them on: a record broken over lines (a job runner's word wrap at its width, a terminal's cut mid-word, an author's wrap at ~70 columns, indented or not) is joined back onto its first line (wrapped.py; meta skipped: the lines that held the rest; before, the row lacked SeqNum/OpType/Timeout/ran for and the rest was unparsed); the watchdog's message without a glog header ("[Rank 2] Watchdog caught ...") is a row; a job runner's "<job> [stderr] " and torchrun's "[rank1]: " prefixes are read through (the rank of an exception line from "[rankN]: "; the prefix alone is structure); C++ frame and Python traceback lines are skipped and counted as the context of the error (were unparsed); 11: nccl-tests result lines cut into cells by "|" are read: two results side by side (two tables pasted next to each other) one row per cell, a Markdown table row of one field per cell with its cells joined, its "|---|" rule structure (they were unparsed); 10: the reasons of lines that are no NCCL line name what they are: shell prompts with a conda or venv environment ("(base) user@host:~$", "(myenv) [user@host dir]$", "$ cmd"), Python exception lines and the source lines of a traceback, Open MPI help messages (the text between their "-----" rules, "[host:pid] N more processes have sent help message"), Slurm lines ("srun: ", "slurmstepd: "); (were "not an NCCL line"); 9: an nccl-tests time, bandwidth, error or average bus bandwidth past a double's range (a run of hundreds of digits) is null, not inf; 8: a whole line with its own worker prefix after a line cut mid-host is no longer taken for the cut line's rest (7 moved such lines to unparsed as "host cut"); Ray's dedup note cut by a wrap inside its URL: the note taken off the NCCL line with the mark and its rest on the next line counted (meta skipped; the note stayed in the message and its rest was unparsed); 7: Ray worker output as pasted: colour codes written out as "ESC[36m" are read through (a vLLM record behind such a prefix was unparsed), Ray's dedup mark cut at its blank (" [repeated 4x across" / "cluster]") is taken off the NCCL line and its tail counted (meta skipped; was unparsed, the mark left in the value), an NCCL line whose host was cut by another process's output takes the host whole from the line before where that names a host of the file (meta cut_hosts_joined) and is unparsed with the reason where not (was read with a wrong host); 6: a VERSION line behind a Ray/vLLM worker prefix ("(RayWorkerWrapper pid=663) NCCL version 2.21.5+cuda12.4") is read as a bare one (was unparsed); 5: SGR colour codes as pasted (ESC, ^[, \\x1b, \\033, \\u001b, U+FFFD, or lost: "[36m") are read through (meta colour_codes; before, a Ray-coloured worker prefix lost every vLLM/Ray runtime_log row), and Ray's "[repeated Nx across cluster]" is taken off NCCL lines (meta ray_deduplicated; before, it ended config values: cuda_driver "12080 [repeated 14x across cluster]"); 4: nccl-tests failure lines, old all_gather rows without redop and root
TABLES = ("nccl_log", "nccl_config", "nccl_tests", "nccl_desync", "rank_hosts", "runtime_log")
DESCRIPTION = ("NCCL_DEBUG logs (INFO/WARN/TRACE, 2.4-2.30, launcher prefixes), PyTorch NCCL watchdog lines, "
               "nccl-tests output (result table, Avg bus bandwidth), the vLLM/Ray/torchrun/PyTorch log records around them")
CHUNKABLE = True
CHUNK_BYTES = 16 << 20  # ingest parses chunks of this size on worker threads (bounded memory, both cores busy)
SNIFF_PRIORITY = 40

_LEVELS = ("INFO", "WARN", "TRACE", "ABORT", "ATTN", "CALL")
_SNIFF_MARKERS = tuple(f" NCCL {lv}".encode() for lv in _LEVELS) + (
    b"\nNCCL version ", b"\nNCCL INFO ", b"\nNCCL WARN ", b"ProcessGroupNCCL", b"WorkNCCL(", b"NCCL watchdog",
    b"# Using devices", b"Avg bus bandwidth",
)

# --- patterns (only [0-9], bounded digit runs so every cast fits its column) ---------------------
_NUM9 = "[0-9]{1,9}"
_HEAD = (
    r"^(?P<pre>.*?)"
    r"(?:(?P<host>[^\s:\[\]]+)(?::(?P<pid>[0-9]{1,12}):(?P<tid>[0-9]{1,12}))? ?)?"
    r"(?:\[(?P<dev>" + _NUM9 + r")\])?"
    r"(?: (?P<tms>[0-9]+\.[0-9]+))?"
    r"(?:(?:^| )(?P<src>[^\s:()]+):(?P<sline>" + _NUM9 + r"))?"
    r"(?: \((?P<func>[^)]*)\))?$"
)
_RFC_CORE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})"
_RFC3339 = "(" + _RFC_CORE + r")(?:\s|$)"
_NCCL_TS = r"\[([0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?)\] ?$"
_RANK = (r"\[[0-9]{1,9},(?P<r1>" + _NUM9 + r")\]<std(?:out|err)>: ?|^(?:" + _RFC_CORE + r"\s+)? *(?P<r2>" + _NUM9
         + r"):(?: |$)|^\[(?P<r3>"
         + _NUM9 + r")\] |\[rank(?P<r4>" + _NUM9 + r")\]:")
# a job runner's stream tag before every line of a job's output ("dinov2-giant-nodes.cn-d003 [stderr] ": milabench; polars
# regexes only: linear, and an unbounded run is cheaper there than a bounded one)
_RUNNER = r"[^\s\[\]()]+ \[std(?:out|err)\]"
_PREFIX_ONLY = (r"^(?:\s*(?:" + _RFC_CORE + r"|\[[0-9]{1,9},[0-9]{1,9}\]<std(?:out|err)>:|[0-9]{1,9}:|\[[0-9]{1,9}\]"
                r"|\[rank[0-9]{1,9}\]:|\[[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9:.,]+\]|\([^()]*\)|" + _RUNNER + r"))+\s*$")
_LAUNCHER = (r"^(?:\s*(?:" + _RFC_CORE + r"|\[[0-9]{1,9},[0-9]{1,9}\]<std(?:out|err)>:|[0-9]{1,9}:(?: |$)"
             r"|\[[0-9]{1,9}\] |\[[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9:.,]+\]|\([^()]*pid=[0-9]+[^()]*\)"
             r"|\[rank[0-9]{1,9}\]:|" + _RUNNER + r"))+ ?")
_PEER = r"(?:from peer|from|to|peer) ([^\s<>]*<[0-9]+>)"
_GLOG = (r"^(?P<pre>.*?)\[(?P<glvl>[EWIF])(?:(?P<md>[0-9]{3,4}) (?P<hms>[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?)"
         r"(?: +[0-9]{1,12})?)? ?(?P<gsrc>[A-Za-z0-9_.]+\.(?:cpp|cc|hpp|h)):(?P<gline>" + _NUM9 + r")\] (?P<msg>.*)$")
_GLOG_LEVEL = {"E": "ERROR", "W": "WARN", "I": "INFO", "F": "FATAL"}

_INT = {"pid": pl.Int64, "tid": pl.Int64, "cuda_dev": pl.Int32, "src_line": pl.Int32, "rank": pl.Int32,
        "nranks": pl.Int32, "ib_status": pl.Int32, "vendor_err": pl.Int32, "retcode": pl.Int32, "seq": pl.Int64,
        "timeout_ms": pl.Int64, "ran_ms": pl.Int64, "last_enqueued": pl.Int64, "last_completed": pl.Int64, "msg_rank": pl.Int32}

def _lazy_prefix_groups(col: str, pattern: str) -> list[pl.Expr]:
    """extract_groups(pattern) for a pattern "^(?P<pre>.*?)REST" (REST without "^" but at its very start): the
    leftmost match of REST alone starts where the shortest "pre" ends, so one linear search for REST and a slice
    give the same groups, without the backtracking over every length of "pre" (dozens of times the work on long
    lines). Returns the columns "pre" and "g" (a struct of the other groups)."""
    head = "^(?P<pre>.*?)"
    assert pattern.startswith(head)
    rest, c = pattern[len(head):], pl.col(col)
    at = c.str.find(rest)
    # str.find gives a character offset (not bytes): sliced by characters, so a non-ASCII character before the
    # match (a paste's U+FFFD for a bad byte) cannot cut a character in two (a byte slice raised "invalid utf8")
    return [pl.when(at.is_not_null()).then(c.str.slice(0, at)).alias("pre"),
            c.str.extract_groups(rest).alias("g")]


def _i(expr: pl.Expr, name: str) -> pl.Expr:
    return expr.cast(_INT[name], strict=False).alias(name)

def _nulls(name: str, dtype: pl.DataType, n: int) -> pl.Series:
    return pl.repeat(None, n, dtype=dtype, eager=True).alias(name)

def _compact(s: pl.Series) -> pl.Series:
    """`s` (strings) with its characters copied into one contiguous buffer. The strings of a group_by's keys or of a
    gather still point into the input's buffers, scattered over megabytes: every later pass over them waits on
    memory (35,000 distinct messages of the 20 MB benchmark log: the kind's two regexes 8.3 -> 1.9 CPU ms after
    this copy, which costs 2.6)."""
    return pl.Series(s.name, s.to_arrow(), dtype=s.dtype)


def _collect(lf: pl.LazyFrame, rows: int, engine: str = "in-memory") -> pl.DataFrame:
    """Big inputs: the optimizer (common subexpressions computed once); small ones: no optimizer pass (its fixed
    cost exceeds what it saves on a few rows)."""
    if rows > LEAN_ROWS:
        return lf.collect(engine=engine)
    return lf.collect(engine="in-memory", optimizations=pl.QueryOptFlags.none())

LEAN_ROWS = 2048  # inputs of at most this many NCCL rows evaluate the rules on the whole frame (_rules_gated)
