"""Slurm's own view of a job: ``scontrol show job [-d]``, ``squeue``, ``sacct`` and ``SLURM_*``
environment dumps -> ``slurm_jobs`` (one row per job or step record) and ``slurm_job_nodes`` (one
row per node of its node list, expanded from Slurm's hostlist syntax, ``node[01-04,07]``).

Formats as Slurm prints them (SchedMD/slurm: src/scontrol/info_job.c, src/sacct, src/squeue):

- ``scontrol show job [-d] [-o] <id>``: records opened by ``JobId=N``, ``Key=Value`` tokens on
  indented lines (``JobState``, ``Reason``, ``FailedNode`` (NODE_FAIL), ``ExitCode=status:signal``,
  ``RunTime``, ``StartTime``/``EndTime`` (the host's local time; ``EndTime`` of a running job is its
  limit, so it is kept only for a job that ended), ``NodeList``, ``NumNodes``/``NumCPUs``/``NumTasks``);
  with ``-d`` one ``Nodes=<hostlist> CPU_IDs=... Mem=... GRES=gpu:8(IDX:0-7)`` line per group of
  nodes with the same allocation. ``-o`` prints a record on one line.
- ``sacct`` fixed-width tables (a header, a line of dashes giving each column's width; values wider
  than the column end in ``+``), and ``--parsable``/``--parsable2`` (``|``-separated, with a
  header); columns read by name (JobID, JobName, Partition, State, ExitCode, Elapsed, Start, End,
  NodeList, NNodes, NTasks, AllocCPUS, Reason, FailedNode; others are kept out). ``CANCELLED by N``
  is CANCELLED; a state cut by the column width (``OUT_OF_ME+``) is the one state it begins.
- ``squeue`` (default, ``-l``, ``-o`` and ``-O`` forms): a header of column titles (JOBID, ST or
  STATE, TIME, NODES, NODELIST(REASON), ...); ``-M`` adds ``CLUSTER: name`` lines. A
  ``NODELIST(REASON)`` value in parentheses is the pending reason.
- ``env | grep SLURM`` dumps (``KEY=value``, ``export KEY=value``): SLURM_JOB_ID, SLURM_JOB_NODELIST,
  SLURM_JOB_NUM_NODES, SLURM_NTASKS, SLURM_JOB_START_TIME (epoch), SLURMD_NODENAME, SLURM_PROCID,
  SLURM_LOCALID. A dump repeating a key starts the next record (one dump per task). Any other
  ``KEY=value`` line goes to ``unparsed`` by its name only: its value is not kept (environments hold
  secrets).

Every other line (prompts, text around a paste, ``slurm_load_jobs error: ...``) is unparsed.

>>> from forensics.sources._base import ParseContext
>>> r = parse(b"JobId=77 JobName=train\\n   JobState=NODE_FAIL Reason=NodeDown FailedNode=gpu03 Dependency=(null)\\n"
...           b"   ExitCode=1:0\\n   NodeList=gpu[02-03]\\n   NumNodes=2 NumCPUs=16 NumTasks=16\\n", ParseContext(host="n1"))
>>> r.tables["slurm_jobs"].select("job_id", "state", "reason", "failed_node", "exit_status", "num_nodes").rows()
[('77', 'NODE_FAIL', 'NodeDown', 'gpu03', 1, 2)]
>>> r.tables["slurm_job_nodes"]["node"].to_list(), r.unparsed.height
(['gpu02', 'gpu03'], 0)
"""
from __future__ import annotations

import datetime as dt
import re

import polars as pl

from forensics.sources import _hostlist
from forensics.sources._base import ParseContext, ParseResult, Sniff, head_text, local_to_utc, result, split_lines, unparsed_rows
from forensics.sources._bounded import INT32, bounded_int, int_or_none

NAME = "slurm"
VERSION = 3  # 3: an ExitCode status or signal beyond 255 gives no exit code (before, up to 5 digits were read); 2: an elapsed time with a field of more than 9 digits is null (int() refused strings of over 4,300 digits: the file was lost)
TABLES = ("slurm_jobs", "slurm_job_nodes")
DESCRIPTION = "Slurm scontrol show job [-d], squeue, sacct (fixed and parsable) and SLURM_* environment dumps"

# job_state_string / job_state_string_compact (src/common/slurm_protocol_defs.c)
STATES = ("PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
          "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "COMPLETING", "STAGE_OUT", "CONFIGURING", "RESIZING", "REQUEUED",
          "REQUEUE_FED", "REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED", "REVOKED", "RESV_DEL_HOLD", "SIGNALING", "EXPEDITING")
COMPACT = {"CG": "COMPLETING", "SO": "STAGE_OUT", "CF": "CONFIGURING", "RS": "RESIZING", "RQ": "REQUEUED",
           "RF": "REQUEUE_FED", "RH": "REQUEUE_HOLD", "SE": "SPECIAL_EXIT", "ST": "STOPPED", "RV": "REVOKED",
           "RD": "RESV_DEL_HOLD", "SI": "SIGNALING", "PD": "PENDING", "R": "RUNNING", "S": "SUSPENDED",
           "CD": "COMPLETED", "CA": "CANCELLED", "F": "FAILED", "TO": "TIMEOUT", "NF": "NODE_FAIL", "PR": "PREEMPTED",
           "BF": "BOOT_FAIL", "DL": "DEADLINE", "OOM": "OUT_OF_MEMORY"}
# states in which the job (or step) has ended: its end time is when it did
ENDED = ("COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY")
# SLURM_STEP_ID values of the special steps (slurm.h: SLURM_EXTERN_CONT, SLURM_BATCH_SCRIPT, SLURM_INTERACTIVE_STEP)
_SPECIAL_STEPS = {"4294967292": "extern", "4294967291": "batch", "4294967290": "interactive"}

_KV = re.compile(r"^([A-Za-z][A-Za-z0-9_:/]*)=(.*)$")
_JOBID_LINE = re.compile(r"^\s*JobId=[0-9]")
_DASHES = re.compile(r"^\s*-+(?: +-+)+\s*$")
_ENV = re.compile(r"^\s*(?:export\s+|declare -x\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_CLUSTER = re.compile(r"^\s*CLUSTER: \S+\s*$")
_ELAPSED = re.compile(r"^(?:([0-9]+)-)?(?:([0-9]+):)?([0-9]+):([0-9]+)(?:\.[0-9]+)?$")
_TIME_FMT = "%Y-%m-%dT%H:%M:%S"
_NOT = "not a line of scontrol show job, squeue, sacct or a SLURM_* environment dump"
_NO_NODES = ("", "(null)", "None assigned", "None", "N/A")

# table column title (lower case) -> field
_COLUMNS = {"jobid": "job_id", "jobname": "name", "name": "name", "partition": "partition", "state": "state",
            "st": "state", "exitcode": "exit", "elapsed": "elapsed", "time": "elapsed", "start": "start",
            "start_time": "start", "end": "end", "nodelist": "node_list", "nodelist(reason)": "node_list_reason",
            "nnodes": "num_nodes", "nodes": "num_nodes", "allocnodes": "num_nodes", "ntasks": "num_tasks",
            "alloccpus": "num_cpus", "ncpus": "num_cpus", "cpus": "num_cpus", "reason": "reason",
            "failednode": "failed_node"}

_JOBS = {"line_no": pl.Int64, "how": pl.String, "job_id": pl.String, "step": pl.String, "name": pl.String,
         "partition": pl.String, "state": pl.String, "reason": pl.String, "failed_node": pl.String,
         "exit_status": pl.Int32, "exit_signal": pl.Int32, "node_list": pl.String, "num_nodes": pl.Int32,
         "num_tasks": pl.Int32, "num_cpus": pl.Int32, "elapsed_s": pl.Float64, "node": pl.String, "procid": pl.Int32,
         "localid": pl.Int32, "note": pl.String}
_NODES = {"line_no": pl.Int64, "how": pl.String, "job_id": pl.String, "step": pl.String, "node": pl.String,
          "node_index": pl.Int32, "cpu_ids": pl.String, "gres": pl.String}


def sniff(head: bytes) -> Sniff:
    """A Slurm output: a ``JobId=N`` record, a sacct or squeue header, or SLURM_* variables."""
    lines = head_text(head).splitlines()[:2000]
    records = sum(1 for ln in lines if _JOBID_LINE.match(ln))
    tables = sum(1 for a, b in zip(lines, lines[1:]) if _DASHES.match(b) and _table_header(a, "fixed"))
    tables += sum(1 for ln in lines if _table_header(ln, "pipe") or _table_header(ln, "squeue"))
    env = sum(1 for ln in lines if (m := _ENV.match(ln)) and m.group(1).startswith(("SLURM_", "SLURMD_")))
    if records or tables:
        return Sniff(0.95, f"Slurm output: {records} scontrol job record(s), {tables} sacct/squeue table header(s)")
    if env >= 3:
        return Sniff.ratio(env, max(1, len([ln for ln in lines if ln.strip()])), "are SLURM_* variables", floor=3, bonus=0.5)
    return Sniff(0.0, "no scontrol job record, sacct or squeue header, or SLURM_* variables")


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    lines = split_lines(data)
    texts = lines["text"].to_list()
    nos = lines["line_no"].to_list()
    jobs: list[dict] = []
    nodes: list[dict] = []
    bad: list[tuple[int, str, str]] = []
    env: dict | None = None
    i, n = 0, len(texts)
    while i < n:
        text, no = texts[i], nos[i]
        if not text.strip():
            i += 1
            continue
        if _JOBID_LINE.match(text):
            i = _scontrol(texts, nos, i, jobs, nodes, bad)
            continue
        nxt = texts[i + 1] if i + 1 < n else ""
        if _DASHES.match(nxt) and _table_header(text, "fixed"):
            i = _fixed_table(texts, nos, i, jobs, bad)
            continue
        if _table_header(text, "pipe"):
            i = _pipe_table(texts, nos, i, jobs, bad)
            continue
        if _table_header(text, "squeue"):
            i = _squeue_table(texts, nos, i, jobs, bad)
            continue
        if _CLUSTER.match(text):
            i += 1
            continue
        m = _ENV.match(text)
        if m and m.group(1).startswith(("SLURM_", "SLURMD_")):
            key, value = m.group(1), m.group(2).strip().strip("'\"")
            if env is None or key in env["vars"]:
                if env is not None:
                    jobs.append(_env_row(env))
                env = {"line_no": no, "vars": {}}
            env["vars"][key] = value
        elif m:
            bad.append((no, m.group(1), "environment variable outside SLURM_* (value not kept)"))
        else:
            bad.append((no, text, _NOT))
        i += 1
    if env is not None:
        jobs.append(_env_row(env))
    for row in jobs:
        if row.get("node_list") in _NO_NODES:
            row["node_list"] = None  # (null), None assigned: no node yet
        nodes.extend(_node_rows(row))
    return _result(jobs, nodes, bad, lines.height, ctx)


# ----------------------------------------------------------------------------- scontrol

def _scontrol(texts: list[str], nos: list[int], i: int, jobs: list[dict], nodes: list[dict], bad: list) -> int:
    """One ``JobId=`` record from line i; returns the index after it."""
    fields: dict[str, str] = {}
    detail: list[tuple[int, dict]] = []
    first = nos[i]
    j = i
    while j < len(texts):
        text = texts[j]
        if j > i and (not text.strip() or not text[:1].isspace() or _JOBID_LINE.match(text)):
            break
        toks = _tokens(text)
        if toks is None:
            bad.append((nos[j], text, "not Key=Value tokens inside a scontrol job record"))
        elif "Nodes" in toks and "CPU_IDs" in toks:
            detail.append((nos[j], toks))
        else:
            fields.update(toks)
        j += 1
    row = {"line_no": first, "how": "scontrol", "job_id": fields.get("JobId"), "name": fields.get("JobName"),
           "partition": fields.get("Partition"), "state": _state(fields.get("JobState"))[0],
           "reason": None if fields.get("Reason") in (None, "None") else fields["Reason"],
           "failed_node": fields.get("FailedNode"), "node_list": fields.get("NodeList"),
           "num_nodes": _int(fields.get("NumNodes")), "num_tasks": _int(fields.get("NumTasks")),
           "num_cpus": _int(fields.get("NumCPUs")), "elapsed_s": _elapsed(fields.get("RunTime")),
           "naive_start": _time(fields.get("StartTime")), "naive_end": _time(fields.get("EndTime")),
           "detail": detail}
    row.update(_exit(fields.get("ExitCode")))
    if row["state"] == "PENDING":
        row["naive_start"] = None  # the scheduler's estimate, not a start
    jobs.append(row)
    return j


def _tokens(text: str) -> dict[str, str] | None:
    """``Key=Value`` tokens of a scontrol line (a token without '=' continues the previous value)."""
    out: dict[str, str] = {}
    last = None
    for tok in text.split():
        m = _KV.match(tok)
        if m:
            last = m.group(1)
            out[last] = m.group(2)
        elif last is None:
            return None
        else:
            out[last] += " " + tok
    return out


# ----------------------------------------------------------------------------- sacct / squeue tables

def _table_header(text: str, form: str) -> bool:
    if form == "pipe":
        if "|" not in text:
            return False
        cols = [c.strip().lower() for c in text.strip().rstrip("|").split("|")]
        return "jobid" in cols and all(re.fullmatch(r"[a-z0-9_]+", c) for c in cols)
    cols = text.split()
    if form == "fixed":
        low = [c.lower() for c in cols]
        return bool(cols) and ("jobid" in low or ("jobname" in low and "state" in low)) and \
            all(re.fullmatch(r"[A-Za-z0-9_]+", c) for c in cols)
    return "JOBID" in cols and ("ST" in cols or "STATE" in cols) and all(re.fullmatch(r"[A-Z0-9_()%:]+", c) for c in cols)


def _fixed_table(texts: list[str], nos: list[int], i: int, jobs: list[dict], bad: list) -> int:
    dashes = texts[i + 1]
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", dashes)]
    header = texts[i]
    names = [header[a:b].strip().lower() if b <= len(header) else header[a:].strip().lower() for a, b in spans]
    # a header title longer than its column spills over: read titles by splitting when counts agree
    if len(header.split()) == len(spans):
        names = [c.lower() for c in header.split()]
    j = i + 2
    while j < len(texts) and texts[j].strip():
        text = texts[j]
        if _DASHES.match(text) or len(text.rstrip()) > spans[-1][1] + 2 or \
                any(a > 0 and a - 1 < len(text) and text[a - 1] != " " for a, _ in spans[1:]):
            bad.append((nos[j], text, "not a row of the sacct table above (does not fit its columns)"))
        else:
            values = [text[a:b].strip() for a, b in spans]
            jobs.append(_table_row(nos[j], "sacct", dict(zip(names, values))))
        j += 1
    return j


def _pipe_table(texts: list[str], nos: list[int], i: int, jobs: list[dict], bad: list) -> int:
    names = [c.strip().lower() for c in texts[i].strip().rstrip("|").split("|")]
    j = i + 1
    while j < len(texts) and texts[j].strip():
        text = texts[j].strip()
        values = text[:-1].split("|") if text.endswith("|") and text.count("|") == len(names) else text.split("|")
        if len(values) != len(names) or _table_header(text, "pipe"):
            bad.append((nos[j], texts[j], "not a row of the sacct --parsable table above (field count differs)"))
        else:
            jobs.append(_table_row(nos[j], "sacct", dict(zip(names, values))))
        j += 1
    return j


def _squeue_table(texts: list[str], nos: list[int], i: int, jobs: list[dict], bad: list) -> int:
    header = texts[i]
    names = [c.lower() for c in header.split()]
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    j = i + 1
    while j < len(texts) and texts[j].strip() and not _CLUSTER.match(texts[j]) and not _table_header(texts[j], "squeue"):
        text = texts[j]
        toks = text.split()
        values = None
        if len(toks) == len(names):
            values = toks
        elif len(toks) > len(names) and names[-1] in ("nodelist(reason)", "reason"):
            values = toks[:len(names) - 1] + [" ".join(toks[len(names) - 1:])]
        elif len(toks) < len(names) and all(a == 0 or a > len(text) or text[a - 1] == " " for a in starts):
            # squeue -O: left-justified columns starting under their titles; empty cells
            values = [text[a:b].strip() for a, b in zip(starts, starts[1:] + [len(text) + 1])]
            if [v for v in values if v] != toks:
                values = None
        if values is None:
            bad.append((nos[j], text, "not a row of the squeue table above (column count differs)"))
        else:
            jobs.append(_table_row(nos[j], "squeue", dict(zip(names, values))))
        j += 1
    return j


def _table_row(line_no: int, how: str, cells: dict[str, str]) -> dict:
    f: dict[str, str] = {}
    for title, value in cells.items():
        key = _COLUMNS.get(title)
        if key and value != "":
            f.setdefault(key, value)
    notes = []
    job_id, step = f.get("job_id"), None
    if job_id and "." in job_id:
        job_id, step = job_id.split(".", 1)
    state, cut = _state(f.get("state"))
    reason = f.get("reason")
    nl = f.get("node_list")
    if "node_list_reason" in f:
        v = f["node_list_reason"]
        if v.startswith("(") and v.endswith(")"):
            reason = reason or v[1:-1]
        else:
            nl = nl or v
    if cut or any(v.endswith("+") for k, v in f.items() if k in ("job_id", "node_list", "name", "partition")):
        notes.append("a value is cut by the column width (ends in +)")
    row = {"line_no": line_no, "how": how, "job_id": job_id, "step": step, "name": f.get("name"),
           "partition": f.get("partition"), "state": state, "reason": None if reason == "None" else reason,
           "failed_node": f.get("failed_node"), "node_list": nl, "num_nodes": _int(f.get("num_nodes")),
           "num_tasks": _int(f.get("num_tasks")), "num_cpus": _int(f.get("num_cpus")),
           "elapsed_s": _elapsed(f.get("elapsed")), "naive_start": _time(f.get("start")),
           "naive_end": _time(f.get("end")), "note": "; ".join(notes) or None}
    row.update(_exit(f.get("exit")))
    return row


# ----------------------------------------------------------------------------- environment dumps

def _env_row(env: dict) -> dict:
    v = env["vars"]

    def get(*keys: str) -> str | None:
        return next((v[k] for k in keys if v.get(k) not in (None, "")), None)

    start = get("SLURM_JOB_START_TIME")
    step = get("SLURM_STEP_ID", "SLURM_STEPID")
    return {"line_no": env["line_no"], "how": "env", "job_id": get("SLURM_JOB_ID", "SLURM_JOBID"),
            "step": _SPECIAL_STEPS.get(step, step) if step is not None else None,
            "name": get("SLURM_JOB_NAME"), "partition": get("SLURM_JOB_PARTITION"),
            "node_list": get("SLURM_JOB_NODELIST", "SLURM_NODELIST"),
            "num_nodes": _int(get("SLURM_JOB_NUM_NODES", "SLURM_NNODES")),
            "num_tasks": _int(get("SLURM_NTASKS", "SLURM_NPROCS")), "node": get("SLURMD_NODENAME"),
            "procid": _int(get("SLURM_PROCID")), "localid": _int(get("SLURM_LOCALID")),
            "utc_start": dt.datetime.fromtimestamp(int(start), dt.timezone.utc) if start and start.isdigit()
            and len(start) <= 11 else None}


# ----------------------------------------------------------------------------- values

def _node_rows(row: dict) -> list[dict]:
    nl = row.get("node_list")
    out: list[dict] = []
    base = {"line_no": row["line_no"], "how": row["how"], "job_id": row.get("job_id"), "step": row.get("step")}
    if nl and nl not in _NO_NODES and not nl.endswith("+"):
        try:
            out = [{**base, "node": h, "node_index": k} for k, h in enumerate(_hostlist.expand(nl))]
        except ValueError as exc:
            row["note"] = "; ".join(x for x in (row.get("note"), f"node list not expanded: {exc}") if x)
    index = {r["node"]: r for r in out}
    for line_no, toks in row.get("detail") or []:
        try:
            hosts = _hostlist.expand(toks["Nodes"])
        except ValueError as exc:
            row["note"] = "; ".join(x for x in (row.get("note"), f"node list not expanded: {exc}") if x)
            continue
        for h in hosts:
            r = index.get(h)
            if r is None:
                r = index[h] = {**base, "node": h, "node_index": None}
                out.append(r)
            r.update(line_no=line_no, cpu_ids=toks.get("CPU_IDs"), gres=toks.get("GRES") or None)
    return out


def _state(value: str | None) -> tuple[str | None, bool]:
    """(state, whether it was cut by a column width) of a State/ST cell."""
    if not value:
        return None, False
    s = value.split()[0]  # "CANCELLED by 0"
    s = COMPACT.get(s, s)
    if s.endswith("+"):
        pre = s[:-1]
        match = [x for x in STATES if x.startswith(pre)]
        return (match[0] if len(match) == 1 else s), True
    return s, False


# ExitCode=status:signal is a wait status' exit status and the signal that ended it (WEXITSTATUS, 8 bits;
# WTERMSIG, 7): a number beyond 255 is neither, and the job's row keeps no exit code
_EXIT_MAX = 255


def _exit(value: str | None) -> dict:
    if not value:
        return {}
    m = re.fullmatch(r"([0-9]+)(?::([0-9]+))?", value.strip())
    if not m:
        return {}
    status = bounded_int(m.group(1), 0, _EXIT_MAX)
    signal = bounded_int(m.group(2), 0, _EXIT_MAX) if m.group(2) else None
    if not status.ok or (signal is not None and not signal.ok):
        return {}
    return {"exit_status": status.value, "exit_signal": signal.value if signal is not None else None}


def _elapsed(value: str | None) -> float | None:
    m = _ELAPSED.match(value.strip()) if value else None
    parts = [bounded_int(x, 0, 999_999_999) if x else None for x in m.groups()] if m else []
    if not m or any(p is not None and not p.ok for p in parts):  # (no run of 10^9 days)
        return None
    d, h, mi, s = (p.value if p is not None else 0 for p in parts)
    return float(((d * 24 + h) * 60 + mi) * 60 + s)


def _time(value: str | None) -> dt.datetime | None:
    try:
        return dt.datetime.strptime(value.strip(), _TIME_FMT) if value else None
    except ValueError:
        return None


def _int(value: str | None) -> int | None:
    """'4' or a range '2-4' (its first) within the Int32 columns; None otherwise."""
    m = re.match(r"^([0-9]+)(?:-[0-9]+)?$", value.strip()) if value else None
    return int_or_none(m.group(1), 0, INT32[1]) if m else None


def _result(jobs: list[dict], nodes: list[dict], bad: list, n: int, ctx: ParseContext) -> ParseResult:
    for r in jobs:
        if r.get("state") not in ENDED:
            r["naive_end"] = None  # a running job's EndTime is its time limit
    df = pl.DataFrame({c: pl.Series([r.get(c) for r in jobs], dtype=t) for c, t in _JOBS.items()})
    naive = {k: pl.Series([r.get(k) for r in jobs], dtype=pl.Datetime("us")) for k in ("naive_start", "naive_end")}
    utc = pl.Series([r.get("utc_start") for r in jobs], dtype=pl.Datetime("us", "UTC"))
    df = df.with_columns(pl.coalesce(pl.lit(utc), local_to_utc(pl.lit(naive["naive_start"]), ctx.tz)).alias("start"),
                         local_to_utc(pl.lit(naive["naive_end"]), ctx.tz).alias("end"),
                         pl.when(pl.lit(utc).is_not_null()).then(pl.lit("epoch"))
                         .when(pl.lit(naive["naive_start"]).is_not_null() | pl.lit(naive["naive_end"]).is_not_null())
                         .then(pl.lit("local")).otherwise(pl.lit("none")).alias("ts_quality"))
    nd = pl.DataFrame({c: pl.Series([r.get(c) for r in nodes], dtype=t) for c, t in _NODES.items()})
    return result(NAME, ctx, n, {"slurm_jobs": df, "slurm_job_nodes": nd}, unparsed_rows(bad, ctx, NAME) if bad else None)
